"""Stand-ins with the API shape of third-party frameworks, so CI tests the drivers in
fedtheory/conformance/drivers/ without installing the frameworks (docs/frameworks.md)."""

"""Fifth held-out batch of implementations for the conformance kit (see README.md in this folder)."""

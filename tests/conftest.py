"""Hypothesis profiles: "ci" (default, derandomized, bounded) and "thorough" (HYPOTHESIS_PROFILE=thorough)."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=500, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# pytester runs pytest on generated test files (tests/extend/test_extension.py checks fedtheory's pytest plugin).
pytest_plugins = ["pytester"]

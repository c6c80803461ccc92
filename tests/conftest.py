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


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` are left out of the default run (pyproject's marker: "select with -m slow"); any ``-m``
    expression given on the command line decides instead."""
    if config.getoption("markexpr"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]

"""Registering an algorithm for fedtheory bench needs a name only; fedtheory's own algorithms also have example()."""
from __future__ import annotations

import pytest

from fedtheory.algorithms import ALGORITHMS, register_algorithm


def test_every_builtin_algorithm_has_an_example_for_the_generic_tests() -> None:
    missing = [name for name, cls in ALGORITHMS.items() if not callable(getattr(cls, "example", None))]
    assert not missing


def test_a_users_algorithm_needs_only_a_name() -> None:
    class Mine:
        name = "test-registration-mine"

    try:
        assert register_algorithm(Mine) is Mine and ALGORITHMS["test-registration-mine"] is Mine
    finally:
        ALGORITHMS.pop("test-registration-mine", None)


def test_a_missing_or_taken_name_is_refused_naming_both_classes() -> None:
    class Nameless:
        pass

    with pytest.raises(TypeError, match="needs a class attribute `name`"):
        register_algorithm(Nameless)

    class Impostor:
        name = "fedavg"

    with pytest.raises(ValueError, match="'fedavg' registered twice: by FedAvg and by Impostor"):
        register_algorithm(Impostor)

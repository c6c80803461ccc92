"""The papers' update equations, transcribed client by client: the expected side of every algorithm run.

A *reference round* is a plain transcription of one round of a paper's algorithm, written from the paper's
update equations with a loop over the clients, sharing no helper with :mod:`fedtheory.algorithms`,
:mod:`fedtheory.local` or :mod:`fedtheory.compressors` (the expected side is computed independently of the code
under test, docs/design.md). It takes the implementation's hyperparameters (read as attributes of the algorithm
object), the problem, the state the round starts from and the round's draw (what ``draw`` returned and
``round_given`` received: participants, coins, seeds; ``None`` for a deterministic algorithm), and returns the
:class:`Expected` new state and the logged quantities the paper's equations determine.

The ledger certifies every round it records against the reference of the algorithm's ``name``
(:func:`certify_round`): a claim that runs an algorithm is a verdict about *the paper's* algorithm only while its
run is the paper's algorithm, and a difference makes the claim fail (docs/verification-power.md).

A module per paper (``references/<paper>.py``) registers its references with :func:`reference`; the package
imports its modules on first use, so there is nothing else to register.
"""
from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np

__all__ = ["Expected", "Mismatch", "REFERENCES", "reference", "certify_round", "certify_run", "has_reference"]


from .base import ATOL_SCALE, REFERENCES, RTOL, Expected, Mismatch, ReferenceRound, reference


def has_reference(name: str) -> bool:
    _load()
    return name in REFERENCES


def _load() -> None:
    """Import every module of this package (each registers its references on import): on first use, not at the
    package's import, so the modules may import this one without a cycle."""
    import sys

    from ..autoload import load_submodules

    load_submodules(sys.modules[__name__], {})


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "toarray") and not isinstance(value, np.ndarray):  # a client table or sparse matrix
        value = value.toarray()
    return np.asarray(value, dtype=float)


def _field(obj: Any, name: str) -> Any:
    if name.startswith("extra."):
        return obj.extra[name[len("extra."):]]
    return getattr(obj, name)


def _scale(*values: Any) -> float:
    scale = 0.0
    for v in values:
        a = _as_array(v)
        if a.size:
            scale = max(scale, float(np.max(np.abs(a))))
    return scale


def certify_round(alg: Any, problem: Any, state: Any, draw: Any, new_state: Any, log: Any,
                  round_index: int) -> Mismatch | None:
    """Compare one recorded round with the reference of ``alg.name``: the first field that differs by more than
    :data:`RTOL` relative (to the larger of the two values' scales, with a floor of :data:`ATOL_SCALE` of the
    round's inputs), or None when every field the reference determines agrees. KeyError when the algorithm has no
    reference (:func:`has_reference`)."""
    _load()
    name = type(alg).name
    expected = REFERENCES[name](alg, problem, state, draw)
    floor = ATOL_SCALE * max(1.0, _scale(*(getattr(state, f.name) for f in fields(state)
                                           if is_dataclass(state) and _numeric(getattr(state, f.name)))))
    for source, values in ((new_state, expected.state), (log, expected.log)):
        for key, want in values.items():
            got = _as_array(_field(source, key))
            want = _as_array(want)
            if got.shape != want.shape:
                return Mismatch(name, round_index, key, math.inf, f"shape {got.shape}, the paper's {want.shape}")
            if not np.all(np.isfinite(got)) and not np.array_equal(got, want, equal_nan=True):
                return Mismatch(name, round_index, key, math.inf, "non-finite values")
            diff = float(np.max(np.abs(got - want))) if got.size else 0.0
            scale = max(_scale(got, want), floor)
            if diff > RTOL * scale + floor:
                return Mismatch(name, round_index, key, diff / scale if scale > 0 else math.inf)
    return None


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float, np.ndarray)) and not isinstance(value, bool)


def certify_run(alg: Any, problem: Any, x0: Any, rounds: int, seed: int = 0) -> tuple[int, Mismatch | None]:
    """Run ``rounds`` rounds of ``alg`` from ``alg.init(problem, x0)`` with ``draw`` / ``round_given`` (seeded
    generator) and certify every one of them against the reference, each from the implementation's own state:
    ``(rounds certified, the first mismatch or None)``."""
    state = alg.init(problem, np.asarray(x0, dtype=float))
    rng = np.random.default_rng(seed)
    for r in range(rounds):
        draw = alg.draw(problem, state, rng)
        new_state, log = alg.round_given(problem, state, draw)
        mismatch = certify_round(alg, problem, state, draw, new_state, log, r)
        if mismatch is not None:
            return r, mismatch
        state = new_state
    return rounds, None

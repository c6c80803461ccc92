"""Run certification: a claim that runs an algorithm is a verdict about the paper's algorithm only while its run
*is* the paper's algorithm.

While a claim is evaluated, :class:`RunCertifier` records the rounds every algorithm runs
(:func:`fedtheory.algorithms.recording.recording`) and compares each recorded round with the independent
transcription of the paper's update equations (:mod:`fedtheory.references`), from the same state and the same
draws. Which rounds: the first :data:`FIRST_ROUNDS` of every run and then every round whose index is a power of two
(so a schedule, a stale point or a state not carried shows however long the run), at most
:data:`ROUNDS_PER_ALGORITHM` per algorithm and claim (a claim that enumerates many one-round outcomes does not
pay for all of them). A run is a chain of states: a round that starts from the state another round returned
continues that run; any other state starts a new one (index 0).

A difference makes the claim fail with the status ``RUN-DIFFERS`` and the sentence "the run differs from the
paper's algorithm (NAME) at round r by ... in FIELD" (docs/verification-power.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from ..algorithms.recording import recording
from ..references import Mismatch, certify_round, has_reference

__all__ = ["Certification", "RunCertifier", "recording"]

#: Every run's first rounds are certified (the start, the first use of carried state, the second use).
FIRST_ROUNDS = 3
#: At most this many rounds are certified per algorithm and claim evaluation (a bound on the cost: a reference is
#: a plain loop over the clients; measured on the default ledger, see docs/verification-power.md).
ROUNDS_PER_ALGORITHM = 40


@dataclass
class Certification:
    """What the certification of one claim evaluation found: the rounds certified per algorithm name, the first
    difference (None if none), and the algorithms the claim ran that have no reference."""

    rounds: dict[str, int] = field(default_factory=dict)
    differs: str | None = None
    uncertified: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"rounds": dict(self.rounds), "differs": self.differs, "uncertified": list(self.uncertified)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Certification | None":
        if data is None:
            return None
        return cls(dict(data.get("rounds", {})), data.get("differs"), list(data.get("uncertified", [])))

    @property
    def algorithms(self) -> list[str]:
        return sorted(set(self.rounds) | set(self.uncertified))


def _changed_field(before: Any, after: Any) -> str | None:
    """The first field of a state that differs between its copy taken before a round and the object after it."""
    if not (is_dataclass(before) and is_dataclass(after)):
        return None
    for f in fields(before):
        a, b = getattr(before, f.name), getattr(after, f.name, None)
        try:
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or hasattr(a, "toarray"):
                a = a.toarray() if hasattr(a, "toarray") else a
                b = b.toarray() if hasattr(b, "toarray") else b
                same = np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
            elif isinstance(a, (list, tuple)) and len(a) == len(b) and any(isinstance(x, np.ndarray) for x in a):
                same = all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))
            else:
                same = bool(a == b)
        except (TypeError, ValueError):  # a field without a comparison: not judged
            continue
        if not same:
            return f.name
    return None


def _wanted(index: int) -> bool:
    return index < FIRST_ROUNDS or index & (index - 1) == 0


class RunCertifier:
    """The :class:`~fedtheory.algorithms.recording.Recorder` of one claim evaluation (see the module docstring)."""

    def __init__(self) -> None:
        self.result = Certification()
        self._next: dict[int, tuple[int, Any]] = {}  # id(state) -> (index of the round it starts, the state)
        self._count: dict[str, int] = {}

    def index(self, state: Any) -> int:
        entry = self._next.pop(id(state), None)
        return entry[0] if entry is not None and entry[1] is state else 0

    def want(self, alg: Any, problem: Any, index: int) -> bool:
        name = type(alg).name
        if self.result.differs is not None or not _wanted(index):
            return False
        if not has_reference(name):
            if name not in self.result.uncertified:
                self.result.uncertified.append(name)
            return False
        return self._count.get(name, 0) < ROUNDS_PER_ALGORITHM

    def record(self, index: int, alg: Any, problem: Any, state: Any, draw: Any, new_state: Any, log: Any,
               given: Any = None) -> None:
        name = type(alg).name
        self._count[name] = self._count.get(name, 0) + 1
        changed = _changed_field(state, given) if given is not None else None
        if changed is not None:  # states are immutable (fedtheory/algorithms/base.py): a caller may reuse one
            self.result.differs = Mismatch(name, index, changed, math.inf,
                                           "the round modified the state it was given, in place").sentence()
            return
        try:
            mismatch: Mismatch | None = certify_round(alg, problem, state, draw, new_state, log, index)
        except NotImplementedError as exc:  # a configuration the reference does not transcribe: not certified
            if f"{name}: {exc}" not in self.result.uncertified:
                self.result.uncertified.append(f"{name}: {exc}")
            return
        if mismatch is not None:
            self.result.differs = mismatch.sentence()
        else:
            self.result.rounds[name] = self.result.rounds.get(name, 0) + 1

    def done(self, index: int, new_state: Any) -> None:
        self._next[id(new_state)] = (index + 1, new_state)

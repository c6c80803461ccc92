"""Recording the rounds the algorithms run, so that a run can be certified against the paper's equations.

:func:`recording` patches, for as long as it is active, the round method of every registered algorithm class (and
of every subclass and base class that defines one): ``round_given(problem, state, draw)`` where the class has
it, else ``round(problem, state, rng)`` (a deterministic algorithm such as GD; its draw is ``None``). Whatever the
method is at that moment is wrapped, so a class whose method was replaced beforehand (a broken variant in a
mutation test) is recorded as it will run. Outside :func:`recording` nothing is patched and nothing costs.

A :class:`Recorder` numbers the rounds of each run (``index``), decides which rounds it wants (``want``) and receives each wanted round with a deep copy of the state it started from (an implementation
that modifies its input state in place is then seen doing so). A call made inside another recorded call (an
algorithm that runs another one internally) is not recorded on its own: the outer round is the one certified.
"""
from __future__ import annotations

import copy
import functools
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol

from .base import ALGORITHMS

__all__ = ["Recorder", "recording"]


class Recorder(Protocol):
    def index(self, state: Any) -> int:
        """The index in its run of the round that starts from ``state``."""

    def want(self, alg: Any, problem: Any, index: int) -> bool:
        """Whether to record this round."""

    def record(self, index: int, alg: Any, problem: Any, state: Any, draw: Any, new_state: Any, log: Any,
               given: Any) -> None:
        """One recorded round: ``state`` is a copy of the state it started from, taken before the round, ``draw`` of
        its draw; ``given`` is the state object the round was given, as it is after the round (an implementation
        that modified it in place differs from ``state``)."""

    def done(self, index: int, new_state: Any) -> None:
        """Every round, recorded or not, ends here: ``new_state`` starts round ``index + 1`` of the same run."""


_active: list[Recorder] = []
_depth = [0]


def _classes() -> list[type]:
    """Every registered algorithm class, its subclasses, and the base classes they inherit a round method from."""
    seen: dict[type, None] = {}
    todo = list(ALGORITHMS.values())
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen[cls] = None
        todo.extend(cls.__subclasses__())
        todo.extend(b for b in cls.__mro__[1:] if b is not object)
    return list(seen)


def _wrap(method: Callable, has_draw: bool) -> Callable:
    @functools.wraps(method)
    def recorded(self: Any, problem: Any, state: Any, draw_or_rng: Any) -> Any:
        if not _active or _depth[0] > 0:
            return method(self, problem, state, draw_or_rng)
        recorder = _active[-1]
        index = recorder.index(state)
        wanted = recorder.want(self, problem, index)
        before = copy.deepcopy(state) if wanted else None
        draw = copy.deepcopy(draw_or_rng) if wanted and has_draw else None
        _depth[0] += 1
        try:
            result = method(self, problem, state, draw_or_rng)
        finally:
            _depth[0] -= 1
        if wanted:
            recorder.record(index, self, problem, before, draw, result[0], result[1], state)
        recorder.done(index, result[0])
        return result

    recorded.__fedtheory_recorded__ = True  # type: ignore[attr-defined]
    return recorded


@contextmanager
def recording(recorder: Recorder) -> Iterator[None]:
    """Record the rounds every algorithm runs inside this block with ``recorder`` (see the module docstring)."""
    patched: list[tuple[type, str, Any]] = []
    for cls in _classes():
        for name, has_draw in (("round_given", True), ("round", False)):
            if name == "round" and hasattr(cls, "round_given"):
                continue  # its round calls round_given, which is the one recorded (with the draw)
            method = cls.__dict__.get(name)
            if method is None or getattr(method, "__fedtheory_recorded__", False) or not callable(method):
                continue
            patched.append((cls, name, method))
            setattr(cls, name, _wrap(method, has_draw))
    _active.append(recorder)
    try:
        yield
    finally:
        _active.pop()
        for cls, name, method in reversed(patched):
            setattr(cls, name, method)

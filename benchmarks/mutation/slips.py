"""Subtle variants: a few characters' slip in the real source of one method, installed in-process.

A :class:`Slip` names a class, one of its methods, a snippet of that method's source and its replacement (the
snippet must occur exactly once: a slip that no longer applies is reported, never silently skipped). Installing
it (:class:`SlipPatch`) compiles the edited source in the method's own module and sets it as the class's method
attribute, so whatever wraps the classes' rounds afterwards (the run certification of
``registry.evaluate(certify=True)``) wraps the broken code, exactly as it would wrap a broken checkout.

**Live or inert.** The outermost call of a patched method (the slipped method, or the family's round that calls
it) is run twice: once with the faithful methods on a deep copy of its inputs, once with the slip. The variant is
*live* when the two results differ (any float or integer field of the returned state and round log, beyond
rounding) or when the slip mutated an input the faithful code leaves alone (shared or aliased state). A slip never
live on the ledger's instances is a catalogue bug (``tests/test_discrimination.py``).

**Variant errors.** When the faithful call returns and the slipped call raises on the same inputs, the slip
itself crashes (a shape it breaks, a check it trips): that is recorded in ``bug`` and the cell counts as a
variant error, never as a rejection.
"""
from __future__ import annotations

import copy
import functools
import inspect
import sys
import textwrap
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Callable

import numpy as np

#: The brief's slip categories (docs/verification-power.md).
CATEGORIES = ("sign", "constant factor", "normalisation twice", "stale point", "missing correction",
              "doubled correction", "wrong local path", "schedule", "shared state", "participation bookkeeping",
              "logged quantity")


@dataclass(frozen=True)
class Slip:
    """A one-snippet edit of ``cls.method``'s source (``cls`` as ``module:Class``)."""

    name: str
    family: str  # the algorithm family as the docs name it (FedAvg, FedProx/FedElasticNet, SCAFFOLD, ...)
    target: str  # "fedtheory.algorithms.fedavg:FedAvg"
    method: str
    old: str
    new: str
    category: str
    description: str
    role: str = "slip"

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"slip {self.name}: category must be one of {CATEGORIES}, got {self.category!r}")

    @property
    def cls(self) -> type:
        module, name = self.target.split(":")
        __import__(module)
        return getattr(sys.modules[module], name)


def faithful_function(s: Slip) -> Callable[..., Any]:
    fn = s.cls.__dict__.get(s.method)
    if not inspect.isfunction(fn):
        raise ValueError(f"slip {s.name}: {s.target}.{s.method} is not a plain method defined on the class")
    return fn


def broken_function(s: Slip) -> Callable[..., Any]:
    """The method compiled from its source with ``old`` replaced by ``new`` (ValueError unless ``old`` occurs
    exactly once), in its module's globals and with ``__class__`` bound, so zero-argument ``super()`` works."""
    fn = faithful_function(s)
    src = textwrap.dedent(inspect.getsource(fn))
    count = src.count(s.old)
    if count != 1:
        raise ValueError(f"slip {s.name}: the snippet occurs {count} times in {s.target}.{s.method}, expected once")
    src = src.replace(s.old, s.new)
    lines = src.splitlines()
    while lines and lines[0].lstrip().startswith("@"):  # decorators are re-applied by nothing: plain methods only
        lines.pop(0)
    maker = "def __make__(__class__):\n" + textwrap.indent("\n".join(lines), "    ") + \
        f"\n    return {s.method}\n"
    scope: dict[str, Any] = {}
    exec(compile(maker, f"<slip {s.name}>", "exec"), fn.__globals__, scope)
    broken = scope["__make__"](s.cls)
    broken.__qualname__ = fn.__qualname__
    return broken


# ----- comparison ------------------------------------------------------------------------------------------------

def _leaves(x: Any, depth: int = 0) -> list[Any]:
    if depth > 6 or x is None:
        return []
    if hasattr(x, "peek") and callable(x.peek):
        x = x.peek()
    if isinstance(x, np.ndarray):
        return [x] if x.dtype.kind in "fiub" else []
    if isinstance(x, (bool, int, float, np.floating, np.integer)):
        return [np.asarray(float(x))]
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v, depth + 1)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x, key=str) for leaf in _leaves(x[k], depth + 1)]
    if is_dataclass(x):
        return [leaf for f in fields(x) for leaf in _leaves(getattr(x, f.name, None), depth + 1)]
    return []


def differs(a: Any, b: Any) -> bool:
    """Whether two results differ beyond rounding (every numeric leaf of tuples, dataclasses, dicts, arrays)."""
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return True
    for x, y in zip(la, lb):
        if x.shape != y.shape:
            return True
        x, y = x.astype(np.float64), y.astype(np.float64)
        fx, fy = np.isfinite(x), np.isfinite(y)
        if not np.array_equal(fx, fy) or not np.array_equal(x[~fx], y[~fy]):
            return True
        scale = 1.0 + float(np.max(np.abs(x[fx]), initial=0.0))
        if float(np.max(np.abs(x[fx] - y[fy]), initial=0.0)) > 1e-10 * scale:
            return True
    return False


# ----- installation ----------------------------------------------------------------------------------------------

class SlipPatch:
    """While active, ``slip`` replaces its method (and the family's ``entry`` round is wrapped for the liveness
    check); ``shadow=True`` runs the slip beside the faithful code but returns the faithful result (a pre-check
    that the slip runs at all on a claim's inputs, outside the claim); ``dual=False`` runs the slip alone (a variant
already known to be live: no faithful twin, no liveness or variant-error check)."""

    def __init__(self, slip: Slip, entry: tuple[type, str] | None = None, shadow: bool = False,
                 dual: bool = True) -> None:
        self.slip, self.shadow, self.dual = slip, shadow, dual
        self.live = False
        self.bug: str | None = None
        self.calls = 0
        self._targets: list[tuple[type, str, Any, Any]] = []
        self._mode = "broken"
        self._depth = 0
        fn = faithful_function(slip)
        self._targets.append((slip.cls, slip.method, fn, broken_function(slip)))
        if entry is not None and (entry[0], entry[1]) != (slip.cls, slip.method) and entry[1] in entry[0].__dict__:
            orig = entry[0].__dict__[entry[1]]
            self._targets.append((entry[0], entry[1], orig, orig))

    def _wrap(self, orig: Callable[..., Any], broken: Callable[..., Any]) -> Callable[..., Any]:
        patch = self

        @functools.wraps(orig)
        def wrapped(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if patch._depth or not patch.dual:
                return (broken if patch._mode == "broken" else orig)(obj, *args, **kwargs)
            patch._depth += 1
            try:
                return patch._dual(orig, broken, obj, args, kwargs)
            finally:
                patch._depth -= 1
        return wrapped

    def _dual(self, orig: Callable[..., Any], broken: Callable[..., Any], obj: Any, args: tuple,
              kwargs: dict) -> Any:
        self.calls += 1
        head, tail = args[:1], args[1:]  # the problem is read-only: not copied
        tail_copy, kw_copy = copy.deepcopy(tail), copy.deepcopy(kwargs)
        self._mode = "faithful"
        try:
            faithful = orig(obj, *head, *tail_copy, **kw_copy)
        except Exception:  # the faithful code raises too: the slip is not what raised
            self._mode = "broken"
            return broken(obj, *args, **kwargs)
        faithful_mutates = differs(tail_copy, tail)
        self._mode = "broken"
        try:
            out = broken(obj, *args, **kwargs)
        except Exception as exc:
            self.bug = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
            if self.shadow:
                return faithful
            raise
        if differs(faithful, out) or (not faithful_mutates and differs(tail, tail_copy)):
            self.live = True
        return faithful if self.shadow else out

    def __enter__(self) -> "SlipPatch":
        for cls, name, orig, broken in self._targets:
            setattr(cls, name, self._wrap(orig, broken))
        return self

    def __exit__(self, *exc: Any) -> None:
        for cls, name, orig, _ in reversed(self._targets):
            setattr(cls, name, orig)


# ----- reached or not ----------------------------------------------------------------------------------------------

def snippet_lines(s: Slip) -> set[int]:
    """The source lines (of the method's file) the slip's snippet spans."""
    lines, start = inspect.getsourcelines(faithful_function(s))
    src = "".join(lines)
    first = start + src[:src.index(s.old)].count("\n")
    return set(range(first, first + s.old.rstrip("\n").count("\n") + 1))


class LineTrace:
    """Which lines of the given functions' code objects run while active (``sys.settrace``; other frames are not
    traced line by line). The code is deterministic given its inputs, so a slip whose lines the faithful run never
    executes cannot change that run: the broken run is the same run (the cell is inert without running it)."""

    def __init__(self, functions: list[Callable[..., Any]]) -> None:
        self.codes = {fn.__code__ for fn in functions}
        self.executed: dict[Any, set[int]] = {}

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code in self.codes:
            seen = self.executed.setdefault(frame.f_code, set())

            def local(frame: Any, event: str, arg: Any) -> Any:
                if event == "line":
                    seen.add(frame.f_lineno)
                return local
            return local
        return None

    def reached(self, s: Slip) -> bool:
        return bool(snippet_lines(s) & self.executed.get(faithful_function(s).__code__, set()))

    def __enter__(self) -> "LineTrace":
        self._previous = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.settrace(self._previous)

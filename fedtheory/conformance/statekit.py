"""Reading and writing the per-client parts of an implementation's state (the contract's mapping layout).

A state the kit can read is a mapping whose per-client entries are ``{cid: vector}`` under the paper's names
(e.g. DANE+ (B.84) ``{"h_i": ...}``, FedRed ``{"x_i": ..., "h_i": ...}``). Anything else is opaque: the
properties that must read or set it report "not applicable" and the ones that only look at the returned model
apply.

The wrappers at the end change how a correct implementation keeps its state between rounds, for the power set:
:func:`opaque` (correct: an object the kit cannot read), :func:`sealed` (correct: such an object, and a
state it did not make is refused, as a framework's own code would), :func:`in_place` (correct: the given state
updated in place and returned) and three state-carried slips (:func:`forgetful`,
:func:`by_position`, :func:`zero_absent`), invisible in any single round from a given state, which only the
multi-round properties catch.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .contract import call_round
from .instance import Instance

__all__ = ["opaque_reason", "own_state_reason", "rows", "rows_or_initial", "make_state", "relative", "opaque", "sealed", "in_place", "forgetful",
           "by_position", "zero_absent"]


def opaque_reason(state: Any, keys: Sequence[str]) -> str:
    """'' when ``state`` is a mapping with every key in ``keys``, else why the kit cannot read it."""
    if isinstance(state, Mapping) and all(k in state for k in keys):
        return ""
    names = " and ".join(f'"{k}"' for k in keys)
    return f"state is opaque (a mapping with {names} makes this property applicable)"


def own_state_reason(impl: Callable[..., Any], inst: Instance, hyper: Mapping[str, Any], keys: Sequence[str]) -> str:
    """'' when a round from ``state=None`` returns a state the kit can read, else why not.

    A property that hands the implementation a state built by the kit (a random consistent state, the fixed
    point) asks this first: an implementation whose own state is opaque (a tuple, an object, an array) cannot
    be handed a mapping, and feeding it one would only crash its code, a verdict about the kit, not about it.
    Such a property is then not applicable; the multi-round properties check the opaque state through the
    models it produces."""
    _, state = call_round(impl, inst.x0, inst.clients, None, hyper, np.random.default_rng(0))
    return opaque_reason(state, keys)


def rows(state: Mapping[str, Any], key: str, inst: Instance) -> np.ndarray:
    """(n, d) float64 from ``state[key]`` = {cid: vector} (a missing client is a contract error)."""
    part = state[key]
    missing = [c.cid for c in inst.clients if c.cid not in part]
    if missing:
        raise KeyError(f"state[{key!r}] has no entry for clients {missing}")
    return np.stack([np.asarray(part[c.cid], dtype=np.float64).reshape(-1) for c in inst.clients])


def rows_or_initial(state: Mapping[str, Any], key: str, inst: Instance, initial: np.ndarray) -> np.ndarray:
    """(n, d) float64 from ``state[key]`` = {cid: vector}; a client without an entry has its ``initial`` row (the
    paper's initial value: an implementation need not store clients it has not seen)."""
    part = state[key]
    return np.stack([np.asarray(part[c.cid], dtype=np.float64).reshape(-1) if c.cid in part else initial[i]
                     for i, c in enumerate(inst.clients)])


def make_state(inst: Instance, **parts: np.ndarray) -> dict:
    """A state in the mapping layout: each keyword is a (n, d) array stored as {cid: row copy}."""
    return {k: {c.cid: np.array(v[i], dtype=np.float64) for i, c in enumerate(inst.clients)}
            for k, v in parts.items()}


def relative(pairs: Mapping[str, tuple[np.ndarray, np.ndarray]], scale: float) -> tuple[str, float]:
    """(name of the worst part, its error ||got - want|| / scale) over named (got, want) pairs."""
    errs = {k: float(np.linalg.norm(np.asarray(g, dtype=np.float64) - w)) for k, (g, w) in pairs.items()}
    worst = max(errs, key=errs.get)
    return worst, errs[worst] / max(scale, 1e-300)


class _Box:
    """A state the kit cannot read (a framework's own object)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


def _inner(state: Any) -> Any:
    """What the wrapped implementation stored: the boxed state, or a state the kit set in the contract's layout."""
    return state.inner if isinstance(state, _Box) else state


def opaque(impl: Callable[..., Any]) -> Callable[..., Any]:
    """The same implementation keeping its state in an object the kit cannot read (correct)."""
    def wrapped(x, clients, *, state=None, **kw):
        x_new, st = impl(x, clients, state=_inner(state), **kw)
        return x_new, _Box(st)
    return wrapped


class _Sealed:
    """A framework's own state object: its code accepts nothing else."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


def sealed(impl: Callable[..., Any]) -> Callable[..., Any]:
    """The same implementation keeping its state in its own object and refusing any other state (correct): the
    kit must check it through its own returned state, never by handing it a state in the contract's layout."""
    def wrapped(x, clients, *, state=None, **kw):
        if state is not None and not isinstance(state, _Sealed):
            raise TypeError(f"this implementation's state is its own object, got {type(state).__name__}")
        x_new, st = impl(x, clients, state=None if state is None else state.inner, **kw)
        return x_new, _Sealed(st)
    return wrapped


def _update_in_place(old: Any, new: Any) -> Any:
    """``new``'s values written into ``old``'s arrays and dicts where the layouts match, else ``new``."""
    if isinstance(old, dict) and isinstance(new, Mapping):
        for key, value in new.items():
            old[key] = _update_in_place(old[key], value) if key in old else value
        return old
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray) and old.shape == new.shape \
            and old.dtype == new.dtype and old.flags.writeable:
        old[...] = new
        return old
    return new


def in_place(impl: Callable[..., Any]) -> Callable[..., Any]:
    """The same implementation updating the state it is given in place (``state["c"] += ...``) and returning
    that same object (correct): the kit must read what it gave before the call, not after."""
    def wrapped(x, clients, *, state=None, **kw):
        x_new, st = impl(x, clients, state=copy.deepcopy(state), **kw)
        return x_new, st if state is None else _update_in_place(state, st)
    return wrapped


def forgetful(impl: Callable[..., Any], key: str, *, server: str | None = None) -> Callable[..., Any]:
    """Wrong: the per-client part ``key`` (and optionally the server part) is lost between rounds (a framework
    that re-creates its client objects every round); the state is opaque, so only multi-round checks see it."""
    def wrapped(x, clients, *, state=None, **kw):
        inner = None
        if state is not None:
            inner = dict(_inner(state), **{key: {}})
            if server:
                inner[server] = np.zeros_like(np.asarray(inner[server]))
        x_new, st = impl(x, clients, state=inner, **kw)
        return x_new, _Box(st)
    return wrapped


def by_position(impl: Callable[..., Any], key: str) -> Callable[..., Any]:
    """Wrong: per-client state stored by the slot in this round's participant list instead of the client id,
    so under partial participation a client gets another client's control variate."""
    def wrapped(x, clients, *, state=None, **kw):
        inner = None
        if state is not None:
            slots = _inner(state)[key]
            inner = dict(_inner(state), **{key: {c.cid: slots[j] for j, c in enumerate(clients) if j in slots}})
        x_new, st = impl(x, clients, state=inner, **kw)
        ids = {c.cid: j for j, c in enumerate(clients)}
        st = dict(st, **{key: {ids.get(cid, cid): v for cid, v in st[key].items()}})
        return x_new, _Box(st)
    return wrapped


def zero_absent(impl: Callable[..., Any], key: str) -> Callable[..., Any]:
    """Wrong: clients that did not participate have their stored state reset to zero (readable state)."""
    def wrapped(x, clients, *, state=None, **kw):
        x_new, st = impl(x, clients, state=state, **kw)
        here = {c.cid for c in clients}
        return x_new, dict(st, **{key: {cid: (v if cid in here else np.zeros_like(v)) for cid, v in st[key].items()}})
    return wrapped

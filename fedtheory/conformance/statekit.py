"""Reading and writing the per-client parts of an implementation's state (the contract's mapping layout).

A state the kit can read is a mapping whose per-client entries are ``{cid: vector}`` under the paper's names
(e.g. DANE+ (B.84) ``{"h_i": ...}``, FedRed ``{"x_i": ..., "h_i": ...}``). Anything else is opaque: the
properties that must read or set it report "n.a." and the ones that only look at the returned model apply.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .instance import Instance

__all__ = ["opaque_reason", "rows", "make_state", "relative"]


def opaque_reason(state: Any, keys: Sequence[str]) -> str:
    """'' when ``state`` is a mapping with every key in ``keys``, else why the kit cannot read it."""
    if isinstance(state, Mapping) and all(k in state for k in keys):
        return ""
    names = " and ".join(f'"{k}"' for k in keys)
    return f"state is opaque (a mapping with {names} makes this property applicable)"


def rows(state: Mapping[str, Any], key: str, inst: Instance) -> np.ndarray:
    """(n, d) float64 from ``state[key]`` = {cid: vector} (a missing client is a contract error)."""
    part = state[key]
    missing = [c.cid for c in inst.clients if c.cid not in part]
    if missing:
        raise KeyError(f"state[{key!r}] has no entry for clients {missing}")
    return np.stack([np.asarray(part[c.cid], dtype=np.float64).reshape(-1) for c in inst.clients])


def make_state(inst: Instance, **parts: np.ndarray) -> dict:
    """A state in the mapping layout: each keyword is a (n, d) array stored as {cid: row copy}."""
    return {k: {c.cid: np.array(v[i], dtype=np.float64) for i, c in enumerate(inst.clients)}
            for k, v in parts.items()}


def relative(pairs: Mapping[str, tuple[np.ndarray, np.ndarray]], scale: float) -> tuple[str, float]:
    """(name of the worst part, its error ||got - want|| / scale) over named (got, want) pairs."""
    errs = {k: float(np.linalg.norm(np.asarray(g, dtype=np.float64) - w)) for k, (g, w) in pairs.items()}
    worst = max(errs, key=errs.get)
    return worst, errs[worst] / max(scale, 1e-300)

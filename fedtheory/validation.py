"""Small validators shared by every hyperparameter class and generator.

Each raises ``ValueError`` (or ``TypeError``) naming the parameter and the valid range, so that a bad
configuration fails at construction instead of producing NaNs rounds later.
"""
from __future__ import annotations

import json
import math
import os
from numbers import Integral, Real
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as float after checking it is a finite real in the stated interval."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    lo_br = "(" if low_open else "["
    hi_br = ")" if high_open else "]"
    rng = f"{lo_br}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi_br}"
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be in {rng}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name} must be in {rng}, got {value}")
    return value


def check_positive(name: str, value: Any) -> float:
    return check_real(name, value, low=0.0, low_open=True)


def check_nonnegative(name: str, value: Any) -> float:
    return check_real(name, value, low=0.0)


def check_probability(name: str, value: Any) -> float:
    """A probability in (0, 1] (zero would mean 'never', which no algorithm here can run with)."""
    return check_real(name, value, low=0.0, high=1.0, low_open=True)


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """A switch: True or False (numpy bools too); anything else, e.g. the string "no", is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_seed(name: str, seed: Any, *, allow_generator: bool = False) -> Any:
    """Validate a seed for ``np.random.default_rng``: an integer >= 0 (or a ``np.random.Generator`` where
    ``allow_generator``, e.g. the run loop, which then draws from the caller's stream).

    Generators of problems take integer seeds only: a problem instance must be re-creatable from its recorded
    seed (the catalogue stores it, and some problems re-derive draws from it), which rules out None (fresh OS
    entropy) and stateful generators. Returns ``seed`` unchanged (an ``int`` for integer input) so that valid
    seeds give bitwise the same streams as before.
    """
    if allow_generator and isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (Integral, np.integer)):
        kinds = "an integer >= 0" + (" or a numpy.random.Generator" if allow_generator else "")
        raise TypeError(f"{name} must be {kinds}, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"{name} must be an integer in [0, inf), got {seed}")
    return int(seed)


def check_finite_array(name: str, value: Any, *, shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real array, got {type(value).__name__} {value!r:.80}") from None
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr


def check_weights(weights: Any, n_clients: int) -> np.ndarray:
    """Client weights: positive, length ``n_clients``, normalised to sum to one (None means uniform)."""
    if weights is None:
        return np.full(n_clients, 1.0 / n_clients)
    w = check_finite_array("weights", weights, shape=(n_clients,))
    if np.any(w <= 0):
        raise ValueError("weights must be strictly positive")
    total = w.sum()
    # Weights already normalised up to rounding are kept bit for bit, so that a problem rebuilt from its own
    # (normalised) weights -- e.g. a catalogue instance loaded from its shipped arrays -- is the same problem.
    if abs(total - 1.0) <= n_clients * np.finfo(np.float64).eps:
        return w.copy()  # a copy: the problem must not alias the caller's array
    return w / total


def check_dissimilarity_request(delta_A: Any, delta_B: Any, *, n_clients: int, zeta2: float = 0.0
                                ) -> tuple[str, float]:
    """Parse a generator's dissimilarity request: at most one of ``delta_A``/``delta_B`` (neither means 0).

    Returns (which, delta) with ``which`` the parameter's name. One client has no dissimilarity, so with
    ``n_clients == 1`` both delta and ``zeta2`` must be 0.
    """
    if delta_A is not None and delta_B is not None:
        raise ValueError("give at most one of delta_A and delta_B")
    which = "delta_A" if delta_A is not None else "delta_B"
    delta = check_nonnegative(which, delta_A if delta_A is not None else (delta_B or 0.0))
    if n_clients == 1 and (delta > 0 or zeta2 > 0):
        raise ValueError(f"with n_clients=1, {which if delta > 0 else 'zeta2'} must be 0 (one client has no "
                         "dissimilarity)")
    return which, delta


class QuadraticRequest(NamedTuple):
    """A quadratic generator's request, checked (:func:`check_quadratic_request`)."""

    n: int
    d: int
    mu: float
    L: float
    which: str   # "delta_A" or "delta_B": the dissimilarity requested
    delta: float
    zeta2: float
    x_star_norm: float
    weights: np.ndarray


def check_quadratic_request(n_clients: Any, dim: Any, mu: Any, L: Any, delta_A: Any, delta_B: Any, zeta2: Any,
                            x_star_norm: Any, weights: Any) -> QuadraticRequest:
    """The request of a quadratic generator with exact constants (:func:`fedtheory.problems.quadratic` and
    :func:`fedtheory.problems.structured.structured_quadratic`), or ValueError naming the parameter and its
    feasible range: n_clients >= 1, dim >= 2, 0 <= mu <= L, zeta2 >= 0, x_star_norm >= 0, at most one dissimilarity
    with 0 <= delta <= L - mu (0 when mu == L: all Hessians are then mu I), and valid client weights."""
    n = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=2)
    mu = check_nonnegative("mu", mu)
    L = check_real("L", L, low=mu)
    zeta2 = check_nonnegative("zeta2", zeta2)
    x_star_norm = check_nonnegative("x_star_norm", x_star_norm)
    which, delta = check_dissimilarity_request(delta_A, delta_B, n_clients=n, zeta2=zeta2)
    if mu == L and delta > 0:
        raise ValueError(f"{which} must be 0 when mu == L (all Hessians equal mu I); feasible range [0, 0]")
    if delta > L - mu:
        raise ValueError(f"{which} must be in [0, L - mu] = [0, {L - mu:g}], got {delta:g}")
    return QuadraticRequest(n, d, mu, L, which, delta, zeta2, x_star_norm, check_weights(weights, n))


def available_memory() -> int | None:
    """Bytes this process can still allocate without swapping, or None where the platform does not say.

    Linux: ``MemAvailable`` of /proc/meminfo (free memory plus reclaimable caches), capped by a cgroup memory
    limit when one is set (containers); elsewhere ``os.sysconf``'s free physical pages. No psutil needed.
    """
    found: list[int] = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file) as fh:
                limit = fh.read().strip()
            with open(usage_file) as fh:
                usage = int(fh.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:  # "max" or a huge number means no limit
            found.append(max(int(limit) - usage, 0))
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            return None
    return min(found)


def _format_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1e3:.1f} kB"


def check_dense_memory(n_clients: int, dim: int, arrays: float, *, what: str, hint: str = "",
                       n_name: str = "n_clients", d_name: str = "dim") -> None:
    """Refuse, before allocating, a generator whose ``arrays`` arrays of n·d² float64 cannot fit in memory.

    ``arrays`` is the generator's measured peak in units of one (n, d, d) float64 array (tracemalloc, see the
    callers). Raises ValueError naming both size parameters, the memory needed, the memory available
    (:func:`available_memory`) and the largest ``dim`` (resp. ``n_clients``) that fits with the other
    unchanged, instead of a MemoryError after minutes of allocation (or the machine swapping).
    """
    one = 8.0 * n_clients * dim * dim
    need = arrays * one
    available = available_memory()
    if available is None or need <= available:
        return
    d_max = math.isqrt(int(available / (arrays * 8.0 * n_clients)))
    n_max = int(available / (arrays * 8.0 * dim * dim))
    culprit = (f"{d_name}={dim} is too large even for one client" if n_max < 1
               else f"{d_name}={dim} is too large for {n_name}={n_clients}")
    ranges = (f"{d_name} must be <= {d_max} with {n_name}={n_clients}"
              + (f" (or {n_name} <= {n_max} with {d_name}={dim})" if n_max >= 1 else ""))
    raise ValueError(f"{culprit}: {what} holds about {arrays:g} arrays of {n_name}*{d_name}^2 float64 "
                     f"({_format_bytes(one)} each), {_format_bytes(need)} in all, and {_format_bytes(available)} "
                     f"of memory is available; {ranges}{hint}")


def read_json(path: Any) -> Any:
    """Parse the JSON file at ``path``; a malformed file raises ValueError naming it (json's own message, e.g.
    "Expecting ',' delimiter: line 12 column 3", does not say which file)."""
    path = Path(path)
    text = path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno}; the file "
                         f"is truncated or was edited by hand)") from exc

"""The round loop: run an algorithm on a problem and record a :class:`~fedtheory.trace.Trace`."""
from __future__ import annotations

import time
from dataclasses import fields
from typing import Any

import numpy as np

from .algorithms.base import RoundLog
from .problems.base import NonFiniteInputError, Problem
from .trace import COLUMNS, Trace
from .validation import check_finite_array, check_int, check_positive, check_seed

#: A run is declared diverged when the gap exceeds this multiple of its starting value.
DIVERGENCE_FACTOR = 1e12

_COST_FIELDS = ("uplink_bits", "downlink_bits", "uplink_nnz", "downlink_nnz", "vectors_up", "vectors_down",
                "local_grad_evals", "participants", "communicated")


def _finite_state(state: Any) -> bool:
    for f in fields(state):
        value = getattr(state, f.name)
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
            return False
    return True


def run(algorithm: Any, problem: Problem, rounds: int, *, seed: int | np.random.Generator = 0,
        x0: np.ndarray | None = None, record_every: int = 1, tol: float | None = None) -> Trace:
    """Run ``rounds`` rounds of ``algorithm`` on ``problem`` and return the per-round trace.

    Parameters
    ----------
    algorithm:
        An object with ``init(problem, x0)`` and ``round(problem, state, rng)`` (see
        :mod:`fedtheory.algorithms.base`).
    rounds:
        Number of rounds (>= 0).
    seed:
        Seed of the run's only random generator (or a generator): the same seed gives a bitwise identical trace
        (wall time excepted).
    x0:
        Starting point, shape ``(d,)``; zeros by default.
    record_every:
        Record every k-th round (the first and last are always recorded); costs of skipped rounds are added to
        the next record.
    tol:
        Stop with ``status="converged"`` once the gap is at most ``tol``.

    A run whose state becomes non-finite, whose iterates reach an oracle as NaN or inf within a round (the
    oracle raises :class:`~fedtheory.problems.base.NonFiniteInputError`), or whose gap exceeds 1e12 times its
    start, stops with ``status="diverged"`` and ``stopped_at`` set to that round; the trace keeps only finite
    records.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a fedtheory Problem (e.g. from fedtheory.problems), got "
                        f"{type(problem).__name__}")
    if isinstance(algorithm, type) or not (callable(getattr(algorithm, "init", None))
                                           and callable(getattr(algorithm, "round", None))):
        raise TypeError(f"algorithm must provide init(problem, x0) and round(problem, state, rng) (e.g. a class "
                        f"from fedtheory.algorithms), got "
                        f"{'the class ' + algorithm.__name__ if isinstance(algorithm, type) else type(algorithm).__name__}")
    rounds = check_int("rounds", rounds, low=0)
    horizon = getattr(problem, "horizon", None)  # an online stream has T steps, one per round
    if isinstance(horizon, int) and rounds > horizon:
        raise ValueError(f"rounds must be in [0, {horizon}]: the problem is a stream of T = {horizon} steps "
                         f"(one per round), got rounds={rounds}")
    record_every = check_int("record_every", record_every, low=1)
    if tol is not None:
        tol = check_positive("tol", tol)
    rng = np.random.default_rng(check_seed("seed", seed, allow_generator=True))  # a Generator is used as is
    x0 = np.zeros(problem.dim) if x0 is None else check_finite_array("x0", x0, shape=(problem.dim,)).copy()

    state = algorithm.init(problem, x0)
    records: dict[str, list] = {c: [] for c in COLUMNS}
    extra: dict[str, list] = {}
    pending = {k: 0.0 for k in _COST_FIELDS}
    pending_extra: dict[str, float] = {}
    start = time.perf_counter()

    def record(r: int, metrics: dict[str, float]) -> None:
        records["round"].append(r)
        for key in ("gap", "dist2", "grad_norm2"):
            records[key].append(metrics.get(key, np.nan))
        # further keys a problem's metrics() reports (e.g. accuracy of neural problems) become extra columns
        for key, value in metrics.items():
            if key not in ("gap", "dist2", "grad_norm2"):
                pending_extra[key] = float(value)
        for key in _COST_FIELDS:
            records[key].append(pending[key])
            pending[key] = 0.0
        records["wall_time"].append(time.perf_counter() - start)
        for key in set(extra) | set(pending_extra):
            column = extra.setdefault(key, [np.nan] * (len(records["round"]) - 1))
            column.append(pending_extra.pop(key, np.nan))

    metrics = problem.metrics(state.x)
    gap0 = metrics["gap"]
    record(0, metrics)
    status, stopped_at = "completed", None
    if tol is not None and gap0 <= tol:
        status = "converged"
        rounds = 0
    for r in range(1, rounds + 1):
        try:
            new_state, log = algorithm.round(problem, state, rng)
        except NonFiniteInputError:
            # The round started from a finite state (checked below) and reached an oracle with NaN or inf: its
            # iterates overflowed inside the round (e.g. local steps too large), which is divergence, not a bug
            # of the caller. The oracle refuses the point rather than returning NaN-filled output.
            status, stopped_at = "diverged", r
            break
        if not _finite_state(new_state):
            status, stopped_at = "diverged", r
            break
        state = new_state
        _accumulate(pending, pending_extra, log)
        last = r == rounds
        need_metrics = last or r % record_every == 0 or tol is not None
        if not need_metrics:
            continue
        metrics = problem.metrics(state.x)
        gap = metrics["gap"]
        if not np.isfinite(gap) or (np.isfinite(gap0) and gap > DIVERGENCE_FACTOR * max(gap0, 1e-300)):
            status, stopped_at = "diverged", r
            break
        converged = tol is not None and gap <= tol
        if last or converged or r % record_every == 0:
            record(r, metrics)
        if converged:
            status, stopped_at = "converged", r
            break

    columns = {k: np.asarray(v, dtype=np.int64 if k == "round" else np.float64) for k, v in records.items()}
    return Trace(columns=columns, extra={k: np.asarray(v, dtype=np.float64) for k, v in extra.items()},
                 status=status, stopped_at=stopped_at, x_final=state.x.copy(), state=state,
                 algorithm=getattr(algorithm, "name", type(algorithm).__name__))


def _accumulate(pending: dict[str, float], pending_extra: dict[str, float], log: RoundLog) -> None:
    for key in _COST_FIELDS:
        pending[key] += float(getattr(log, key))
    for key, value in log.extra.items():
        pending_extra[key] = float(value)  # per-round quantities: a record keeps the latest round's value

"""fedtheory's own algorithms through the conformance contract: the clients' quadratic, rebuilt for fedtheory.

The family adapters (``families/<family>/native.py``) rebuild a :class:`~fedtheory.problems.quadratic.QuadraticProblem`
from the clients' data (A_i = Z_i^T Z_i / m_i, b_i = Z_i^T y_i / m_i) and run one ``round_given`` of the algorithm
with the participants as the draw. Stateful methods need all N clients in the problem (their server state is
weighted by 1/N); clients that do not participate are never touched by ``round_given``, so they enter as
placeholders (A = I, b = 0) with their weight 1/N -- which is why the stateful adapters support the papers' uniform
weighting only. Client ids are labels, never positions: :func:`population` gives the rows' ids (the clients
stored in the state, then this round's participants, sorted), :func:`state_rows` and :func:`keyed` move a state
``{cid: vector}`` in and out of those rows.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...algorithms import Draw
from ...problems.quadratic import QuadraticProblem

__all__ = ["problem_of", "population", "round_function", "state_rows", "keyed", "stacked"]


def population(clients, num_clients: int | None, *parts: Mapping | None) -> list:
    """The ids of the problem's rows: every id stored in ``parts`` (a state's per-client mappings) and this round's
    participants, sorted; the N - len(ids) rows after them are placeholders for clients never seen."""
    ids = sorted({c.cid for c in clients}.union(*(set(p) for p in parts if p)))
    if num_clients is not None and len(ids) > num_clients:
        raise ValueError(f"num_clients = {num_clients} but {len(ids)} client ids were seen: {ids}")
    return ids


def problem_of(clients, weighting: str, num_clients: int | None = None,
               ids: Sequence | None = None) -> tuple[QuadraticProblem, np.ndarray]:
    """The quadratic of the clients (all N rows when ``num_clients`` is given: row r is client ``ids[r]``, by
    default the participants' ids sorted) and the participants' rows."""
    d = clients[0].features.shape[1]
    n = len(clients) if num_clients is None else num_clients
    if num_clients is None:
        rows = np.arange(n)
    else:
        where = {cid: r for r, cid in enumerate(population(clients, num_clients) if ids is None else ids)}
        rows = np.array([where[c.cid] for c in clients])
    A = np.broadcast_to(np.eye(d), (n, d, d)).copy()
    b = np.zeros((n, d))
    for r, c in zip(rows, clients):  # adapter glue: one Gram matrix per client
        A[r] = c.features.T @ c.features / c.num_examples
        b[r] = c.features.T @ c.targets / c.num_examples
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    if weighting == "num_examples":
        if num_clients is not None and len(clients) != num_clients:
            raise ValueError("the native stateful adapters support weighting='num_examples' with full participation only")
        w = np.array([c.num_examples for c in clients], dtype=np.float64)
    else:
        w = np.ones(n)
    return QuadraticProblem(A, b, w), np.sort(rows)


def _weighting(weighting: str) -> str:
    return "problem" if weighting == "num_examples" else "uniform"


def round_function(make_algorithm: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """Any algorithm written with fedtheory's API, as the conformance contract's round function.

    ``make_algorithm(**hyper)`` builds the algorithm from the kit's hyperparameters (``local_steps``,
    ``local_step``, ``server_step``, ... of the family checked; ``weighting`` is consumed here: the clients'
    ``num_examples`` become the problem's weights, or uniform ones). Each call runs one ``round_given`` from
    ``init(problem, x)`` with the participants as the draw and returns the new server model: the kit's
    stateless families (FedAvg, FedProx) check an algorithm this way, e.g.
    ``conformance.check(round_function(lambda **h: MyFedAvg(**h)), claims="fedavg")``.
    """
    def impl(x, clients, *, state=None, rng=None, weighting="num_examples", **hyper):
        problem, S = problem_of(clients, weighting)
        alg = make_algorithm(**hyper)
        new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
        return new.x

    impl.__qualname__ = getattr(make_algorithm, "__qualname__", "round_function")
    return impl


def state_rows(part: Mapping | None, ids: Sequence, n: int, d: int) -> np.ndarray:
    """(n, d) rows of a per-client state ``part`` = {cid: vector} (row r is client ``ids[r]``), zero for clients
    without an entry (or no state)."""
    M = np.zeros((n, d))
    for r, cid in enumerate(ids):
        if part and cid in part:
            M[r] = np.asarray(part[cid], dtype=np.float64)
    return M


def keyed(M: np.ndarray, ids: Sequence) -> dict:
    """The rows of ``M`` back as {cid: vector} (row r is client ``ids[r]``)."""
    return {cid: M[r].copy() for r, cid in enumerate(ids)}


def stacked(part: Mapping | None, clients, d: int) -> np.ndarray:
    """(len(clients), d) rows of ``part`` = {cid: vector} in the clients' order, or zeros when there is none."""
    if part is None:
        return np.zeros((len(clients), d))
    return np.stack([np.asarray(part[c.cid], dtype=np.float64) for c in clients])

"""fedtheory's own algorithms through the conformance contract: the clients' quadratic, rebuilt for fedtheory.

The family adapters (``families/<family>/native.py``) rebuild a :class:`~fedtheory.problems.quadratic.QuadraticProblem`
from the clients' data (A_i = Z_i^T Z_i / m_i, b_i = Z_i^T y_i / m_i) and run one ``round_given`` of the algorithm
with the participants as the draw. Stateful methods need all N clients in the problem (their server state is
weighted by 1/N); clients that do not participate are never touched by ``round_given``, so they enter as
placeholders (A = I, b = 0) with their weight 1/N -- which is why the stateful adapters support the papers' uniform
weighting only. Client ids must be the integers 0..N-1 (the kit's are).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...algorithms import Draw
from ...problems.quadratic import QuadraticProblem

__all__ = ["problem_of", "round_function", "state_rows", "stacked"]


def problem_of(clients, weighting: str, num_clients: int | None = None) -> tuple[QuadraticProblem, np.ndarray]:
    """The quadratic of the clients (all N rows when ``num_clients`` is given) and the participants' rows."""
    d = clients[0].features.shape[1]
    n = len(clients) if num_clients is None else num_clients
    rows = np.arange(n) if num_clients is None else np.array([int(c.cid) for c in clients])
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


def state_rows(state, key: str, n: int, d: int) -> np.ndarray:
    """(n, d) rows of ``state[key]`` = {cid: vector}, zero for clients without an entry (or no state)."""
    M = np.zeros((n, d))
    for cid, v in (state or {}).get(key, {}).items():
        M[int(cid)] = v
    return M


def stacked(part, n: int, d: int) -> np.ndarray:
    """(n, d) rows of ``part`` = {i: vector}, or zeros when there is none."""
    return np.stack([np.asarray(part[i], dtype=np.float64) for i in range(n)]) if part is not None else np.zeros((n, d))

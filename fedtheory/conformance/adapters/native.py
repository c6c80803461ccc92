"""fedtheory's own algorithms and compressors through the conformance contract (what the kit must pass).

The adapter rebuilds a :class:`~fedtheory.problems.quadratic.QuadraticProblem` from the clients' data
(A_i = Z_i^T Z_i / m_i, b_i = Z_i^T y_i / m_i) and runs one ``round_given`` of the algorithm with the
participants as the draw. Stateful methods need all N clients in the problem (their server state is weighted
by 1/N); clients that do not participate are never touched by ``round_given``, so they enter as placeholders
(A = I, b = 0) with their weight 1/N -- which is why the stateful adapters support the papers' uniform
weighting only. Client ids must be the integers 0..N-1 (the kit's are).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...algorithms import (Draw, FedAvg, FedDyn, FedDynState, FedProx, Scaffnew, ScaffnewState, Scaffold,
                           ScaffoldState)
from ...problems.quadratic import QuadraticProblem
from ..reference import compressor

__all__ = ["fedavg", "fedprox", "scaffold", "feddyn", "scaffnew", "NATIVE", "round_function"]


def _problem(clients, weighting: str, num_clients: int | None = None) -> tuple[QuadraticProblem, np.ndarray]:
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
        problem, S = _problem(clients, weighting)
        alg = make_algorithm(**hyper)
        new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
        return new.x

    impl.__qualname__ = getattr(make_algorithm, "__qualname__", "round_function")
    return impl


fedavg = round_function(lambda local_steps=5, local_step=0.1, server_step=1.0, **_: FedAvg(
    local_steps=local_steps, local_step=local_step, server_step=server_step))
fedavg.__qualname__ = "fedavg"


def fedprox(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=1.0, server_step=1.0,
            weighting="num_examples", **_):
    problem, S = _problem(clients, weighting)
    solver = {"solver": "exact"} if local_steps is None else {"solver": "gd", "local_steps": local_steps,
                                                               "local_step": local_step}
    alg = FedProx(prox=prox, server_step=server_step, **solver)
    new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
    return new.x


def _rows(state, key: str, n: int, d: int) -> np.ndarray:
    M = np.zeros((n, d))
    for cid, v in (state or {}).get(key, {}).items():
        M[int(cid)] = v
    return M


def scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
             weighting="uniform", num_clients=None, **_):
    problem, S = _problem(clients, weighting, num_clients)
    C = _rows(state, "c_i", problem.n_clients, x.size)
    c = np.zeros(x.size) if state is None else np.asarray(state["c"])
    alg = Scaffold(local_steps=local_steps, local_step=local_step, server_step=server_step, option="II")
    new, _ = alg.round_given(problem, ScaffoldState(x=x, c=c, C=C), Draw(S))
    return new.x, {"c": new.c, "c_i": {i: new.C[i] for i in range(problem.n_clients)}}


def feddyn(x, clients, *, state=None, rng=None, alpha=1.0, weighting="uniform", num_clients=None, **_):
    problem, S = _problem(clients, weighting, num_clients)
    G = _rows(state, "g_i", problem.n_clients, x.size)
    h = np.zeros(x.size) if state is None else np.asarray(state["h"])
    alg = FedDyn(alpha=alpha, solver="exact")
    new, _ = alg.round_given(problem, FedDynState(x=x, h=h, G=G), Draw(S))
    return new.x, {"h": new.h, "g_i": {i: new.G[i] for i in range(problem.n_clients)}}


def scaffnew(x, clients, *, state=None, rng=None, step=0.5, p=0.5, local_steps=1, weighting="uniform",
             num_clients=None, **_):
    """``local_steps`` iterations of fedtheory's Scaffnew whose coins are (0, ..., 0, 1): one communication."""
    problem, S = _problem(clients, weighting, num_clients)
    n = problem.n_clients
    st = ScaffnewState(x=x, X=np.tile(x, (n, 1)), H=_rows(state, "h_i", n, x.size))
    alg = Scaffnew(step=step, p=p)
    for k in range(local_steps):
        st, _ = alg.round_given(problem, st, Draw(S, coin=(k == local_steps - 1)))
    return st.x, {"h_i": {i: st.H[i] for i in range(n)}}


#: family -> fedtheory's implementation through the contract.
NATIVE: dict[str, Callable[..., Any] | Any] = {
    "fedavg": fedavg, "fedprox": fedprox, "scaffold": scaffold, "feddyn": feddyn, "scaffnew": scaffnew,
    "compressor": compressor("qsgd", s=2),
}

from . import native_papers as _papers  # noqa: E402  (the five papers' algorithms, one module)

NATIVE.update({name: getattr(_papers, name) for name in ("dane", "fedred", "fedelasticnet_fedavg",
                                                      "fedelasticnet_scaffold", "fedelasticnet_feddyn", "efl", "docofl", "ofediq")})

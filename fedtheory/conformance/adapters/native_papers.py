"""fedtheory's DANE+ and FedRed through the conformance contract (what the kit must accept).

Each call rebuilds the clients' quadratic (:func:`fedtheory.conformance.adapters.native._problem`) and runs
one ``round_given`` of fedtheory's algorithm with the draw the kit supplied (or one drawn from ``rng``).
These are the "correct implementation" side of the kit's power measurement, never its expected side.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.dane import DANEDraw, DANEPlus, DANEState, sample_client
from ...algorithms.fedred import FedRed, FedRedDraw, FedRedState
from .native import _problem

__all__ = ["dane", "fedred"]


def _stack(part, n: int, d: int) -> np.ndarray:
    return np.stack([np.asarray(part[i], dtype=np.float64) for i in range(n)]) if part is not None else np.zeros((n, d))


def dane(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1,
         control_variate="gradient", m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
    problem, _S = _problem(clients, weighting)
    n = problem.n_clients
    inexact = {} if local_steps is None else {"solver": "gd", "stopping": "steps", "local_steps": local_steps,
                                              "local_step": local_step, "local_output": "last"}
    alg = DANEPlus(lam=lam, control_variate=control_variate, m=m, averaging=averaging, **inexact)
    if control_variate == "scaffnew":
        st = DANEState(x=x, r=0, h=_stack(None if state is None else state["h_i"], n, x.size)) if state is not None \
            else alg.init(problem, x)
    else:
        st = alg.init(problem, x)
    client = None
    if averaging == "random":
        client = int(draw["client"]) if draw is not None else sample_client(problem.weights, rng)
    new, _ = alg.round_given(problem, st, DANEDraw(client))
    if control_variate == "scaffnew":
        return new.x, {"h_i": {i: new.h[i] for i in range(n)}}
    return new.x


def fedred(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
           batch_size=None, weighting="uniform", draw=None, **_):
    """One iteration k of FedRed (Alg. 2) / FedRed-GD (Alg. 3) from x~_k; FedRed-SGD with the kit's minibatches
    (``draw["batches"]``) turned into the stochastic gradients of the draw."""
    problem, _S = _problem(clients, weighting)
    n, d = problem.n_clients, x.size
    alg = FedRed(lam=lam, eta=eta, p=p, solver=solver, reset=reset)
    if state is None:
        st = alg.init(problem, x)
    else:
        st = FedRedState(x=x, X=_stack(state["x_i"], n, d), H=_stack(state["h_i"], n, d), G=None)
    communicate = bool(draw["communicate"]) if draw is not None and "communicate" in draw else bool(rng.random() < p)
    grads = None
    if batch_size is not None:
        batches = (draw or {}).get("batches") or {
            c.cid: rng.choice(c.num_examples, size=batch_size, replace=False) for c in clients}
        grads = np.stack([c.features[np.asarray(batches[c.cid])].T
                          @ (c.features[np.asarray(batches[c.cid])] @ st.X[i] - c.targets[np.asarray(batches[c.cid])])
                          / len(batches[c.cid]) for i, c in enumerate(clients)])
        st = FedRedState(x=st.x, X=st.X, H=st.H, G=grads)
    new, _ = alg.round_given(problem, st, FedRedDraw(communicate))
    return new.x, {"x_i": {i: new.X[i] for i in range(n)}, "h_i": {i: new.H[i] for i in range(n)}}


def fedelasticnet_fedavg(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                         l1_mode="subgradient", server_step=1.0, weighting="num_examples", **_):
    """FedElasticNet Alg. 1 = fedtheory's FedProx with l1 (exact solve, or K local steps)."""
    from ...algorithms import Draw, FedProx

    problem, S = _problem(clients, weighting)
    solver = {"solver": "exact"} if local_steps is None else {"solver": "gd", "local_steps": local_steps,
                                                               "local_step": local_step}
    alg = FedProx(prox=prox, l1=l1, l1_mode=l1_mode, server_step=server_step, **solver)
    new, _ = alg.round_given(problem, alg.init(problem, x), Draw(S))
    return new.x


def fedelasticnet_scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                           l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, **_):
    """FedElasticNet Alg. 2 = fedtheory's Scaffold (option II) with prox and l1."""
    from ...algorithms import Draw, Scaffold, ScaffoldState
    from .native import _rows

    problem, S = _problem(clients, weighting, num_clients)
    C = _rows(state, "c_i", problem.n_clients, x.size)
    c = np.zeros(x.size) if state is None else np.asarray(state["c"])
    alg = Scaffold(local_steps=local_steps, local_step=local_step, server_step=server_step, option="II", prox=prox,
                   l1=l1, l1_mode=l1_mode)
    new, _ = alg.round_given(problem, ScaffoldState(x=x, c=c, C=C), Draw(S))
    return new.x, {"c": new.c, "c_i": {i: new.C[i] for i in range(problem.n_clients)}}


def fedelasticnet_feddyn(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                         weighting="uniform", num_clients=None, **_):
    """FedElasticNet Alg. 3 = fedtheory's FedDyn with l1 and the declared reading of sign(0)."""
    from ...algorithms import Draw, FedDyn, FedDynState
    from .native import _rows

    problem, S = _problem(clients, weighting, num_clients)
    G = _rows(state, "g_i", problem.n_clients, x.size)
    h = np.zeros(x.size) if state is None else np.asarray(state["h"])
    alg = FedDyn(alpha=alpha, l1=l1, sign_at_zero=sign_at_zero, solver="exact")
    new, _ = alg.round_given(problem, FedDynState(x=x, h=h, G=G), Draw(S))
    return new.x, {"h": new.h, "g_i": {i: new.G[i] for i in range(problem.n_clients)}}


def efl(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
        variant="consistent", weighting="num_examples", draw=None, **_):
    """One round of fedtheory's EFL with the kit's s_k; the state is EFLState's fields as a mapping."""
    from ...algorithms.efl import EFL, EFLDraw, EFLState

    problem, _S = _problem(clients, weighting)
    n = problem.n_clients
    alg = EFL(E=E, step=step, lam=lam, q=q, weighting=aggregation, variant=variant)
    st = alg.init(problem, x) if state is None else EFLState(x=x, **{k: np.asarray(v) if k not in ("tau", "clock")
                                                                      else v for k, v in state.items()})
    steps = np.array([int(draw["steps"][c.cid]) for c in clients]) if draw is not None else \
        alg.draw(problem, st, rng).steps
    new, _ = alg.round_given(problem, st, EFLDraw(steps=steps.astype(np.int64)))
    return new.x, {f: getattr(new, f) for f in ("client_x", "client_res", "server_res", "broadcast", "U", "V",
                                                "u_cache", "v_cache", "last_seen", "client_end", "tau", "clock")}


class _Grid:
    """The kit's grid compressor h round(x / h) as a fedtheory compressor (compress(X, rng) -> (X_hat, bits))."""

    def __init__(self, h: float) -> None:
        self.h = h

    def compress(self, X, rng=None):
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        out = X.copy() if not self.h else self.h * np.round(X / self.h)
        return out, np.full(X.shape[0], 64.0 * X.shape[1])


def docofl(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, weighting="uniform",
           num_clients=None, draw=None, grid=None, **_):
    """One round of fedtheory's DoCoFL with the kit's leads and grid compressors."""
    from ...algorithms.docofl import DoCoFL, DoCoFLDraw, DoCoFLState, TwoClassParticipation

    problem, S = _problem(clients, weighting, num_clients)
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}
    alg = DoCoFL(step=step, n_sampled=len(clients), period=period, queue_size=queue_size, stochastic=False,
                 anchor_compressor=_Grid(g["anchor"]), correction_compressor=_Grid(g["correction"]),
                 uplink_compressor=_Grid(g["gradient"]), participation=TwoClassParticipation())
    st = alg.init(problem, x) if state is None else DoCoFLState(
        x=x, t=int(state["t"]), anchors=np.asarray(state["anchors"], dtype=np.float64),
        raw_anchors=np.asarray(state["raw_anchors"], dtype=np.float64),
        anchor_rounds=np.asarray(state["anchor_rounds"], dtype=np.int64),
        anchor_bits=np.asarray(state["anchor_bits"], dtype=np.float64))
    order = np.argsort([c.cid for c in clients])
    leads = np.array([int(draw["leads"][c.cid]) for c in clients])[order] if draw else np.zeros(len(clients), int)
    new, _ = alg.round_given(problem, st, DoCoFLDraw(clients=S, leads=leads, noise_seed=0))
    return new.x, {"t": new.t, "anchors": new.anchors, "raw_anchors": new.raw_anchors,
                   "anchor_rounds": new.anchor_rounds, "anchor_bits": new.anchor_bits}


def ofediq(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, weighting="uniform",
           draw=None, **_):
    """One time step of fedtheory's OFedIQ (FedOGD: p = 1, period = 1, s = None) with the kit's draws; the
    state carries the cumulative regret of the round log."""
    from ...algorithms.online import OFedIQ, OnlineDraw, OnlineState

    problem, _S = _problem(clients, weighting)
    alg = OFedIQ(eta=eta, p=p, period=period, s=s, b=None if s is None else b)
    st = alg.init(problem, x) if state is None else OnlineState(
        x=x, t=int(state["t"]), theta=np.asarray(state["theta"], dtype=np.float64),
        acc=np.asarray(state["acc"], dtype=np.float64), cum_loss=float(state["cum_loss"]))
    dr = OnlineDraw(None, None)
    if alg.transmits(st.t):
        if draw is not None:
            dr = OnlineDraw(np.array([bool(draw["participate"][c.cid]) for c in clients]),
                            None if s is None else np.stack([np.asarray(draw["uniforms"][c.cid]) for c in clients]))
        else:
            dr = alg.draw(problem, st, rng)
        if dr.participate is None and p < 1.0:
            dr = OnlineDraw(np.ones(len(clients), dtype=bool), dr.uniforms)
    new, log = alg.round_given(problem, st, dr)
    return new.x, {"t": new.t, "theta": new.theta, "acc": new.acc, "cum_loss": new.cum_loss,
                   "regret": log.extra["regret"]}

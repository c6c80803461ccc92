"""FedNova's properties (Wang, Liu, Liang, Joshi & Poor 2020, "Tackling the Objective Inconsistency Problem in
Heterogeneous Federated Optimization", NeurIPS, eqs. (6)-(7)).

Client i runs its own number tau_i of local steps; the kit draws them (1..local_steps, per client and per round)
and passes them as ``local_steps={cid: tau_i}``. The server normalises each client's progress by the local
solver's ||a_i||_1 and rescales by tau_eff:

    x+ = x - tau_eff sum_{i in S} p_i (x - y_i) / ||a_i||_1,      tau_eff = sum_i p_i ||a_i||_1 by default,

with p_i = n_i / sum_S n_j (``weighting="num_examples"``) or 1/|S|. ``momentum`` (rho, local heavy ball) and
``prox`` (mu, FedProx's local term) select the paper's other local solvers and their a_i; ``tau_eff`` is "norm"
(the paper's default), "steps" (sum p_i tau_i, FedML's choice with a proximal term) or a positive number (the
paper lets the server choose it); ``server_momentum`` (beta in [0, 1), the authors' ``gmf``) adds heavy-ball
momentum on the server's FedNova step across rounds (m_r = beta m_(r-1) + D_r, x_(r+1) = x_r - m_r: round 1 is
plain FedNova, so the single-round properties are unchanged and ``multi_round`` and ``own_sampler`` carry m). The
expected side is :mod:`.expected` (eigen closed forms, no local iterate).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
from hypothesis import strategies as st

from ... import expected as ex
from ... import sampling
from ...instance import Instance
from ...kit import (
    Outcome,
    cases_with,
    identity,
    instance_of,
    not_applicable,
    outcome,
    relative_error,
    round_hyper,
    run_round,
    scale_of,
)
from ...tolerances import FEDNOVA_CONSISTENCY_TOL, MOMENTUM_DIAGNOSIS_RTOL
from ..registry import prop
from . import expected as nova

__all__ = ["HYPER", "RANGES", "check_hyper", "steps_of", "ROUNDS"]

HYPER: Mapping[str, Any] = {"local_steps": 5, "local_step": 0.1, "momentum": 0.0, "prox": 0.0, "tau_eff": "norm",
                            "weighting": "num_examples", "server_momentum": 0.0}
WANG = "Wang, Liu, Liang, Joshi & Poor 2020 (FedNova), eqs. (6)-(7)"
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.kit.varied_hyper).
RANGES: Mapping[str, tuple] = {"local_steps": (2, 8), "local_step": (0.02, 0.2)}
#: Consecutive rounds of the multi-round property.
ROUNDS = 5
#: Step of the small-step limit in ``objective_consistency``: eta tau_max L / (1 - rho) = EPS, so the first-order
#: update -eta ||a_i||_1 grad f_i(x) describes each client's progress up to a relative O(EPS) remainder.
EPS = 1e-4
#: Relative residual of the update's direction against -grad F(x) allowed in the small-step limit (the reason for
#: its size is in conformance/tolerances.py).
CONSISTENCY_TOL = FEDNOVA_CONSISTENCY_TOL


def check_hyper(hyper: Mapping[str, Any]) -> None:
    """Raise ValueError naming the hyperparameter out of range (docs/conformance.md, FedNova)."""
    K = hyper.get("local_steps")
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"local_steps must be an integer >= 1 (the largest tau_i the kit draws), got {K!r}")
    rho, mu, eta = hyper.get("momentum", 0.0), hyper.get("prox", 0.0), hyper.get("local_step")
    if not isinstance(eta, (int, float)) or not eta > 0:
        raise ValueError(f"local_step must be a number > 0, got {eta!r}")
    if not isinstance(rho, (int, float)) or not 0.0 <= rho < 1.0:
        raise ValueError(f"momentum must be in [0, 1) (heavy ball rho), got {rho!r}")
    if not isinstance(mu, (int, float)) or not 0.0 <= mu * eta < 1.0 or mu < 0:
        raise ValueError(f"prox must be >= 0 with prox * local_step < 1 (so a_i > 0), got prox={mu!r}")
    if rho and mu:
        raise ValueError("momentum and prox are the paper's two local solvers, one at a time: set one of them to 0")
    te = hyper.get("tau_eff", "norm")
    if te not in ("norm", "steps") and not (isinstance(te, (int, float)) and not isinstance(te, bool) and te > 0):
        raise ValueError(f"tau_eff must be 'norm' (sum p_i ||a_i||_1), 'steps' (sum p_i tau_i) or a number > 0, "
                         f"got {te!r}")
    if hyper.get("weighting", "num_examples") not in ("num_examples", "uniform"):
        raise ValueError(f"weighting must be 'num_examples' or 'uniform', got {hyper.get('weighting')!r}")
    beta = hyper.get("server_momentum", 0.0)
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta < 1.0:
        raise ValueError(f"server_momentum must be in [0, 1) (the server's heavy ball beta, the authors' gmf), "
                         f"got {beta!r}")


def steps_of(inst: Instance, clients: np.ndarray, taus: Sequence[int]) -> dict:
    """The ``local_steps`` keyword: {cid: tau_i} for the participants."""
    return {inst.clients[i].cid: int(t) for i, t in zip(clients, taus)}


def _taus(draw, params: dict, K: int, unequal: bool = False) -> dict:
    """tau_i in 1..K per client; ``unequal``: at least two values (the first client runs 1 step, or K, if the
    draw made them all equal), so the case carries the tau_i the check runs."""
    taus = draw(st.lists(st.integers(1, max(1, K)), min_size=params["n"], max_size=params["n"]))
    if unequal and K >= 2 and len(set(taus)) == 1:
        taus[0] = K if taus[0] == 1 else 1
    return {"taus": taus}


def _cases(hyper: Mapping[str, Any], **kw: Any):
    return cases_with(lambda draw, p: _taus(draw, p, hyper["local_steps"]))(hyper, **kw)


def _heterogeneous_cases(hyper: Mapping[str, Any], **kw: Any):
    extra = cases_with(lambda draw, p: _taus(draw, p, hyper["local_steps"], unequal=True))
    return extra(hyper, min_clients=2, heterogeneous=True, **kw)


def _rounds_cases(hyper: Mapping[str, Any], **kw: Any):
    return cases_with(lambda draw, p: {"round_seed": draw(st.integers(0, 2**16))})(hyper, **kw)


def _nova_hyper(hyper: Mapping[str, Any], **over: Any) -> dict:
    return {**{k: hyper.get(k, v) for k, v in HYPER.items()}, **over}


def _alternatives(inst: Instance, x: np.ndarray, S: np.ndarray, taus: Sequence[int], hyper: Mapping[str, Any]):
    """The slips the kit names, each as (diagnosis, its x+)."""
    h = _nova_hyper(hyper)
    eta, rho, mu = h["local_step"], h["momentum"], h["prox"]
    D = nova.displacements(inst, x, S, taus, eta, rho, mu)
    p = ex.aggregation_weights(inst, S, h["weighting"])
    norms = np.array([nova.normaliser(int(t), eta, rho, mu) for t in taus])
    t = np.asarray(taus, dtype=np.float64)
    other = "uniform" if h["weighting"] == "num_examples" else "num_examples"
    out = [("the local progress is not normalised: the models are averaged as FedAvg does (objective "
            "inconsistency)", x + p @ D),
           ("tau_eff = max tau_i instead of the declared tau_eff", x + t.max() * (p @ (D / norms[:, None]))),
           ("tau_eff = the unweighted mean of tau_i", x + t.mean() * (p @ (D / norms[:, None]))),
           (f"aggregation weighted by {other} where {h['weighting']} is declared",
            nova.round_map(inst, x, S, taus, dict(h, weighting=other))),
           ("each client runs one local step more than its tau_i", nova.round_map(inst, x, S, [k + 1 for k in taus], h))]
    if rho or mu:
        out += [("normalised by tau_i (plain SGD's a_i) where the local solver's ||a_i||_1 is the paper's for "
                 + ("momentum" if rho else "the proximal term"), x + (p @ t) * (p @ (D / t[:, None])))]
    if h["tau_eff"] != "steps":
        out += [("tau_eff = sum p_i tau_i (the step counts) instead of the declared tau_eff",
                 nova.round_map(inst, x, S, taus, dict(h, tau_eff="steps")))]
    if len(S) < inst.n:  # weights that sum to 1 over the round, rescaled as population weights p_i = n_i/n would be
        want = nova.round_map(inst, x, S, taus, h)
        out += [(f"the step is scaled by N/|S| = {inst.n}/{len(S)}: the round's weights, which sum to 1, are "
                 f"rescaled as if they were population weights", x + inst.n / len(S) * (want - x))]
    if h["tau_eff"] != "norm":
        out += [("tau_eff = sum p_i ||a_i||_1 (the paper's default) instead of the declared tau_eff",
                 nova.round_map(inst, x, S, taus, dict(h, tau_eff="norm")))]
    return out


def diagnose(inst: Instance, x: np.ndarray, got: np.ndarray, S: np.ndarray, taus: Sequence[int],
             hyper: Mapping[str, Any], rtol: float) -> str:
    """Name every slip whose closed form the output matches (on a small case two slips can coincide), or say that
    none does."""
    names = [name for name, alt in _alternatives(inst, x, S, taus, hyper)
             if relative_error(got, alt, scale_of(inst, x, alt)) <= rtol]
    return " or ".join(names) if names else f"matches none of the named slips (tau_i = {list(map(int, taus))})"


def _judge(inst, x, got, S, taus, hyper, rtol, what: str) -> Outcome:
    want = nova.round_map(inst, x, S, taus, _nova_hyper(hyper))
    out = identity(inst, got, want, x, rtol)
    if out.holds:
        return out
    return outcome(False, out.measured, rtol, f"{what}: {diagnose(inst, x, got, S, taus, hyper, rtol)}")


@prop(id="fednova.one_round", family="fednova", core=True, reference=f"{WANG}; closed form derived by fedtheory",
      statement="one round with the kit's tau_i equals x - tau_eff sum p_i (x - y_i)/||a_i||_1, y_i the tau_i local "
                "steps in closed form", cases=_cases)
def one_round(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    S, taus = np.arange(inst.n), case["taus"]
    got, _ = run_round(impl, inst, inst.x0, S, round_hyper(hyper, inst, local_steps=steps_of(inst, S, taus)))
    return _judge(inst, inst.x0, got, S, taus, hyper, rtol, "one round differs from eq. (7)")


@prop(id="fednova.fixed_point", family="fednova",
      reference=f"{WANG}; closed-form fixed point derived by fedtheory",
      statement="(sum w_i E_i A_i)^{-1} sum w_i E_i b_i, w_i = p_i/||a_i||_1, does not move", cases=_cases)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    S, taus = np.arange(inst.n), case["taus"]
    xf = nova.fixed_point(inst, taus, _nova_hyper(hyper))
    got, _ = run_round(impl, inst, xf, S, round_hyper(hyper, inst, local_steps=steps_of(inst, S, taus)))
    return identity(inst, got, xf, xf, rtol, "the closed-form fixed point moves: another normalisation or "
                                             "aggregation than eq. (7)")


@prop(id="fednova.objective_consistency", family="fednova",
      reference=f"{WANG}, Theorems 1-2 and Section 4: FedNova optimises F = sum p_i f_i whatever the tau_i",
      statement="heterogeneous tau_i, step eta -> 0: the update is parallel to -grad F(x), F = sum p_i f_i (so the "
                "fixed point tends to x*), where FedAvg's follows sum p_i tau_i grad f_i", cases=_heterogeneous_cases)
def objective_consistency(impl, case, hyper, rtol) -> Outcome:
    """The paper's headline on the implementation's own round. With a small local step (eta tau_max L/(1 - rho) =
    EPS), y_i - x = -eta ||a_i||_1 grad f_i(x) (1 + O(EPS)), so FedNova's x+ - x = -eta tau_eff grad F(x) up to
    O(EPS): its only stationary point is x* (objective consistency), for any tau_eff > 0. Averaging the models
    (FedAvg) gives -eta sum p_i tau_i grad f_i(x) instead, the gradient of the inconsistent objective
    sum p_i tau_i f_i (Theorem 1). The direction is compared: the paper allows any tau_eff."""
    K = int(hyper["local_steps"])
    if K < 2:
        return not_applicable("local_steps = 1: every client runs one step, there is no heterogeneity of tau_i")
    inst = instance_of(case)
    taus = list(case["taus"])
    S = np.arange(inst.n)
    rho = float(hyper.get("momentum", 0.0))
    eta = EPS * (1.0 - rho) / (K * case["L"])
    h = round_hyper(hyper, inst, local_steps=steps_of(inst, S, taus), local_step=eta)
    got, _ = run_round(impl, inst, inst.x0, S, h)
    step = got - inst.x0
    g = ex.global_grad(inst, inst.x0, S, h["weighting"])
    size = float(np.linalg.norm(step))
    tol = CONSISTENCY_TOL + rtol * scale_of(inst, inst.x0, got) / max(size, np.finfo(np.float64).tiny)
    if tol > 0.25:
        return not_applicable(f"rtol = {rtol:g}: the update at eta = {eta:.3g} ({size:.3g}) is below the "
                              "implementation's rounding at this instance")
    residual = _off_direction(step, -g)
    if residual <= tol:
        return outcome(True, residual, tol)
    p = ex.aggregation_weights(inst, S, h["weighting"])
    G = np.einsum("nij,j->ni", inst.A, inst.x0) - inst.b
    why = f"the update at a small step is not parallel to -grad F(x), F = sum p_i f_i ({residual:.3g} off)"
    t = np.asarray(taus, dtype=np.float64)
    norms = np.array([nova.normaliser(int(k), eta, rho, float(hyper.get("prox", 0.0))) for k in taus])
    if _off_direction(step, -(p * t) @ G) <= tol:
        why += ": it follows sum p_i tau_i grad f_i, FedAvg's inconsistent objective (the progress is not normalised)"
    elif _off_direction(step, -(p * norms / t) @ G) <= tol:
        why += (": it follows sum p_i (||a_i||_1 / tau_i) grad f_i, the progress divided by tau_i where the local "
                "solver's ||a_i||_1 is not tau_i")
    return outcome(False, residual, tol, why)


def _off_direction(v: np.ndarray, direction: np.ndarray) -> float:
    """||v - c direction|| / ||v|| at the best c > 0 (1 when v points away or is zero)."""
    nd, nv = float(direction @ direction), float(np.linalg.norm(v))
    if nv == 0.0 or nd == 0.0:
        return 1.0
    c = float(v @ direction) / nd
    return 1.0 if c <= 0 else float(np.linalg.norm(v - c * direction)) / nv


@prop(id="fednova.equal_steps", family="fednova", reference=f"{WANG}, Section 4: equal tau_i gives FedAvg (FedProx)",
      statement="every tau_i = local_steps: FedNova is FedAvg (FedProx with prox > 0) with server step "
                "tau_eff/||a||_1 (1 at the paper's tau_eff)", cases=_cases)
def equal_steps(impl, case, hyper, rtol) -> Outcome:
    """With one tau for all, ||a_i||_1 = ||a||_1 and x+ = x + (tau_eff/||a||_1) sum p_i (y_i - x): FedAvg's closed
    form from :mod:`fedtheory.conformance.expected` (not FedNova's). Local momentum has no FedAvg closed form there:
    not applicable."""
    if hyper.get("momentum", 0.0):
        return not_applicable("momentum > 0: the kit's FedAvg closed form has plain or proximal local GD only")
    inst = instance_of(case)
    S, K, eta, mu = np.arange(inst.n), int(hyper["local_steps"]), hyper["local_step"], hyper.get("prox", 0.0)
    te = hyper.get("tau_eff", "norm")
    norm = float(np.sum((1.0 - eta * mu) ** np.arange(K)))  # ||a||_1 of proximal GD (K at mu = 0)
    server = 1.0 if te == "norm" else (K if te == "steps" else float(te)) / norm
    got, _ = run_round(impl, inst, inst.x0, S, round_hyper(hyper, inst, local_steps=steps_of(inst, S, [K] * inst.n)))
    want = ex.round_map(inst, inst.x0, S, local_steps=K, local_step=eta, prox=mu, server_step=server,
                        weighting=hyper.get("weighting", "num_examples"))
    out = identity(inst, got, want, inst.x0, rtol)
    return out if out.holds else outcome(False, out.measured, rtol, "with equal tau_i it is not FedAvg: " +
                                         diagnose(inst, inst.x0, got, S, [K] * inst.n, hyper, rtol))


@prop(id="fednova.multi_round", family="fednova", reference=f"{WANG}: a round depends on x, its participants and "
      "their tau_i only", statement=f"{ROUNDS} consecutive rounds (random participants and tau_i, each from the "
      "previous output) each equal eq. (7): no state kept across calls (a momentum buffer or a_i counter not reset) "
      "but the server momentum's m_r = beta m_(r-1) + D_r where server_momentum = beta > 0",
      cases=_rounds_cases)
def multi_round(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    rng = np.random.default_rng(case["round_seed"])
    K = int(hyper["local_steps"])
    beta = float(hyper.get("server_momentum", 0.0))
    x, state, err, history, m = inst.x0, None, 0.0, [], None
    for t in range(ROUNDS):
        S = np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1), replace=False))
        taus = [int(k) for k in rng.integers(1, K + 1, size=len(S))]
        history.append(steps_of(inst, S, taus))
        plain = nova.round_map(inst, x, S, taus, _nova_hyper(hyper))
        want, m_next = nova.server_momentum_round(x, plain, m, beta) if beta else (plain, None)
        got, state = run_round(impl, inst, x, S, round_hyper(hyper, inst, local_steps=history[-1]), state, seed=t)
        err = relative_error(got, want, scale_of(inst, x, want))
        if err > rtol:
            named = _momentum_diagnosis(inst, x, got, plain, beta, t)
            if not named:
                # a one-round slip can hide in earlier rounds (one participant: any normalisation cancels), so the
                # state is blamed only when no slip of one round matches
                named = diagnose(inst, x, got, S, taus, hyper, rtol)
                if t and named.startswith("matches none"):
                    named = "earlier rounds match and no one-round slip does: state kept across calls"
            return outcome(False, err, rtol, f"round {t + 1} of {ROUNDS} (participants: tau_i {history}) differs "
                           f"from eq. (7) from the model it was given; {named}")
        x, m = got, m_next
    return outcome(True, err, rtol)


def _momentum_diagnosis(inst: Instance, x: np.ndarray, got: np.ndarray, plain: np.ndarray, beta: float, t: int,
                        rtol: float = MOMENTUM_DIAGNOSIS_RTOL) -> str:
    """With server momentum, a round after the first that is the plain FedNova round: the momentum was dropped
    (at MOMENTUM_DIAGNOSIS_RTOL, so float32 weights do not hide it; the momentum term is O(beta) of the step)."""
    if beta and t and relative_error(got, plain, scale_of(inst, x, plain)) <= rtol:
        return (f"the round is plain FedNova: the server momentum (beta = {beta:g}) is dropped, its buffer reset "
                f"every round")
    return ""


@prop(id="fednova.own_sampler", family="fednova", reference=f"{WANG}: S_t a uniformly random set of m clients",
      statement="its own sampler at clients_per_round = m < N (every client's tau_i given): every round equals eq. (7) "
                "for the clients it reports drawn, each draws m distinct clients, each client is drawn in a fraction "
                "m/N of the rounds (z <= 5)", examples=1,
      cases=lambda hyper: _rounds_cases(hyper, min_clients=2, max_clients=5, max_dim=8, heterogeneous=True))
def own_sampler(impl, case, hyper, rtol) -> Outcome:
    """The implementation's own sampler at partial participation (:mod:`fedtheory.conformance.sampling`): the
    kit draws every client's tau_i each round, the implementation its participants; each round is eq. (7) for
    the reported participants and their tau_i, from the model the implementation returned."""
    inst = instance_of(case)
    rng = np.random.default_rng(case["round_seed"])
    K = int(hyper["local_steps"])

    def per_round(t: int) -> dict:
        return {"local_steps": steps_of(inst, np.arange(inst.n), rng.integers(1, K + 1, size=inst.n))}

    beta, carried = float(hyper.get("server_momentum", 0.0)), {"m": None, "t": 0}

    def judge(x, state, x_new, state_new, S, h):  # called once per round, in order: the kit's m is carried
        taus = [h["local_steps"][inst.clients[i].cid] for i in S]
        plain = nova.round_map(inst, x, S, taus, _nova_hyper(hyper))
        want, carried["m"] = nova.server_momentum_round(x, plain, carried["m"], beta) if beta else (plain, None)
        err = relative_error(x_new, want, scale_of(inst, x, want))
        t, carried["t"] = carried["t"], carried["t"] + 1
        if err <= rtol:
            return err, ""
        return err, _momentum_diagnosis(inst, x, x_new, plain, beta, t) or diagnose(inst, x, x_new, S, taus, hyper,
                                                                                       rtol)
    return sampling.own_sampler(impl, inst, hyper, rtol, judge, seed=case["round_seed"], per_round=per_round)


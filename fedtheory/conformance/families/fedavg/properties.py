"""FedAvg's properties (McMahan et al. 2017, Alg. 1): one round, K = 1, the fixed point and the invariances.

Identity checks compare with the closed forms of :mod:`fedtheory.conformance.expected` within ``rtol`` relative
to the scale of the iterates: the implementation's K local steps and the kit's eigendecompositions each carry
rounding of order K cond(A_i) eps ~ 1e-13 on these instances (kappa <= 50, eta L <= 1.9 so |1 - eta s| <= 1 does
not amplify), so the default rtol = 1e-8 leaves four orders of margin while every slip the kit targets moves the
output by O(eta) or more. Float32 implementations pass ``rtol=1e-4``.

The one-round, fixed-point and sampling checks take the family ("fedavg" or "fedprox"): FedProx
(:mod:`fedtheory.conformance.families.fedprox`) declares them again with its own statements and source.
"""
from __future__ import annotations

import itertools
from typing import Any, Mapping

import numpy as np
from hypothesis import strategies as st

from ... import expected as ex
from ... import sampling
from ...contract import call_round
from ...instance import Client, Instance
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
from ...weights import describe as describe_weights
from ..registry import prop

__all__ = ["HYPER", "one_round", "fixed_point", "expected_sampling", "multi_round", "prox_hyper", "diagnose",
           "rounds_cases", "own_sampler", "population_cases"]

#: Hyperparameters when the user gives none (the paper's notation in the docstrings).
HYPER: Mapping[str, Any] = {"local_steps": 5, "local_step": 0.1, "server_step": 1.0, "weighting": "num_examples"}
MCMAHAN = "McMahan et al. 2017, Alg. 1"
#: The paper's ranges the kit also draws hyperparameters from (fedtheory.conformance.families.varied_hyper): a
#: slip invisible at the user's values (a server step ignored at 1.0) shows at another.
RANGES: Mapping[str, tuple] = {"server_step": (0.3, 2.0), "local_steps": (1, 8), "local_step": (0.02, 0.2)}

shifted_cases = cases_with(lambda draw, p: {"perm_seed": draw(st.integers(0, 2**16)),
                                            "shift": draw(st.sampled_from([1.0, 10.0, 1e3]))})
subset_cases = cases_with(lambda draw, p: {"subset": draw(st.integers(0, 5))})
_plain = cases_with(lambda draw, p: {})
rounds_cases = cases_with(lambda draw, p: {"round_seed": draw(st.integers(0, 2**16))})
#: Consecutive rounds of the multi-round property of a stateless family.
ROUNDS = 5
_duplicate = cases_with(lambda d, p: {"dup": d(st.integers(0, 5))})


def prox_hyper(hyper: Mapping[str, Any]) -> dict:
    """The keywords of :func:`fedtheory.conformance.expected.round_map` from a family's hyperparameters."""
    return dict(local_steps=hyper.get("local_steps"), local_step=hyper.get("local_step", 0.0),
                prox=hyper.get("prox", 0.0), server_step=hyper.get("server_step", 1.0),
                weighting=hyper.get("weighting", "num_examples"))


def diagnose(inst: Instance, x: np.ndarray, got: np.ndarray, S: np.ndarray, hyper: Mapping[str, Any], rtol: float,
             family: str) -> str:
    """Name the slip whose closed form the output matches (the kit can tell these apart on one round)."""
    K, eta, eta_g = hyper.get("local_steps"), hyper.get("local_step", 0.0), hyper.get("server_step", 1.0)
    lam, wt = hyper.get("prox", 0.0), hyper.get("weighting", "num_examples")
    other = "uniform" if wt == "num_examples" else "num_examples"
    base = dict(local_steps=K, local_step=eta, prox=lam, server_step=eta_g, weighting=wt)
    alternatives = [
        (f"aggregation weighted uniformly (1/n each) where the paper weights by num_examples "
         f"{[int(m) for m in inst.sizes[S]]}" if wt == "num_examples"
         else "aggregation weights by num_examples instead of uniformly", dict(base, weighting=other)),
        ("server step applied twice", dict(base, server_step=2 * eta_g)),
        ("returns the input model unchanged", dict(base, server_step=0.0)),
    ]
    if K is not None:
        alternatives += [("one local step fewer than local_steps (off by one)", dict(base, local_steps=K - 1)),
                         ("one local step more than local_steps (off by one)", dict(base, local_steps=K + 1)),
                         ("local_steps ignored: a single gradient step (FedSGD)", dict(base, local_steps=1))]
    if family == "fedprox":
        alternatives += [("proximal term has the wrong sign", dict(base, prox=-lam)),
                         ("proximal term missing (plain FedAvg)", dict(base, prox=0.0)),
                         ("proximal coefficient halved (lam/2 in the gradient)", dict(base, prox=lam / 2))]
    for name, kw in alternatives:
        if kw.get("local_steps", 1) is not None and kw.get("local_steps", 1) < 1:
            continue
        want = ex.round_map(inst, x, S, **kw)
        if relative_error(got, want, scale_of(inst, x, want)) <= rtol:
            return name
    return measured_weights(inst, x, got, S, hyper, rtol)


def local_updates(inst: Instance, x: np.ndarray, S: np.ndarray, hyper: Mapping[str, Any]) -> np.ndarray:
    """(|S|, d): the paper's local update u_i = N_i (b_i - A_i x) of each participant (before the weights)."""
    N = ex.local_operators(inst, hyper.get("local_steps"), hyper.get("local_step", 0.0), hyper.get("prox", 0.0))[S]
    return np.einsum("nij,nj->ni", N, inst.b[S] - np.einsum("nij,j->ni", inst.A[S], x))


def measured_weights(inst: Instance, x: np.ndarray, got: np.ndarray, S: np.ndarray, hyper: Mapping[str, Any],
                     rtol: float) -> str:
    """The aggregation weights the output shows (:mod:`fedtheory.conformance.weights`): x+ - x = eta_g sum a_i u_i
    with u_i the paper's local update; '' when they cannot be measured (n > d, a server step of 0)."""
    eta_g = hyper.get("server_step", 1.0)
    if not eta_g:
        return ""
    U = local_updates(inst, x, S, hyper)
    paper = ex.aggregation_weights(inst, S, hyper.get("weighting", "num_examples"))
    return describe_weights(U, (got - x) / eta_g, inst.sizes[S], paper, rtol)


@prop(id="fedavg.k1_is_gd", family="fedavg", reference=f"{MCMAHAN} with E = 1, B = inf (FedSGD, Sec. 2)",
      statement="one local step: x+ = x - eta_g eta grad f_S(x), f weighted by num_examples", cases=_plain)
def k1_is_gd(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    S = np.arange(inst.n)
    h = round_hyper(hyper, inst, local_steps=1)
    got, _ = run_round(impl, inst, inst.x0, S, h)
    want = inst.x0 - h.get("server_step", 1.0) * h["local_step"] * ex.global_grad(inst, inst.x0, S, h["weighting"])
    out = identity(inst, got, want, inst.x0, rtol)
    return out if out.holds else outcome(False, out.measured, rtol,
                                      diagnose(inst, inst.x0, got, S, h, rtol, "fedavg"))


@prop(id="fedavg.one_round", family="fedavg", core=True,
      reference=f"{MCMAHAN}; closed form derived by fedtheory (docs/classic.md)",
      statement="one round equals x + eta_g sum a_i N_i (b_i - A_i x) on quadratics", cases=_plain)
def one_round(impl, case, hyper, rtol, family: str = "fedavg") -> Outcome:
    inst = instance_of(case)
    S = np.arange(inst.n)
    got, _ = run_round(impl, inst, inst.x0, S, round_hyper(hyper, inst))
    want = ex.round_map(inst, inst.x0, S, **prox_hyper(hyper))
    out = identity(inst, got, want, inst.x0, rtol)
    if not out.holds:
        out = outcome(False, out.measured, rtol, diagnose(inst, inst.x0, got, S, hyper, rtol, family))
    return out


@prop(id="fedavg.fixed_point", family="fedavg",
      reference="closed-form FedAvg fixed point, derived by fedtheory (docs/classic.md)",
      statement="(sum a_i N_i A_i)^{-1} sum a_i N_i b_i is a fixed point", cases=_plain)
def fixed_point(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    h = prox_hyper(hyper)
    xK = ex.fixed_point(inst, local_steps=h["local_steps"], local_step=h["local_step"], prox=h["prox"],
                        weighting=h["weighting"])
    got, _ = run_round(impl, inst, xK, np.arange(inst.n), round_hyper(hyper, inst))
    return identity(inst, got, xK, xK, rtol, "the closed-form fixed point moves: a different local update or "
                                              "aggregation than the paper's")


@prop(id="fedavg.num_examples", family="fedavg", reference=f"{MCMAHAN} (weights n_k / n)",
      statement="duplicating a client's data equals listing the client twice", cases=_duplicate)
def num_examples(impl, case, hyper, rtol) -> Outcome:
    if hyper.get("weighting") != "num_examples":
        return not_applicable("the method weights clients uniformly")
    inst = instance_of(case)
    j = case["dup"] % inst.n
    h = round_hyper(hyper, inst)
    dup = [c.duplicated() if i == j else c for i, c in enumerate(inst.clients)]
    # the second listing is a copy under an id of its own: a cid is a stable label of one client (contract.py),
    # and an implementation that keys its work by cid is right to count one label once
    twice = list(inst.clients) + [Client(max(c.cid for c in inst.clients) + 1, inst.clients[j].features,
                                         inst.clients[j].targets)]
    rng = np.random.default_rng(0)
    a, _ = call_round(impl, inst.x0, dup, None, h, rng)
    b, _ = call_round(impl, inst.x0, twice, None, dict(h, num_clients=inst.n + 1), np.random.default_rng(0))
    out = identity(inst, a, b, inst.x0, rtol)
    if out.holds:
        return out
    # what was measured: duplicating client j's data changes its num_examples only (f_j is the same function), so
    # the paper's output moves with the weights n_i / n; "ignores num_examples" only when the paper's moves and
    # the implementation's does not
    plain, _ = call_round(impl, inst.x0, inst.clients, None, h, np.random.default_rng(0))
    S = np.arange(inst.n)
    U = local_updates(inst, inst.x0, S, hyper)
    eta_g = h.get("server_step", 1.0)
    doubled = inst.sizes.astype(np.float64).copy()
    doubled[j] *= 2
    paper_moves = eta_g * float(np.linalg.norm(U.T @ (doubled / doubled.sum() - inst.sizes / inst.sizes.sum())))
    scale = scale_of(inst, inst.x0, plain)
    if paper_moves > rtol * scale and relative_error(a, plain, scale) <= rtol:
        why = (f"aggregation ignores num_examples: doubling client {inst.clients[j].cid}'s num_examples (its data "
               f"duplicated) does not change the output, where the paper's moves by {paper_moves / scale:.3g} relative")
    else:  # the weights the round with client j listed twice shows
        sizes = np.append(inst.sizes, inst.sizes[j])
        why = describe_weights(np.vstack([U, U[j]]), (b - inst.x0) / eta_g if eta_g else np.zeros(inst.d), sizes,
                               sizes / sizes.sum(), rtol) if eta_g else ""
        why = f"with client {inst.clients[j].cid} listed twice, {why}" if why else \
            "duplicating a client's data differs from listing it twice"
    return outcome(False, out.measured, rtol, why)


@prop(id="fedavg.permutation", family="fedavg", reference=f"{MCMAHAN} (a sum over clients)",
      statement="the order of the clients does not matter", cases=shifted_cases)
def permutation(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    h = round_hyper(hyper, inst)
    perm = np.random.default_rng(case["perm_seed"]).permutation(inst.n)
    a, _ = run_round(impl, inst, inst.x0, np.arange(inst.n), h)
    b, _ = run_round(impl, inst, inst.x0, perm, h)
    return identity(inst, b, a, inst.x0, rtol, "the result depends on the order of the clients")


@prop(id="fedavg.translation", family="fedavg", reference=f"{MCMAHAN} (gradient steps commute with shifts)",
      statement="shifting the problem by s shifts the iterate by s", cases=shifted_cases)
def translation(impl, case, hyper, rtol) -> Outcome:
    inst = instance_of(case)
    h = round_hyper(hyper, inst)
    s = np.random.default_rng(case["perm_seed"]).standard_normal(inst.d) * case["shift"]
    a, _ = run_round(impl, inst, inst.x0, np.arange(inst.n), h)
    shifted = [c.shifted(s) for c in inst.clients]
    b, _ = call_round(impl, inst.x0 + s, shifted, None, h, np.random.default_rng(0))
    return identity(inst, b - s, a, inst.x0 + s, rtol, "not translation equivariant (an update depends on the "
                                                        "origin, e.g. a decay or prox towards 0)")


@prop(id="fedavg.expected_sampling", family="fedavg", reference=f"{MCMAHAN}, uniform sampling of S of n clients",
      statement="the mean over all size-S subsets equals the mean of the closed-form rounds", cases=subset_cases)
def expected_sampling(impl, case, hyper, rtol, family: str = "fedavg") -> Outcome:
    inst = instance_of(case)
    size = 1 + case["subset"] % inst.n
    h = round_hyper(hyper, inst)
    subsets = [np.array(S) for S in itertools.combinations(range(inst.n), size)]
    got = np.mean([run_round(impl, inst, inst.x0, S, h)[0] for S in subsets], axis=0)
    want = np.mean([ex.round_map(inst, inst.x0, S, **prox_hyper(hyper)) for S in subsets], axis=0)
    out = identity(inst, got, want, inst.x0, rtol)
    if out.holds:
        return out
    note = ""
    for S in subsets:  # name the slip on the first subset that shows it
        g1, _ = run_round(impl, inst, inst.x0, S, h)
        note = diagnose(inst, inst.x0, g1, S, hyper, rtol, family)
        if not note and hyper.get("weighting") == "num_examples":
            m = inst.sizes[S] / inst.sizes.sum()  # normalised by all clients' examples, not the participants'
            x = inst.x0
            N = ex.local_operators(inst, h.get("local_steps"), h.get("local_step", 0.0), h.get("prox", 0.0))[S]
            alt = x + h.get("server_step", 1.0) * np.einsum("n,nij,nj->i", m, N, inst.b[S] - inst.A[S] @ x)
            if relative_error(g1, alt, scale_of(inst, x, alt)) <= rtol:
                note = "weights normalised over all clients, not over the participants"
        if note:
            break
    return outcome(False, out.measured, rtol, note)




def _participants(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random non-empty subset of the n clients, in the list's order."""
    return np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False))


@prop(id="fedavg.multi_round", family="fedavg", reference=f"{MCMAHAN}: a round depends on x and its participants only",
      statement=f"{ROUNDS} consecutive rounds (random participants, each from the previous output) each equal the "
                "closed form: no state hidden across calls", cases=rounds_cases)
def multi_round(impl, case, hyper, rtol, family: str = "fedavg") -> Outcome:
    """R = 5 consecutive calls on one problem, each from the model the previous call returned (and the state it
    returned, if any), with random participants: round t must equal the closed form applied to round t - 1's
    output. A stateless method's round is a function of x and the participants, so anything kept across calls
    (a server momentum in a closure, a counter, a cached client model) shows from round 2 on."""
    inst = instance_of(case)
    rng = np.random.default_rng(case["round_seed"])
    x, state, err, history = inst.x0, None, 0.0, []
    for t in range(ROUNDS):
        S = _participants(rng, inst.n)
        history.append([inst.clients[i].cid for i in S])
        want = ex.round_map(inst, x, S, **prox_hyper(hyper))
        got, state = run_round(impl, inst, x, S, round_hyper(hyper, inst), state, seed=t)
        err = relative_error(got, want, scale_of(inst, x, want))
        if err > rtol:
            return outcome(False, err, rtol, f"round {t + 1} of {ROUNDS} (participants {history}) differs from one "
                           "round from the model it was given" + (
                               " (earlier rounds match: state kept across calls)" if t else
                               f"; {diagnose(inst, x, got, S, hyper, rtol, family) or 'see one_round'}"))
        x = got
    return outcome(True, err, rtol)


def population_cases(hyper: Mapping[str, Any]):
    """A heterogeneous population of 4..5 clients (so m = 2 clients a round: a sampler that draws with replacement
    shows a client twice, which m = 1 cannot; the clients differ, so a round over other clients than the reported
    ones shows) in small dimension: R <= 150 rounds."""
    return rounds_cases(hyper, min_clients=4, max_clients=5, max_dim=8, heterogeneous=True)


@prop(id="fedavg.own_sampler", family="fedavg", reference=f"{MCMAHAN}: S_t = a random set of m clients",
      statement="its own sampler at clients_per_round = m < N: every round equals the closed form for the clients it "
                "reports drawn, each draws m distinct clients, each client is drawn in a fraction m/N of the rounds "
                "(z <= 5)", cases=population_cases, examples=1)
def own_sampler(impl, case, hyper, rtol, family: str = "fedavg") -> Outcome:
    """The implementation's own sampler at partial participation (:mod:`fedtheory.conformance.sampling`), each
    round judged from the model it returned."""
    inst = instance_of(case)

    def judge(x, state, x_new, state_new, S, h):
        want = ex.round_map(inst, x, S, **prox_hyper(hyper))
        err = relative_error(x_new, want, scale_of(inst, x, want))
        return err, diagnose(inst, x, x_new, S, hyper, rtol, family) if err > rtol else ""
    return sampling.own_sampler(impl, inst, hyper, rtol, judge, seed=case["round_seed"])


"""The conformance properties, one family at a time; each names the paper and equation it comes from.

A property draws a *case* (instance parameters plus the round's own draws) with hypothesis and maps
(impl, case, hyper, rtol) to an :class:`Outcome`. Identity checks compare with the closed forms of
:mod:`fedtheory.conformance.expected` within ``rtol`` relative to the scale of the iterates: the
implementation's K local steps and the kit's eigendecompositions each carry rounding of order
K cond(A_i) eps ~ 1e-13 on these instances (kappa <= 50, eta L <= 1.9 so |1 - eta s| <= 1 does not amplify),
so the default rtol = 1e-8 leaves four orders of margin while every slip the kit targets moves the output by
O(eta) or more. Float32 implementations pass ``rtol=1e-4``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
from hypothesis import assume, strategies as st

from . import expected as ex
from .contract import STATE_KEYS, call_compress, call_round, declared_omega
from .instance import Instance, make_instance

__all__ = ["Outcome", "Property", "PROPERTIES", "FAMILIES", "DEFAULT_HYPER"]

#: Hyperparameters per family when the user gives none (the papers' notation in the docstrings).
DEFAULT_HYPER: Mapping[str, Mapping[str, Any]] = {
    "fedavg": {"local_steps": 5, "local_step": 0.1, "server_step": 1.0, "weighting": "num_examples"},
    "fedprox": {"local_steps": 5, "local_step": 0.1, "prox": 1.0, "server_step": 1.0, "weighting": "num_examples"},
    "scaffold": {"local_steps": 5, "local_step": 0.1, "server_step": 1.0, "weighting": "uniform"},
    "feddyn": {"alpha": 1.0, "weighting": "uniform"},
    "scaffnew": {"step": 0.5, "p": 0.5, "weighting": "uniform"},
    "compressor": {},
}
FAMILIES = tuple(DEFAULT_HYPER)


@dataclass(frozen=True)
class Outcome:
    """measured vs theory (a tolerance or the theory's value); ``note`` is the diagnosis on failure."""

    ok: bool
    measured: float
    theory: float
    note: str = ""
    applicable: bool = True


NOT_APPLICABLE = lambda why: Outcome(True, float("nan"), float("nan"), why, applicable=False)  # noqa: E731


@dataclass(frozen=True)
class Property:
    id: str
    family: str
    reference: str
    statement: str
    cases: Callable[[Mapping[str, Any]], st.SearchStrategy]
    check: Callable[[Any, Mapping[str, Any], Mapping[str, Any], float], Outcome]
    expensive: bool = False


# ----------------------------------------------------------------- case strategies

@st.composite
def instance_params(draw, hyper: Mapping[str, Any], *, L_max: float, kappa_max: float = 50.0, min_clients: int = 1,
                    max_clients: int = 6, max_dim: int = 50, heterogeneous: bool = False) -> dict:
    """Instance parameters: n, d (1..50, small favoured so shrinking goes there), mu, L, delta, zeta2, sizes."""
    n = draw(st.integers(min_clients, max_clients))
    d = draw(st.one_of(st.integers(1, 6), st.integers(1, max_dim)))
    L = draw(st.floats(L_max / 4, L_max))
    mu = L / draw(st.floats(1.0, kappa_max))
    lo = 0.05 if heterogeneous else 0.0
    sizes = draw(st.lists(st.integers(d, 3 * d + 10), min_size=n, max_size=n))
    return {"n": n, "d": d, "mu": mu, "L": L,
            "delta_frac": draw(st.floats(max(lo, 0.0), 0.4)) if n > 1 else 0.0,
            "zeta2": draw(st.floats(max(lo, 0.1 if heterogeneous else 0.0), 4.0)) if n > 1 else 0.0,
            "sizes": sizes, "weighting": hyper.get("weighting", "num_examples"),
            "seed": draw(st.integers(0, 2**31 - 1))}


def _one_round_L(hyper: Mapping[str, Any]) -> float:
    """Keep eta L <= 1.9 so local GD does not amplify (it is also what a practitioner would run)."""
    eta = hyper.get("local_step")
    return min(20.0, 1.9 / eta) if eta else 20.0


def _cases(hyper: Mapping[str, Any], **kw) -> st.SearchStrategy:
    return instance_params(hyper, L_max=_one_round_L(hyper), **kw)


def _with(extra: Callable[[Any, dict], dict]):
    """A strategy of instance params plus per-case draws computed by ``extra(draw, params)``."""
    def factory(hyper: Mapping[str, Any], **kw) -> st.SearchStrategy:
        @st.composite
        def cases(draw):
            params = draw(_cases(hyper, **kw) if "L_max" not in kw else instance_params(hyper, **kw))
            params.update(extra(draw, params))
            return params
        return cases()
    return factory


# ----------------------------------------------------------------- helpers

def _rel(actual: np.ndarray, want: np.ndarray, scale: float) -> float:
    return float(np.linalg.norm(actual - want) / max(scale, 1e-300))


def _scale(inst: Instance, *xs: np.ndarray) -> float:
    return max([1.0, float(np.linalg.norm(inst.x_star))] + [float(np.linalg.norm(x)) for x in xs])


def _instance(case: Mapping[str, Any]) -> Instance:
    return make_instance({k: case[k] for k in ("n", "d", "mu", "L", "delta_frac", "zeta2", "sizes", "weighting",
                                               "seed")})


def _hyper(hyper: Mapping[str, Any], inst: Instance, **over) -> dict:
    return {**hyper, "num_clients": inst.n, **over}


def _round(impl, inst: Instance, x, clients_idx, hyper, state=None, seed: int = 0):
    clients = [inst.clients[i] for i in clients_idx]
    return call_round(impl, x, clients, state, hyper, np.random.default_rng(seed))


def _diagnose(inst: Instance, x: np.ndarray, got: np.ndarray, S: np.ndarray, hyper: Mapping[str, Any], rtol: float,
              family: str) -> str:
    """Name the slip whose closed form the output matches (the kit can tell these apart on one round)."""
    K, eta, eta_g = hyper.get("local_steps"), hyper.get("local_step", 0.0), hyper.get("server_step", 1.0)
    lam, wt = hyper.get("prox", 0.0), hyper.get("weighting", "num_examples")
    other = "uniform" if wt == "num_examples" else "num_examples"
    base = dict(local_steps=K, local_step=eta, prox=lam, server_step=eta_g, weighting=wt)
    alternatives = [
        ("aggregation ignores num_examples (uniform average)" if wt == "num_examples"
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
        if _rel(got, want, _scale(inst, x, want)) <= rtol:
            return name
    return ""


def _identity(inst, got, want, x, rtol, note="") -> Outcome:
    err = _rel(got, want, _scale(inst, x, want))
    return Outcome(err <= rtol, err, rtol, "" if err <= rtol else note)


# ----------------------------------------------------------------- FedAvg / local SGD and FedProx

def _prox_hyper(hyper):
    return dict(local_steps=hyper.get("local_steps"), local_step=hyper.get("local_step", 0.0),
                prox=hyper.get("prox", 0.0), server_step=hyper.get("server_step", 1.0),
                weighting=hyper.get("weighting", "num_examples"))


def _family_of(hyper) -> str:
    return "fedprox" if "prox" in hyper else "fedavg"


def check_one_round(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    S = np.arange(inst.n)
    got, _ = _round(impl, inst, inst.x0, S, _hyper(hyper, inst))
    want = ex.round_map(inst, inst.x0, S, **_prox_hyper(hyper))
    out = _identity(inst, got, want, inst.x0, rtol)
    if not out.ok:
        out = Outcome(False, out.measured, rtol, _diagnose(inst, inst.x0, got, S, hyper, rtol, _family_of(hyper)))
    return out


def check_k1_gd(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    S = np.arange(inst.n)
    h = _hyper(hyper, inst, local_steps=1)
    got, _ = _round(impl, inst, inst.x0, S, h)
    want = inst.x0 - h.get("server_step", 1.0) * h["local_step"] * ex.global_grad(inst, inst.x0, S, h["weighting"])
    out = _identity(inst, got, want, inst.x0, rtol)
    return out if out.ok else Outcome(False, out.measured, rtol,
                                      _diagnose(inst, inst.x0, got, S, h, rtol, "fedavg"))


def check_fixed_point(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    h = _prox_hyper(hyper)
    xK = ex.fixed_point(inst, local_steps=h["local_steps"], local_step=h["local_step"], prox=h["prox"],
                        weighting=h["weighting"])
    got, _ = _round(impl, inst, xK, np.arange(inst.n), _hyper(hyper, inst))
    return _identity(inst, got, xK, xK, rtol, "the closed-form fixed point moves: a different local update or "
                                              "aggregation than the paper's")


def check_num_examples(impl, case, hyper, rtol) -> Outcome:
    if hyper.get("weighting") != "num_examples":
        return NOT_APPLICABLE("the method weights clients uniformly")
    inst = _instance(case)
    j = case["dup"] % inst.n
    h = _hyper(hyper, inst)
    dup = [c.duplicated() if c.cid == j else c for c in inst.clients]
    twice = list(inst.clients) + [inst.clients[j]]
    rng = np.random.default_rng(0)
    a, _ = call_round(impl, inst.x0, dup, None, h, rng)
    b, _ = call_round(impl, inst.x0, twice, None, dict(h, num_clients=inst.n + 1), np.random.default_rng(0))
    return _identity(inst, a, b, inst.x0, rtol, "aggregation ignores num_examples")


def check_permutation(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    h = _hyper(hyper, inst)
    perm = np.random.default_rng(case["perm_seed"]).permutation(inst.n)
    a, _ = _round(impl, inst, inst.x0, np.arange(inst.n), h)
    b, _ = _round(impl, inst, inst.x0, perm, h)
    return _identity(inst, b, a, inst.x0, rtol, "the result depends on the order of the clients")


def check_translation(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    h = _hyper(hyper, inst)
    s = np.random.default_rng(case["perm_seed"]).standard_normal(inst.d) * case["shift"]
    a, _ = _round(impl, inst, inst.x0, np.arange(inst.n), h)
    shifted = [c.shifted(s) for c in inst.clients]
    b, _ = call_round(impl, inst.x0 + s, shifted, None, h, np.random.default_rng(0))
    return _identity(inst, b - s, a, inst.x0 + s, rtol, "not translation equivariant (an update depends on the "
                                                        "origin, e.g. a decay or prox towards 0)")


def check_sampling(impl, case, hyper, rtol) -> Outcome:
    inst = _instance(case)
    size = 1 + case["subset"] % inst.n
    h = _hyper(hyper, inst)
    subsets = [np.array(S) for S in itertools.combinations(range(inst.n), size)]
    got = np.mean([_round(impl, inst, inst.x0, S, h)[0] for S in subsets], axis=0)
    want = np.mean([ex.round_map(inst, inst.x0, S, **_prox_hyper(hyper)) for S in subsets], axis=0)
    out = _identity(inst, got, want, inst.x0, rtol)
    if out.ok:
        return out
    note = ""
    for S in subsets:  # name the slip on the first subset that shows it
        g1, _ = _round(impl, inst, inst.x0, S, h)
        note = _diagnose(inst, inst.x0, g1, S, hyper, rtol, _family_of(hyper))
        if not note and hyper.get("weighting") == "num_examples":
            m = inst.sizes[S] / inst.sizes.sum()  # normalised by all clients' examples, not the participants'
            x = inst.x0
            N = ex.local_operators(inst, h.get("local_steps"), h.get("local_step", 0.0), h.get("prox", 0.0))[S]
            alt = x + h.get("server_step", 1.0) * np.einsum("n,nij,nj->i", m, N, inst.b[S] - inst.A[S] @ x)
            if _rel(g1, alt, _scale(inst, x, alt)) <= rtol:
                note = "weights normalised over all clients, not over the participants"
        if note:
            break
    return Outcome(False, out.measured, rtol, note)


def check_prox_large(impl, case, hyper, rtol) -> Outcome:
    """lam -> inf: lam (x+ - x) -> -eta_g grad f_S(x) (Li et al. 2020, Sec. 3: mu -> inf freezes the model)."""
    inst = _instance(case)
    lam = 1e4 * max(case["L"], 1.0)
    over = {"prox": lam}
    if hyper.get("local_steps") is not None:
        over["local_step"] = 1.0 / (case["L"] + lam)  # stable local GD on the prox objective: a near-exact solve
    h = _hyper(hyper, inst, **over)
    got, _ = _round(impl, inst, inst.x0, np.arange(inst.n), h)
    g = ex.global_grad(inst, inst.x0, np.arange(inst.n), h["weighting"])
    err = float(np.linalg.norm(lam * (got - inst.x0) + h.get("server_step", 1.0) * g) / max(np.linalg.norm(g), 1e-300))
    # exact: lam (x+ - x) = -eta_g sum a_i lam (A_i + lam I)^{-1} grad_i; the correction is O(L / lam) = 1e-4
    tol = 1e-2
    return Outcome(err <= tol, err, tol, "" if err <= tol else "does not approach a gradient step of size 1/lam as "
                                                              "lam grows (prox term sign or centre)")


def check_prox_zero(impl, case, hyper, rtol) -> Outcome:
    """lam = 0 is FedAvg with the same local solver (Li et al. 2020, Sec. 3: mu = 0 recovers FedAvg)."""
    inst = _instance(case)
    h = _hyper(hyper, inst, prox=0.0)
    S = np.arange(inst.n)
    got, _ = _round(impl, inst, inst.x0, S, h)
    want = ex.round_map(inst, inst.x0, S, **dict(_prox_hyper(hyper), prox=0.0))
    return _identity(inst, got, want, inst.x0, rtol, "with prox = 0 it is not FedAvg")


# ----------------------------------------------------------------- SCAFFOLD / FedDyn / Scaffnew

def _stateful_cases(hyper: Mapping[str, Any], family: str) -> st.SearchStrategy:
    """Heterogeneous, well-conditioned problems scaled to the step sizes so that a correct method converges
    in a few hundred rounds (SCAFFOLD: K eta_l L <= 1/2; FedDyn: L ~ alpha; Scaffnew: gamma L <= 1)."""
    if family == "scaffold":
        L_max = 0.5 / (hyper["local_steps"] * hyper["local_step"])
    elif family == "feddyn":
        L_max = 2.0 * hyper["alpha"]
    else:
        L_max = 1.0 / hyper["step"]
    return _with(lambda draw, p: {"round_seed": draw(st.integers(0, 2**16))})(
        hyper, L_max=L_max, kappa_max=4.0, min_clients=2, max_dim=12, heterogeneous=True)


def _hyper_of_round(family, hyper, rng) -> dict:
    if family == "scaffnew":  # the coin flips of ProxSkip: local steps until communication ~ Geometric(p)
        return dict(hyper, local_steps=int(rng.geometric(hyper["p"])))
    return dict(hyper)


def _run(impl, inst, hyper, family, rounds, *, x=None, state=None, partial=False, seed=0, stop_at=None):
    rng = np.random.default_rng(seed)
    x = inst.x0 if x is None else x
    for t in range(rounds):
        S = np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1), replace=False)) if partial \
            else np.arange(inst.n)
        x, state = _round(impl, inst, x, S, _hyper_of_round(family, _hyper(hyper, inst), rng), state, seed=t)
        if not np.all(np.isfinite(x)):
            break
        if stop_at is not None and np.linalg.norm(x - inst.x_star) <= stop_at:
            break
    return x, state


def _converges(family):
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case)
        d0 = float(np.linalg.norm(inst.x0 - inst.x_star))
        tol = 1e-6 * d0
        x, _ = _run(impl, inst, hyper, family, 600, seed=case["round_seed"], stop_at=tol / 10)
        err = float(np.linalg.norm(x - inst.x_star)) / d0 if np.all(np.isfinite(x)) else float("inf")
        note = "" if err <= 1e-6 else ("diverges" if not np.isfinite(err) or err > 1 else
                                       "stalls away from x* (client drift not corrected)")
        return Outcome(err <= 1e-6, err, 1e-6, note)
    return check


def _state_layout(state, family) -> str:
    server_key, client_key = STATE_KEYS[family]
    if not isinstance(state, Mapping) or client_key not in state or (server_key and server_key not in state):
        keys = f'"{server_key}" and "{client_key}"' if server_key else f'"{client_key}"'
        return f"state is opaque (a mapping with {keys} makes this property applicable)"
    return ""


def _probe(impl, inst, hyper, family, case) -> str:
    """Run one round from scratch and say why the state cannot be read ("" when it can)."""
    _, state = _run(impl, inst, hyper, family, 1, seed=case["round_seed"])
    return _state_layout(state, family)


def _make_state(family, inst, C) -> dict:
    """A state in the contract's layout with client rows C and the server part sum_i w_i C_i."""
    server_key, client_key = STATE_KEYS[family]
    state = {client_key: {c.cid: C[i].copy() for i, c in enumerate(inst.clients)}}
    if server_key:
        state[server_key] = inst.weights @ C
    return state


def _client_rows(state, family, inst) -> np.ndarray:
    client_key = STATE_KEYS[family][1]
    return np.stack([np.asarray(state[client_key].get(c.cid, np.zeros(inst.d)), dtype=np.float64)
                     for c in inst.clients])


def _fixed_point_state(family):
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case)
        why = _probe(impl, inst, hyper, family, case)
        if why:
            return NOT_APPLICABLE(why)
        # server part sum_i w_i grad f_i(x*) = 0 up to rounding: x* minimises sum w_i f_i
        state = _make_state(family, inst, ex.client_grads(inst, inst.x_star))
        x, _ = _run(impl, inst, hyper, family, 3, x=inst.x_star.copy(), state=state, seed=case["round_seed"])
        return _identity(inst, x, inst.x_star, inst.x_star, rtol,
                         "x* with control variates = client gradients at x* is not a fixed point")
    return check


def _server_mean(family):
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case)
        partial = family != "scaffnew"  # Scaffnew is analysed with full participation only
        _, state = _run(impl, inst, hyper, family, 4, partial=partial, seed=case["round_seed"])
        why = _state_layout(state, family)
        if why:
            return NOT_APPLICABLE(why)
        server_key, client_key = STATE_KEYS[family]
        C = _client_rows(state, family, inst)
        mean = inst.weights @ C
        server = np.zeros(inst.d) if server_key is None else np.asarray(state[server_key], dtype=np.float64)
        scale = max(1.0, float(np.abs(C).max()))
        err = float(np.linalg.norm(server - mean)) / scale
        what = "sum_i w_i h_i is not 0" if server_key is None else f"{server_key} is not the weighted mean of {client_key}"
        return Outcome(err <= rtol, err, rtol, "" if err <= rtol else what)
    return check


def _one_round_state(family):
    """One round from a random consistent state equals the paper's update in closed form (local GD on
    f_i + <lin_i, .> is the FedAvg operator with b_i + lin_i; FedDyn's exact solve is N_i = (A_i + alpha I)^-1)."""
    def check(impl, case, hyper, rtol) -> Outcome:
        inst = _instance(case)
        why = _probe(impl, inst, hyper, family, case)
        if why:
            return NOT_APPLICABLE(why)
        rng = np.random.default_rng(case["round_seed"])
        server_key, client_key = STATE_KEYS[family]
        C = rng.standard_normal((inst.n, inst.d))
        if family == "scaffnew":
            C -= inst.weights @ C  # Scaffnew's invariant sum_i w_i h_i = 0
        state = _make_state(family, inst, C)
        S = np.arange(inst.n) if family == "scaffnew" else \
            np.sort(rng.choice(inst.n, size=rng.integers(1, inst.n + 1), replace=False))
        h = _hyper(hyper, inst)
        if family == "scaffnew":
            h["local_steps"] = int(rng.geometric(hyper["p"]))
        x = inst.x0
        got_x, got_state = _round(impl, inst, x, S, h, state, seed=0)
        a, w = ex.aggregation_weights(inst, S, h["weighting"]), inst.weights[S]
        r = inst.b[S] - np.einsum("nij,j->ni", inst.A[S], x)
        want_C = C.copy()
        if family == "scaffold":
            c = state["c"]
            dy = np.einsum("nij,nj->ni", ex.local_operators(inst, h["local_steps"], h["local_step"])[S], r + C[S] - c)
            dc = -c - dy / (h["local_steps"] * h["local_step"])
            want_x, want_server = x + h["server_step"] * a @ dy, c + w @ dc
            want_C[S] += dc
        elif family == "feddyn":
            dth = np.einsum("nij,nj->ni", ex.local_operators(inst, None, 0.0, h["alpha"])[S], r + C[S])
            want_C[S] -= h["alpha"] * dth
            want_server = state["h"] - h["alpha"] * w @ dth
            want_x = x + a @ dth - want_server / h["alpha"]
        else:
            dy = np.einsum("nij,nj->ni", ex.local_operators(inst, h["local_steps"], h["step"]), r + C)
            want_x = x + a @ dy
            want_C += (h["p"] / h["step"]) * (want_x - x - dy)
            want_server = None
        scale = _scale(inst, x, want_x) + float(np.abs(want_C).max())
        got_C = _client_rows(got_state, family, inst)
        errs = {"model": np.linalg.norm(got_x - want_x), client_key: np.linalg.norm(got_C - want_C)}
        if server_key:
            errs[server_key] = np.linalg.norm(np.asarray(got_state[server_key], dtype=np.float64) - want_server)
        worst = max(errs, key=errs.get)
        err = float(errs[worst]) / scale
        return Outcome(err <= rtol, err, rtol, "" if err <= rtol else f"the update of {worst} differs from the paper's")
    return check


# ----------------------------------------------------------------- compressors

@st.composite
def _vectors(draw):
    d = draw(st.one_of(st.integers(1, 8), st.integers(1, 50)))
    kind = draw(st.sampled_from(["gauss", "sparse", "spread"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    x = rng.standard_normal(d)
    if kind == "sparse":
        x[rng.random(d) < 0.7] = 0.0
        x[rng.integers(d)] = rng.standard_normal() + 1.0
    elif kind == "spread":
        x *= 10.0 ** rng.uniform(-3, 3, size=d)
    return {"d": d, "x": x.tolist(), "scale": draw(st.sampled_from([1e-3, 1.0, 1e3])), "mc_seed": 0}


MC_DRAWS = 4000
Z = 5.0


_DRAW_CACHE: dict[tuple[int, str], tuple] = {}


def _draws(comp, case):
    """N compressions of x with a fixed seed, cached per (compressor, case): the three compressor properties
    draw the same cases (derandomized hypothesis), so each case is sampled once."""
    key = (id(comp), repr(sorted(case.items())))
    if key not in _DRAW_CACHE:
        if len(_DRAW_CACHE) > 64:
            _DRAW_CACHE.clear()
        x = np.asarray(case["x"]) * case["scale"]
        rng = np.random.default_rng(case["mc_seed"])
        out = [call_compress(comp, x, rng) for _ in range(MC_DRAWS)]
        _DRAW_CACHE[key] = (comp, x, np.stack([o[0] for o in out]), [o[1] for o in out])
    return _DRAW_CACHE[key][1:]


def check_unbiased(comp, case, hyper, rtol) -> Outcome:
    """E C(x) = x: z = ||mean - x|| / sqrt(V / N) <= Z = 5 with V = max(sample trace of Cov, omega ||x||^2).

    E||mean - x||^2 = tr Cov / N, and tr Cov <= omega ||x||^2 for a compressor meeting its declaration; taking
    the max with the declared bound keeps the test valid when a rare outcome (probability ~1e-5, e.g. QSGD's
    largest coordinate rounding down) never shows in N draws and the sample variance is ~0. The worst case of
    the vector statistic is d = 1 (a normal tail), so a correct compressor fails with probability ~6e-7."""
    if not getattr(comp, "unbiased", True):
        return NOT_APPLICABLE("declared biased")
    x, X, _ = _draws(comp, case)
    mean = X.mean(axis=0)
    V = max(float(np.sum(X.var(axis=0, ddof=1))), declared_omega(comp, x.size) * float(x @ x))
    err = float(np.linalg.norm(mean - x)) - 1e-12 * float(np.linalg.norm(x))  # rounding of the mean
    z = max(err, 0.0) / np.sqrt(V / MC_DRAWS) if V > 0 else (0.0 if err <= 0 else float("inf"))
    note = ""
    if z > Z:
        ratio = float(mean @ x / (x @ x)) if x @ x > 0 else float("nan")
        close = np.linalg.norm(mean - ratio * x) <= 0.05 * np.linalg.norm(x)
        note = f"biased: E C(x) ~ {ratio:.3g} x" if close else "biased"
    return Outcome(z <= Z, z, Z, note)


def check_variance(comp, case, hyper, rtol) -> Outcome:
    """E||C(x) - x||^2 <= omega ||x||^2 (Alistarh et al. 2017, Lemma 3.1 (ii)), one-sided, Z = 5."""
    if not getattr(comp, "unbiased", True):
        return NOT_APPLICABLE("declared biased (omega is for unbiased compressors)")
    x, X, _ = _draws(comp, case)
    omega = declared_omega(comp, x.size)
    e = np.sum((X - x) ** 2, axis=1)
    bound = omega * float(x @ x)
    excess = (e.mean() - bound) / max(e.std(ddof=1) / np.sqrt(MC_DRAWS), 1e-12 * max(bound, 1e-300))
    ratio = float(e.mean() / bound) if bound > 0 else (0.0 if e.mean() == 0 else float("inf"))
    return Outcome(excess <= Z, ratio, 1.0, "" if excess <= Z else f"declared omega too small: measured "
                                                                   f"E||C(x)-x||^2/||x||^2 = {e.mean() / (x @ x):.4g} "
                                                                   f"> omega = {omega:.4g}")


def check_bits(comp, case, hyper, rtol) -> Outcome:
    """Kraft: a uniquely decodable code has sum over distinct messages of 2^-bits <= 1 (the declared bits
    cannot describe more distinct outputs than they can encode)."""
    x, X, bits = _draws(comp, case)
    if bits[0] is None:
        return NOT_APPLICABLE("compress does not report bits")
    seen: dict[bytes, float] = {}
    for row, b in zip(X, bits):
        seen.setdefault(row.tobytes(), b)
    kraft = float(sum(2.0 ** -b for b in seen.values()))
    return Outcome(kraft <= 1.0, kraft, 1.0, "" if kraft <= 1.0 else
                   f"{len(seen)} distinct outputs cannot be encoded in the declared {min(seen.values()):.3g} bits")


# ----------------------------------------------------------------- registry

_perm = lambda draw, p: {"perm_seed": draw(st.integers(0, 2**16)),  # noqa: E731
                         "shift": draw(st.sampled_from([1.0, 10.0, 1e3]))}
_PLAIN = _with(lambda draw, p: {})
_SUBSETS = _with(lambda draw, p: {"subset": draw(st.integers(0, 5))})
_MCM = "McMahan et al. 2017, Alg. 1"
_LI = "Li et al. 2020 (FedProx), Alg. 2, eq. (2)"

PROPERTIES: tuple[Property, ...] = (
    Property("fedavg.k1_is_gd", "fedavg", f"{_MCM} with E = 1, B = inf (FedSGD, Sec. 2)",
             "one local step: x+ = x - eta_g eta grad f_S(x), f weighted by num_examples", _PLAIN,
             check_k1_gd),
    Property("fedavg.one_round", "fedavg", f"{_MCM}; closed form derived by fedtheory (docs/classic.md)",
             "one round equals x + eta_g sum a_i N_i (b_i - A_i x) on quadratics", _PLAIN,
             check_one_round),
    Property("fedavg.fixed_point", "fedavg", "closed-form FedAvg fixed point, derived by fedtheory (docs/classic.md)",
             "(sum a_i N_i A_i)^{-1} sum a_i N_i b_i is a fixed point", _PLAIN, check_fixed_point),
    Property("fedavg.num_examples", "fedavg", f"{_MCM} (weights n_k / n)",
             "duplicating a client's data equals listing the client twice",
             _with(lambda d, p: {"dup": d(st.integers(0, 5))}), check_num_examples),
    Property("fedavg.permutation", "fedavg", f"{_MCM} (a sum over clients)",
             "the order of the clients does not matter", _with(_perm), check_permutation),
    Property("fedavg.translation", "fedavg", f"{_MCM} (gradient steps commute with shifts)",
             "shifting the problem by s shifts the iterate by s", _with(_perm), check_translation),
    Property("fedavg.expected_sampling", "fedavg", f"{_MCM}, uniform sampling of S of n clients",
             "the mean over all size-S subsets equals the mean of the closed-form rounds",
             _SUBSETS, check_sampling),
    Property("fedprox.one_round", "fedprox", f"{_LI}; closed form derived by fedtheory (docs/classic.md)",
             "one round equals the closed form with N_i for f_i + lam/2||. - x||^2", _PLAIN,
             check_one_round),
    Property("fedprox.fixed_point", "fedprox",
             "closed-form FedProx fixed point, derived by fedtheory (docs/classic.md)",
             "[sum a_i N_i A_i]^{-1} sum a_i N_i b_i is a fixed point", _PLAIN, check_fixed_point),
    Property("fedprox.large_prox", "fedprox", f"{_LI}: lam -> inf",
             "lam (x+ - x) -> -eta_g grad f(x)", _PLAIN, check_prox_large),
    Property("fedprox.zero_prox", "fedprox", f"{_LI}: lam = 0 is FedAvg",
             "with prox = 0 one round is FedAvg's closed form", _PLAIN, check_prox_zero),
    Property("fedprox.expected_sampling", "fedprox", f"{_LI}, uniform sampling",
             "the mean over all size-S subsets equals the mean of the closed-form rounds",
             _SUBSETS, check_sampling),
)

for _fam, _ref, _cv in (("scaffold", "Karimireddy et al. 2020, Alg. 1 (option II eq. (5)); Thm III", "c = 1/N sum c_i"),
                        ("feddyn", "Acar et al. 2021, Alg. 1; Thm 2", "h = 1/m sum grad L_k"),
                        ("scaffnew", "Mishchenko et al. 2022, Alg. 2 (ProxSkip); Thm 3.6", "sum h_i = 0")):
    _cases_f = (lambda fam: (lambda hyper: _stateful_cases(hyper, fam)))(_fam)
    PROPERTIES += (
        Property(f"{_fam}.converges", _fam, _ref, "converges to x* exactly (1e-6 relative) under heterogeneity",
                 _cases_f, _converges(_fam), expensive=True),
        Property(f"{_fam}.one_round", _fam, _ref, "one round from a consistent state equals the closed form",
                 _cases_f, _one_round_state(_fam)),
        Property(f"{_fam}.fixed_point", _fam, _ref, "x* with control variates grad f_i(x*) is a fixed point",
                 _cases_f, _fixed_point_state(_fam)),
        Property(f"{_fam}.server_state", _fam, _ref, f"server state invariant: {_cv}", _cases_f,
                 _server_mean(_fam)),
    )

PROPERTIES += (
    Property("compressor.unbiased", "compressor", "Alistarh et al. 2017 (QSGD), Lemma 3.1 (i)",
             f"E C(x) = x (Monte Carlo, {MC_DRAWS} draws, z <= {Z:g})", lambda hyper: _vectors(), check_unbiased),
    Property("compressor.variance", "compressor",
             "Alistarh et al. 2017, Lemma 3.1 (ii); Dorfman et al. 2023, Assumption 3.3",
             f"E||C(x) - x||^2 <= omega ||x||^2 (one-sided, z <= {Z:g})", lambda hyper: _vectors(), check_variance),
    Property("compressor.bits", "compressor", "Kraft inequality (any uniquely decodable code)",
             "sum over distinct outputs of 2^-bits <= 1", lambda hyper: _vectors(), check_bits),
)


# ----------------------------------------------------------------- the five papers' families (one module each)
# Imported last: each module builds on the helpers above.
from . import properties_dane as _dane, properties_fedred as _fedred, properties_multiround as _multi  # noqa: E402
from . import properties_elasticnet as _elastic, properties_efl as _efl, properties_docofl as _docofl  # noqa: E402
from . import properties_ofediq as _ofediq  # noqa: E402

for _module in (_dane, _fedred, _multi, _elastic, _efl, _docofl, _ofediq):
    DEFAULT_HYPER.update(getattr(_module, "HYPER", {}))  # type: ignore[attr-defined]
    PROPERTIES += _module.PROPERTIES
FAMILIES = tuple(DEFAULT_HYPER)

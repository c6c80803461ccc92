"""Broken variants of fedtheory's algorithms, applied in-process for the discrimination check.

A variant is a plausible implementation slip that breaks what a convergence theorem is about: a server that
does not learn, a step whose sign is flipped (ascent), a drift correction removed, a state not carried, a step
or weight off by a constant factor. Each is a function ``variant(orig, alg, problem, state, draw)`` that
returns the ``(state, log)`` a broken round would return, given the faithful round function ``orig``. They act
on the round of an algorithm *family*: the class that defines ``round_given`` (``round`` for gradient descent),
so DANE shares DANE+'s variants and FedProx FedAvg's.

``role``: ``"required"`` variants break the convergence the bound or rate claims are about (a claim that
discriminates rejects each of them); ``"factor"`` variants (a step halved, the weights made uniform) are shown
in the table but not required, since a slower or reweighted algorithm can still satisfy an upper bound;
``"local"`` variants break a family's local solver (``method``: the method they replace, called as
``variant(orig, alg, *args)`` with the faithful method ``orig``; without ``method`` they patch the round and
break only its clients' step), and are required of the claims declared ``scope="local"`` and of the claims that
call that solver but never run the family's round (per-point lemmas about the local step, where a server that
does not learn is not a plausible break: nothing they state involves the server); the harness runs them only
there.

The variants are built from the algorithms' public state: a variant changes the input state of the faithful
round (the control variates zeroed), its output (the server update reflected or dropped, made consistent with
the rest of the state), or the oracle it sees (every gradient negated: gradient ascent).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

import fedtheory.algorithms as alg

Round = Callable[..., tuple[Any, Any]]
VariantFn = Callable[[Round, Any, Any, Any, Any], tuple[Any, Any]]


@dataclass(frozen=True)
class Variant:
    name: str
    role: str  # "required", "factor" or "local"
    description: str
    apply: VariantFn
    method: str | None = None  # the local-solver method a "local" variant replaces (None: the family's round)


# ----- helpers -----------------------------------------------------------------------------------------------

def negated(problem: Any) -> Any:
    """A shallow copy of ``problem`` whose gradient oracles return -grad (an algorithm run on it ascends f).

    A dynamic subclass keeps ``isinstance`` (online problems) working; each oracle calls the original object's,
    so an oracle built on another (stochastic gradients on exact ones) is negated once, not twice."""
    base = type(problem)

    class Negated(base):  # type: ignore[misc, valid-type]
        def grads(self, *a: Any, **k: Any) -> np.ndarray:
            return -problem.grads(*a, **k)

        def grad(self, *a: Any, **k: Any) -> np.ndarray:
            return -problem.grad(*a, **k)

        def stochastic_grads(self, *a: Any, **k: Any) -> np.ndarray:
            return -problem.stochastic_grads(*a, **k)

        if hasattr(base, "grads_at"):
            def grads_at(self, *a: Any, **k: Any) -> np.ndarray:
                return -problem.grads_at(*a, **k)

    out = copy.copy(problem)
    object.__setattr__(out, "__class__", Negated)
    return out


def local_linear_flipped(problem: Any) -> Any:
    """A shallow copy of ``problem`` whose exact local solver sees the linear term with its sign flipped: a
    client asked for argmin f_i(x) + <lin, x> + prox minimises f_i(x) - <lin, x> + prox (as :func:`negated`)."""
    base = type(problem)

    class Flipped(base):  # type: ignore[misc, valid-type]
        def solve_local(self, lin: np.ndarray, *a: Any, **k: Any) -> np.ndarray:
            return problem.solve_local(-np.asarray(lin), *a, **k)

    out = copy.copy(problem)
    object.__setattr__(out, "__class__", Flipped)
    return out


def step_scaled(factor: float) -> VariantFn:
    """The server update x+ - x multiplied by ``factor`` (0: the server does not learn; -1: ascent)."""
    def apply(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
        new, log = orig(a, problem, state, draw)
        return replace(new, x=state.x + factor * (new.x - state.x)), log
    return apply


def with_zeroed(*fields: str) -> VariantFn:
    """The round run with the state fields ``fields`` zeroed on the way in and out (a correction removed)."""
    def zero(s: Any) -> Any:
        out = {}
        for f in fields:
            v = getattr(s, f)
            if v is None:
                continue
            arr = v.peek() if hasattr(v, "peek") else np.asarray(v)
            out[f] = type(v).zeros(*arr.shape) if hasattr(type(v), "zeros") else np.zeros_like(arr)
        return replace(s, **out)

    def apply(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
        new, log = orig(a, problem, zero(state), draw)
        return zero(new), log
    return apply


def on_negated_oracle(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    new, log = orig(a, negated(problem), state, draw)
    return new, log


def with_attrs(**values: Callable[[Any, Any], Any]) -> VariantFn:
    """The round run with hyperparameters replaced (``values[name](alg, problem)`` gives each new value)."""
    def apply(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
        return orig(replace(a, **{k: f(a, problem) for k, f in values.items()}), problem, state, draw)
    return apply


# ----- algorithm-specific variants ---------------------------------------------------------------------------

def fedred_reference(move: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> VariantFn:
    """FedRed with the new reference point x~_{k+1} replaced by ``move(x~_k, x~_{k+1})`` on communication; the
    control variates, the reset local iterates and the gradient cache follow it as Alg. 2-3 would."""
    def apply(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
        new, log = orig(a, problem, state, draw)
        if not draw.communicate:
            return new, log
        x_ref = move(state.x, new.x)
        H, G_ref = a._control_variates(problem, x_ref)
        X = np.array(problem.broadcast(x_ref)) if a.reset else new.X
        cache = G_ref if a.reset and a.solver != "exact" and not a.stochastic else None
        return replace(new, x=x_ref, X=X, H=H, G=cache), log
    return apply


def daneplus_cv_dropped(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """DANE+ with its control variate removed: the local problems are f_i + lam/2 ||x - x^r||^2 (FedProx).

    The round runs with the stored control variate (B.84) set to 0 (so the local solver, exact or inexact as the
    algorithm's own, sees h = 0), whatever the averaging. (An earlier version solved the selected client's prox
    step exactly under single-client averaging, which fails the exact solver's input check on weakly convex
    clients where the algorithm's own local GD runs: a variant error, not a rejection.)"""
    zero_h = np.zeros((problem.n_clients, problem.dim))
    broken = copy.copy(a)  # DANE refuses control_variate='scaffnew' in __post_init__: set it on a copy
    object.__setattr__(broken, "control_variate", "scaffnew")
    new, log = orig(broken, problem, replace(state, h=zero_h), draw)
    return replace(new, h=zero_h if a.control_variate == "scaffnew" else state.h), log


def daneplus_local_cv(sign: float) -> Callable[..., Any]:
    """DANE+'s local solver (``local_models``) with its control variate h_i multiplied by ``sign`` in the local
    objective F_i = f_i + <sign h_i, x> + lam/2 ||x - x^r||^2 (0: dropped, FedProx's local problems; -1: the
    sign flipped); it reports the h it used, as a consistent implementation of that slip would."""
    def apply(orig: Callable[..., Any], a: Any, problem: Any, state: Any, clients: Any = None,
              seed: Any = None) -> Any:
        if a.control_variate == "gradient":
            G = problem.grads(problem.broadcast(state.x))
            h = problem.weights @ G - G
        else:
            h = state.h
        broken = copy.copy(a)  # DANE refuses control_variate='scaffnew' in __post_init__: set it on a copy
        object.__setattr__(broken, "control_variate", "scaffnew")
        return orig(broken, problem, replace(state, h=sign * h), clients, seed)
    return apply


def fedred_local_cv(sign: float) -> Callable[..., Any]:
    """FedRed's local solver (``local_step``) with its control variates h_i multiplied by ``sign`` in the local
    objective (0: dropped; -1: the sign flipped)."""
    def apply(orig: Callable[..., Any], a: Any, problem: Any, state: Any, *rest: Any) -> Any:
        return orig(a, problem, replace(state, H=sign * np.asarray(state.H)), *rest)
    return apply


def scaffnew_no_communication(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """Scaffnew whose server never averages: every coin comes up tails (local GD with a frozen h)."""
    if a.round_unit != "step":
        raise NotImplementedError("round_unit='communication'")
    return orig(a, problem, state, replace(draw, coin=False))


def feddyn_local_correction_flipped(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """FedDyn whose clients flip the sign of the dynamic correction in their local objective: they minimise
    L_k(theta) + <g_k, theta> + lambda2/2 ||theta - theta^{t-1}||^2 (+ lambda1 ||.||_1) instead of
    L_k - <g_k, theta> (the exact local solver; inert with solver='gd'). The server and the state updates are
    the faithful ones. A break of the local step that per-round lemmas on the local solutions (FedElasticNet
    Lemma B.5) are about, which a frozen or reflected server update does not reach."""
    return orig(a, local_linear_flipped(problem), state, draw)


def efl_frozen(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """EFL whose server keeps w^G and broadcasts nothing (the clients restart from their round-start model)."""
    new, log = orig(a, problem, state, draw)
    return replace(new, x=state.x, broadcast=np.zeros_like(state.broadcast), server_res=state.server_res), log


def docofl_no_correction(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """DoCoFL whose clients skip the online correction: w_hat = y (the stale compressed anchor)."""
    return orig(replace(a, correction_compressor=_Zero()), problem, state, draw)


class _Zero:
    """A compressor that sends nothing (the correction dropped)."""

    def compress(self, X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = np.atleast_2d(X)
        return np.zeros_like(X), np.zeros(X.shape[0])


def ofediq_no_ipw(orig: Round, a: Any, problem: Any, state: Any, draw: Any) -> tuple[Any, Any]:
    """OFedIQ without the inverse-probability weight 1/p_k (eq. 8): the update shrinks by p."""
    new, log = orig(a, problem, state, draw)
    if not a.transmits(state.t):
        return new, log
    p = float(np.mean(a.probabilities(problem.n_clients)))
    return replace(new, x=state.x + p * (new.x - state.x)), log


FROZEN = "the server does not learn: x+ = x"
ASCENT_REFLECT = "the server update's sign flipped: x+ = x - (x+ - x)"
ASCENT_ORACLE = "every gradient's sign flipped (gradient ascent)"
HALF = "the server update halved: x+ = x + (x+ - x)/2"

#: Variants per algorithm family (the class defining the round); see the module docstring for the roles.
VARIANTS: dict[str, list[Variant]] = {
    "GradientDescent": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
    ],
    "FedAvg": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
        Variant("uniform_weights", "factor", "server weights 1/n instead of w_i",
                with_attrs(weighting=lambda a, p: "uniform")),
    ],
    "Scaffold": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("no_drift_correction", "required", "control variates c, c_i kept at 0 (FedAvg)",
                with_zeroed("c", "C")),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
    ],
    "Scaffnew": [
        Variant("frozen", "required", "the server never averages (every coin tails)", scaffnew_no_communication),
        Variant("ascent", "required", ASCENT_ORACLE, on_negated_oracle),
        Variant("no_drift_correction", "required", "control variates h_i kept at 0", with_zeroed("H")),
        Variant("half_step", "factor", "local step gamma halved",
                with_attrs(step=lambda a, p: 0.5 * a.step_size(p))),
    ],
    "FedDyn": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("state_not_carried", "required", "dynamic state h, g_i not carried (kept at 0: FedProx)",
                with_zeroed("h", "G")),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
        Variant("local_correction_flipped", "local",
                "the local objective's correction sign flipped: clients minimise L_k + <g_k, theta> + prox",
                feddyn_local_correction_flipped),
    ],
    "DANEPlus": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("no_drift_correction", "required", "control variate h_i removed (local prox steps: FedProx)",
                daneplus_cv_dropped),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
        Variant("local_cv_dropped", "local", "the local objective's control variate dropped (h_i = 0: FedProx)",
                daneplus_local_cv(0.0), method="local_models"),
        Variant("local_cv_sign", "local", "the local objective's control variate with its sign flipped (-h_i)",
                daneplus_local_cv(-1.0), method="local_models"),
    ],
    "FedRed": [
        Variant("frozen", "required", "the reference point never moves: x~+ = x~",
                fedred_reference(lambda x, x_new: x)),
        Variant("ascent", "required", "the reference point's update reflected: x~+ = 2 x~ - x~+",
                fedred_reference(lambda x, x_new: 2.0 * x - x_new)),
        Variant("no_drift_correction", "required", "control variates h_i kept at 0", with_zeroed("H")),
        Variant("half_step", "factor", "the reference point's update halved",
                fedred_reference(lambda x, x_new: 0.5 * (x + x_new))),
        Variant("local_cv_dropped", "local", "the local objective's control variates dropped (h_i = 0)",
                fedred_local_cv(0.0), method="local_step"),
        Variant("local_cv_sign", "local", "the local objective's control variates with their sign flipped",
                fedred_local_cv(-1.0), method="local_step"),
    ],
    "DoCoFL": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_REFLECT, step_scaled(-1.0)),
        Variant("no_correction", "local", "the online correction dropped: w_hat = y", docofl_no_correction),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
    ],
    "OFedIQ": [
        Variant("frozen", "required", FROZEN, step_scaled(0.0)),
        Variant("ascent", "required", ASCENT_ORACLE, on_negated_oracle),
        Variant("no_ipw", "factor", "inverse-probability weight 1/p_k dropped", ofediq_no_ipw),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
    ],
    "EFL": [
        Variant("frozen", "required", "the server keeps w^G and broadcasts nothing", efl_frozen),
        Variant("ascent", "required", ASCENT_ORACLE, on_negated_oracle),
        Variant("no_error_feedback", "required", "error-feedback residuals R^k, R^G not carried",
                with_zeroed("client_res", "server_res")),
        Variant("half_step", "factor", HALF, step_scaled(0.5)),
    ],
}


def family_classes() -> dict[str, tuple[type, str]]:
    """Family name -> (the class whose method is patched, the method name)."""
    out = {}
    for name in VARIANTS:
        cls = getattr(alg, name)
        out[name] = (cls, "round" if name == "GradientDescent" else "round_given")
    return out


def local_methods() -> dict[tuple[str, str], tuple[type, str]]:
    """(family, method) -> (the class whose method the family's "local" variants replace, the method name)."""
    out = {}
    for name, variants in VARIANTS.items():
        for v in variants:
            if v.method is not None:
                out[(name, v.method)] = (getattr(alg, name), v.method)
    return out


def family_of(obj: Any) -> str | None:
    """The family of an algorithm instance: the first listed family class it is an instance of."""
    for name, (cls, _) in family_classes().items():
        if isinstance(obj, cls):
            return name
    return None

"""The kit's power, measured: deliberately wrong implementations it must reject, differently written correct
ones it must accept (tests/test_conformance_power.py asserts both; docs/conformance.md has the counts).

A :class:`Variant` is an implementation plus the hyperparameters and tolerance it is checked with. The wrong
ones are the slips of :mod:`fedtheory.conformance.reference` (FedAvg, FedProx, SCAFFOLD, FedDyn, Scaffnew,
compressors) and of :mod:`fedtheory.conformance.variants_papers` (DANE+, FedRed, FedElasticNet), plus
state-carried slips made by wrapping a correct implementation's state (:func:`opaque`, :func:`forgetful`,
:func:`by_position`, :func:`zero_absent`): those are invisible in any single round from a given state and only
the multi-round properties catch them. The correct ones differ from the textbook code in precision (float32,
checked at rtol = 1e-4), summation order, derivation (DANE as a preconditioned step) or state layout (an
opaque object instead of the contract's mapping).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np

from . import reference
from . import variants_papers as vp

__all__ = ["Variant", "WRONG", "CORRECT", "opaque", "forgetful", "by_position", "zero_absent"]


@dataclass(frozen=True)
class Variant:
    family: str
    name: str
    impl: Callable[..., Any]
    hyper: Mapping[str, Any] = field(default_factory=dict)
    rtol: float = 1e-8


class _Box:
    """A state the kit cannot read (a framework's own object)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


def _inner(state: Any) -> Any:
    """What the wrapped implementation stored: the boxed state, or a state the kit set in the contract's layout."""
    return state.inner if isinstance(state, _Box) else state


def opaque(impl: Callable[..., Any]) -> Callable[..., Any]:
    """The same implementation keeping its state in an object the kit cannot read (correct)."""
    def wrapped(x, clients, *, state=None, **kw):
        x_new, st = impl(x, clients, state=_inner(state), **kw)
        return x_new, _Box(st)
    return wrapped


def forgetful(impl: Callable[..., Any], key: str, *, server: str | None = None) -> Callable[..., Any]:
    """Wrong: the per-client part ``key`` (and optionally the server part) is lost between rounds (a framework
    that re-creates its client objects every round); the state is opaque, so only multi-round checks see it."""
    def wrapped(x, clients, *, state=None, **kw):
        inner = None
        if state is not None:
            inner = dict(_inner(state), **{key: {}})
            if server:
                inner[server] = np.zeros_like(np.asarray(inner[server]))
        x_new, st = impl(x, clients, state=inner, **kw)
        return x_new, _Box(st)
    return wrapped


def by_position(impl: Callable[..., Any], key: str) -> Callable[..., Any]:
    """Wrong: per-client state stored by the slot in this round's participant list instead of the client id,
    so under partial participation a client gets another client's control variate."""
    def wrapped(x, clients, *, state=None, **kw):
        inner = None
        if state is not None:
            slots = _inner(state)[key]
            inner = dict(_inner(state), **{key: {c.cid: slots[j] for j, c in enumerate(clients) if j in slots}})
        x_new, st = impl(x, clients, state=inner, **kw)
        ids = {c.cid: j for j, c in enumerate(clients)}
        st = dict(st, **{key: {ids.get(cid, cid): v for cid, v in st[key].items()}})
        return x_new, _Box(st)
    return wrapped


def zero_absent(impl: Callable[..., Any], key: str) -> Callable[..., Any]:
    """Wrong: clients that did not participate have their stored state reset to zero (readable state)."""
    def wrapped(x, clients, *, state=None, **kw):
        x_new, st = impl(x, clients, state=state, **kw)
        here = {c.cid for c in clients}
        return x_new, dict(st, **{key: {cid: (v if cid in here else np.zeros_like(v)) for cid, v in st[key].items()}})
    return wrapped


def _slips(family: str, impl: Callable[..., Any], names: tuple[str, ...], **hyper: Any) -> list[Variant]:
    return [Variant(family, name, partial(impl, slip=name), hyper) for name in names]


def _wrong() -> list[Variant]:
    out = [Variant(f, s, impl) for f, s, impl in reference.wrong_implementations()]
    out += _slips("dane", vp.dane, ("cv_sign", "no_cv", "prox_half", "cv_stale"))
    out += _slips("dane", vp.dane, ("uniform_weights",), weighting="num_examples")
    out += _slips("dane", vp.dane, ("k_minus_1",), local_steps=4)
    out += _slips("dane", vp.dane, ("b84_m_half", "b84_sign", "b84_stale"), control_variate="scaffnew", m=0.7)
    out += _slips("dane", vp.dane, ("random_ignores_draw", "random_first"), averaging="random")
    out += _slips("fedred", vp.fedred, ("no_reset", "cv_not_refreshed", "lam_eta_missing", "always_communicate",
                                        "own_coin_biased", "ref_from_old_locals"))
    out += _slips("fedred", vp.fedred, ("always_reset",), reset=False)
    out += _slips("fedred", vp.fedred, ("average_unweighted",), weighting="num_examples")
    out += _slips("fedred", vp.fedred, ("sgd_full_batch",), batch_size=2)
    out += _slips("fedred", vp.fedred, ("exact_wrong_center",), solver="exact")
    out += _slips("fedelasticnet_fedavg", vp.fedelasticnet_fedavg, ("no_l1",))
    out += _slips("fedelasticnet_fedavg", vp.fedelasticnet_fedavg, ("l1_sign_flip", "always_proximal",
                                                                    "sign_zero_is_one"), local_steps=5)
    out += _slips("fedelasticnet_scaffold", vp.fedelasticnet_scaffold, ("no_l1", "sign_zero_is_one"))
    out += _slips("fedelasticnet_feddyn", vp.fedelasticnet_feddyn, ("always_kkt", "h_without_l1", "g_without_l1"))
    out += _slips("fedelasticnet_feddyn", vp.fedelasticnet_feddyn, ("always_printed",), sign_at_zero="kkt")
    out += _slips("efl", vp.efl, ("no_compensation", "inactive_trained", "elastic_sign", "elastic_half"))
    out += _slips("efl", vp.efl, ("no_error_feedback", "server_no_error_feedback", "st_keeps_values",
                                  "sync_missing"), q=0.5)
    out += _slips("docofl", vp.docofl, ("anchor_every_round", "queue_one_short", "ignore_lead", "no_correction",
                                        "correction_vs_raw_anchor", "gradient_at_server_model", "divide_by_N"))
    out += _slips("ofediq", vp.ofediq, ("divide_by_sampled", "no_inverse_p", "no_period_restart",
                                        "last_gradient_only", "quantizer_rounds_down", "regret_at_new_model"))
    out += _slips("ofediq", vp.ofediq, ("quantizer_ignores_blocks",), b=2)
    # state-carried slips: every single round from a given state is right
    out += [Variant("scaffold", "forgets_c_i_between_rounds", forgetful(reference.scaffold, "c_i")),
            Variant("scaffold", "c_i_by_participant_slot", by_position(reference.scaffold, "c_i")),
            Variant("scaffold", "absent_c_i_reset", zero_absent(reference.scaffold, "c_i")),
            Variant("feddyn", "forgets_h_between_rounds", forgetful(reference.feddyn, "g_i", server="h")),
            Variant("feddyn", "g_i_by_participant_slot", by_position(reference.feddyn, "g_i")),
            Variant("feddyn", "absent_g_i_reset", zero_absent(reference.feddyn, "g_i")),
            Variant("scaffnew", "forgets_h_i_between_rounds", forgetful(reference.scaffnew, "h_i")),
            Variant("fedred", "forgets_local_iterates", forgetful(vp.fedred, "x_i")),
            Variant("fedelasticnet_scaffold", "c_i_by_participant_slot",
                    by_position(vp.fedelasticnet_scaffold, "c_i")),
            Variant("fedelasticnet_feddyn", "absent_g_i_reset", zero_absent(vp.fedelasticnet_feddyn, "g_i"))]
    return out


def _fsum_fedavg(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, prox=0.0, weighting="num_examples",
                 **_):
    """FedAvg with the clients in reverse order and a compensated (math.fsum) weighted sum."""
    import math
    ys = []
    for c in reversed(clients):
        y = x.copy()
        for _k in range(local_steps):
            y = y - local_step * (c.grad(y) + prox * (y - x))
        ys.append(y - x)
    m = np.array([c.num_examples for c in reversed(clients)], dtype=np.float64)
    a = m / m.sum() if weighting == "num_examples" else np.full(len(clients), 1.0 / len(clients))
    delta = np.array([math.fsum(a[i] * ys[i][j] for i in range(len(ys))) for j in range(x.size)])
    return x + server_step * delta


def _dane_preconditioned(x, clients, *, lam=1.0, weighting="uniform", **_):
    """DANE with exact solves written as the preconditioned step x - [sum_i w_i (A_i + lam I)^{-1}] grad f(x)."""
    w = _w(clients, weighting)
    P = sum(wi * np.linalg.inv(c.features.T @ c.features / c.num_examples + lam * np.eye(x.size))
            for wi, c in zip(w, clients))
    g = sum(wi * c.grad(x) for wi, c in zip(w, clients))
    return x - P @ g


def _w(clients, weighting):
    m = np.array([c.num_examples if weighting == "num_examples" else 1 for c in clients], dtype=np.float64)
    return m / m.sum()


def _fedred_reversed(x, clients, **kw):
    """FedRed with the clients processed in reverse order (another summation order of every average)."""
    x_new, st = vp.fedred(x, list(reversed(clients)), **kw)
    return x_new, st


def _float32_fedavg(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, weighting="num_examples", **_):
    """FedAvg computed entirely in float32."""
    f32 = np.float32
    x32 = x.astype(f32)
    ys = []
    for c in clients:
        Z, t = c.features.astype(f32), c.targets.astype(f32)
        y = x32.copy()
        for _k in range(local_steps):
            y = y - f32(local_step) * (Z.T @ (Z @ y - t) / f32(c.num_examples))
        ys.append(y)
    m = np.array([c.num_examples for c in clients], dtype=f32) if weighting == "num_examples" else \
        np.ones(len(clients), dtype=f32)
    return (x32 + f32(server_step) * ((m / m.sum()) @ (np.stack(ys) - x32))).astype(np.float64)


CORRECT_LIST: list[Variant] = [
    Variant("fedavg", "float32", _float32_fedavg, {}, 1e-4),
    Variant("fedavg", "reverse_order_fsum", _fsum_fedavg),
    Variant("dane", "float32", partial(vp.dane, dtype=np.float32), {}, 1e-4),
    Variant("dane", "float32_b84_inexact", partial(vp.dane, dtype=np.float32),
            {"control_variate": "scaffnew", "local_steps": 3}, 1e-4),
    Variant("dane", "preconditioned_step", _dane_preconditioned),
    Variant("dane", "random_selection", vp.dane, {"averaging": "random"}),
    Variant("fedred", "float32", partial(vp.fedred, dtype=np.float32), {}, 1e-4),
    Variant("fedred", "reverse_order", _fedred_reversed, {"solver": "exact", "reset": False}),
    Variant("fedred", "opaque_state", opaque(vp.fedred)),
    Variant("fedred", "sgd_minibatches", vp.fedred, {"batch_size": 2}),
    Variant("scaffold", "opaque_state", opaque(reference.scaffold)),
    Variant("feddyn", "opaque_state", opaque(reference.feddyn)),
    Variant("scaffnew", "opaque_state", opaque(reference.scaffnew)),
    Variant("fedelasticnet_fedavg", "ista_exact_solve", vp.fedelasticnet_fedavg),
    Variant("fedelasticnet_scaffold", "proximal_reading", vp.fedelasticnet_scaffold, {"l1_mode": "proximal"}),
    Variant("fedelasticnet_feddyn", "kkt_reading", vp.fedelasticnet_feddyn, {"sign_at_zero": "kkt"}),
    Variant("efl", "float32_compressed", partial(vp.efl, dtype=np.float32), {"q": 0.5}, 1e-4),
    Variant("efl", "opaque_state_printed", opaque(vp.efl), {"variant": "printed", "q": 0.3}),
    Variant("docofl", "dict_queue", vp.docofl, {"period": 1, "queue_size": 4}),
    Variant("ofediq", "client_loop_with_regret", vp.ofediq, {"period": 3, "s": 2, "b": 2}),
    Variant("ofediq", "fedogd", vp.ofediq, {"p": 1.0, "period": 1, "s": None}),
]
WRONG: list[Variant] = _wrong()
CORRECT: list[Variant] = CORRECT_LIST

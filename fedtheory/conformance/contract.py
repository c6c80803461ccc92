"""The adapter contract: how the kit calls an implementation under test.

A federated implementation is any callable

    impl(x, clients, *, state=None, rng=None, **hyper) -> x_new          (FedAvg, FedProx)
    impl(x, clients, *, state=None, rng=None, **hyper) -> (x_new, state)  (SCAFFOLD, FedDyn, Scaffnew)

called once per communication round. ``x`` is the server model (a float64 vector), ``clients`` the
participating :class:`~fedtheory.conformance.instance.Client` objects (data arrays ``features``/``targets``,
``grad(x)``, ``value(x)``, ``num_examples``, ``cid``), ``state`` what the implementation returned last round
(``None`` in the first round), ``rng`` a NumPy generator, and ``hyper`` the hyperparameters by name
(``local_steps``, ``local_step``, ``server_step``, ``prox``, ``alpha``, ``step``, ``p``, ``weighting``,
``num_clients``); an implementation takes ``**hyper`` and uses what it needs. Local training is full-batch
(the kit checks exact identities; minibatch noise would hide them).

The state is opaque to the kit, except that the properties which need to read or set it (fixed point with
the right auxiliary state, server state = weighted mean of the client states) apply when the state is a
mapping with the paper's names: SCAFFOLD ``{"c": (d,), "c_i": {cid: (d,)}}``, FedDyn
``{"h": (d,), "g_i": {cid: (d,)}}``, Scaffnew ``{"h_i": {cid: (d,)}}``; otherwise they report "n.a.".

The five papers' families (docs/conformance.md, "The five papers' families") add their hyperparameters and
layouts: DANE+ (B.84) ``{"h_i": {cid: (d,)}}``, FedRed ``{"x_i": {...}, "h_i": {...}}`` (one call per
iteration), FedElasticNet Algs. 2 and 3 as SCAFFOLD and FedDyn.

Draw protocol: where the paper's round is random beyond the participants, the kit passes the outcome as the
keyword ``draw`` (DANE+'s selected client ``{"client": cid}``, FedRed's coin ``{"communicate": bool}`` and
minibatches ``{"batches": {cid: rows}}``); an implementation uses it instead of its own generator.

Sampling protocol (the other direction): an implementation that draws its own participants (a framework's sampler
as its users run it) is given the whole population as ``clients`` and the participation as the keyword
``clients_per_round`` = m (the framework's clients per round or fraction, translated by its driver); it returns
``(x_new, state, {"drawn": [cid, ...]})``, the clients it drew this round (``state`` may be ``None``), and may name
the law its framework documents for the sampler where it is not the paper's (``"law"``, see
:mod:`fedtheory.conformance.sampling`). The kit
judges the round against the paper's round for the reported clients and the draws in law
(:mod:`fedtheory.conformance.sampling`). Without ``clients_per_round`` every given client takes part, as before:
an implementation that takes the kit's participants needs nothing new, and the sampling properties report
"not applicable" for it.

A compressor is any object with ``compress(x, rng) -> x_hat`` or ``-> (x_hat, bits)`` on a vector x, an
``omega`` attribute (a number, or a callable of d) for the declared variance constant, and optionally
``unbiased`` (default True).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["STATE_KEYS", "call_round", "call_sampling_round", "call_compress", "declared_omega", "ContractError", "check_implementation"]

#: The state layout that makes the state-reading properties applicable (server key, per-client key).
STATE_KEYS: Mapping[str, tuple[str | None, str]] = {
    "scaffold": ("c", "c_i"), "feddyn": ("h", "g_i"), "scaffnew": (None, "h_i")}


class ContractError(TypeError):
    """The implementation returned something the contract does not allow."""


def check_implementation(impl: Any, family: str) -> None:
    """Raise :class:`ContractError` (one sentence: what the contract expects, what was given) unless ``impl`` can be
    called as the contract calls it: ``compress(x, rng)`` for the compressor family, otherwise
    ``impl(x, clients, state=..., rng=...)``. The hyperparameter keywords are not checked (each family passes its
    own, and an implementation may take ``**hyper``); a signature Python cannot read is given the benefit of the
    doubt (it is judged by its calls)."""
    what = _describe(impl)
    if family == "compressor":
        if not callable(getattr(impl, "compress", None)):
            raise ContractError(f"a compressor is an object with compress(x, rng) and omega, got {what}")
        return
    if not callable(impl):
        raise ContractError(f"an implementation is a callable impl(x, clients, *, state=None, rng=None, **hyper), "
                            f"got {what}")
    try:
        signature = inspect.signature(impl)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(0, [], state=None, rng=None)
    except TypeError:
        raise ContractError(f"an implementation is called as impl(x, clients, *, state=None, rng=None, **hyper), "
                            f"but {what} takes {signature}") from None


def _describe(obj: Any) -> str:
    """How a user would name ``obj`` in one phrase: 'the function make', 'a class Round', 'an int (3)'."""
    if inspect.isclass(obj):
        return f"the class {obj.__qualname__}"
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return f"the function {obj.__qualname__}"
    text = repr(obj)
    return f"{type(obj).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def call_round(impl: Callable[..., Any], x: np.ndarray, clients: Sequence[Any], state: Any, hyper: Mapping[str, Any],
               rng: np.random.Generator) -> tuple[np.ndarray, Any]:
    """One round through the contract; returns (x_new as float64 (d,), state)."""
    x_new, new_state, _ = call_sampling_round(impl, x, clients, state, hyper, rng)
    return x_new, new_state


def call_sampling_round(impl: Callable[..., Any], x: np.ndarray, clients: Sequence[Any], state: Any,
                        hyper: Mapping[str, Any], rng: np.random.Generator) -> tuple[np.ndarray, Any, dict | None]:
    """One round through the contract; returns (x_new, state, report): ``report`` is ``{"drawn": [cid, ...],
    "law": LAW or None}``, the client ids the implementation reports it drew itself (the sampling protocol) and the
    sampling law it declares, if any (:data:`fedtheory.conformance.sampling.DECLARABLE`); ``None`` when it reports
    no draw."""
    out = impl(np.array(x, dtype=np.float64), list(clients), state=state, rng=rng, **hyper)
    new_state, drawn = None, None
    if isinstance(out, tuple):
        if len(out) not in (2, 3):
            raise ContractError(f"an implementation returns x_new, (x_new, state) or (x_new, state, {{'drawn': "
                                f"cids}}), got a {len(out)}-tuple")
        if len(out) == 3:
            report = out[2]
            if not isinstance(report, Mapping) or "drawn" not in report:
                raise ContractError(f"the third returned item reports the round's own draw as {{'drawn': [cid, "
                                    f"...]}}, got {_describe(report)}")
            law = report.get("law")
            if law is not None and not isinstance(law, str):
                raise ContractError(f"the report's 'law' names the sampler's law as a string, got {_describe(law)}")
            drawn = {"drawn": [int(c) for c in np.asarray(report["drawn"]).reshape(-1)], "law": law}
        out, new_state = out[0], out[1]
    x_new = np.asarray(out, dtype=np.float64).reshape(-1) if np.size(out) == np.size(x) else None
    if x_new is None:
        raise ContractError(f"the new server model must have {np.size(x)} entries, got shape {np.shape(out)}")
    return x_new, new_state, drawn


def call_compress(comp: Any, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float | None]:
    out = comp.compress(np.array(x, dtype=np.float64), rng)
    bits = None
    if isinstance(out, tuple):
        out, bits = out
        bits = float(np.asarray(bits).reshape(-1)[0])
    x_hat = np.asarray(out, dtype=np.float64).reshape(-1)
    if x_hat.shape != x.shape:
        raise ContractError(f"compress must return a vector of shape {x.shape}, got {np.shape(out)}")
    return x_hat, bits


def declared_omega(comp: Any, d: int) -> float:
    omega = getattr(comp, "omega", None)
    if omega is None:
        raise ContractError("a compressor must declare omega (a number or a callable of d)")
    return float(omega(d) if callable(omega) else omega)

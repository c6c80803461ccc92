"""The kit's diagnoses follow from what was measured (fedtheory/conformance/weights.py and the properties): a wrong
implementation is told which deviation its output shows, with numbers, and never a deviation it does not have.
Each wrong implementation is written here, from the papers, as a user would."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the conformance kit needs the test extra (hypothesis)")

from fedtheory import conformance  # noqa: E402


def _local(c, x, K, eta):
    w = np.array(x, dtype=np.float64)
    for _ in range(K):
        w = w - eta * c.grad(w)
    return w


def _fedavg(weight_of):
    def impl(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, **_):
        a = np.array([weight_of(c.num_examples) for c in clients], dtype=np.float64)
        a = a / a.sum()
        delta = sum(ai * (_local(c, x, local_steps, local_step) - x) for ai, c in zip(a, clients))
        return x + server_step * delta
    return impl


squared = _fedavg(lambda m: m ** 2)
uniform = _fedavg(lambda m: 1.0)


def in_place(x, clients, *, local_steps=5, local_step=0.1, server_step=1.0, **_):
    """Local training on the server's own array: every client starts from the previous client's result."""
    w = np.array(x, dtype=np.float64)
    total = sum(c.num_examples for c in clients)
    delta = np.zeros_like(w)
    start = w.copy()
    for c in clients:
        for _ in range(local_steps):
            w -= local_step * c.grad(w)  # in place: the next client starts here
        delta += c.num_examples / total * (w - start)
    return x + server_step * delta


def _diagnoses(impl, **kw):
    report = conformance.check(impl, "fedavg", shrink=False, vary=False, **kw)
    assert report.verdict == "fail", report.table()
    return {r.prop.id: r.diagnosis for r in report.failures}


def test_squared_weights_are_measured_as_squared():
    got = _diagnoses(squared)
    assert "proportional to num_examples^2" in got["fedavg.one_round"]
    assert "proportional to num_examples^2" in got["fedavg.num_examples"]
    assert not any("ignores num_examples" in d for d in got.values()), got


def test_in_place_training_is_no_weighting():
    got = _diagnoses(in_place)
    # n <= d: "no weighted average" (the weights fitted, the residual large); n > d: no known weighting reproduces it
    assert "no weight" in got["fedavg.one_round"] and "the local training" in got["fedavg.one_round"]
    assert not any("ignores num_examples" in d or "weighted uniformly" in d for d in got.values()), got


def test_uniform_weights_are_named_and_ignoring_num_examples_is_measured():
    got = _diagnoses(uniform)
    assert "weighted uniformly" in got["fedavg.one_round"]
    assert "ignores num_examples: doubling client" in got["fedavg.num_examples"]


def _fedavgm(weight_of, momentum="server"):
    """FedAvgM (Hsu et al. 2019; Reddi et al. 2021, Alg. 2 with m = beta1 m + Delta, x+ = x + eta m), the clients'
    deltas weighted by ``weight_of(num_examples)``; ``momentum="client"`` keeps one momentum per client instead
    of the server's (a given state without them starts them from zero)."""
    def impl(x, clients, *, state=None, local_steps=5, local_step=0.1, server_step=0.1, beta1=0.9, **_):
        a = np.array([weight_of(c.num_examples) for c in clients], dtype=np.float64)
        a = a / a.sum()
        deltas = [_local(c, x, local_steps, local_step) - x for c in clients]
        if momentum == "server":
            m = beta1 * (np.zeros_like(x) if state is None else np.asarray(state["m"])) + sum(
                ai * di for ai, di in zip(a, deltas))
            return x + server_step * m, {"m": m}
        m_i = dict((state or {}).get("m_i", {}))
        for c, di in zip(clients, deltas):
            m_i[c.cid] = beta1 * m_i.get(c.cid, np.zeros_like(x)) + di
        m = sum(ai * m_i[c.cid] for ai, c in zip(a, clients))
        return x + server_step * m, {"m": m, "m_i": m_i}
    return impl


def _server(impl, **kw):
    report = conformance.check(impl, "server_optimizer", shrink=False, vary=False, optimizer="fedavgm",
                               weighting="num_examples", **kw)
    assert report.verdict == "fail", report.table()
    return {r.prop.id: r.diagnosis for r in report.failures}


def test_fedavgm_weighted_by_batch_counts_is_measured_as_batch_counts():
    got = _server(_fedavgm(lambda m: np.ceil(m / 2)))
    first = got["server_optimizer.first_round"]
    assert "batch counts ceil(num_examples / 2)" in first, got
    assert not any("the given state is ignored" in d for d in got.values()), got


def test_per_client_momentum_is_not_called_ignoring_the_state_unless_measured():
    got = _server(_fedavgm(lambda m: m, momentum="client"))
    for d in got.values():
        assert "the given state is ignored" not in d or "the output is the same from another given state" in d, got


def test_a_state_really_ignored_is_confirmed_by_a_second_state():
    def forgets(x, clients, *, state=None, **kw):
        return _fedavgm(lambda m: m)(x, clients, state=None, **kw)
    got = _server(forgets)
    assert "the given state is ignored: the output is the same from another given state" in \
        got["server_optimizer.from_state"]

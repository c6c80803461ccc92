"""OFedIQ Figure 2's experiment (fedtheory/experiments/ofediq.py): the MLP stream's per-sample gradients against
finite differences, its test metrics against a direct forward pass, and the time-averaged loss it records."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mnist1d", reason="the experiments extra (mnist1d) is not installed")

from fedtheory.experiments.ofediq import EARLY, OnlineMLPStream, measure, methods, problem


def _small(seed: int = 0) -> OnlineMLPStream:
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(30, 5)), rng.integers(0, 3, size=30)
    return OnlineMLPStream(x, y, rng.integers(0, 30, size=(8, 4)), hidden=6, n_classes=3, test=(x, y),
                           init_seed=seed)


def test_the_gradients_are_those_of_the_losses() -> None:
    p = _small()
    rng = np.random.default_rng(1)
    W = p.initial_point() + 0.3 * rng.normal(size=(p.n_clients, p.dim))
    E = rng.normal(size=W.shape)
    h = 1e-6
    numeric = (p.losses_at(2, W + h * E) - p.losses_at(2, W - h * E)) / (2 * h)
    assert np.einsum("kd,kd->k", p.grads_at(2, W), E) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_the_loss_is_the_cross_entropy_of_a_direct_forward_pass() -> None:
    p = _small()
    w = p.initial_point() + 0.1
    h, d, C = 6, 5, 3
    W1, b1 = w[:h * d].reshape(h, d), w[h * d:h * d + h]
    W2, b2 = w[h * d + h:h * d + h + C * h].reshape(C, h), w[-C:]
    i = p.index[3]
    z = np.maximum(p.samples[i] @ W1.T + b1, 0) @ W2.T + b2
    expected = np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(i)), p.classes[i]]
    assert p.losses_at(3, w) == pytest.approx(expected, rel=1e-12)
    zt = np.maximum(p.samples @ W1.T + b1, 0) @ W2.T + b2
    assert p.metrics(w)["test_accuracy"] == pytest.approx(np.mean(zt.argmax(axis=1) == p.classes))


def test_bad_streams_are_refused_naming_the_parameter() -> None:
    x, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="index must be"):
        OnlineMLPStream(x, y, np.array([[0, 9]]), hidden=2, n_classes=2, test=(x, y))
    with pytest.raises(ValueError, match="classes must be in"):
        OnlineMLPStream(x, y + 1, np.array([[0, 1]]), hidden=2, n_classes=2, test=(x, y))


def test_the_record_holds_the_time_averaged_loss_of_the_run() -> None:
    from fedtheory.run import run

    p = problem(6, 0)
    alg = methods(p)["L=2"]
    rounds = 50  # t_early = 10, on the record grid
    out = measure(alg, p, rounds, 0, p.initial_point())
    trace = run(alg, p, rounds, seed=0, x0=p.initial_point())
    losses = np.asarray(trace.loss, dtype=float)[1:]  # sum_k L_{k,t}(w_{psi_L(t)}), one per time step
    t_early = round(EARLY * rounds)
    assert out["final"]["t_early"] == t_early
    assert out["final"]["avg_loss_early"] == pytest.approx(losses[:t_early].sum() / (t_early * 6), rel=1e-12)
    assert out["final"]["avg_loss_end"] == pytest.approx(losses.sum() / (rounds * 6), rel=1e-12)
    assert out["curve"]["time_averaged_loss"][-1] == pytest.approx(out["final"]["avg_loss_end"])

"""OFedIQ Figure 2 (Kwon, Park & Hong, §5) in the paper's setting, scaled to a CPU, on data that ships.

The paper's setting: MNIST streamed to K = 1000 clients (each client receives one sample per time step), a
neural network trained online by OFedIQ with eta = 0.01 at a communication cost reduction (CCR) of 99%, and
the transmission period L varied at fixed p/L (the same cost); the claim is that L = 1 is best, that the loss
of L > 1 is visible early (t = 200) and grows with L, and that it is negligible for large t. Here: MNIST-1D
(4,000 training signals of length 40, 10 classes; :mod:`fedtheory.torch.mnist1d`) streamed to K = 200 clients
(the set repeated and reshuffled by the seed when K T exceeds it, as the paper repeats MNIST), an MLP
40-32-10 with ReLU and the cross-entropy loss (the paper's CNN scaled down), eta = 0.01, no quantization and
p/L = 0.01 (sampling alone gives the 99% reduction: the uplink is p/L of FedOGD's), L in {1, 2, 4}, T = 1000.
The metric is the time-averaged loss (1/(t K)) sum_{tau <= t} sum_k L_{k,tau}(w_{psi_L(tau)}) at t = 200 and
at t = T. The seed draws the streams, the initialisation and the clients' coins.

:class:`OnlineMLPStream` is the one piece the online problems lacked: the per-sample oracles of a non-convex
model. It has no hindsight comparator (the regret's subtracted term is the loss's lower bound 0), and its
``metrics`` report the test set's mean loss as the gap (f* = 0, as for the torch backend's problems).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms.ofediq import OFedIQ
from ..problems.base import Certificate
from ..problems.online import OnlineProblem
from ..run import run
from ..validation import check_int, check_seed
from .protocol import SCALES, Experiment

__all__ = ["CLIENTS", "EARLY", "ETA", "EXPERIMENTS", "HIDDEN", "HORIZON", "PERIODS", "RATE", "OnlineMLPStream",
           "measure", "methods", "problem"]

#: Full-scale sizes: clients K and horizon T; the early time t of the paper's Figure 2 is EARLY * T.
CLIENTS, HORIZON, EARLY = 200, 1000, 0.2
#: The paper's learning rate, the periods L compared and the fixed p/L (CCR 99%).
ETA, PERIODS, RATE = 0.01, (1, 2, 4), 0.01
HIDDEN = 32
#: Records every CURVE_EVERY time steps (the HTML curves).
CURVE_EVERY = 10


class OnlineMLPStream(OnlineProblem):
    """A stream of classification samples, client k at time t receiving sample ``index[t, k]`` of the data set
    (``samples``, ``classes``), for an MLP d-h-C with ReLU: L_{k,t}(w) = cross-entropy of
    softmax(W2 relu(W1 x + b1) + b2) at the sample's class.

    ``w`` packs (W1 (h, d), b1 (h,), W2 (C, h), b2 (C,)) row-major; ``test`` = (x, y) is the held-out set of
    :meth:`metrics`. Not convex: no hindsight comparator and no certified constants (NaN)."""

    def __init__(self, samples: np.ndarray, classes: np.ndarray, index: np.ndarray, *, hidden: int,
                 n_classes: int, test: tuple[np.ndarray, np.ndarray], init_seed: int = 0) -> None:
        # OnlineProblem.__init__ computes the convex losses' hindsight comparator, which has no meaning here; the
        # stream is kept as indices (a long horizon would not fit as a (T, K, d) array)
        X = np.ascontiguousarray(samples, dtype=np.float64)
        y = np.asarray(classes)
        index = np.asarray(index)
        if X.ndim != 2 or y.shape != X.shape[:1]:
            raise ValueError(f"samples must be (m, d) and classes (m,), got {X.shape} and {y.shape}")
        if index.ndim != 2 or index.dtype.kind not in "iu" or index.min() < 0 or index.max() >= len(y):
            raise ValueError(f"index must be a (T, K) integer array of sample indices in [0, {len(y) - 1}]")
        self.h = check_int("hidden", hidden, low=1)
        self.C = check_int("n_classes", n_classes, low=2)
        if y.min() < 0 or y.max() >= self.C:
            raise ValueError(f"classes must be in [0, {self.C - 1}], got [{y.min()}, {y.max()}]")
        self.samples, self.classes, self.index = X, y.astype(np.int64), index
        (self.horizon, self.n_clients), self.d_in = index.shape, X.shape[1]
        self.dim = self.h * self.d_in + self.h + self.C * self.h + self.C
        self.loss, self.lam, self.beta = "cross-entropy", 0.0, float("nan")
        self.weights = np.full(self.n_clients, 1.0 / self.n_clients)
        self.test = (np.asarray(test[0], dtype=np.float64), np.asarray(test[1], dtype=np.int64))
        self.init_seed = check_seed("init_seed", init_seed)
        nan, n = float("nan"), self.n_clients
        self.certificate = Certificate(
            x_star=np.full(self.dim, nan), f_star=0.0, mu=nan, L=nan, mu_f=nan, L_f=nan, mu_i=np.full(n, nan),
            L_i=np.full(n, nan), delta_A=nan, delta_B=nan, zeta2=nan, weights=self.weights, kkt_residual=nan,
            exact={"x_star": False, "f_star": False, "mu": False, "L": False},
            notes="non-convex MLP stream: f_star = 0 is the trivial lower bound of the cross-entropy")

    @property
    def prefix_min_values(self) -> np.ndarray:  # type: ignore[override]
        """No hindsight comparator for a non-convex model: the loss's lower bound 0 (regret = cumulative loss)."""
        return np.zeros(self.horizon)

    def initial_point(self) -> np.ndarray:
        """Glorot-uniform weights and zero biases, drawn by ``init_seed``."""
        rng = np.random.default_rng(self.init_seed)
        a1, a2 = np.sqrt(6 / (self.d_in + self.h)), np.sqrt(6 / (self.h + self.C))
        return np.concatenate([rng.uniform(-a1, a1, self.h * self.d_in), np.zeros(self.h),
                               rng.uniform(-a2, a2, self.C * self.h), np.zeros(self.C)])

    def _unpack(self, W: np.ndarray) -> tuple[np.ndarray, ...]:
        h, d, C = self.h, self.d_in, self.C
        i = np.cumsum([h * d, h, C * h])
        return (W[:, :i[0]].reshape(-1, h, d), W[:, i[0]:i[1]], W[:, i[1]:i[2]].reshape(-1, C, h), W[:, i[2]:])

    def _forward(self, W: np.ndarray, x: np.ndarray, y: np.ndarray, grad: bool) -> tuple[np.ndarray, Any]:
        """Per-row losses of models W (m, D) on samples x (m, d) with classes y (m,), and their gradients."""
        W1, b1, W2, b2 = self._unpack(W)
        pre = np.einsum("mhd,md->mh", W1, x) + b1
        a = np.maximum(pre, 0.0)
        z = np.einsum("mch,mh->mc", W2, a) + b2
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        rows = np.arange(len(y))
        loss = -logp[rows, y]
        if not grad:
            return loss, None
        dz = np.exp(logp)
        dz[rows, y] -= 1.0  # d loss / d z = softmax - onehot
        da = np.einsum("mch,mc->mh", W2, dz) * (pre > 0)
        G = np.concatenate([np.einsum("mh,md->mhd", da, x).reshape(len(y), -1), da,
                            np.einsum("mc,mh->mch", dz, a).reshape(len(y), -1), dz], axis=1)
        return loss, G

    def losses_at(self, t: int, W: np.ndarray) -> np.ndarray:
        """L_{k,t}(W[k]) for every client at time step t; W is (K, D) or one (D,) point."""
        t, W = self._time(t), self._stack(W)
        i = self.index[t]
        return self._forward(W, self.samples[i], self.classes[i], grad=False)[0]

    def grads_at(self, t: int, W: np.ndarray) -> np.ndarray:
        """grad L_{k,t}(W[k]) for every client at time step t, shape (K, D)."""
        t, W = self._time(t), self._stack(W)
        i = self.index[t]
        return self._forward(W, self.samples[i], self.classes[i], grad=True)[1]

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """The test set's mean loss (as the gap, f* = 0) and accuracy of the model x."""
        xt, yt = self.test
        W = np.broadcast_to(np.asarray(x, dtype=np.float64), (len(yt), self.dim))
        loss, _ = self._forward(W, xt, yt, grad=False)
        W1, b1, W2, b2 = self._unpack(np.asarray(x, dtype=np.float64)[None])
        z = np.maximum(xt @ W1[0].T + b1[0], 0.0) @ W2[0].T + b2[0]
        return {"gap": float(loss.mean()), "test_accuracy": float(np.mean(z.argmax(axis=1) == yt))}


def problem(n_clients: int, seed: int, device: str = "cpu") -> OnlineMLPStream:
    """MNIST-1D streamed to ``n_clients`` for as many steps as the largest scale runs (the set repeated, each
    pass shuffled by ``seed``), MLP 40-32-10 initialised by ``seed``."""
    from ..torch.mnist1d import mnist1d_arrays

    x, y, xt, yt = mnist1d_arrays()
    rng = np.random.default_rng(check_seed("seed", seed))
    horizon = round(HORIZON * max(s.rounds for s in SCALES.values()))
    need = n_clients * horizon
    idx = np.concatenate([rng.permutation(len(y)) for _ in range(-(-need // len(y)))])[:need]
    return OnlineMLPStream(x, y, idx.reshape(horizon, n_clients), hidden=HIDDEN, n_classes=10, test=(xt, yt),
                           init_seed=seed)


def methods(prob: Any) -> dict[str, Any]:
    """OFedIQ(L, p = RATE L, no quantization) for every L in :data:`PERIODS`, eta = 0.01."""

    return {f"L={L}": OFedIQ(eta=ETA, p=min(1.0, RATE * L), period=L) for L in PERIODS}


def measure(alg: Any, prob: OnlineMLPStream, rounds: int, seed: int, x0: np.ndarray) -> dict[str, Any]:
    """Run ``rounds`` time steps; the time-averaged loss at t = EARLY rounds and at the end, the final test
    accuracy, and the curve of the time-averaged loss every :data:`CURVE_EVERY` steps."""

    trace = run(alg, prob, rounds, seed=seed, x0=x0, record_every=CURVE_EVERY)
    t = np.asarray(trace.round, dtype=float)
    avg = np.asarray(trace.cum_loss, dtype=float)[1:] / (t[1:] * prob.n_clients)
    # the early time on the record grid (t = 200 at full scale)
    early = min(rounds, max(CURVE_EVERY, CURVE_EVERY * round(EARLY * rounds / CURVE_EVERY)))
    at = int(np.flatnonzero(trace.round == early)[0]) - 1
    final = {"avg_loss_early": float(avg[at]), "t_early": early,
             "avg_loss_end": float(avg[-1]), "test_accuracy": float(trace.test_accuracy[-1]),
             "uplink_bits": float(np.sum(trace.uplink_bits)), "status": trace.status}
    return {"final": final, "curve": {"round": [int(r) for r in trace.round[1:]], "time_averaged_loss": avg.tolist()}}


EXPERIMENTS = (Experiment(
    name="ofediq.figure2", paper="ofediq", cites=("Figure 2",),
    setting=("MNIST-1D streamed to 200 clients (one sample per client and time step), MLP 40-32-10 (ReLU, "
             "cross-entropy), OFedIQ with eta = 0.01, no quantization, p/L = 0.01 (CCR 99%), L in {1, 2, 4}, "
             "T = 1000; the time-averaged loss at t = 200 and t = 1000"),
    problem=problem, methods=methods, clients=CLIENTS, rounds=HORIZON, record_every=CURVE_EVERY, measure=measure,
    paper_numbers={"Figure 2 (MNIST, K = 1000, CCR 99%)": "L = 1 best; the loss of L > 1 visible at t = 200, "
                                                          "growing with L, negligible for large t"}),)

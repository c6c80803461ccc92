"""Online federated learning: FedOGD (Alg. 1), OFedAvg and OFedIQ (Alg. 2) of Kwon, Park & Hong.

One round of :func:`fedtheory.run` is one time step t (0-based here; the paper's t is t + 1). One shared
implementation, :class:`OFedIQ`, with options; FedOGD and OFedAvg are its special cases (Section 3.2):

    FedOGD      = OFedIQ(L = 1, p_k = 1, no quantization)
    OFedAvg(p)  = OFedIQ(L = 1, p, no quantization)
    FedOMD(L)   = OFedIQ(L, p_k = 1, no quantization)   (Euclidean OMD = OGD with periodic averaging)

OFedIQ, every client k at time t (eqs. 6-9):

    g_{k,t}      = w_t if t - 1 in [T]_L else theta_{k,t}                                     (6)
    theta_{k,t+1} = g_{k,t} - eta grad L_{k,t}(g_{k,t})                                       (7)
    if t in [T]_L, with probability p_k:  m_{k,t} = Q( sum_{l=1}^L grad L_{k,t-L+l}(g_{k,t-L+l}) / p_k )   (8)
    server, t in [T]_L:  w_{t+1} = w_{t-L+1} - eta sum_{k in S_t} weight_k m_{k,t}               (9)

with weight_k = 1/K for online problems (the paper's 1/K; the server divides by K, not |S_t|). Predictions and
regret use the stale global model w_{psi_L(t)}, kept as ``state.x`` during a period. The transmitted vector is
computed from the accumulated gradient sum (the second form of eq. 8), which equals -(theta_{k,t+1} -
w_{t-L+1})/(eta p_k) (the first form) up to rounding and makes OFedIQ(1, 1, no quantization) reproduce
FedOGD's eq. (5) exactly.

Bits per time step as Table I counts them (uplink only, 32-bit reals): 32 D per unquantized transmitted
vector, q = 32 b + D (1 + log2(s + 1)) per quantized one; nothing at non-transmission steps.

Each round records in ``RoundLog.extra``: ``loss`` = sum_k L_{k,t}(w_{psi_L(t)}), ``cum_loss`` and the
cumulative regret ``regret`` of eq. (3) against the exact hindsight comparator of the prefix t + 1 (for an
ordinary static :class:`~fedtheory.problems.base.Problem` the stream repeats the same loss every step, the
comparator is x* and the loss is n f(x)).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..compressors.sb_quantizer import SBQuantizer, sb_bits, sb_sigma2
from ..problems.base import Problem
from ..problems.online import OnlineProblem, stream_grads, stream_losses
from ..theory.ofediq import step_bound
from ..validation import check_int, check_positive, check_probability
from .base import RoundLog, State, register_algorithm

__all__ = ["OFedIQ", "FedOGD", "OFedAvg", "OnlineState", "OnlineDraw", "smoothness"]

#: Table I counts a real number as 32 bits.
PAPER_FLOAT_BITS = 32


@dataclass(frozen=True)
class OnlineState(State):
    """``x`` = w_{psi_L(t)} (the global model in use); ``t`` = time steps done; ``theta`` = local iterates
    theta_{k,t} (K, D); ``acc`` = the period's accumulated local gradients (K, D); ``cum_loss`` = sum of the
    per-step loss sums so far."""

    t: int
    theta: np.ndarray
    acc: np.ndarray
    cum_loss: float


@dataclass(frozen=True)
class OnlineDraw:
    """The randomness of one time step: participation coins (K,) and quantizer uniforms (K, D); both None at
    steps without transmission (and coins None when every p_k = 1, uniforms None without quantization)."""

    participate: np.ndarray | None
    uniforms: np.ndarray | None


def smoothness(problem: Problem) -> float:
    """beta of Assumption 2: per-sample smoothness for online problems, max_i L_i for static ones."""
    return float(problem.beta) if isinstance(problem, OnlineProblem) else float(problem.certificate.L)


@register_algorithm
@dataclass(frozen=True)
class OFedIQ:
    """OFedIQ(L, p, s, b) (Kwon, Park & Hong, Alg. 2); ``s=None`` means no quantization (s = inf).

    Parameters
    ----------
    eta:
        Learning rate (> 0). ``None`` uses half the largest step the paper's theorem allows on the problem:
        p_min/(2 beta) (Theorem 1) without quantization and L = 1, else p_min/(4 beta L R) (Theorem 2 and the
        L > 1 proof's condition), R = 1 + sigma_q^2 (p_sum - p_min + 1)/K.
    p:
        Sampling rate in (0, 1], one for all clients or a tuple with one per client.
    period:
        Transmission period L >= 1.
    s, b:
        (s, b)-quantizer levels (>= 1) and blocks (in [1, D]); ``s=None`` disables quantization. ``b``
        defaults to 1 (QSGD) when ``s`` is given.
    """

    eta: float | None = None
    p: float | tuple[float, ...] = 1.0
    period: int = 1
    s: int | None = None
    b: int | None = None
    name: ClassVar[str] = "ofediq"

    def __post_init__(self) -> None:
        if self.eta is not None:
            object.__setattr__(self, "eta", check_positive("eta", self.eta))
        if isinstance(self.p, (tuple, list, np.ndarray)):
            ps = tuple(check_probability(f"p[{i}]", v) for i, v in enumerate(self.p))
            if not ps:
                raise ValueError("p must be a probability in (0, 1] or a non-empty tuple of them")
            object.__setattr__(self, "p", ps)
        else:
            object.__setattr__(self, "p", check_probability("p", self.p))
        object.__setattr__(self, "period", check_int("period", self.period, low=1))
        if self.s is None:
            if self.b is not None:
                raise ValueError("b needs s: give the quantizer levels s >= 1 (or drop b for no quantization)")
        else:
            object.__setattr__(self, "s", check_int("s", self.s, low=1))
            object.__setattr__(self, "b", 1 if self.b is None else check_int("b", self.b, low=1))

    @classmethod
    def example(cls) -> "OFedIQ":
        return cls(p=0.5, period=1, s=4, b=1)

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        """Invalid settings for the conformance suite (b = 10^6 exceeds D and fails at ``init``)."""
        return [({"eta": -0.1}, "eta"), ({"eta": 0.0}, "eta"), ({"p": 1.5}, "p"), ({"p": 0.0}, "p"),
                ({"period": 0}, "period"), ({"s": 0}, "s"), ({"b": 0}, "b"), ({"b": 10**6}, "b")]

    # ----- derived quantities -----
    def probabilities(self, n_clients: int) -> np.ndarray:
        """p_k for every client, shape (K,)."""
        if isinstance(self.p, tuple):
            if len(self.p) != n_clients:
                raise ValueError(f"p has {len(self.p)} entries but the problem has K = {n_clients} clients")
            return np.asarray(self.p, dtype=np.float64)
        return np.full(n_clients, float(self.p))

    def quantizer(self, dim: int) -> SBQuantizer | None:
        if self.s is None:
            return None
        if self.b > dim:
            raise ValueError(f"b must be in [1, D] = [1, {dim}], got {self.b}")
        return SBQuantizer(s=self.s, b=self.b)

    def sigma_q2(self, dim: int) -> float:
        """sigma_q^2 of the quantizer (0 without quantization)."""
        return 0.0 if self.s is None else sb_sigma2(dim, self.s, self.b)

    def vector_bits(self, dim: int) -> float:
        """Bits of one transmitted vector (Table I): 32 D, or q = 32 b + D (1 + log2(s + 1))."""
        return float(PAPER_FLOAT_BITS * dim) if self.s is None else sb_bits(dim, self.s, self.b)

    def step_bound(self, problem: Problem) -> float:
        """The paper's step-size condition: eta < this (Theorem 1, or Theorem 2 with the L > 1 proof's L)."""
        p = self.probabilities(problem.n_clients)
        return step_bound(smoothness(problem), p, sigma_q2=self.sigma_q2(problem.dim), period=self.period,
                          quantized=self.s is not None)

    def step_size(self, problem: Problem) -> float:
        return self.eta if self.eta is not None else 0.5 * self.step_bound(problem)

    # ----- the algorithm -----
    def init(self, problem: Problem, x0: np.ndarray) -> OnlineState:
        self.probabilities(problem.n_clients)  # validate against K early
        self.quantizer(problem.dim)
        x = np.array(x0, dtype=np.float64)
        zeros = np.zeros((problem.n_clients, problem.dim))
        return OnlineState(x=x, t=0, theta=np.broadcast_to(x, zeros.shape).copy(), acc=zeros, cum_loss=0.0)

    def transmits(self, t: int) -> bool:
        """Whether 0-based step t is a transmission step: paper time t + 1 in [T]_L."""
        return (t + 1) % self.period == 0

    def draw(self, problem: Problem, state: OnlineState, rng: np.random.Generator) -> OnlineDraw:
        """All randomness of the step, drawn before the update (coins first, then quantizer uniforms)."""
        if not self.transmits(state.t):
            return OnlineDraw(None, None)
        p = self.probabilities(problem.n_clients)
        coins = None if np.all(p == 1.0) else rng.random(problem.n_clients) < p
        uniforms = None if self.s is None else rng.random((problem.n_clients, problem.dim))
        return OnlineDraw(coins, uniforms)

    def round(self, problem: Problem, state: OnlineState, rng: np.random.Generator
              ) -> tuple[OnlineState, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def round_given(self, problem: Problem, state: OnlineState, draw: OnlineDraw
                    ) -> tuple[OnlineState, RoundLog]:
        """The deterministic update of eqs. (6)-(9) given the step's draws."""
        t, K, D = state.t, problem.n_clients, problem.dim
        eta = self.step_size(problem)
        start = t % self.period == 0  # paper: t - 1 in [T]_L
        x = state.x
        G0 = np.broadcast_to(x, (K, D)) if start else state.theta  # eq. (6)
        grads = stream_grads(problem, t, G0)
        theta = G0 - eta * grads  # eq. (7)
        acc = grads if start else state.acc + grads
        loss = self._loss_sum(problem, t, x)
        cum_loss = state.cum_loss + loss
        bits = 0.0
        participants = 0
        nnz = 0
        communicated = self.transmits(t)
        if communicated:
            p = self.probabilities(K)
            U = acc / p[:, None]  # second form of eq. (8), before quantization
            q = self.quantizer(D)
            M = U if q is None else q.apply(U, draw.uniforms)
            mask = np.ones(K, dtype=bool) if draw.participate is None else np.asarray(draw.participate, bool)
            coef = problem.weights * mask  # 1/K on the sampled clients (eq. 9)
            x = x - eta * (coef @ M)
            participants = int(mask.sum())
            bits = participants * self.vector_bits(D)
            nnz = int(np.count_nonzero(M[mask]))
        extra = {"loss": loss, "cum_loss": cum_loss, "regret": cum_loss - self._comparator_sum(problem, t),
                 "time": float(t + 1)}
        log = RoundLog(uplink_bits=bits, downlink_bits=0.0, uplink_nnz=nnz,
                       downlink_nnz=D * K if communicated else 0, vectors_up=float(participants),
                       vectors_down=float(K) if communicated else 0.0, local_grad_evals=K,
                       participants=participants, communicated=communicated, extra=extra)
        return OnlineState(x=x, t=t + 1, theta=theta, acc=acc, cum_loss=cum_loss), log

    @staticmethod
    def _loss_sum(problem: Problem, t: int, x: np.ndarray) -> float:
        """sum_k L_{k,t}(x) (for a static problem with weights: n sum_i w_i f_i(x))."""
        values = stream_losses(problem, t, x)
        if isinstance(problem, OnlineProblem):
            return float(values.sum())
        return float(problem.n_clients * (problem.weights @ values))

    @staticmethod
    def _comparator_sum(problem: Problem, t: int) -> float:
        """min_w sum_{tau <= t} sum_k L_{k,tau}(w): exact prefix hindsight value (static: (t + 1) n f*)."""
        if isinstance(problem, OnlineProblem):
            return float(problem.prefix_min_values[t])
        return float((t + 1) * problem.n_clients * problem.certificate.f_star)


class _Special:
    """Shared delegation of a named special case to its OFedIQ configuration (no copied update code)."""

    name: ClassVar[str]

    def core(self) -> OFedIQ:
        raise NotImplementedError

    def step_bound(self, problem: Problem) -> float:
        return self.core().step_bound(problem)

    def step_size(self, problem: Problem) -> float:
        return self.core().step_size(problem)

    def init(self, problem: Problem, x0: np.ndarray) -> OnlineState:
        return self.core().init(problem, x0)

    def draw(self, problem: Problem, state: OnlineState, rng: np.random.Generator) -> OnlineDraw:
        return self.core().draw(problem, state, rng)

    def round(self, problem: Problem, state: OnlineState, rng: np.random.Generator) -> tuple[OnlineState, RoundLog]:
        return self.core().round(problem, state, rng)

    def round_given(self, problem: Problem, state: OnlineState, draw: OnlineDraw) -> tuple[OnlineState, RoundLog]:
        return self.core().round_given(problem, state, draw)


@register_algorithm
@dataclass(frozen=True)
class FedOGD(_Special):
    """FedOGD (Alg. 1): w_{t+1} = w_t - (eta/K) sum_k grad L_{k,t}(w_t) (eq. 5); 32 K D bits per step."""

    eta: float | None = None
    name: ClassVar[str] = "fedogd"

    def __post_init__(self) -> None:
        self.core()  # validates eta

    @classmethod
    def example(cls) -> "FedOGD":
        return cls()

    def core(self) -> OFedIQ:
        return OFedIQ(eta=self.eta, p=1.0, period=1)


@register_algorithm
@dataclass(frozen=True)
class OFedAvg(_Special):
    """OFedAvg(p) = OFedIQ(1, p, inf) (eq. 24): w_{t+1} = w_t - (eta/K) sum_{k in S_t} grad L_{k,t}(w_t)/p_k;
    32 D bits per participating client."""

    eta: float | None = None
    p: Any = 0.5
    name: ClassVar[str] = "ofedavg"

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", self.core().p)

    @classmethod
    def example(cls) -> "OFedAvg":
        return cls(p=0.5)

    def core(self) -> OFedIQ:
        return OFedIQ(eta=self.eta, p=self.p, period=1)

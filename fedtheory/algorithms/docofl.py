"""DoCoFL: downlink compression for cross-device FL (Dorfman, Vargaftik, Ben-Itzhak & Levy, ICML 2023).

Parameter server (Alg. 1) and client (Alg. 2), one round t:

    if t mod K == 0:  Q.enqueue(C_w(w_t))                      (anchor; Q keeps the V latest)
    S_t <- P(t)                                                (|S_t| = S, P(i in S_t) = S/N)
    client i, notified at s_i = t - lead_i:  y_t^i = latest anchor in Q at round s_i   (offline download)
    Delta_t^i = C_c(w_t - y_t^i)                               (online download)
    w_hat_t^i = y_t^i + Delta_t^i,   g_t^i = g^i(w_hat_t^i),   uplink C_g(g_t^i)
    w_{t+1} = w_t - eta (1/S) sum_{i in S_t} N p_i C_g(g_t^i)  (p_i = 1/N: the paper's uniform f = (1/N) sum f_i)

The correction is taken against the *compressed* anchor (footnote 3), so E[w_hat | w_t, y] = w_t for unbiased
C_c even when C_w (e.g. ECUQ) is biased.

Participation (Sec. 3.2): :class:`TwoClassParticipation`: a fraction of "strongly connected" clients is notified
T_s rounds ahead, the others T_w rounds ahead; each class is sampled without replacement in proportion to its
size, so P(i in S_t) = S/N for every client. Because P is independent of the optimisation, we draw S_t at the top
of round t together with each client's notification round s_i = max(t - lead_i, 0) (the anchor a client holds
depends only on s_i): the joint law is the one of drawing at round s_i, and all randomness stays in round t.
Rounds t < lead are the paper's warm-up ("the first T_w rounds may take longer"): clients are notified at 0.

Queue invariant: an anchor enqueued at round kK is dropped at round (k+V)K, so a client notified at s with lead
t - s <= K(V-1) still finds its anchor (staleness t - kK <= KV - 1 < T = KV). Leads above K(V-1) are rejected.

Meta-algorithm (App. C, Alg. 3): anchor y = w_{t-tau} exactly, C_w = C_g = id. It is DoCoFL with K = 1,
V = tau_max + 1 and lead = tau (:meth:`DoCoFL.meta`).

Bandwidth (Sec. 7.3): online downlink = correction bits, total downlink = anchor + correction bits, uplink =
C_g bits; each participant downloads one anchor. The RoundLog counts the compressors' actual bits;
:func:`fedtheory.theory.docofl.bandwidth_reduction` reproduces the paper's bits-per-coordinate arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from ..compressors.ecuq import ECUQ
from ..compressors.noise import Identity, ScaledRademacher
from ..problems.base import Problem
from ..validation import check_bool, check_int, check_positive, check_real
from .base import RoundLog, State, register_algorithm

__all__ = ["DoCoFL", "DoCoFLDraw", "DoCoFLState", "TwoClassParticipation", "anchor_round"]


def _check_compressor(name: str, comp: Any) -> Any:
    if not callable(getattr(comp, "compress", None)):
        raise TypeError(f"{name} must be a compressor (an object with compress(X, rng)), got {type(comp).__name__}")
    return comp


@dataclass(frozen=True)
class TwoClassParticipation:
    """DoCoFL Sec. 3.2 participation process with strongly / weakly connected clients.

    The first ``round(strong_fraction N)`` clients are strong (notified ``lead_strong`` rounds ahead), the rest
    weak (``lead_weak`` rounds ahead). Each round S_s = S N_s / N strong and S_w = S - S_s weak clients are drawn
    uniformly without replacement; S N_s / N must be an integer so that P(i in S_t) = S_s/N_s = S_w/N_w = S/N.
    ``strong_fraction = 1`` is uniform sampling of S out of N with a common lead.
    """

    lead_strong: int = 0
    lead_weak: int = 0
    strong_fraction: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lead_strong", check_int("lead_strong", self.lead_strong, low=0))
        object.__setattr__(self, "lead_weak", check_int("lead_weak", self.lead_weak, low=0))
        object.__setattr__(self, "strong_fraction",
                           check_real("strong_fraction", self.strong_fraction, low=0.0, high=1.0))

    @property
    def max_lead(self) -> int:
        return max(self.lead_strong if self.strong_fraction > 0 else 0,
                   self.lead_weak if self.strong_fraction < 1 else 0)

    def class_sizes(self, n_clients: int, n_sampled: int) -> tuple[int, int, int, int]:
        """(N_s, N_w, S_s, S_w); raises ValueError if proportional sampling is impossible."""
        N_s = int(round(self.strong_fraction * n_clients))
        N_w = n_clients - N_s
        if (n_sampled * N_s) % n_clients:
            raise ValueError(f"proportional sampling needs S N_s / N integer: S={n_sampled}, N_s={N_s}, "
                             f"N={n_clients} (choose strong_fraction so that S*N_s is a multiple of N)")
        S_s = n_sampled * N_s // n_clients
        return N_s, N_w, S_s, n_sampled - S_s

    def draw(self, n_clients: int, n_sampled: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(clients, leads) for one round: S distinct client ids and each one's notification lead."""
        N_s, N_w, S_s, S_w = self.class_sizes(n_clients, n_sampled)
        # sorted ids: with one class this is exactly fedtheory.participation.UniformSubset's draw, so DoCoFL with
        # identity compressors consumes the generator like FedAvg with one local step
        if N_w == 0:
            clients = np.sort(rng.choice(n_clients, n_sampled, replace=False))
        else:
            strong = np.sort(rng.choice(N_s, S_s, replace=False)) if S_s else np.empty(0, dtype=np.int64)
            weak = N_s + np.sort(rng.choice(N_w, S_w, replace=False)) if S_w else np.empty(0, dtype=np.int64)
            clients = np.concatenate([strong, weak])
        leads = np.where(clients < N_s, self.lead_strong, self.lead_weak)
        return clients.astype(np.int64), leads.astype(np.int64)


def anchor_round(t: np.ndarray | int, leads: np.ndarray | int, period: int) -> np.ndarray:
    """Round of the anchor a client participating at t with lead L holds: K floor(max(t - L, 0) / K)."""
    s = np.maximum(np.asarray(t) - np.asarray(leads), 0)
    return period * (s // period)


@dataclass(frozen=True)
class DoCoFLDraw:
    """The randomness of one round: participants, notification leads, and the seed of the compressor / gradient
    noise generator."""

    clients: np.ndarray
    leads: np.ndarray
    noise_seed: int


@dataclass(frozen=True)
class DoCoFLState(State):
    """Server model ``x``, round counter ``t`` and the anchor queue (slot (r/K) mod V holds the anchor of round r).

    ``anchors`` are compressed (what clients download), ``raw_anchors`` the uncompressed w_r (kept only for the
    App. B diagnostics), ``anchor_rounds`` is -1 for an empty slot.
    """

    t: int = 0
    anchors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    raw_anchors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    anchor_rounds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    anchor_bits: np.ndarray = field(default_factory=lambda: np.zeros(0))


@register_algorithm
@dataclass(frozen=True)
class DoCoFL:
    """DoCoFL (Alg. 1 + Alg. 2). Hyperparameters:

    step: eta (None: 1/L_f from the certificate); n_sampled: S (None: all clients); period: K;
    queue_size: V; anchor/correction/uplink compressors C_w, C_c, C_g; participation: the Sec. 3.2 process;
    stochastic: use the problem's stochastic gradients g^i (else exact grad f_i);
    naive: the Sec. 3.1 baseline w_hat = C_w(w_t) (fresh compressed weights, no anchor/correction).
    """

    step: float | None = None
    n_sampled: int | None = None
    period: int = 10
    queue_size: int = 3
    anchor_compressor: Any = field(default_factory=Identity)
    correction_compressor: Any = field(default_factory=Identity)
    uplink_compressor: Any = field(default_factory=Identity)
    participation: TwoClassParticipation = field(default_factory=TwoClassParticipation)
    stochastic: bool = True
    naive: bool = False
    name: ClassVar[str] = "docofl"

    def __post_init__(self) -> None:
        check_bool("stochastic", self.stochastic)
        check_bool("naive", self.naive)
        if self.step is not None:
            object.__setattr__(self, "step", check_positive("step", self.step))
        if self.n_sampled is not None:
            object.__setattr__(self, "n_sampled", check_int("n_sampled", self.n_sampled, low=1))
        object.__setattr__(self, "period", check_int("period", self.period, low=1))
        object.__setattr__(self, "queue_size", check_int("queue_size", self.queue_size, low=1))
        for nm in ("anchor_compressor", "correction_compressor", "uplink_compressor"):
            _check_compressor(nm, getattr(self, nm))
        if not isinstance(self.participation, TwoClassParticipation):
            raise TypeError("participation must be a TwoClassParticipation")
        limit = self.period * (self.queue_size - 1)
        if self.participation.max_lead > limit:
            raise ValueError(f"notification leads must be in [0, K(V-1)] = [0, {limit}] so the anchor is still "
                             f"queued at participation, got {self.participation.max_lead}")

    @classmethod
    def example(cls) -> "DoCoFL":
        return cls(step=None, n_sampled=None, period=2, queue_size=2, anchor_compressor=ECUQ(b=4.0),
                   correction_compressor=ScaledRademacher(scale=0.2),
                   participation=TwoClassParticipation(lead_strong=1))

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        return [({"step": -0.1}, "step"), ({"period": 0}, "period"), ({"queue_size": 0}, "queue_size"),
                ({"n_sampled": 0}, "n_sampled"), ({"n_sampled": 99}, "n_sampled"),
                ({"correction_compressor": None}, "correction_compressor"),
                ({"participation": TwoClassParticipation(lead_strong=5)}, "leads")]

    @classmethod
    def meta(cls, step: float | None, staleness: int, correction_compressor: Any,
             n_sampled: int | None = None, stochastic: bool = True) -> "DoCoFL":
        """App. C meta-algorithm (Alg. 3) with fixed staleness tau: y_t = w_{t-tau} (w_{-k} := w_0)."""
        tau = check_int("staleness", staleness, low=0)
        return cls(step=step, n_sampled=n_sampled, period=1, queue_size=tau + 1,
                   correction_compressor=correction_compressor,
                   participation=TwoClassParticipation(lead_strong=tau), stochastic=stochastic)

    @property
    def max_staleness(self) -> int:
        """The App. C constant T = K V (staleness is at most K V - 1)."""
        return self.period * self.queue_size

    def sampled(self, problem: Problem) -> int:
        S = problem.n_clients if self.n_sampled is None else self.n_sampled
        if S > problem.n_clients:
            raise ValueError(f"n_sampled must be in [1, N] = [1, {problem.n_clients}], got {S}")
        return S

    def step_size(self, problem: Problem) -> float:
        return self.step if self.step is not None else 1.0 / problem.certificate.L_f

    def init(self, problem: Problem, x0: np.ndarray) -> DoCoFLState:
        d, V = problem.dim, self.queue_size
        self.sampled(problem)
        return DoCoFLState(x=np.array(x0, dtype=np.float64), t=0, anchors=np.zeros((V, d)),
                           raw_anchors=np.zeros((V, d)), anchor_rounds=np.full(V, -1, dtype=np.int64),
                           anchor_bits=np.zeros(V))

    def enqueue(self, state: DoCoFLState, rng: np.random.Generator) -> DoCoFLState:
        """Alg. 1 lines 3-5: at t mod K == 0 put C_w(w_t) in slot (t/K) mod V (dropping the oldest anchor)."""
        K, V, t, x = self.period, self.queue_size, state.t, state.x
        if self.naive or t % K:
            return state
        y_new, bits_new = self.anchor_compressor.compress(x[None, :], rng)
        slot = (t // K) % V
        anchors, raw = state.anchors.copy(), state.raw_anchors.copy()
        rounds, abits = state.anchor_rounds.copy(), state.anchor_bits.copy()
        anchors[slot], raw[slot], rounds[slot], abits[slot] = y_new[0], x, t, bits_new[0]
        return replace(state, anchors=anchors, raw_anchors=raw, anchor_rounds=rounds, anchor_bits=abits)

    def client_estimates(self, state: DoCoFLState, leads: np.ndarray, rng: np.random.Generator
                         ) -> dict[str, np.ndarray]:
        """Alg. 2 lines 2-4 for clients with the given notification leads (after :meth:`enqueue`):
        anchors Y (m, d), estimates W_hat = Y + C_c(w_t - Y), and per-client bits and staleness.
        With ``naive`` every client gets a fresh C_w(w_t) instead (Sec. 3.1)."""
        K, V, t, x = self.period, self.queue_size, state.t, state.x
        leads = np.asarray(leads, dtype=np.int64)
        m = leads.size
        if self.naive:
            W_hat, wbits = self.anchor_compressor.compress(np.broadcast_to(x, (m, x.size)), rng)
            return {"anchors": W_hat, "estimates": W_hat, "anchor_bits": np.asarray(wbits, dtype=np.float64),
                    "correction_bits": np.zeros(m), "staleness": np.zeros(m, dtype=np.int64)}
        r = anchor_round(t, leads, K)
        slots = (r // K) % V
        if np.any(state.anchor_rounds[slots] != r):
            raise RuntimeError("anchor queue invariant violated: a client's anchor left the queue")
        Y = state.anchors[slots]
        D_hat, corr_bits = self.correction_compressor.compress(x[None, :] - Y, rng)
        return {"anchors": Y, "estimates": Y + D_hat, "anchor_bits": state.anchor_bits[slots],
                "correction_bits": np.asarray(corr_bits, dtype=np.float64), "staleness": t - r,
                "raw_anchors": state.raw_anchors[slots]}

    def draw(self, problem: Problem, state: DoCoFLState, rng: np.random.Generator) -> DoCoFLDraw:
        """Everything random in a round, drawn first: participants, their leads, and the seed of the generator
        that feeds the compressors (anchor, corrections, uplink) and the gradient noise, in that order."""
        clients, leads = self.participation.draw(problem.n_clients, self.sampled(problem), rng)
        return DoCoFLDraw(clients=clients, leads=leads, noise_seed=int(rng.integers(0, 2**63 - 1)))

    def round(self, problem: Problem, state: DoCoFLState, rng: np.random.Generator) -> tuple[DoCoFLState, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def round_given(self, problem: Problem, state: DoCoFLState, draw: DoCoFLDraw) -> tuple[DoCoFLState, RoundLog]:
        """The round as a deterministic function of :meth:`draw`'s output."""
        N = problem.n_clients
        S = self.sampled(problem)
        x = state.x
        clients, leads = draw.clients, draw.leads
        rng = np.random.default_rng(draw.noise_seed)
        state = self.enqueue(state, rng)
        est = self.client_estimates(state, leads, rng)
        W_hat, Y = est["estimates"], est["anchors"]
        if self.stochastic:
            G = problem.stochastic_grads(W_hat, rng, clients=clients)
        else:
            G = problem.grads(W_hat, clients=clients)
        U, up_bits = self.uplink_compressor.compress(G, rng)
        g = (N * problem.weights[clients]) @ U / S
        x_new = x - self.step_size(problem) * g
        est_err = np.sum((W_hat - x) ** 2, axis=1)
        corr = np.sum((x - Y) ** 2, axis=1)
        online = float(np.sum(est["correction_bits"]))
        offline = float(np.sum(est["anchor_bits"]))
        log = RoundLog(uplink_bits=float(np.sum(up_bits)), downlink_bits=online + offline,
                       uplink_nnz=int(np.count_nonzero(U)), downlink_nnz=int(np.count_nonzero(W_hat)),
                       vectors_up=float(S), vectors_down=float(S if self.naive else 2 * S),
                       local_grad_evals=S, participants=S, communicated=True,
                       extra={"online_downlink_bits": online, "anchor_downlink_bits": offline,
                              "estimation_error": float(est_err.mean()), "correction_norm2": float(corr.mean()),
                              "max_staleness": float(est["staleness"].max()),
                              "queue_length": float(np.count_nonzero(state.anchor_rounds >= 0))})
        return replace(state, x=x_new, t=state.t + 1), log

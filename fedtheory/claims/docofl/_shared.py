"""What several modules of the DoCoFL claims share: running an algorithm keeping every iterate, the separable and
shared-Hessian quadratics, compressors' exact moments from their marginals, and the synthetic stand-in of the
paper's CIFAR-100 ablations (Figures 3, 10 and 11; see :func:`standin_problem`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Sequence

import numpy as np

from ...compressors.base import as_rows, require_rng
from ...compressors.ecuq import ECUQ
from ...compressors.noise import Identity
from ...compressors.quantizers import StochasticUniformQuantizer
from ...problems.base import Problem
from ...problems.logistic import LogisticProblem, logistic
from ...problems.quadratic import QuadraticProblem
from ...validation import check_int, check_real

__all__ = ["run_iterates", "separable_quadratic", "shared_hessian_problem", "exact_moments", "STANDIN",
           "standin_problem", "anchor_compressor", "correction_compressor", "SubsampledQuantizer", "gap_path",
           "FULL_PRECISION"]


def separable_quadratic(a: float, w_star: float, dim: int, sigma2_per_path: float = 0.0) -> QuadraticProblem:
    """One client, f(w) = sum_j a/2 (w_j - w*)^2 (+const): ``dim`` independent scalar paths. The problem's
    noise N(0, sigma2/dim I) gives each path variance ``sigma2_per_path``."""
    A = np.full((1, dim), float(a))
    return QuadraticProblem(A, A * w_star, sigma2=sigma2_per_path * dim)


def run_iterates(alg: Any, problem: Problem, rounds: int, seed: int, x0: np.ndarray
                ) -> tuple[np.ndarray, list]:
    """Iterates (rounds+1, d) and round logs of ``alg`` (the run loop, keeping every iterate)."""
    rng = np.random.default_rng(seed)
    state = alg.init(problem, x0)
    xs, logs = [state.x], []
    for _ in range(rounds):
        state, log = alg.round(problem, state, rng)
        xs.append(state.x)
        logs.append(log)
    return np.array(xs), logs


def shared_hessian_problem(N: int, d: int, seed: int, sigma2: float) -> tuple[QuadraticProblem, float]:
    """f_i(w) = 1/2 (w - a_i)^T A (w - a_i) with a shared A: B = 1 and G^2 = (1/N) sum ||A(a_i - abar)||^2
    exactly (docs/docofl.md). Returns (problem, G2)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag(np.linspace(0.5, 2.0, d)) @ Q.T
    A = 0.5 * (A + A.T)
    centres = rng.normal(size=(N, d))
    prob = QuadraticProblem(np.broadcast_to(A, (N, d, d)).copy(), centres @ A, sigma2=sigma2)
    diff = (centres - centres.mean(0)) @ A
    return prob, float(np.mean(np.sum(diff * diff, axis=1)))


def exact_moments(comp: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(E C(X), E||C(X) - X||^2 per row) computed exactly, or None when the compressor exposes neither
    ``marginals`` nor is deterministic. Per-coordinate marginals suffice for both (linearity)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    if comp.deterministic:
        Y, _ = comp.compress(X, None)
        return Y, np.sum((Y - X) ** 2, axis=1)
    marg = getattr(comp, "marginals", None)
    if marg is None and hasattr(comp, "decompose") and hasattr(comp, "s"):
        # the OFedIQ (s,b) quantizer exposes its two-point law through decompose(): Q_i = norm sign (m + B)/s
        def marg(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            norms, _, m, p_up = comp.decompose(X)
            sign = np.sign(X)
            return (np.stack([norms * sign * m / comp.s, norms * sign * (m + 1) / comp.s], axis=-1),
                    np.stack([1.0 - p_up, p_up], axis=-1))
    if marg is not None:
        vals, probs = marg(X)
        mean = np.sum(vals * probs, axis=-1)
        mse = np.sum(probs * (vals - X[..., None]) ** 2, axis=(1, 2))
        return mean, mse
    return None


# ---------------------------------------------------------------------------------------------------------
# The stand-in of the CIFAR-100 ablations (Figures 3, 10, 11)
# ---------------------------------------------------------------------------------------------------------

#: The stand-in's sizes. FedProx's Synthetic(1, 1) binary logistic regression (Li et al. 2020), N = 100 clients
#: of 50 samples each, d = 60 (FedProx's dimension), l2 regularisation 0.1 (condition number ~140, so 300
#: rounds at eta = 1/L reach the noise floor), uniform weights (the paper's f = (1/N) sum f_i), minibatches of
#: 16. S = 10 clients per round as in the paper's CIFAR-100 task (Table 2: N = 200, S = 10); every client is
#: notified K (V - 1) rounds ahead, the widest window the queue allows, so its anchor is K (V - 1) to KV - 1
#: rounds old (the staleness T = KV of the paper's analysis). Size: client sampling from heterogeneous clients
#: and minibatches leave an SGD noise floor (f - f* ~ 0.03 against 0.145 at w_0 = 0); compression adds to it
#: through omega^2 ||w_t - y||^2 (eq. (23)), and the paired runs (one seed draws the same participants in every
#: round for every configuration) measure that addition without most of the floor's seed-to-seed spread.
STANDIN = {"n_clients": 100, "dim": 60, "samples": 50, "reg": 0.1, "batch_size": 16, "n_sampled": 10,
           "rounds": 300}

#: A budget of 32 bits per coordinate is the paper's full precision: no compression.
FULL_PRECISION = 32.0


@lru_cache(maxsize=2)
def standin_problem(seed: int = 0) -> LogisticProblem:
    """The stand-in problem of Figures 3, 10 and 11 (:data:`STANDIN`), with its Newton certificate (x*, f*)."""
    c = STANDIN
    return logistic("synthetic", c["n_clients"], dim=c["dim"], samples=c["samples"], reg=c["reg"],
                    weights="uniform", batch_size=c["batch_size"], seed=seed)


@dataclass(frozen=True)
class SubsampledQuantizer:
    """A sub-bit correction compressor, C(x) = (d/k) Q(x_S) on k = round(fraction d) coordinates S drawn
    uniformly without replacement, Q the unbiased stochastic uniform quantizer with ``levels`` levels on the kept
    coordinates' [min, max] (zero elsewhere). E C(x) = x (E over S of (d/k) x_S = x, and E Q = id). The paper
    reaches b_c = 1/2 with EDEN and Rand-K as a subroutine (its footnote 5); here S comes from a seed shared
    with the server, so it costs no bits: k ceil(log2 levels) + 128 bits (the range) per row.
    """

    fraction: float = 0.5
    levels: int = 2
    name: ClassVar[str] = "subsampled_quantizer"
    unbiased: ClassVar[bool] = True
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "fraction", check_real("fraction", self.fraction, low=0.0, low_open=True,
                                                        high=1.0))
        object.__setattr__(self, "levels", check_int("levels", self.levels, low=2))

    def kept(self, d: int) -> int:
        """k = round(fraction d), at least 1."""
        return min(d, max(1, int(round(self.fraction * d))))

    def compress(self, X: np.ndarray, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = require_rng(rng, self.name)
        X = as_rows(X)
        m, d = X.shape
        k = self.kept(d)
        idx = np.argsort(rng.random((m, d)), axis=1)[:, :k]
        q = StochasticUniformQuantizer(levels=self.levels)
        Q, _ = q.compress(np.take_along_axis(X, idx, axis=1), rng)
        out = np.zeros_like(X)
        np.put_along_axis(out, idx, Q * (d / k), axis=1)
        return out, np.full(m, float(k * math.ceil(math.log2(self.levels)) + 128))


def anchor_compressor(b_w: float) -> Any:
    """C_w at b_w bits per coordinate: ECUQ (the paper's anchor compressor), or none at 32 bits."""
    return Identity() if b_w >= FULL_PRECISION else ECUQ(b=b_w)


def correction_compressor(b_c: float) -> Any:
    """C_c at b_c bits per coordinate, unbiased. The paper uses EDEN (not implemented here); the stand-in is the
    stochastic uniform quantizer with 2^b_c levels for integer b_c >= 1 (b_c d + 128 bits), the
    :class:`SubsampledQuantizer` with 1-bit levels on a fraction b_c of the coordinates for b_c < 1, and no
    compression at 32 bits."""
    if b_c >= FULL_PRECISION:
        return Identity()
    if b_c < 1:
        return SubsampledQuantizer(fraction=b_c, levels=2)
    if b_c != int(b_c):
        raise ValueError(f"b_c must be an integer >= 1, below 1, or {FULL_PRECISION:g}, got {b_c}")
    return StochasticUniformQuantizer(levels=2 ** int(b_c))


def gap_path(alg: Any, problem: Problem, rounds: int, seed: int, at: Sequence[int] | None = None) -> np.ndarray:
    """f(w_t) - f* for t in ``at`` (default every t = 0..rounds) of ``alg`` from w_0 = 0 (the run loop; one
    generator per seed, so two algorithms with the same draw consume it alike and see the same participants).
    Only the requested rounds are evaluated: the loss over all samples costs a third of a round."""
    wanted = set(range(rounds + 1)) if at is None else {int(t) for t in at}
    if any(t < 0 or t > rounds for t in wanted):
        raise ValueError(f"rounds in `at` must be in [0, {rounds}]")
    rng = np.random.default_rng(seed)
    state = alg.init(problem, np.zeros(problem.dim))
    gaps = {0: problem.gap(state.x)} if 0 in wanted else {}
    for t in range(1, rounds + 1):
        state, _ = alg.round(problem, state, rng)
        if t in wanted:
            gaps[t] = problem.gap(state.x)
    return np.array([gaps[t] for t in sorted(wanted)])

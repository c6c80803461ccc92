"""The entropy-constrained scalar quantizers DoCoFL compares ECUQ with: ECQ and ECK-Means (Dorfman et al.,
"DoCoFL: Downlink Compression for Cross-Device Federated Learning", ICML 2023, App. D, Figure 6).

Both quantize one vector x in R^d to values c_0 < ... < c_{K-1} with an assignment i -> k(i), and meet an entropy
budget of b bits per coordinate, H(k) <= b, where H is the empirical entropy of the assignment,
H = -sum_k p_k log2 p_k with p_k = #{i : k(i) = k}/d, exactly as ECUQ's budget (Algorithm 4;
:func:`fedtheory.compressors.entropy.empirical_entropy`).

**ECQ** (Chou, Lookabaugh & Gray, "Entropy-constrained vector quantization", IEEE Trans. ASSP 37(1), 1989), in
dimension 1. For a Lagrange multiplier lambda >= 0 it minimises J = sum_i (x_i - c_{k(i)})^2 + lambda l_{k(i)},
l_k = -log2 p_k the ideal code length, by the generalised Lloyd iteration:

1. assignment: k(i) = argmin_k (x_i - c_k)^2 + lambda l_k (ties to the smaller k);
2. update: drop empty cells, p_k = n_k/d, l_k = -log2 p_k, c_k = mean of cell k;

until the assignment no longer changes (J never increases; ``max_iter`` bounds the loop). In 1-D the cost of
codeword k is the line g_k - 2 c_k x (g_k = c_k^2 + lambda l_k) plus x^2, so each cell is an interval: codeword
k wins on [max_{j<k} t_jk, min_{j>k} t_kj] with t_jk = (g_k - g_j)/(2 (c_k - c_j)), and the assignment is a
search of the sorted boundaries (O(N^2 + d log N) per iteration instead of O(N d)). lambda = 0 is Lloyd's
k-means. ECQ has no rule for lambda: as the authors did, :func:`ecq` runs a grid of lambda (relative to the
variance of x, :data:`ECQ_LAMBDA_FACTORS`) from an initial codebook of N codewords, refines lambda by bisection
where the grid crosses the budget, and keeps the lowest squared error among the results with H <= b.

**ECK-Means**: the K-means (Lloyd) quantization values for K levels, with a double binary search (exponential
growth K0 + 2^p from K0 = floor(2^b), then bisection) for the largest K whose assignment entropy is at most b; as
for ECUQ, entropy is not exactly monotone in K, so the largest K seen with H <= b is returned. At K0 the entropy is
at most log2 K0 <= b, so the budget is always met.

Choices of fedtheory (the paper gives neither): Lloyd starts from the K quantiles S[floor((k + 1/2) d/K)] of the
sorted data (duplicates merged), ECQ from N uniformly spaced codewords (the bin centres of [x_min, x_max], ECUQ's
grid) with uniform lengths l_k = log2 N. Both are deterministic: no random initialisation, so no seed.

Why here, in ``compressors`` (the numerical kernels) and not next to the claim: they are quantizers like ECUQ,
usable beyond Figure 6 and tested on their own (``tests/compressors/test_entropy_constrained.py``). They are plain
functions, not registered :class:`~fedtheory.compressors.base.Compressor` classes: they carry no bit accounting
or omega / alpha constants an algorithm needs, and registering them would enrol them in the generic compressor
tests and ``fedtheory bench``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..validation import check_finite_array, check_int, check_real
from .entropy import empirical_entropy

__all__ = ["EntropyConstrainedResult", "ecq_lloyd", "ecq", "kmeans_1d", "eck_means", "ECQ_LAMBDA_FACTORS"]

#: ECQ's default grid of Lagrange multipliers, as factors of lambda_b = 2 4^{-b} Var(x): at high rate the optimum
#: has lambda = -dD/dR = 2 ln 2 D with D ~ (pi e/6) 4^{-b} Var(x) for b bits, i.e. lambda ~ 2 4^{-b} Var(x). The
#: grid spans 1e-3 to 10 times that, 2 points per decade, plus 0 (k-means with the initial codebook): heavy
#: tails (LogNormal) are far from the high-rate regime and often pick the smallest lambdas.
ECQ_LAMBDA_FACTORS = (0.0,) + tuple(float(v) for v in np.geomspace(1e-3, 10.0, 9))


class EntropyConstrainedResult(NamedTuple):
    """One vector quantized under an entropy budget."""

    x_hat: np.ndarray       # (d,) quantized vector, x_hat[i] = centers[index[i]]
    index: np.ndarray       # (d,) cell of each coordinate, in [0, levels)
    centers: np.ndarray     # (levels,) increasing quantization values (every cell non-empty)
    entropy: float          # empirical entropy of index, bits per coordinate
    levels: int             # number of non-empty cells
    lam: float              # ECQ: the chosen Lagrange multiplier (absolute); ECK-Means: nan
    evaluations: int        # quantizers computed by the search (lambdas or K's)


def _vector(x) -> np.ndarray:
    arr = check_finite_array("x", x)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {arr.shape}")
    return arr


def _budget(b) -> float:
    return check_real("b", b, low=0.0, low_open=True, high=60.0)


def _entropy(index: np.ndarray) -> float:
    return float(empirical_entropy(index[None, :])[0])


def _boundaries(c: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells of argmin_k (x - c_k)^2 + (g_k - c_k^2) over increasing c, by the lower envelope of the lines
    g_k - 2 c_k x (see the module docstring): the codewords that win somewhere, and the boundaries between
    consecutive ones (a point on a boundary goes to the smaller codeword)."""
    n = c.size
    if n == 1:
        return np.zeros(1, dtype=np.int64), np.zeros(0)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    dc = np.where(upper, c[None, :] - c[:, None], 1.0)               # c_k - c_j > 0 for j < k
    t = (g[None, :] - g[:, None]) / (2.0 * dc)                        # t[j, k]: k wins beyond it
    lower_end = np.max(np.where(upper, t, -np.inf), axis=0)           # L_k = max_{j<k} t_jk
    upper_end = np.min(np.where(upper, t, np.inf), axis=1)            # U_k = min_{j>k} t_kj
    members = np.flatnonzero(lower_end < upper_end)
    return members, t[members[:-1], members[1:]]


def ecq_lloyd(x, init, lam=0.0, *, max_iter: int = 500) -> tuple[np.ndarray, np.ndarray, int]:
    """Chou et al.'s iteration at a fixed lambda from the codebook ``init`` (with uniform lengths log2 N).

    Returns ``(centers, index, iterations)``: increasing non-empty centres and each coordinate's cell. With
    ``lam = 0`` this is Lloyd's k-means from ``init``. The cells are intervals, so an iteration works on the
    sorted data with prefix sums: O(N^2 + N log d), the assignment of every coordinate is formed once at the end.
    """
    x = _vector(x)
    c = np.unique(check_finite_array("init", init))
    if c.ndim != 1 or c.size < 1:
        raise ValueError(f"init must be a non-empty 1-D array, got shape {np.shape(init)}")
    lam = check_real("lam", lam, low=0.0)
    max_iter = check_int("max_iter", max_iter, low=1)
    order = np.argsort(x, kind="stable")
    S = x[order]
    prefix = np.concatenate(([0.0], np.cumsum(S)))
    d = S.size
    lengths = np.full(c.size, math.log2(c.size))
    edges = None
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 -- the count is returned
        _, bounds = _boundaries(c, c * c + lam * lengths)
        cuts = np.searchsorted(S, bounds, side="right")             # x <= boundary: the smaller codeword
        new = np.unique(np.concatenate(([0], cuts, [d])))          # empty cells dropped
        if edges is not None and np.array_equal(new, edges):
            break
        edges = new
        counts = np.diff(edges)
        c = np.diff(prefix[edges]) / counts
        lengths = -np.log2(counts / d)
    # means of ordered disjoint cells are non-decreasing; equal neighbours (rounding) are merged
    counts = np.diff(edges)
    c, merged = np.unique(c, return_inverse=True)
    index = np.empty(d, dtype=np.int64)
    index[order] = np.repeat(merged.reshape(-1), counts)
    return c, index, it


def _quantiles(S: np.ndarray, k: int) -> np.ndarray:
    return S[np.minimum(((np.arange(k) + 0.5) * S.size / k).astype(np.int64), S.size - 1)]


def kmeans_1d(x, k, *, max_iter: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means of a vector with ``k`` levels from its k quantiles: ``(centers, index)``."""
    x = _vector(x)
    k = check_int("k", k, low=1)
    c, index, _ = ecq_lloyd(x, _quantiles(np.sort(x), k), 0.0, max_iter=max_iter)
    return c, index


def _result(x, c, index, lam, evaluations) -> EntropyConstrainedResult:
    return EntropyConstrainedResult(c[index], index, c, _entropy(index), int(c.size), float(lam), int(evaluations))


def eck_means(x, b, *, max_iter: int = 500) -> EntropyConstrainedResult:
    """ECK-Means with an entropy budget of ``b`` bits per coordinate (see the module docstring)."""
    x = _vector(x)
    b = _budget(b)
    max_iter = check_int("max_iter", max_iter, low=1)
    cap = int(np.unique(x).size)
    k0 = min(max(1, int(math.floor(2.0**b))), cap)
    seen: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}

    def run(k: int) -> float:
        if k not in seen:
            c, index = kmeans_1d(x, k, max_iter=max_iter)
            seen[k] = (c, index, _entropy(index))
        return seen[k][2]

    run(k0)
    low, high, p = k0, None, 0       # low: largest K known feasible; high: smallest K known infeasible
    while high is None and low < cap:
        k = min(k0 + 2**p, cap)
        p += 1
        if run(k) <= b:
            low = k
        else:
            high = k
    while high is not None and high - low > 1:
        mid = (low + high) // 2
        if run(mid) <= b:
            low = mid
        else:
            high = mid
    best = max(k for k, v in seen.items() if v[2] <= b)
    c, index, _ = seen[best]
    return _result(x, c, index, math.nan, len(seen))


def ecq(x, b, *, codewords: int | None = None, lambdas=None, refine: int = 6,
        max_iter: int = 500) -> EntropyConstrainedResult:
    """ECQ with an entropy budget of ``b`` bits per coordinate: the lowest squared error over a grid of lambda,
    refined by bisection.

    ``codewords``: the initial codebook size N, uniformly spaced bin centres on [x_min, x_max] (default
    min(#distinct values, 2^(ceil(b) + 3)), doubled at most three times while k-means with N codewords, lambda = 0,
    is still within the budget: heavy tails leave most of a uniform codebook empty). ``lambdas``: the grid in
    units of Var(x) (default 2 4^{-b} times :data:`ECQ_LAMBDA_FACTORS`; 0 is allowed and is k-means with N
    levels). ``refine``: bisection steps (in
    log lambda) between the largest grid lambda over the budget and the next one, where the budget is crossed
    (entropy is not exactly monotone in lambda, so every feasible result seen competes). If no lambda meets the
    budget, k-means with floor(2^b) levels (entropy <= log2 floor(2^b) <= b) is returned, with ``lam = nan``.
    """
    x = _vector(x)
    b = _budget(b)
    max_iter = check_int("max_iter", max_iter, low=1)
    refine = check_int("refine", refine, low=0)
    distinct = int(np.unique(x).size)
    if codewords is None:
        n = min(distinct, 2 ** (int(math.ceil(b)) + 3))
    else:
        n = check_int("codewords", codewords, low=1)
    if lambdas is None:
        grid = 2.0 * 4.0**-b * np.asarray(ECQ_LAMBDA_FACTORS)
    else:
        grid = np.atleast_1d(check_finite_array("lambdas", lambdas))
        if grid.ndim != 1 or grid.size < 1 or np.any(grid < 0):
            raise ValueError("lambdas must be a non-empty 1-D array of non-negative numbers")
        grid = np.sort(grid)
    lo, hi = float(x.min()), float(x.max())
    var = float(np.var(x))
    best = None
    runs = 0

    def run(init: np.ndarray, rel: float) -> bool:
        nonlocal best, runs
        runs += 1
        lam = rel * var
        c, index, _ = ecq_lloyd(x, init, lam, max_iter=max_iter)
        if _entropy(index) > b:
            return False
        err = float(np.sum((c[index] - x) ** 2))
        if best is None or err < best[0]:
            best = (err, c, index, lam)
        return True

    for _ in range(4):       # the codebook doubles (at most 3 times) while even k-means with it is within budget
        init = lo + (np.arange(n) + 0.5) * (hi - lo) / n
        feasible = [run(init, float(rel)) for rel in grid]
        if not (grid[0] == 0 and feasible[0] and n < distinct and codewords is None):
            break
        n = min(2 * n, distinct)
    crossings = [i for i in range(1, grid.size) if feasible[i] and not feasible[i - 1]]
    if crossings and var > 0:
        i = crossings[-1]
        over, under = float(grid[i - 1]), float(grid[i])       # over the budget at `over`, within it at `under`
        if over <= 0:
            over = under * 1e-3
        for _ in range(refine):
            mid = math.sqrt(over * under)
            if run(init, mid):
                under = mid
            else:
                over = mid
    if best is None:
        c, index = kmeans_1d(x, max(1, int(math.floor(2.0**b))), max_iter=max_iter)
        return _result(x, c, index, math.nan, runs + 1)
    return _result(x, best[1], best[2], best[3], runs)

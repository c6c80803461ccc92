"""Aggregation weights measured from an implementation's output, for diagnoses that say what was measured.

A FedAvg-type round moves the server by x+ - x = eta_g sum_i a_i u_i, u_i = N_i (b_i - A_i x) the paper's local
update of client i (McMahan et al. 2017, Alg. 1: a_i = n_i / sum_j n_j). Given the output, the weights a are the
least-squares solution of U^T a = (x+ - x) / eta_g; when the residual is at rounding level (and the u_i are
linearly independent, n <= d), the implementation is a weighted average of the paper's local updates and
:func:`describe` names the weights it measured (proportional to n_i, n_i^2, sqrt(n_i), uniform, batch counts
ceil(n_i / B)), or gives them as numbers; otherwise the local training itself differs (a client starting from
another's result, say) and no weighting explains the output.
"""
from __future__ import annotations

import math

import numpy as np

from .tolerances import WEIGHT_RESIDUAL_FLOOR, WEIGHT_RTOL

__all__ = ["fit_weights", "describe"]

#: The fit is trusted only when the local updates are this well conditioned (otherwise two weightings can give
#: the same output and naming one would say more than was measured).
MAX_CONDITION = 1e6


def fit_weights(updates: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray | None, float]:
    """(a, residual): the least-squares weights of ``updates`` (n, d) reproducing ``delta`` (d,), and the relative
    residual ||U^T a - delta|| / max(||delta||, max ||u_i||). ``a`` is None when the updates do not determine the
    weights (n > d, or condition number above :data:`MAX_CONDITION`)."""
    U = np.asarray(updates, dtype=np.float64)
    scale = max(float(np.linalg.norm(delta)), float(np.max(np.linalg.norm(U, axis=1), initial=0.0)), 1e-300)
    if U.shape[0] > U.shape[1] or np.linalg.cond(U.T) > MAX_CONDITION:
        return None, math.inf
    a = np.linalg.lstsq(U.T, delta, rcond=None)[0]
    return a, float(np.linalg.norm(U.T @ a - delta)) / scale


def _candidates(sizes: np.ndarray) -> list[tuple[str, np.ndarray]]:
    n = sizes.astype(np.float64)
    out = [("proportional to num_examples (the paper's n_i / n)", n), ("uniform (1/n each)", np.ones_like(n)),
           ("proportional to num_examples^2", n ** 2), ("proportional to sqrt(num_examples)", np.sqrt(n))]
    for B in range(2, int(n.max()) + 1):  # a minibatch loop counting its batches: ceil(n_i / B)
        out.append((f"proportional to the batch counts ceil(num_examples / {B})", np.ceil(n / B)))
    return out


def describe(updates: np.ndarray, delta: np.ndarray, sizes: np.ndarray, paper: np.ndarray, rtol: float,
             weights_only: bool = False) -> str:
    """One sentence on the weights a with delta = sum_i a_i u_i (``updates`` (n, d) the paper's local updates u_i,
    ``delta`` = (x+ - x) / eta_g measured) against the paper's ``paper``.

    With n <= d and well-conditioned updates the weights are measured (:func:`fit_weights`) and named or given as
    numbers. Otherwise one output cannot determine n weights: each known weighting (scaled by its best factor) is
    compared with the output and named when it reproduces it within ``rtol``. ``weights_only``: '' instead of the
    sentence saying the output is no weighting (for a caller whose deviation may lie elsewhere, a server state)."""
    fmt = lambda v: "[" + ", ".join(f"{x:.4g}" for x in v) + "]"  # noqa: E731
    sizes = np.asarray(sizes)
    U, delta = np.asarray(updates, dtype=np.float64), np.asarray(delta, dtype=np.float64)
    scale = max(float(np.linalg.norm(delta)), float(np.max(np.linalg.norm(U, axis=1), initial=0.0)), 1e-300)
    a, residual = fit_weights(U, delta)
    if a is None:
        # each known weighting as is (normalised to sum 1): fitting a scale too would let any weighting
        # reproduce a one-dimensional output
        for name, c in _candidates(sizes):
            if len(c) > 1 and np.linalg.norm(U.T @ (c / c.sum()) - delta) <= rtol * scale:
                return (f"the output is the paper's local updates weighted {name} (num_examples {fmt(sizes)}; the "
                        f"paper's weights {fmt(paper)})")
        return "" if weights_only else (f"the output is no weighting of the paper's local updates the kit knows (n_i, n_i^2, sqrt(n_i), "
                f"uniform, batch counts; num_examples {fmt(sizes)}): the local training or the aggregation differs")
    if residual > max(rtol, WEIGHT_RESIDUAL_FLOOR):
        return "" if weights_only else (f"the output is no weighted average of the paper's local updates (least-squares residual "
                f"{residual:.3g} relative): the local training differs from the paper's (e.g. a client starting "
                "from another client's result, or the model updated in place)")
    total = float(a.sum())
    if weights_only and (len(a) < 2 or abs(total - 1.0) > WEIGHT_RTOL):
        return ""  # one client, or weights not summing to 1: the deviation may be elsewhere (a server state)
    found = [name for name, c in _candidates(sizes)
             if np.max(np.abs(a / total - c / c.sum())) <= WEIGHT_RTOL * max(1.0, float(np.max(np.abs(a / total))))]
    shape = found[0] if found else "none of n_i, n_i^2, sqrt(n_i), uniform, batch counts"
    what = f"aggregation weights measured {fmt(a)} for num_examples {fmt(sizes)} (the paper's {fmt(paper)})"
    summed = "" if abs(total - 1.0) <= WEIGHT_RTOL else f", summing to {total:.4g} instead of 1"
    return f"{what}: {shape}{summed}"

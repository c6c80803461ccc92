"""Gradient descent's classical rates (Nesterov 2004, Thm 2.1.15; Polyak 1987)."""
from __future__ import annotations

import math

from ..validation import check_nonnegative, check_positive


def gd_contraction(mu: float, L: float, step: float) -> float:
    """Per-step contraction of ||x - x*|| for GD on a quadratic with spectrum in [mu, L].

    x+ - x* = (I - step A)(x - x*) so the factor is max(|1 - step mu|, |1 - step L|) exactly (attained by
    the extreme eigendirections). With step = 1/L this is 1 - mu/L; with step = 2/(mu + L) it is
    (L - mu)/(L + mu).
    """
    mu = check_nonnegative("mu", mu)
    L = check_positive("L", L)
    step = check_positive("step", step)
    return max(abs(1.0 - step * mu), abs(1.0 - step * L))


def gd_rounds_to_eps(mu: float, L: float, eps: float, dist0_sq: float) -> float:
    """Rounds for GD with step 1/L to reach ||x - x*||^2 <= eps from ||x0 - x*||^2 = dist0_sq (strongly convex)."""
    L = check_positive("L", L)
    eps, dist0_sq = check_positive("eps", eps), check_nonnegative("dist0_sq", dist0_sq)
    q = gd_contraction(mu, L, 1.0 / L)
    if dist0_sq <= eps:
        return 0.0
    if q == 0.0:
        return 1.0
    return math.ceil(math.log(eps / dist0_sq) / (2.0 * math.log(q)))

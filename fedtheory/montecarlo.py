"""The one Monte Carlo rule of every verdict, the ledger's and the conformance kit's (docs/design.md, "Verification
conventions").

An expectation (or a variance) estimated from ``R`` independent samples is compared with its closed form, or with
a bound, within ``Z_MONTE_CARLO`` standard errors ``se = std / sqrt(R)``: an equality as
``|mean - value| <= mc_slack(se)``, a one-sided bound as ``mean - mc_slack(se) <= bound``, or equivalently as the
z-score ``|mean - value| / se`` reported against ``Z_MONTE_CARLO``. Exact enumeration comes first (randomised
algorithms split ``draw`` / ``round_given``); this rule is for what cannot be enumerated.

Why z = 5. Under the normal approximation a correct implementation exceeds 5 standard errors with probability
2.9e-7 per one-sided comparison (5.7e-7 two-sided). The ledger makes about 30 Monte Carlo checks, each over a few
instances and each comparing at most a few hundred coordinates or rounds at once, so fewer than 10^4 comparisons a
run; by the union bound a correct run is rejected with probability below 10^4 * 5.7e-7 < 6e-3, and the property
tests, which draw new points, stay in the same range per hundred examples. The ledger's seeds are fixed, so its
verdicts are deterministic: this probability is that of having picked seeds on which a correct implementation
fails. At z = 4 (3.2e-5 per comparison) the same count gives 0.3, too high for a suite that must not fail
spuriously; z = 5 costs only 25% more standard error than z = 4, which each claim buys back with its sample size
so that a slip moving the mean by a few standard errors is still caught.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Z_MONTE_CARLO", "mc_slack"]

#: The z-threshold of every Monte Carlo verdict (see the module docstring for the family-wise reasoning).
Z_MONTE_CARLO = 5.0


def mc_slack(se: float | np.ndarray) -> float | np.ndarray:
    """The slack a Monte Carlo estimate is granted: ``Z_MONTE_CARLO * se`` (``se`` a float or an array of standard
    errors, each ``std / sqrt(R)`` of ``R`` independent samples)."""
    return Z_MONTE_CARLO * se

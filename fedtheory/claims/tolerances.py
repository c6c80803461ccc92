"""Every tolerance and statistical threshold the claims use, each with its justification (docs/design.md,
"Verification conventions").

A claim module imports the constant it needs from here rather than defining its own, so that a reader can see
every slack the ledger grants in one page, and a change to one is a change to every claim that uses it.
"""
from __future__ import annotations

__all__ = ["Z_MONTE_CARLO", "EXACT_REL", "ITERATE_REL", "IDENTITY_TOL", "INEQUALITY_TOL", "DIST_FLOOR", "GAP_FLOOR",
           "CROSSCHECK_TOL", "ROUND_IDENTITY_RTOL"]

#: One-sided z-score threshold of every Monte Carlo verdict: an expectation or a variance estimated from samples
#: is compared with its closed form within Z standard errors. At Z = 5 a correct implementation is rejected with
#: probability below 3e-7 per comparison (normal tail), so the ~100 Monte Carlo comparisons of the ledger reject a
#: correct run with probability below 3e-5, while a slip that moves the mean by a few standard errors of the
#: sample size used is still caught (each claim chooses its sample size for that).
Z_MONTE_CARLO = 5.0

#: Relative slack of a comparison between two exact (closed-form, floating-point) quantities of O(1) condition:
#: a few hundred ulps (2.2e-16 each) with margin.
EXACT_REL = 1e-12

#: Relative slack of a per-step inequality along an iterate sequence: the iterates carry rounding errors of about
#: 1e-16 of their size amplified by the condition number (at most 1e4 in the ledger's instances), so 1e-9 leaves
#: three orders of margin while any modelling slip changes a step at O(1) relative size.
ITERATE_REL = 1e-9

#: Relative tolerance of an identity between a closed form and a run (classic results, cross-device scale).
IDENTITY_TOL = 1e-10

#: Relative tolerance of a per-round inequality of FedElasticNet's proof (relative to max(1, ||gamma - theta*||^2,
#: C_{t-1})), as for identities.
INEQUALITY_TOL = 1e-10

#: Floating-point floor of distances: per-step ratios are checked only while a distance is above 1e-6 of its start
#: (a squared distance above 1e-12 of its start); below it, rounding swamps a 1e-9 comparison of ratios.
DIST_FLOOR = 1e-6
GAP_FLOOR = DIST_FLOOR ** 2

#: The torch backend against the NumPy reference in float64: agreement to 1e-8 relative (different reduction orders
#: over a few thousand terms).
CROSSCHECK_TOL = 1e-8

#: Relative tolerance of a one-round identity of an algorithm: a round is O(K d^2) flops on systems with
#: condition number at most 12, so two evaluation orders differ by about K * cond * eps ~ 1e-13; 1e-9 leaves four
#: orders of margin and is far below any modelling slip (those change the update at O(1) relative size).
ROUND_IDENTITY_RTOL = 1e-9

#: The neural experiments' shape test (fedtheory.experiments.stats): the held-out seeds' mean effect must exceed
#: this fraction of the development seeds' mean effect, at the one-sided confidence below. Half: the effect must
#: replicate at half the size it had on the seeds it was looked at on (a regression to the mean of a noisy
#: development estimate keeps well above half; an effect that was chance on the development seeds does not).
SHAPE_MARGIN_FRACTION = 0.5

#: One-sided confidence of the neural experiments' shape test (Student t over the held-out seeds): a shape that is
#: absent (mean effect at the margin) passes with probability at most 5%.
SHAPE_CONFIDENCE = 0.95

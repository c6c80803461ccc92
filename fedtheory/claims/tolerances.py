"""Every tolerance and statistical threshold the claims use, each with its justification (docs/design.md,
"Verification conventions").

A claim module imports the constant it needs from here rather than writing a literal, so that a reader can see
every slack the ledger grants in one page, and a change to one is a change to every claim that uses it
(``tests/claims/test_no_tolerance_literals.py`` fails on a tolerance literal in a check). Each constant says
what it is relative to and why it has this size. Machine epsilon is eps = 2.2e-16; a modelling slip (a wrong sign,
a dropped term, a wrong step) changes what a check compares at O(1) relative size, or at the size of the instance's
effect (at least 1e-3 of the scale in the ledger's instances), so every slack below sits orders of magnitude under
it.

The Monte Carlo rule is not here but one layer below, in ``fedtheory/montecarlo.py``, because the conformance kit
uses it too: ``Z_MONTE_CARLO`` and ``mc_slack`` are re-exported so that claims import every threshold from here.
"""
from __future__ import annotations

from ..montecarlo import Z_MONTE_CARLO, mc_slack

__all__ = ["Z_MONTE_CARLO", "mc_slack", "ONE_ROUNDING_REL", "FEW_OPS_REL", "SUM_REL", "EXACT_REL", "IDENTITY_TOL",
           "ITERATE_REL", "ROUND_IDENTITY_RTOL", "INEQUALITY_TOL", "CROSSCHECK_TOL", "CONVERGED_REL",
           "NONZERO_REL", "CERTIFIED_CONSTANT_REL", "GRID_TOL", "APPROX_REL", "PRESENT_REL", "DECAYED_REL",
           "MATERIAL_REL", "SQUARED_CONVERGED_REL", "SQUARED_STOP_REL",
           "SQUARED_FIT_FLOOR", "TINY", "PRINTED_2DP", "DIST_FLOOR",
           "GAP_FLOOR", "BOUND_CONSISTENCY_RTOL", "BOUND_CONSISTENCY_ATOL"]

# ------------------------------------------------------------------ rounding: a few operations to a few rounds

#: Relative slack of a value recomputed by one or two roundings (a lossless quantizer's output against its input):
#: two units in the last place, 2 eps ~ 4.4e-16, floored to 4e-16 since each rounding is at most eps/2.
ONE_ROUNDING_REL = 4e-16

#: Relative slack of a handful of floating-point operations on O(1) numbers (a ratio of two sums, a square root of
#: a product): about five eps. Used where the two sides are the same formula in two arrangements.
FEW_OPS_REL = 1e-15

#: Relative slack of a sum or recurrence over up to about a hundred terms (a monotone sequence of partial sums, a
#: rational closed form evaluated at a point): about fifty eps.
SUM_REL = 1e-14

#: Relative slack of a comparison between two exact (closed-form, floating-point) quantities of O(1) condition,
#: or between an exact algorithm's output and its transcription over a few rounds: a few hundred ulps (2.2e-16
#: each) with margin.
EXACT_REL = 1e-12

#: Relative slack of a per-step inequality along an iterate sequence: the iterates carry rounding errors of about
#: 1e-16 of their size amplified by the condition number (at most 1e4 in the ledger's instances), so 1e-9 leaves
#: three orders of margin while any modelling slip changes a step at O(1) relative size.
ITERATE_REL = 1e-9

#: Relative tolerance of an identity between a closed form and a run of many rounds (or a linear solve): rounding
#: accumulates over the rounds and is amplified by the condition number (<= 1e4), to about 1e-12 relative; 1e-10
#: leaves two orders of margin.
IDENTITY_TOL = 1e-10

#: Relative tolerance of a per-round inequality of FedElasticNet's proof (relative to max(1, ||gamma - theta*||^2,
#: C_{t-1})), as for identities.
INEQUALITY_TOL = 1e-10

#: The torch backend against the NumPy reference in float64: agreement to 1e-8 relative (different reduction orders
#: over a few thousand terms).
CROSSCHECK_TOL = 1e-8

# ------------------------------------------------------------------ runs: convergence, presence, approximations

#: A run has converged (its distance to x*, its gradient, or a stopping criterion) when below 1e-8 of its start
#: or scale: the instances contract linearly, so the round budget reaches it, while any bias a check must tell
#: apart from convergence (FedAvg's client drift, a fixed-point error) is at least 1e-3 of the scale.
CONVERGED_REL = 1e-8

#: A quantity counted as non-zero (a heterogeneity constant, a movement between two rounds) when above 1e-8 of its
#: scale: four orders above the rounding floor EXACT_REL, so rounding is never mistaken for an effect.
NONZERO_REL = 1e-8

#: Relative slack of an inequality whose constant is a certified curvature constant (mu, L, delta_A, delta_B)
#: of a drawn non-quadratic function, estimated on sampled pairs: a sampled ratio can exceed the certificate by
#: its eigenvalue and sampling rounding (about 1e-9 relative, amplified by cancellation in the difference of
#: gradients); 1e-7 keeps two orders of margin.
CERTIFIED_CONSTANT_REL = 1e-7

#: A value on a quantization grid: the level index k = (x - lo) / Delta is an integer up to the rounding of that
#: division, |x| / Delta * eps <= 1e-10 for the ledger's at most 10^6 levels; 1e-7 is far below the 1/2 that a
#: value off the grid is away from an integer. (Two of DoCoFL's grid checks, ECUQ's and a quantizer's level
#: check, used 1e-6: tightened to this one rule.)
GRID_TOL = 1e-7

#: Relative slack of a quantity computed by a numerical approximation rather than in closed form: a central finite
#: difference with step 1e-6 (error O(h^2) + O(eps/h) ~ 1e-10), a golden-section search (interval shrunk to
#: sqrt(eps) ~ 1e-8 of the optimum), a least-squares slope of a straight log-log line, the tail of a run: each is
#: accurate to about 1e-8 relative; 1e-6 keeps two orders of margin and stays far below a modelling slip.
APPROX_REL = 1e-6

#: An effect a check asserts is present (a bias, a separation between two runs, a movement of a network) must
#: exceed 1e-6 of its scale: six orders above rounding (EXACT_REL), so rounding cannot pass for it, and far below the
#: size of the effects the instances are built to show (1e-3 of the scale or more).
PRESENT_REL = 1e-6

#: A sequence the statement says tends to zero has decayed when below 1e-6 of its start within the run (a
#: converging method at the instances' rates gets there in its budget; a non-converging one stays at O(1)).
DECAYED_REL = 1e-6

#: A difference a check asserts is material (a bias a method must show, a strict inequality it must satisfy with
#: room): at least 1e-3 of its scale, the size the instances are built to produce, and nine orders above rounding.
MATERIAL_REL = 1e-3

#: A squared distance at the identity tolerance, IDENTITY_TOL ** 2: a run has reached x* to rounding.
SQUARED_CONVERGED_REL = 1e-20

#: A run stops once its squared distance to x* is below this of its start: CONVERGED_REL squared.
SQUARED_STOP_REL = 1e-16

#: A squared distance at the per-step tolerance, ITERATE_REL ** 2: below it, per-step rates of a squared
#: distance are rounding, and a rate fit leaves those rounds out.
SQUARED_FIT_FLOOR = 1e-18

#: A remainder the statement says is first order in a small parameter (eta K L, L/lambda) shrinks 10x per decade of
#: that parameter; a check asks for at least 5x (this ratio or less), which leaves room for the second-order term
#: at the instances' scales and rejects a remainder of order 0 (no shrink) or 1/2 (3.2x per decade).
FIRST_ORDER_DECADE_RATIO = 0.2

#: Absolute floor of a relative comparison or of a division: keeps 0 <= 0 true and 0 / 0 defined, far below any
#: value an instance produces (the smallest normal float is 2.2e-308).
TINY = 1e-300

#: A number the paper prints with two decimals is matched within half a unit of its last digit.
PRINTED_2DP = 0.005

#: Floating-point floor of distances: per-step ratios are checked only while a distance is above 1e-6 of its start
#: (a squared distance above 1e-12 of its start); below it, rounding swamps a 1e-9 comparison of ratios.
DIST_FLOOR = 1e-6
GAP_FLOOR = DIST_FLOOR ** 2

#: Relative tolerance of a one-round identity of an algorithm: a round is O(K d^2) flops on systems with
#: condition number at most 12, so two evaluation orders differ by about K * cond * eps ~ 1e-13; 1e-9 leaves four
#: orders of margin and is far below any modelling slip (those change the update at O(1) relative size).
ROUND_IDENTITY_RTOL = 1e-9

#: A bound claim's verdict ``holds`` is checked against measured <= theory (fedtheory/claims/registry.py): it may
#: say "holds" while measured exceeds theory only by rounding (this relative and absolute slack: the checks compare
#: at 1e-12..1e-9 of the scale), never by more. Anything else is a check that contradicts its own numbers.
BOUND_CONSISTENCY_RTOL = 1e-9
BOUND_CONSISTENCY_ATOL = 1e-12

#: How close a bound or rate claim's correct run must come to its bound somewhere on its default instances
#: (worst measured / bound) for the claim to *bite*: at 0.5, a slip that inflates the measured quantity by more
#: than 2x violates the bound there. A claim below it states, in ``non_discriminating``, why no instance of the
#: statement's class comes closer (``fedtheory.report.ledger.loose_bounds`` lists the ones that do neither).
BITE = 0.5

#: The neural experiments' shape test (fedtheory.experiments.stats): the held-out seeds' mean effect must exceed
#: this fraction of the development seeds' mean effect, at the one-sided confidence below. Half: the effect must
#: replicate at half the size it had on the seeds it was looked at on (a regression to the mean of a noisy
#: development estimate keeps well above half; an effect that was chance on the development seeds does not).
SHAPE_MARGIN_FRACTION = 0.5

#: One-sided confidence of the neural experiments' shape test (Student t over the held-out seeds): a shape that is
#: absent (mean effect at the margin) passes with probability at most 5%.
SHAPE_CONFIDENCE = 0.95

"""Every tolerance and threshold of the conformance kit's verdicts, each with its justification (docs/design.md,
"Verification conventions").

The kit sits beside the claims, not above them (tests/test_architecture.py's layers), so it has its own page; the
Monte Carlo rule is shared with the ledger, one layer below both (``fedtheory/montecarlo.py``), and re-exported
here. ``tests/claims/test_no_tolerance_literals.py`` fails on a tolerance literal in a kit check.
"""
from __future__ import annotations

import numpy as np

from ..montecarlo import Z_MONTE_CARLO, mc_slack

__all__ = ["Z_MONTE_CARLO", "mc_slack", "IDENTITY_RTOL", "EXACT_REL", "TIE_REL", "WEIGHT_RTOL",
           "WEIGHT_RESIDUAL_FLOOR", "REGRET_FLOOR", "PROBABILITY_SUM_TOL", "CONVERGED_REL", "SAMPLER_POWER_MARGIN",
           "fixed_point_rtol", "ckks_rtol", "LOCAL_SPREAD_BOUND", "secure_aggregation_rtol"]

#: Default relative tolerance of an identity between an implementation's round and the kit's expected side in
#: float64: the two evaluate the same update in different orders (and a framework may use float32 accumulators
#: internally for some steps), so they differ by far more than an ulp, but 1e-8 is still eight orders below any
#: slip of the update equations (a wrong sign, weight or step changes the round at O(1) relative size). A user
#: checking a float32 implementation passes a larger ``rtol``.
IDENTITY_RTOL = 1e-8

#: Relative slack of a comparison between exactly computed float64 quantities of O(1) condition (the kit's own
#: active-set solve, a driver recognising a state it wrote): a few hundred ulps.
EXACT_REL = 1e-12

#: A sign or a tie decided within this (relative) distance of zero is decided by rounding: the case is skipped as
#: undecidable rather than judged (rounding of a round is about 1e-13 relative; 1e-9 leaves margin).
TIE_REL = 1e-9

#: Two weight vectors are "the same" within this relative tolerance: the fit's rounding is about cond(U) eps
#: (cond <= 1e6 is required, so <= 1e-9), and the weightings told apart differ by O(1/n) or more.
WEIGHT_RTOL = 1e-6

#: The least-squares residual below which an output is a weighted average of the local updates is never asked to
#: be smaller than the fit's own rounding, cond(U) eps <= 1e-9 (cond <= 1e6).
WEIGHT_RESIDUAL_FLOOR = 1e-9

#: A regret the implementation reports is compared with the exact one to at least this relative accuracy: the
#: regret is a sum over up to a few hundred steps, whose rounding is about 1e-13 of max(1, |sum of losses|).
REGRET_FLOOR = 1e-10

#: Probabilities given to the sequential tests must sum to 1 within this: what float64 sums of up to a few
#: thousand probabilities round to, far below any mistake in a law (which misses mass at O(1/k)).
PROBABILITY_SUM_TOL = 1e-9

#: A drift-corrected method converges: within its round budget its distance to x* falls below 1e-6 of the start
#: (the kit's instances contract at rate <= 0.97 per round), while a method with uncorrected client drift stalls
#: at a distance of O(1e-2) of the start or more.
CONVERGED_REL = 1e-6

#: FedNova's objective consistency (families/fednova): relative residual of the update's direction against
#: -grad F(x) allowed in the small-step limit (eta tau_max L / (1 - rho) = 1e-4): the O(1e-4) remainder times the
#: heterogeneity of the clients' gradients (at most 8.6e-6 measured on 200 cases each at momentum 0, 0.5, 0.9 and
#: prox 0.5); a client progress not normalised moves the direction by O(1).
FEDNOVA_CONSISTENCY_TOL = 1e-3

#: The identity tolerance a float32 implementation is declared at (a correct one rounds each of a few hundred
#: operations at 6e-8 relative; 1e-4 leaves margin while an algorithmic slip moves the round at O(1)).
FLOAT32_RTOL = 1e-4
#: How close a round must be to the plain FedNova round for the kit to name "server momentum dropped": the float32
#: tolerance of the checks that judge a framework computing its weights in float32 (rtol 1e-6, docs/frameworks.md's
#: float32 rule), far below the momentum term itself, which is O(beta) of the step.
MOMENTUM_DIAGNOSIS_RTOL = 1e-6

#: The own-sampler law test (fedtheory/conformance/sampling.py) runs enough rounds R that a client the sampler never
#: draws, or always draws, is off its expected count R p by this many times the slack mc_slack(se) of a correct
#: sampler (se = sqrt(R p (1 - p))): R = (2 Z)^2 max(p / (1 - p), (1 - p) / p), 100 rounds at p = 1/2. A margin of
#: 2 keeps the power of the test near 1 against a sampler that favours or ignores a client, at a cost linear in R.
#: FedProx's law (Li et al. 2020, Alg. 2: m draws with replacement by n_k / n) uses the same margin against its two
#: wrong samplers, uniform draws and the first m clients (sampling.rounds_for_md: 208 rounds on the kit's instances).
SAMPLER_POWER_MARGIN = 2.0


def fixed_point_rtol(scaling_factor: float) -> float:
    """The rtol of a FedAvg whose aggregation runs in fixed point with scaling factor s (FLSim's
    ``SyncSecAggServer``, ``flsim/secure_aggregation/secure_aggregator.py``), derived, not tuned.

    Each client sends its weighted delta n_k Delta_k as q_k = round(s n_k Delta_k) (``to_fixedpoint``: multiply by
    s, clamp to the num_bytes range, ``torch.round``); the server sums the q_k (exact in float64 while the sum is
    below 2^53) and divides the sum by sum_k n_k and by s. Without overflow (a clamped value or a wrapped partial
    sum, which is a failure to report, not a rounding), q_k = s n_k Delta_k + r_k with |r_kj| <= 1/2 per
    coordinate, so the round's error is e = sum_k r_k / (s sum_k n_k) and

        ||e|| <= |S| sqrt(d) / (2 s sum_k n_k) <= sqrt(d) / (2 s min_k n_k) <= 1 / (2 s sqrt(d)) <= 1 / (2 s),

    since every client of the kit's instances has n_k >= d (``fedtheory.conformance.instance.make_instance``).
    The kit's identities divide by a scale >= 1 (``kit.scale_of``), and some compare two outputs of the
    implementation (``fedavg.permutation``, ``translation``, ``num_examples``), each off by up to 1/(2s): the
    relative error is at most 1/s, plus ``IDENTITY_RTOL`` for the float64 arithmetic around the fixed point."""
    if not (isinstance(scaling_factor, (int, float)) and scaling_factor > 0):
        raise ValueError(f"scaling_factor must be a number > 0 (FLSim's FixedPointConfig), got {scaling_factor!r}")
    return 1.0 / scaling_factor + IDENTITY_RTOL


def ckks_rtol(poly_modulus_degree: int, coeff_mod_bit_sizes: tuple[int, ...], scale_bits: int, max_dim: int = 50,
              sigma: float = 3.2) -> float:
    """The identity tolerance of one FedAvg round aggregated under CKKS (TenSEAL on Microsoft SEAL), derived from
    the encryption parameters: N = ``poly_modulus_degree``, the moduli's bit sizes, scale Delta = 2^``scale_bits``,
    the error's standard deviation ``sigma`` (SEAL's 3.2) and the largest dimension d the kit draws.

    A round encrypts each client's weighted model (fresh encryption and encoding), adds the ciphertexts, multiplies
    by the plaintext 1/W and rescales once, and decrypts. Two errors result, relative to the kit's scale (>= 1):

    * the noise, bounded in the canonical embedding (so in every slot) by Cheon, Kim, Kim & Song (2017),
      "Homomorphic Encryption for Arithmetic of Approximate Numbers", Lemma 1 (fresh encryption,
      B_clean = 8 sqrt(2) sigma N + 6 sigma sqrt(N) + 16 sigma sqrt(h N)) and Lemma 2 (rescaling,
      B_scale = sqrt(N/3) (3 + 8 sqrt(h))), with Hamming weight h <= N of SEAL's ternary secret and the encoding's
      rounding 3 sqrt(N/3); over d slots and two outputs compared with each other (a metamorphic property):
      2 sqrt(d) (B_clean + B_scale + 3 sqrt(N/3)) / Delta;
    * TenSEAL's rescale: it divides by the dropped prime q and then sets the scale back to Delta, which multiplies
      the value by Delta / q: a relative error |Delta / q - 1| for q among the ``scale_bits``-bit primes of the
      modulus chain, which SEAL takes as the largest primes below 2^b congruent to 1 mod 2N (CoeffModulus::Create).

    NVFlare's HEBuilder (8192, [60, 40, 40], 40): 6.7e-7 from the scale, 9.7e-6 from the noise bound (the noise
    itself is about 1e-10); every slip the kit names moves a round by O(eta)."""
    import sympy  # here, not at the top: sympy's import costs a second, and only a CKKS check needs it

    if poly_modulus_degree < 1024 or poly_modulus_degree & (poly_modulus_degree - 1):
        raise ValueError(f"poly_modulus_degree must be a power of two >= 1024, got {poly_modulus_degree}")
    if scale_bits not in coeff_mod_bit_sizes or not all(20 <= b <= 60 for b in coeff_mod_bit_sizes):
        raise ValueError(f"coeff_mod_bit_sizes must lie in [20, 60] and contain scale_bits = {scale_bits}, "
                         f"got {coeff_mod_bit_sizes}")
    if max_dim < 1 or sigma <= 0:
        raise ValueError(f"max_dim must be >= 1 and sigma > 0, got max_dim={max_dim}, sigma={sigma}")
    n, delta, m = float(poly_modulus_degree), 2.0 ** scale_bits, 2 * poly_modulus_degree
    primes, q = [], (2 ** scale_bits // m) * m + 1
    while len(primes) < coeff_mod_bit_sizes.count(scale_bits):
        q -= m
        if sympy.isprime(q):
            primes.append(q)
    b_clean = 8 * np.sqrt(2) * sigma * n + 6 * sigma * np.sqrt(n) + 16 * sigma * n   # sqrt(h N) <= N
    b_scale = np.sqrt(n / 3) * (3 + 8 * np.sqrt(n))
    noise = 2 * np.sqrt(max_dim) * (b_clean + b_scale + 3 * np.sqrt(n / 3)) / delta
    return float(max(abs(delta / p - 1) for p in primes) + noise)
#: The clients' spread in secure_aggregation_rtol: sqrt(d) sum_k ||w_k - xbar||_inf / (W A scale) (w_k a client's
#: local model, xbar their num_examples average, A = sum_k a_k its quantized weights, scale as in kit.scale_of).
#: At most 0.41 measured on 6000 instances drawn as the kit draws them (n <= 7, d <= 50, the fedavg family's ranges
#: of K and eta), each from x0 and from x*; 1 leaves margin.
LOCAL_SPREAD_BOUND = 1.0


def secure_aggregation_rtol(*, clipping_range: float, quantization_range: int, max_weight: float,
                            spread: float = LOCAL_SPREAD_BOUND) -> float:
    """The identity tolerance of a FedAvg round through SecAgg+-style quantized secure aggregation (Flower's
    ``SecAggPlusWorkflow`` + ``secaggplus_mod``: ``flwr/client/mod/secure_aggregation/secaggplus_mod.py``,
    ``_collect_masked_vectors``, and ``flwr/server/workflow/secure_aggregation/secaggplus_workflow.py``,
    ``unmask_stage``), derived from the protocol's arithmetic. With c = ``clipping_range``, Q = ``quantization_range``,
    W = ``max_weight``, client k with n_k examples and local model w_k:

    - its weight is quantized, a_k = round(Q n_k / W) / Q, so |a_k - n_k/W| <= 1/(2Q); it uploads
      z_k = stochastic_round((clip(a_k w_k, -c, c) + c) Q / (2c)), an integer within one level of its argument;
    - the masks cancel modulo 2^32 (exact integers; no wrap while sum_k z_k < n (Q + 1) < 2^32), and the server
      returns xhat = [sum_k z_k 2c/Q - n c] / A with A = sum_k a_k (the uploaded weights' sum).

    Without clipping (|a_k w_k| <= c; on the kit's unshifted cases |a_k w_k| <= 0.37 at W = 1000), per coordinate
    xhat - xbar = sum_k (z_k - pre_k) (2c/Q) / A + sum_k (a_k - n_k/W)(w_k - xbar) / A, with xbar the paper's
    num_examples average, so

        |xhat - xbar|_j <= [2 c n / Q + (1/(2Q)) sum_k ||w_k - xbar||_inf] / A.

    The kit's identity is ||.||_2 / scale with scale >= 1; its clients have n_k >= d, so A >= n d / W (up to
    n/(2Q)) and sqrt(d) times the first term is at most 2 c W / Q (d = 1, every n_k = 1); the second is at most
    W spread / (2Q) with ``spread`` (:data:`LOCAL_SPREAD_BOUND`) bounding sqrt(d) sum_k ||w_k - xbar||_inf /
    (W A scale). One round is therefore within (2c + spread/2) W / Q, and the kit compares two rounds of the
    implementation with each other (permutation, translation, num_examples), each off by that much: the tolerance
    is twice it. At Flower's defaults (c = 8, Q = 2^22, W = 1000) that is 7.9e-3: the quantum 2c/Q = 3.8e-6 of a
    parameter becomes 2cW/(Q n_k) = 3.8e-3 of a client with one example, the precision max_weight costs (Flower's
    docstring: "Too large max_weight may compromise the precision of the quantization").
    """
    for name, value in (("clipping_range", clipping_range), ("quantization_range", quantization_range),
                        ("max_weight", max_weight), ("spread", spread)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    return 2.0 * (2.0 * clipping_range + spread / 2.0) * max_weight / quantization_range

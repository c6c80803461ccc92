"""fedtheory/conformance/tolerances.py's derived tolerances: the fixed-point one against a direct simulation of
an aggregation in fixed point (round(s n_k Delta_k) summed, divided by s sum n_k), written here in NumPy; the CKKS
one against its parts computed by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from fedtheory.conformance.tolerances import IDENTITY_RTOL, ckks_rtol, fixed_point_rtol


def fixed_point_average(deltas: np.ndarray, sizes: np.ndarray, s: float) -> np.ndarray:
    """The n_k-weighted average of ``deltas`` with each weighted delta rounded to the grid 1/s (no overflow)."""
    return np.rint(s * sizes[:, None] * deltas).sum(axis=0) / (s * sizes.sum())


@pytest.mark.parametrize("s", [1.0, 100.0, 2.0**20])
def test_the_rounding_of_a_fixed_point_average_stays_within_half_the_derived_rtol(s):
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        n, d = rng.integers(1, 7), rng.integers(1, 9)
        sizes = rng.integers(d, 3 * d + 11, size=n).astype(float)  # the kit's instances: n_k >= d
        deltas = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 3)
        exact = sizes @ deltas / sizes.sum()
        worst = max(worst, float(np.linalg.norm(fixed_point_average(deltas, sizes, s) - exact)))
    # one output is off by at most 1/(2s); the rtol allows two outputs compared with each other
    assert worst <= (fixed_point_rtol(s) - IDENTITY_RTOL) / 2
    assert worst > (fixed_point_rtol(s) - IDENTITY_RTOL) / 40  # the bound is not vacuous: same order as measured


def test_the_bound_is_attained_by_one_client_with_n_equal_to_d_in_one_dimension():
    s = 100.0
    sizes, deltas = np.array([1.0]), np.array([[0.5 / s - 1e-12]])  # s n Delta just under a half: rounds to 0
    err = abs(fixed_point_average(deltas, sizes, s)[0] - deltas[0, 0])
    assert err == pytest.approx(1 / (2 * s), rel=1e-6)


@pytest.mark.parametrize("bad", [0, -1.0, "100", None])
def test_a_scaling_factor_that_is_not_positive_is_refused(bad):
    with pytest.raises(ValueError, match="scaling_factor"):
        fixed_point_rtol(bad)


#: The 40-bit prime NVFlare's HEBuilder parameters (N = 8192, [60, 40, 40]) rescale by in TenSEAL: the second prime
#: below 2^40 congruent to 1 mod 2N (SEAL's CoeffModulus::Create), whose scale reset was measured on NVFlare's HE
#: FedAvg as a relative 6.7e-7 (docs/frameworks.md)
Q = 1099510890497


def test_the_prime_is_seals_second_40_bit_ntt_prime():
    assert Q % (2 * 8192) == 1 and all(pow(a, Q - 1, Q) == 1 for a in (2, 3, 5, 7, 11, 13))
    between = [q for q in range(Q + 2 * 8192, 2 ** 40, 2 * 8192) if all(pow(a, q - 1, q) == 1 for a in (2, 3, 5, 7))]
    assert len(between) == 1  # exactly one larger such prime below 2^40: Q is the second


def test_hebuilders_parameters_give_the_scale_reset_plus_the_noise_bound():
    """rtol(d) = |2^40/Q - 1| + c sqrt(d): the two parts recovered from d and 4d, each against its hand value
    (Cheon et al. 2017, Lemmas 1-2 with N = 8192, sigma = 3.2, h = N: B_clean + B_scale + encoding rounding
    = 296582.1 + 1737.8 + 419430.4 + 37994.0 + 156.8 = 755901.0)."""
    small, large = ckks_rtol(8192, (60, 40, 40), 40, max_dim=50), ckks_rtol(8192, (60, 40, 40), 40, max_dim=200)
    noise = large - small
    assert noise == pytest.approx(2 * math.sqrt(50) * 755901.0 / 2 ** 40, rel=1e-6)
    assert small - noise == pytest.approx(2 ** 40 / Q - 1, rel=1e-6)


@pytest.mark.parametrize("kw, name", [({"poly_modulus_degree": 1000}, "poly_modulus_degree"),
                                      ({"coeff_mod_bit_sizes": (60, 30, 30)}, "coeff_mod_bit_sizes"),
                                      ({"max_dim": 0}, "max_dim")])
def test_bad_parameters_are_named(kw, name):
    args = {"poly_modulus_degree": 8192, "coeff_mod_bit_sizes": (60, 40, 40), "scale_bits": 40, **kw}
    with pytest.raises(ValueError, match=name):
        ckks_rtol(**args)

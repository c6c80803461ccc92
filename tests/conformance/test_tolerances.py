"""fedtheory/conformance/tolerances.py's derived tolerances."""
from __future__ import annotations

import math

import pytest

from fedtheory.conformance.tolerances import ckks_rtol

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

"""Corollary 21's gap bound (fedred.dane.gap_bound, fedred.dane.delta_scaling): the inequalities behind their
non_discriminating reasons,
checked on hypothesis-drawn clients with commuting (diagonal) Hessians, with DANE's recursion written out here."""
from __future__ import annotations

import math

import hypothesis
import numpy as np
from hypothesis import strategies as st


@hypothesis.given(n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 2**31 - 1),
                  lam=st.floats(1e-3, 1e3), R=st.integers(1, 200))
@hypothesis.settings(max_examples=200, deadline=None)
def test_commuting_clients_never_pass_a_quarter_of_the_gap_bound(n, d, seed, lam, R):
    rng = np.random.default_rng(seed)
    a_i = np.exp(rng.uniform(-4, 4, size=(n, d)))        # client i's curvature along coordinate j
    w = rng.dirichlet(np.ones(n))
    a = w @ a_i                                           # Abar's eigenvalues
    # exact DANE: (A_i + lam)(x_i - x^r) = -Abar (x^r - x*), x^{r+1} = sum_i w_i x_i, coordinate by coordinate
    m = 1.0 - a * (w @ (1.0 / (a_i + lam)))
    hypothesis.assume(np.all(m >= 0))                     # the reason's class: every direction contracts by m >= 0
    e0 = rng.standard_normal(d)
    mu, D2 = float(a.min()), float(e0 @ e0)
    gap = 0.5 * float(np.sum(a * (m**R * e0) ** 2))
    bound = mu * D2 / (2.0 * math.expm1(R * math.log1p(mu / lam)))
    assert gap <= 0.25 * bound * (1 + 1e-9)
    # the sharper form behind fedred.dane.delta_scaling's reason: each direction's share is at most v^(-R) of
    # the bound (a u^(-2R) (v^R - 1)/mu <= (u^R - 1) u^(-2R) <= u^(-R) <= v^(-R)), v = 1 + mu/lam
    assert gap <= bound * (1 + mu / lam) ** (-R) * (1 + 1e-9)

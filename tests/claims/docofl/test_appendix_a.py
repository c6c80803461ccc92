"""The instance builders of fedtheory/claims/docofl/appendix_a.py: App. A's hinge function and the separable
quadratic whose coordinates are independent scalar paths."""
from __future__ import annotations

import math

import numpy as np

from fedtheory.claims.docofl import HingeProblem, separable_quadratic


def test_hinge_problem_gradients_and_optimum():
    p = HingeProblem(3)
    np.testing.assert_array_equal(p.grads(np.array([[1.0, 2.0, 0.0]])), [[0.0, 2.0, -1.0]])
    assert p.gap(np.ones(3)) == 0.0


def test_separable_paths_have_per_path_noise():
    p = separable_quadratic(2.0, 5.0, 1000, sigma2_per_path=0.5)
    g = p.stochastic_grads(np.full((1, 1000), 5.0), np.random.default_rng(0))
    assert abs(np.var(g) - 0.5) < 0.5 * 5 * math.sqrt(2 / 1000)

"""OFedIQ, Algorithms 1-2 against their printed updates (fedtheory/claims/ofediq/algorithms.py) and Table I
(fedtheory/claims/ofediq/table1.py) on their default points; the printed references are sensitive to a misreading."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms.ofediq import OFedIQ, OnlineDraw
from fedtheory.claims import REGISTRY
from fedtheory.claims.ofediq import per_sample_grads, printed_quantizer
from fedtheory.compressors.sb_quantizer import SBQuantizer
from fedtheory.problems.online import online_ridge


@pytest.mark.parametrize("claim_id", ["ofediq.statements.algorithm1", "ofediq.statements.algorithm2",
                                      "ofediq.statements.table1"])
def test_ofediq_statement_claims_hold(claim_id) -> None:
    claim = REGISTRY[claim_id]
    for inst in claim.instances(False):
        ev = claim.check(inst)
        assert ev.holds, (ev.instance, ev.details)


def test_printed_quantizer_agrees_with_the_library_one_and_is_unbiased() -> None:
    rng = np.random.default_rng(0)
    u = rng.standard_normal(11)
    U = rng.random(11)
    q = SBQuantizer(s=3, b=4)
    assert np.allclose(printed_quantizer(u, U, 3, 4), q.apply(u[None, :], U[None, :])[0], rtol=0, atol=1e-14)
    draws = np.array([printed_quantizer(u, rng.random(11), 3, 4) for _ in range(4000)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - u) <= 6 * se + 1e-12)


def test_printed_algorithm2_reference_detects_dividing_by_participants() -> None:
    """Mutation: a server that divides by |S_t| instead of K (a common misreading of eq. (9)) is caught."""
    problem = online_ridge(4, 4, 3, heterogeneity=1.0, seed=0)
    alg = OFedIQ(eta=0.1, p=0.5)
    state = alg.init(problem, np.zeros(3))
    mask = np.array([True, False, False, False])
    new, _ = alg.round_given(problem, state, OnlineDraw(mask, None))
    g = per_sample_grads(problem, 0, np.zeros((4, 3)))
    by_K = -0.1 / 4 * (g[mask] / 0.5).sum(axis=0)
    by_S = -0.1 / 1 * (g[mask] / 0.5).sum(axis=0)
    assert np.allclose(new.x, by_K) and not np.allclose(new.x, by_S)

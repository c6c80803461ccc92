"""The claims that cover the remaining numbered statements of FedElasticNet, OFedIQ and EFL
(fedtheory/claims/*_statements.py): their verdicts, the independence of their expected sides, and the
inventories' proof chains and summaries."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.papers import fedelasticnet as fen_paper


def test_fedelasticnet_inventory_has_where_and_summary_everywhere() -> None:
    for s in fen_paper.PAPER.statements:
        assert s.where and s.summary, s.label


def test_fedelasticnet_proof_chain_of_theorem_31_reaches_lemma_b5() -> None:
    chain = fen_paper.PAPER.proof_chain("Theorem 3.1")
    assert chain.index("Lemma B.2") < chain.index("Lemma B.3") < chain.index("Lemma B.4")
    assert "Lemma B.5" in chain and "Theorem B.6" in chain


# ----------------------------------------------------------------------------------------------- OFedIQ
from fedtheory.algorithms.online import OFedIQ, OnlineDraw  # noqa: E402
from fedtheory.claims import ofediq_statements as oiq  # noqa: E402
from fedtheory.compressors.sb_quantizer import SBQuantizer  # noqa: E402
from fedtheory.papers import ofediq as oiq_paper  # noqa: E402


def test_ofediq_inventory_has_where_and_summary_everywhere() -> None:
    for s in oiq_paper.PAPER.statements:
        assert s.where and s.summary, s.label


@pytest.mark.parametrize("claim", [oiq.check_algorithm1, oiq.check_algorithm2, oiq.check_table1])
def test_ofediq_statement_claims_hold(claim) -> None:
    for inst in claim.instances(False):
        ev = claim.check(inst)
        assert ev.holds, (ev.instance, ev.details)


def test_printed_quantizer_agrees_with_the_library_one_and_is_unbiased() -> None:
    rng = np.random.default_rng(0)
    u = rng.standard_normal(11)
    U = rng.random(11)
    q = SBQuantizer(s=3, b=4)
    assert np.allclose(oiq.printed_quantizer(u, U, 3, 4), q.apply(u[None, :], U[None, :])[0], rtol=0, atol=1e-14)
    draws = np.array([oiq.printed_quantizer(u, rng.random(11), 3, 4) for _ in range(4000)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - u) <= 6 * se + 1e-12)


def test_printed_algorithm2_reference_detects_dividing_by_participants() -> None:
    """Mutation: a server that divides by |S_t| instead of K (a common misreading of eq. (9)) is caught."""
    problem = oiq.online_ridge(4, 4, 3, heterogeneity=1.0, seed=0)
    alg = OFedIQ(eta=0.1, p=0.5)
    state = alg.init(problem, np.zeros(3))
    mask = np.array([True, False, False, False])
    new, _ = alg.round_given(problem, state, OnlineDraw(mask, None))
    g = oiq._per_sample_grads(problem, 0, np.zeros((4, 3)))
    by_K = -0.1 / 4 * (g[mask] / 0.5).sum(axis=0)
    by_S = -0.1 / 1 * (g[mask] / 0.5).sum(axis=0)
    assert np.allclose(new.x, by_K) and not np.allclose(new.x, by_S)


def test_table1_alpha_matches_corollary_for_the_papers_example() -> None:
    ev = oiq.check_table1.check(dict(K=1000, D=34826, b=1134, s=17, L=1, p=0.5151, T=10 ** 8, w2=1.0, sigma2=1.0,
                                     beta=1.0))
    assert ev.holds and ev.details["proof_variance_inequality"]


# ----------------------------------------------------------------------------------------------- EFL
from fedtheory.papers import efl as efl_paper  # noqa: E402


def test_efl_inventory_has_where_and_summary_everywhere() -> None:
    for s in efl_paper.PAPER.statements:
        assert s.where and s.summary, s.label

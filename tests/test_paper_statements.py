"""The claims that cover the remaining numbered statements of FedElasticNet, OFedIQ and EFL
(fedtheory/claims/*_statements.py): their verdicts, the independence of their expected sides, and the
inventories' proof chains and summaries."""
from __future__ import annotations

import numpy as np
import pytest

from fedtheory.claims import fedelasticnet_statements as fen
from fedtheory.papers import fedelasticnet as fen_paper


def _run(claim, inst):
    return claim.check(inst)


def test_fedelasticnet_inventory_has_where_and_summary_everywhere() -> None:
    for s in fen_paper.PAPER.statements:
        assert s.where and s.summary, s.label


def test_fedelasticnet_proof_chain_of_theorem_31_reaches_lemma_b5() -> None:
    chain = fen_paper.PAPER.proof_chain("Theorem 3.1")
    assert chain.index("Lemma B.2") < chain.index("Lemma B.3") < chain.index("Lemma B.4")
    assert "Lemma B.5" in chain and "Theorem B.6" in chain


@pytest.mark.parametrize("claim", [fen.check_lemma_b5, fen.check_lemma_b5_printed])
def test_lemma_b5_holds_on_default_points(claim) -> None:
    for inst in claim.instances(False):
        ev = _run(claim, inst)
        assert ev.holds, ev


def test_lemma_b5_margin_is_negative_and_not_vacuous() -> None:
    """The lemma holds with a finite, non-zero tightness (its right side is not infinitely loose)."""
    problem = fen.spec_problem(m=5, d=4, seed=0)
    alg = fen._alg3(27.0 * problem.certificate.L, 0.3, "kkt")
    res = fen.lemma_b5_margins(problem, alg, 30)
    assert res["worst"] < 0 and res["tightness"] > 0


def test_algorithm2_matches_printed_round() -> None:
    for inst in fen.check_algorithm2.instances(False):
        ev = _run(fen.check_algorithm2, inst)
        assert ev.holds and ev.measured <= 1e-12, ev


def test_printed_algorithm2_detects_a_changed_server_step() -> None:
    """The printed reference is sensitive: a different eta_g moves theta^t."""
    problem = fen.spec_problem(m=4, d=3, seed=0)
    S = np.array([0, 2])
    z, C = np.zeros(3), np.zeros((4, 3))
    a = fen.printed_algorithm2_round(problem.A, problem.b, z, z, C, S, B=3, eta_l=0.1, eta_g=1.0, lam1=0.1,
                                     lam2=0.0, eps=0.0)[0]
    b = fen.printed_algorithm2_round(problem.A, problem.b, z, z, C, S, B=3, eta_l=0.1, eta_g=0.5, lam1=0.1,
                                     lam2=0.0, eps=0.0)[0]
    assert np.allclose(b, 0.5 * a) and not np.allclose(a, b)


def test_table1_shape_holds() -> None:
    for inst in fen.check_table1.instances(False):
        ev = _run(fen.check_table1, inst)
        assert ev.holds, ev.details


def test_binned_entropy_of_a_constant_is_zero_and_of_two_bins_is_one_bit() -> None:
    assert fen.binned_entropy_bits(np.zeros(10)) == 0.0
    assert fen.binned_entropy_bits(np.array([0.0, 0.5] * 5)) == pytest.approx(1.0)

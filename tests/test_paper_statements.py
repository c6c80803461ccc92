"""The inventories of FedElasticNet, OFedIQ and EFL (fedtheory/papers/): where and summary for every statement,
and their proof chains. The claims that check the statements are tested in tests/claims/<paper>/."""
from __future__ import annotations

from fedtheory.papers import efl as efl_paper
from fedtheory.papers import fedelasticnet as fen_paper
from fedtheory.papers import ofediq as oiq_paper


def test_fedelasticnet_inventory_has_where_and_summary_everywhere() -> None:
    for s in fen_paper.PAPER.statements:
        assert s.where and s.summary, s.label


def test_fedelasticnet_proof_chain_of_theorem_31_reaches_lemma_b5() -> None:
    chain = fen_paper.PAPER.proof_chain("Theorem 3.1")
    assert chain.index("Lemma B.2") < chain.index("Lemma B.3") < chain.index("Lemma B.4")
    assert "Lemma B.5" in chain and "Theorem B.6" in chain


def test_ofediq_inventory_has_where_and_summary_everywhere() -> None:
    for s in oiq_paper.PAPER.statements:
        assert s.where and s.summary, s.label


def test_efl_inventory_has_where_and_summary_everywhere() -> None:
    for s in efl_paper.PAPER.statements:
        assert s.where and s.summary, s.label

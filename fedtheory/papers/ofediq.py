"""Inventory of Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning" (IEEE TPAMI 2023).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

PAPER = Paper(
    key="ofediq",
    citation='Kwon, Park & Hong, "Tighter Regret Analysis and Optimization of Online Federated Learning" (IEEE TPAMI 2023)',
    statements=(
    Statement("Figure 1", "", ""),
    Statement("Algorithm 3", "", ""),
    Statement("Algorithm 1", "", ""),
    Statement("Algorithm 2", "", ""),
    Statement("Definition 1", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Assumption 1", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 2", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 1", "§4.3.1", "regret bound of FedOGD / OFedAvg", depends_on=("Lemma 2",)),
    Statement("Assumption 3", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 2", "§4.3.2", "regret bound of OFedIQ (L = 1 and L > 1)",
              depends_on=("Lemma 2", "Lemma 3")),
    Statement("Definition 2", "", ""),
    Statement("Corollary 1", "", ""),
    Statement("Table 1", "", ""),
    Statement("Lemma 1", "", ""),
    Statement("Lemma 2", "", ""),
    Statement("Lemma 3", "§4.3.2", "local drift over a period of L steps (used for L > 1)",
              depends_on=("Lemma 1", "Lemma 4")),
    Statement("Lemma 4", "", ""),
    Statement("Figure 2", "", ""),
    Statement("Figure 3", "", ""),
    Statement("Figure 4", "", ""),
    ),
)

"""Inventory of Jiang, Rodomanov & Stich, "Federated Optimization with Doubly Regularized Drift Correction" (ICML 2024).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

PAPER = Paper(
    key="fedred",
    citation='Jiang, Rodomanov & Stich, "Federated Optimization with Doubly Regularized Drift Correction" (ICML 2024)',
    statements=(
    Statement("Table 1", "", ""),
    Statement("Algorithm 1", "", ""),
    Statement("Definition 1", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Definition 2", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Theorem 1", "", ""),
    Statement("Corollary 2", "", ""),
    Statement("Theorem 3", "", ""),
    Statement("Theorem 4", "", ""),
    Statement("Corollary 5", "", ""),
    Statement("Theorem 6", "", ""),
    Statement("Algorithm 3", "", ""),
    Statement("Assumption 1", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Theorem 8", "", ""),
    Statement("Theorem 9", "", ""),
    Statement("Figure 1", "", ""),
    Statement("Figure 2", "", ""),
    Statement("Definition 3", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Definition 4", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Lemma 10", "", ""),
    Statement("Lemma 11", "", ""),
    Statement("Lemma 12", "", ""),
    Statement("Lemma 13", "", ""),
    Statement("Lemma 14", "", ""),
    Statement("Lemma 15", "", ""),
    Statement("Lemma 16", "", ""),
    Statement("Lemma 17", "", ""),
    Statement("Remark 18", "", ""),
    Statement("Lemma 19", "", ""),
    Statement("Lemma 20", "", ""),
    Statement("Corollary 21", "", ""),
    Statement("Lemma 22", "", ""),
    Statement("Theorem 23", "", ""),
    Statement("Theorem 24", "", ""),
    Statement("Corollary 25", "", ""),
    Statement("Lemma 26", "", ""),
    Statement("Lemma 27", "", ""),
    Statement("Lemma 28", "", ""),
    Statement("Theorem 29", "", ""),
    Statement("Corollary 30", "", ""),
    Statement("Lemma 31", "", ""),
    Statement("Corollary 32", "", ""),
    Statement("Algorithm 2", "", ""),
    Statement("Theorem 33", "", ""),
    Statement("Theorem 34", "", ""),
    Statement("Lemma 35", "", ""),
    Statement("Theorem 36", "", ""),
    Statement("Theorem 37", "", ""),
    ),
)

"""Inventory of Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated Learning via Elastic Net" (FedElasticNet).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

PAPER = Paper(
    key="fedelasticnet",
    citation='Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated Learning via Elastic Net" (FedElasticNet)',
    statements=(
    Statement("Table 1", "", ""),
    Statement("Algorithm 1", "", ""),
    Statement("Algorithm 2", "", ""),
    Statement("Algorithm 3", "", ""),
    Statement("Theorem 3.1", "", ""),
    Statement("Table 2", "", ""),
    Statement("Table 3", "", ""),
    Statement("Table 4", "", ""),
    Statement("Figure 1", "", ""),
    Statement("Figure 2", "", ""),
    Statement("Table 5", "", ""),
    Statement("Figure 3", "", ""),
    Statement("Figure 4", "", ""),
    Statement("Figure 5", "", ""),
    Statement("Figure 6", "", ""),
    Statement("Figure 7", "", ""),
    Statement("Figure 8", "", ""),
    Statement("Figure 9", "", ""),
    Statement("Definition B.0.1", "", "",
              not_checkable="a definition: it fixes a term or a class, and asserts nothing to compare"),
    Statement("Theorem B.1", "", ""),
    Statement("Lemma B.2", "", ""),
    Statement("Lemma B.3", "", ""),
    Statement("Lemma B.4", "", ""),
    Statement("Lemma B.5", "", ""),
    Statement("Theorem B.6", "", ""),
    ),
)

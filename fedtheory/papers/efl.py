"""Inventory of Ma, Lu, Lu, Li, Yi & Cui, "Towards Heterogeneous Clients with Elastic Federated Learning".

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

PAPER = Paper(
    key="efl",
    citation='Ma, Lu, Lu, Li, Yi & Cui, "Towards Heterogeneous Clients with Elastic Federated Learning"',
    statements=(
    Statement("Algorithm 1", "", ""),
    Statement("Algorithm 2", "", ""),
    Statement("Table 1", "", ""),
    Statement("Assumption 1", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 2", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 3", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 4", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 5", "", ""),
    Statement("Theorem 1", "", ""),
    Statement("Figure 1", "", ""),
    Statement("Corollary 1", "", ""),
    Statement("Table 2", "", ""),
    Statement("Theorem 2", "", ""),
    Statement("Figure 2", "", ""),
    Statement("Figure 3", "", ""),
    ),
)

"""Inventory of Dorfman, Vargaftik, Ben-Itzhak & Levy, "DoCoFL: Downlink Compression for Cross-Device Federated Learning" (ICML 2023).

Every numbered statement, algorithm and experiment of the paper, main text and appendices (see
:mod:`fedtheory.papers.inventory` for the fields). Labels are as the paper prints them.
"""
from __future__ import annotations

from .inventory import Paper, Statement

__all__ = ["PAPER"]

PAPER = Paper(
    key="docofl",
    citation='Dorfman, Vargaftik, Ben-Itzhak & Levy, "DoCoFL: Downlink Compression for Cross-Device Federated Learning" (ICML 2023)',
    statements=(
    Statement("Table 1", "", ""),
    Statement("Assumption 3.1", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Assumption 3.2", "", "",
              not_checkable="an assumption of the theorems: it delimits the class the claims draw their instances from, and asserts nothing by itself"),
    Statement("Figure 1", "", ""),
    Statement("Algorithm 1", "", ""),
    Statement("Algorithm 2", "", ""),
    Statement("Assumption 3.3", "", ""),
    Statement("Theorem 3.4", "", ""),
    Statement("Corollary 3.5", "", ""),
    Statement("Corollary 3.6", "", ""),
    Statement("Corollary 3.7", "", ""),
    Statement("Figure 2", "", ""),
    Statement("Table 2", "", ""),
    Statement("Table 3", "", ""),
    Statement("Figure 3", "", ""),
    Statement("Figure 4", "", ""),
    Statement("Algorithm 3", "", ""),
    Statement("Theorem 1", "", ""),
    Statement("Lemma C.1", "", ""),
    Statement("Lemma C.2", "", ""),
    Statement("Lemma C.3", "", ""),
    Statement("Lemma C.4", "", ""),
    Statement("Lemma C.5", "", ""),
    Statement("Lemma C.6", "", ""),
    Statement("Lemma C.7", "", ""),
    Statement("Lemma C.8", "", ""),
    Statement("Lemma C.9", "", ""),
    Statement("Lemma C.10", "", ""),
    Statement("Algorithm 4", "", ""),
    Statement("Figure 5", "", ""),
    Statement("Figure 6", "", ""),
    Statement("Figure 7", "", ""),
    Statement("Table 4", "", ""),
    Statement("Figure 8", "", ""),
    Statement("Figure 9", "", ""),
    Statement("Figure 10", "", ""),
    Statement("Figure 11", "", ""),
    Statement("Figure 12", "", ""),
    Statement("Algorithm 5", "", ""),
    Statement("Figure 13", "", ""),
    Statement("Figure 14", "", ""),
    ),
)

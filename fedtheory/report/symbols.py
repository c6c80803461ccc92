"""Statements as a reader expects to see them: ``||x - x*||^2 <= (1 - mu/L) ...`` becomes ``‖x - x*‖² ≤ (1 - μ/L)``.

Claims write their statements in ASCII (they are also matched by tests and read in terminals); reports for reading
(claims.md, the HTML site) show the mathematical symbols.
"""
from __future__ import annotations

import re

__all__ = ["pretty_maths"]

_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eps": "ε", "zeta": "ζ",
          "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "lam": "λ", "mu": "μ", "rho": "ρ", "sigma": "σ",
          "tau": "τ", "omega": "ω", "Delta": "Δ", "Omega": "Ω", "Theta": "Θ"}
# A Greek name stands alone or before an index (delta_A, mu_f), never inside a longer word (mult, beta-binomial
# stays beta-binomial only where the word continues with a letter).
_GREEK_RE = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(_GREEK, key=len, reverse=True)) + r")(?![A-Za-z])")
_OPERATORS = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("||", "‖"), ("^2", "²"), ("sqrt", "√"), ("->", "→"),
              ("+-", "±"))


def pretty_maths(text: str) -> str:
    """``text`` with ASCII maths replaced by symbols (norms, comparisons, squares, Greek letters)."""
    for ascii_form, symbol in _OPERATORS:
        text = text.replace(ascii_form, symbol)
    return _GREEK_RE.sub(lambda m: _GREEK[m.group(1)], text)

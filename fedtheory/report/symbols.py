"""The ledger's plain-text maths as HTML with proper symbols: ``||x||^2 <= mu`` becomes ‖x‖² ≤ μ.

Claim statements and the papers' inventories are written in ASCII so that they read in a terminal and in
``claims.md``; the HTML report (:mod:`fedtheory.report.html`) shows them with the symbols the papers print.
The rewriting is conservative: Greek letters are replaced only as whole words (``beta`` but not the ``eta`` in
it; ``delta_A`` becomes δ_A), sub- and superscripts only when short, so identifiers such as ``sign_at_zero``
are left alone.
"""
from __future__ import annotations

import html
import re

__all__ = ["pretty", "pretty_inline", "symbols"]

_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "Gamma": "Γ", "delta": "δ", "Delta": "Δ", "epsilon": "ε",
          "eps": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "Theta": "Θ", "kappa": "κ", "lambda": "λ",
          "lam": "λ", "Lambda": "Λ", "mu": "μ", "rho": "ρ", "sigma": "σ", "Sigma": "Σ", "tau": "τ", "phi": "φ",
          "Phi": "Φ", "psi": "ψ", "omega": "ω", "Omega": "Ω"}
# Longest names first, so that "epsilon" is not read as "eps" + "ilon".
_GREEK_WORD = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(_GREEK, key=len, reverse=True)) + r")(?![A-Za-z])")
_OPERATORS = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("->", "→"), ("+/-", "±"), ("+-", "±"))
_WORDS = ((re.compile(r"(?<![A-Za-z])sqrt(?=\()|(?<![A-Za-z])sqrt (?=[A-Za-zα-ω(])"), "√"),
          (re.compile(r"(?<![A-Za-z])grad(?![A-Za-z])"), "∇"),
          (re.compile(r"(?<![A-Za-z])sum_"), "Σ_"), (re.compile(r"(?<![A-Za-z])infty(?![A-Za-z])"), "∞"))
_NORM = re.compile(r"\|\|(.+?)\|\|")
_ACCENTS = ((re.compile(r"(?<![A-Za-z])([A-Za-z])bar(?![A-Za-z])"), "\\1\u0304"),  # vbar -> v̄
            (re.compile(r"(?<=[A-Za-z])~(?!\d)"), "\u0303"),  # x~ -> x̃
            (re.compile(r"(?<![A-Za-z])([A-Za-z])_hat(?![A-Za-z])"), "\\1\u0302"),  # w_hat -> ŵ
            (re.compile(r"(?<=[A-Za-z])\^(?=[\s,)]|$)"), "\u0302"),  # T^ -> T̂
            (re.compile(r"(?<= )-(?= )"), "\u2212"))  # a - b -> a − b (the minus sign)
_LETTER = "A-Za-z0-9α-ωΑ-Ω"
_SUP = (re.compile(r"\^\{([^{}]{1,30})\}"), re.compile(r"\^\(([^()]{1,30})\)"),
        re.compile(rf"\^(-?[{_LETTER}*′]{{1,4}})(?![{_LETTER}])"))
_SUB = (re.compile(r"_\{([^{}]{1,30})\}"), re.compile(rf"(?<=[{_LETTER})*>])_\(([^()]{{1,30}})\)"),
        re.compile(rf"(?<![\w])([{_LETTER}∇][\u0302-\u0304]?[{_LETTER}]?[′*]?|\))_([{_LETTER}*]{{1,4}})(?![\w])"))


def symbols(text: str) -> str:
    """Greek letters, norms and operators only, as plain text (figure labels: ``delta_A/mu`` is δ_A/μ)."""
    for ascii_op, symbol in _OPERATORS:
        text = text.replace(ascii_op, symbol)
    text = _NORM.sub(r"‖\1‖", text)
    return _GREEK_WORD.sub(lambda m: _GREEK[m.group(1)], text)


def pretty_inline(text: str) -> str:
    """:func:`symbols`, HTML-escaped: for instance descriptions and parameter names, where sub- and
    superscripts would misread ``n_clients=8``."""
    return html.escape(symbols(text), quote=False)


def pretty(text: str) -> str:
    """``text`` (plain-text maths) as HTML: escaped, with Greek letters, ‖·‖, ≤ ≥ ≠ →, √, ∇, Σ, accents, and
    short sub- and superscripts (``x^{r+1}``, ``S^2``, ``x_{i,r}``, ``L_k``) as ``<sup>``/``<sub>``."""
    out = pretty_inline(text)
    for pattern, symbol in _WORDS:
        out = pattern.sub(symbol, out)
    for pattern, repl in _ACCENTS:
        out = pattern.sub(repl, out)
    out = _SUP[0].sub(r"<sup>\1</sup>", out)
    out = _SUP[1].sub(r"<sup>\1</sup>", out)
    out = _SUP[2].sub(r"<sup>\1</sup>", out)
    out = _SUB[0].sub(r"<sub>\1</sub>", out)
    out = _SUB[1].sub(r"<sub>\1</sub>", out)
    return _SUB[2].sub(r"\1<sub>\2</sub>", out)

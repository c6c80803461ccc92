"""The inventory of a paper: every numbered statement, experiment and algorithm it prints, with its proof chain.

Each paper module (``fedtheory/papers/<key>.py``) declares one :class:`Paper` listing every numbered Theorem,
Lemma, Corollary, Proposition, Definition, Assumption, every Remark or equation that asserts a quantitative
bound, every Algorithm, and every experimental Table and Figure, in the main text and in every appendix. A
statement is *covered* in exactly one of three ways (:mod:`fedtheory.coverage.statements` decides which from the
claims ledger, so the table cannot drift from what is checked):

* a claim of the ledger cites it (``cites=("Lemma 10",)``): checked, or recorded false when that claim
  expects the paper's statement to be violated;
* a table or figure is reproduced in a notebook or docs section named by ``reproduced_in``;
* ``not_checkable`` gives the reason it cannot be checked numerically (a definition, an O(.) with unspecified
  constants, an existence statement, data that is not available offline).

A statement with none of these is *open*: checkable, and not yet checked. The coverage table says so.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The kinds of numbered statement a paper prints and a claim can cite.
STATEMENT_KINDS = ("Theorem", "Lemma", "Corollary", "Proposition", "Remark", "Definition", "Assumption",
                   "Algorithm", "Table", "Figure", "eq.")

#: How a statement's own claims may leave a path of its algorithm unrun (see :attr:`Statement.paths`).
PATH_KINDS = ("outside", "unrun")

__all__ = ["PATH_KINDS", "STATEMENT_KINDS", "Statement", "Paper"]


@dataclass(frozen=True)
class Statement:
    """One numbered statement of a paper.

    Attributes
    ----------
    label:
        As printed: "Theorem 3.1", "Lemma B.4", "Corollary 21", "eq. (15)", "Algorithm 2", "Table 1",
        "Figure 4". The first word is the kind (one of :data:`STATEMENT_KINDS`).
    where:
        Where it is printed: section or appendix, and page when known ("§3.2, p. 5", "App. B.3").
    summary:
        What it asserts, in one line of plain text (the maths in words or ASCII).
    depends_on:
        The statements (labels of the same paper) its proof uses, in the order the proof uses them: the proof
        chain that ``fedtheory verify --explain`` walks when the statement fails.
    not_checkable:
        Why it cannot be checked numerically; empty when it can.
    reproduced_in:
        For experiments (tables, figures): the notebook or docs section of this repository reproducing it,
        when no claim does.
    reconstruction:
        When the printed formula is not recoverable (lost in the paper's text, or stated only up to constants):
        the form fedtheory reconstructs and checks instead. The claims checking it are marked derived.
    stand_in:
        For an experiment measured on a stand-in (its claims are exploratory): the stand-in, in one line (what
        runs in place of the paper's data and models). Whether it reproduces the paper's shape is not written
        here: it is the verdict of the claims' shape tests (:func:`fedtheory.coverage.statements.shape_verdicts`).
    paths:
        For a statement about an algorithm's runs: the options of the algorithm that the statement's own claims
        do *not* execute, each with why. Keys are ``"<algorithm>:<option>=<value>"`` as
        ``benchmarks/mutation/coverage.py`` names them (``"docofl:naive=True"``, ``"fedavg:participation=Full"``);
        values start with ``"outside: "`` (the statement's hypotheses exclude that path: a slip confined to it
        cannot falsify the statement) or ``"unrun: "`` (admitted by the hypotheses, not run by these claims; the
        reason says why and what else checks it). ``coverage.py --check-paths`` fails on a not-run option that
        is undeclared, and on a declared one that the claims do run; docs/verification-power.md lists the
        ``unrun`` ones.
    """

    label: str
    where: str
    summary: str
    depends_on: tuple[str, ...] = ()
    not_checkable: str = ""
    reproduced_in: str = ""
    reconstruction: str = ""
    stand_in: str = ""
    paths: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        kind, _, number = self.label.partition(" ")
        if kind not in STATEMENT_KINDS or not number:
            raise ValueError(f"statement label {self.label!r}: expected '<Kind> <number>' with Kind one of "
                             f"{STATEMENT_KINDS}")
        if isinstance(self.depends_on, str):
            raise TypeError(f"{self.label}: depends_on must be a tuple of labels, not a string")
        if self.not_checkable and self.reproduced_in:
            raise ValueError(f"{self.label}: give not_checkable or reproduced_in, not both")
        if self.not_checkable and (self.reconstruction or self.stand_in):
            raise ValueError(f"{self.label}: a statement that is not checkable has no reconstruction or stand-in")
        for key, why in self.paths.items():
            algorithm, _, option = key.partition(":")
            if not algorithm or "=" not in option:
                raise ValueError(f"{self.label}: paths key {key!r}: expected '<algorithm>:<option>=<value>'")
            kind, _, reason = why.partition(": ")
            if kind not in PATH_KINDS or not reason.strip():
                raise ValueError(f"{self.label}: paths[{key!r}] must start with one of "
                                 f"{[k + ': ' for k in PATH_KINDS]} followed by the reason, got {why!r}")

    @property
    def kind(self) -> str:
        return self.label.partition(" ")[0]


@dataclass(frozen=True)
class Paper:
    """A paper's citation and the inventory of its statements (see the module docstring)."""

    key: str
    citation: str
    statements: tuple[Statement, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        labels = [s.label for s in self.statements]
        repeated = sorted({x for x in labels if labels.count(x) > 1})
        if repeated:
            raise ValueError(f"paper {self.key}: statements listed twice: {repeated}")
        known = set(labels)
        for s in self.statements:
            unknown = [d for d in s.depends_on if d not in known]
            if unknown:
                raise ValueError(f"paper {self.key}, {s.label}: depends_on names statements not in the inventory: "
                                 f"{unknown}")

    def statement(self, label: str) -> Statement:
        for s in self.statements:
            if s.label == label:
                return s
        raise KeyError(f"{self.key} has no statement {label!r} in its inventory")

    def proof_chain(self, label: str) -> list[str]:
        """Every statement the proof of ``label`` rests on, transitively, each after its own dependencies
        (depth first, in the order the proofs use them): the first failing one in this order is where the
        chain breaks."""
        order: list[str] = []

        def visit(lbl: str, path: tuple[str, ...]) -> None:
            for dep in self.statement(lbl).depends_on:
                if dep in path:
                    raise ValueError(f"paper {self.key}: circular proof chain {' -> '.join(path + (dep,))}")
                visit(dep, path + (dep,))
                if dep not in order:
                    order.append(dep)

        visit(label, (label,))
        return order

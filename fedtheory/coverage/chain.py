"""Proof chains: when a theorem's claim fails, which lemma of its proof fails first (``verify --explain``).

A paper's inventory records, for each statement, the statements its proof uses (``depends_on``). To explain a
claim, every statement of the chain of each statement it cites is visited in proof order (each after its own
dependencies); the claims citing that statement run on their own default instances and, when they declare the
very same instance space as the explained claim, on the explained claim's instances too, so the lemmas are
checked where the theorem was. Each link shows its statement's status as ``fedtheory coverage`` gives it (both
come from :func:`fedtheory.coverage.statements.statement_coverage`, so they cannot disagree), or FAILS when a claim
citing it fails in this run; the explained claim counts on every link it cites itself. The first link that
FAILS or is false (as printed or under a reading) is where the chain breaks.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..claims import Claim, ClaimResult, evaluate, load_all
from ..papers import PAPER_KEYS, paper
from .statements import StatementCoverage, statement_coverage

__all__ = ["ChainLink", "Explanation", "explain"]


@dataclass(frozen=True)
class ChainLink:
    """One statement of a proof chain: its coverage status (the same record as ``fedtheory coverage``'s) and what
    its claims found in this run."""

    coverage: StatementCoverage
    results: tuple[ClaimResult, ...]
    on_theorem_instances: tuple[str, ...]  # ids of the claims also run on the explained claim's instances

    @property
    def paper(self) -> str:
        return self.coverage.paper

    @property
    def label(self) -> str:
        return self.coverage.statement.label

    @property
    def status(self) -> str:
        """"FAILS" when a claim citing the statement fails in this run, else its coverage status (one of
        :data:`fedtheory.coverage.statements.STATUSES`)."""
        return "FAILS" if any(r.failed for r in self.results) else self.coverage.status

    @property
    def broken(self) -> bool:
        return self.status in ("FAILS", "false", "false-under-reading")


@dataclass(frozen=True)
class Explanation:
    claim: Claim
    result: ClaimResult
    links: tuple[ChainLink, ...]
    #: The coverage status of each statement the claim cites, {(paper, label): status}.
    statuses: dict[tuple[str, str], str]

    @property
    def first_broken(self) -> ChainLink | None:
        return next((link for link in self.links if link.broken), None)

    def render(self) -> str:
        c, r = self.claim, self.result
        cites = ", ".join(f"{x.paper}:{x.label} [{self.statuses.get((x.paper, x.label), 'no inventory')}]"
                          for x in c.citations) or "no numbered statement"
        lines = [f"{c.id} ({cites}): {r.status} on {len(r.evidence)} instance(s)"]
        if r.error:
            lines.append(f"  error: {r.error.splitlines()[0]}")
        for e in r.evidence:
            if not e.holds:
                lines.append(f"  fails on {e.instance}: measured {e.measured:.6g}, bound/closed form {e.theory:.6g}")
        if not self.links:
            lines.append("Its statements have no recorded proof chain (no depends_on in the paper's inventory).")
            return "\n".join(lines)
        lines.append("Proof chain (each statement after the ones its proof uses):")
        for link in self.links:
            ids = ", ".join(f"{x.claim.id} [{x.status}, {len(x.evidence)} inst.]" for x in link.results)
            extra = f"; on the theorem's instances too: {', '.join(link.on_theorem_instances)}" \
                if link.on_theorem_instances else ""
            what = ids + extra if link.results else (link.coverage.note or "checkable, no claim yet")
            lines.append(f"  {link.paper}:{link.label:<14} {link.status:<19} {what}")
        broken = self.first_broken
        if broken is not None:
            failing = [x for x in broken.results if x.failed or x.claim.expected == "violated"]
            lines.append(f"First broken link: {broken.paper}:{broken.label} ({broken.status}; "
                         f"{', '.join(x.claim.id for x in failing)})")
            for x in failing[:1]:
                for e in x.evidence:
                    if not e.holds:
                        lines.append(f"  on {e.instance}: measured {e.measured:.6g}, bound/closed form "
                                     f"{e.theory:.6g}")
                        break
        elif r.failed:
            unchecked = [f"{x.paper}:{x.label}" for x in self.links
                         if x.status in ("open", "not-checkable", "measured")]
            lines.append("Every checked link holds: the failure is in the theorem's own step"
                         + (f" or in an unchecked link ({', '.join(unchecked)})" if unchecked else "") + ".")
        return "\n".join(lines)


def explain(claim_id: str, thorough: bool = False) -> Explanation:
    """Run ``claim_id`` and every claim along the proof chains of the statements it cites."""
    registry = load_all()
    if claim_id not in registry:
        raise ValueError(f"unknown claim id {claim_id!r}; see `fedtheory verify --list`")
    target = registry[claim_id]
    theorem_instances = list(target.instances(thorough))
    result = evaluate(target, thorough, instances=theorem_instances)
    order: list[tuple[str, str]] = []
    for cite in target.citations:
        if cite.paper in PAPER_KEYS:
            for label in paper(cite.paper).proof_chain(cite.label):
                if (cite.paper, label) not in order:
                    order.append((cite.paper, label))
    runs = []
    for key, label in order:
        citing = [c for c in registry.values()
                  if c.id != claim_id and any((x.paper, x.label) == (key, label) for x in c.citations)]
        results, shared = [], []
        if (key, label) in {(x.paper, x.label) for x in target.citations}:
            results.append(result)  # the explained claim cites this link too: its verdict counts here
        for c in citing:
            own = list(c.instances(thorough))
            if c.space is not None and c.space is target.space:
                own += theorem_instances
                shared.append(c.id)
            results.append(evaluate(c, thorough, instances=own))
        runs.append((key, label, tuple(results), tuple(shared)))
    # this run's shape verdicts decide whether a measured statement is reproduced, as in the report
    shapes = {r.claim.id: all(e.holds for e in r.evidence) for r in [result, *(x for run in runs for x in run[2])]
              if r.claim.expected == "exploratory" and r.evidence and not r.error}

    def status_of(key: str, label: str) -> StatementCoverage:
        return statement_coverage(paper(key), label, registry.values(), shapes=shapes)

    links = tuple(ChainLink(status_of(key, label), results, shared) for key, label, results, shared in runs)
    statuses = {(x.paper, x.label): status_of(x.paper, x.label).status
                for x in target.citations if x.paper in PAPER_KEYS}
    return Explanation(target, result, links, statuses)

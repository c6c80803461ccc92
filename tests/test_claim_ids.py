"""Claim ids typed by hand are registered: every claim-id-shaped string in the hand-written docs (the backticked
spans of docs/*.md and docs/tutorials/*.md) and in the tests (their string literals, docstrings included) names a
registered claim, or a conformance property (docs/conformance.md cites those in the same ``<family>.<name>`` form).

A claim id is ``<paper>.<name>[.<name>...]`` with ``<paper>`` a key of :data:`fedtheory.claims.PAPERS`. Forms that
stand for several ids are expanded: ``fedred.rounds.{dane,fedred}_reference`` (braces) and ``efl.theorem1.*`` or
``fedred.appendix.<topic>`` (a prefix: some registered id must start with it). A file name (``fedred.md``,
``efl.html``) is not an id. Python code in the tests (``fedred.dane_contraction`` is an attribute of a module) is
not scanned, only string literals.
"""
from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

from fedtheory.claims import PAPERS, REGISTRY
from fedtheory.conformance import FAMILIES
from fedtheory.conformance.families import properties_of

ROOT = Path(__file__).resolve().parents[1]
#: Pages written by fedtheory itself (checked by the generator's own tests), not by hand: none under docs/ today.
GENERATED: frozenset[str] = frozenset()
#: Strings shaped like an id that name no claim on purpose, with why; an entry that is no longer found fails.
ALLOWED: dict[str, str] = {
    "fedelasticnet.thm3_1.printed_C0_unsquared.with.a.very.long.tail":
        "tests/commands/test_verify_cli.py: an unregistered id longer than the table's column, to test truncation",
}
FILE_SUFFIXES = ("md", "html", "png", "py", "json", "csv", "svg", "txt")
ID = re.compile(r"(?<![\w./<{-])(?:" + "|".join(PAPERS) + r")\.[A-Za-z0-9_{},.*<>]*[A-Za-z0-9_}*>]")


def expand(text: str) -> list[str]:
    """``a.{b,c}_d`` -> ``a.b_d``, ``a.c_d`` (every brace group, in order)."""
    groups = re.split(r"\{([^{}]*)\}", text)
    choices = [[part] if i % 2 == 0 else part.split(",") for i, part in enumerate(groups)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def conformance_ids() -> frozenset[str]:
    """The kit's property ids, and the neural experiments' names (``fedelasticnet.table3``), which share the
    claims' ``<paper>.<name>`` shape."""
    from fedtheory.experiments import experiments

    return (frozenset(p.id for family in FAMILIES for p in properties_of(family)) | frozenset(experiments()))


def unknown(candidate: str, known: frozenset[str]) -> list[str]:
    """The ids ``candidate`` stands for that are neither registered nor a prefix of a registered id."""
    out = []
    for one in expand(candidate):
        one = one.rstrip(".")
        if one.rpartition(".")[2] in FILE_SUFFIXES or one in ALLOWED:
            continue
        prefix = re.split(r"\.(?:\*|<[^>]*>)", one, maxsplit=1)
        if len(prefix) > 1:  # efl.theorem1.*, fedred.appendix.<topic>
            if not any(k.startswith(prefix[0] + ".") for k in known):
                out.append(one)
        elif one not in known:
            out.append(one)
    return out


def hand_written_texts() -> list[tuple[str, str]]:
    """(where, text) for every backticked span of the hand-written pages and every string literal of the tests."""
    texts: list[tuple[str, str]] = []
    for page in sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "docs" / "tutorials").glob("*.md")):
        rel = page.relative_to(ROOT).as_posix()
        if rel not in GENERATED:
            texts += [(rel, span) for span in re.findall(r"`([^`]+)`", page.read_text())]
    for test in sorted((ROOT / "tests").rglob("*.py")):
        rel = test.relative_to(ROOT).as_posix()
        if test.resolve() == Path(__file__).resolve():  # its own examples are unregistered on purpose
            continue
        texts += [(rel, node.value) for node in ast.walk(ast.parse(test.read_text()))
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return texts


def test_every_claim_id_in_docs_and_tests_is_registered():
    known = frozenset(REGISTRY) | conformance_ids()
    found = {(where, one) for where, text in hand_written_texts() for m in ID.finditer(text)
             for one in unknown(m.group(0), known)}
    assert not found, ("claim ids that are not registered (a renamed or removed claim; see `fedtheory verify "
                       "--list`):\n  " + "\n  ".join(f"{w}: {i}" for w, i in sorted(found)))


def test_allowed_ids_are_still_used_and_unregistered():
    texts = [text for _, text in hand_written_texts()]
    stale = sorted(i for i in ALLOWED if i in REGISTRY or not any(i in t for t in texts))
    assert not stale, f"remove from ALLOWED: {stale}"


def test_the_scan_catches_an_unregistered_id_in_each_form():
    known = frozenset(REGISTRY) | conformance_ids()
    some = next(iter(REGISTRY))
    assert unknown(some, known) == [] and unknown(some + "_renamed", known) == [some + "_renamed"]
    assert unknown("fedred.rounds.{dane,nosuch}_reference", known) == ["fedred.rounds.nosuch_reference"]
    assert unknown("efl.theorem1.*", known) == [] and unknown("efl.theorem99.*", known) == ["efl.theorem99.*"]
    assert unknown("fedred.appendix.<topic>", known) == [] and unknown("fedred.nosuch.<topic>", known)
    assert unknown("fedred.md", known) == [] and unknown("fedavg.one_round", known) == []
    assert [m.group(0) for m in ID.finditer("see `docofl.lemma_c7` and fedtheory.claims.docofl.ecuq")] == \
        ["docofl.lemma_c7"]

"""What fedtheory shows a user cites only what a user has: the papers (theorem, equation, section, page) and
this repository's own files, never the implementers' private reading notes ("spec 002 §2.1", "[D]", ...)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What a user reads: the package (claims' references, docstrings, CLI text, the catalogue's records), the
#: docs, the README and the notebooks.
USER_FACING = [ROOT / "fedtheory", ROOT / "docs", ROOT / "README.md", ROOT / "notebooks"]
SUFFIXES = {".py", ".md", ".json", ".ipynb", ".txt"}
#: References to documents a user does not have: the implementers' reading notes of the papers and their tags.
FORBIDDEN = re.compile(
    r"(?i:\bspecs?\s+0\d\d\b"                  # spec 000, specs 002
    r"|\bspec\s*§|§\s*[\d.]+\s+of\s+the\s+spec"  # spec §5.1
    r"|\bspec[- ]writer|\bpaper-spec|\bspec\s+appendix|\bspecs?/|\.\./shared|\bshared/(?:specs|seeds|DESIGN))"
    r"|\[D\]|\[R\]|\[\?\]"                    # the reading notes' tags: upper case (center[r] is code)
    r"|\bissues? \d+\b|\bissue #\d+")           # the project's tracker, which a user does not see
#: "the spec" for the reading notes of a paper; allowed in the files where a "spec" is a catalogue instance's or
#: a benchmark sweep's JSON description, which ships with the package.
THE_SPEC = re.compile(r"\bthe spec\b", re.IGNORECASE)
SPEC_MEANS_JSON = {"fedtheory/bench/__init__.py", "fedtheory/bench/spec.py", "fedtheory/catalogue.py", "fedtheory/commands/bench.py",
                   "fedtheory/commands/problems.py", "fedtheory/catalogue_data/README.md", "docs/bench.md"}


def _files() -> list[Path]:
    out = []
    for root in USER_FACING:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        out += [p for p in paths if p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return out


def _offending(rel: str, line: str) -> bool:
    return bool(FORBIDDEN.search(line)) or (rel not in SPEC_MEANS_JSON and bool(THE_SPEC.search(line)))


def test_the_patterns_catch_the_reading_notes_and_spare_catalogue_specs() -> None:
    for bad in ("spec 000 §5.1", "spec §8.3", "spec 002 §2.1-2.2", "the spec writer's [D] inequality",
                "[R] reconstructed", "see ../shared/specs", "the spec's fallback", "(issue 17)"):
        assert _offending("fedtheory/claims/x.py", bad), bad
    for fine in ("Kim et al., Theorem B.1", "Jiang et al. (2024), Lemma 10, eq. (B.14)", "--spec SWEEP.json",
                 "center[r] - x", "K[r] uniform bins"):
        assert not _offending("fedtheory/claims/x.py", fine), fine
    assert not _offending("fedtheory/catalogue.py", "bumping its version in the spec first")


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_user_facing_text_cites_only_what_a_user_has(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    hits = [f"line {i}: {line.strip()[:120]}" for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
            if _offending(rel, line)]
    assert not hits, f"{path.relative_to(ROOT)} cites documents a user does not have:\n" + "\n".join(hits)

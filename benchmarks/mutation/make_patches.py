"""Regenerate ``patches/*.patch`` from :mod:`catalogue` against the current tree.

Usage: ``python benchmarks/mutation/make_patches.py`` (from the repository root). Each patch is a unified
diff (``patch -p1``) preceded by header lines ``# id:``, ``# family:``, ``# description:``, ``# reference:``.
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from catalogue import MUTANTS  # noqa: E402


def render(m: dict[str, str], root: Path = ROOT) -> str:
    text = (root / m["file"]).read_text()
    count = text.count(m["old"])
    if count != 1:
        raise ValueError(f"mutant {m['id']}: snippet occurs {count} times in {m['file']} (need exactly 1)")
    mutated = text.replace(m["old"], m["new"])
    diff = difflib.unified_diff(text.splitlines(keepends=True), mutated.splitlines(keepends=True),
                                fromfile=f"a/{m['file']}", tofile=f"b/{m['file']}", n=3)
    header = "".join(f"# {k}: {m[k]}\n" for k in ("id", "family", "description", "reference"))
    return header + "".join(diff)


def main() -> int:
    out = HERE / "patches"
    out.mkdir(exist_ok=True)
    ids = [m["id"] for m in MUTANTS]
    if len(set(ids)) != len(ids):
        raise ValueError("mutant ids must be unique")
    for old in out.glob("*.patch"):
        old.unlink()
    for i, m in enumerate(MUTANTS, 1):
        (out / f"{i:03d}-{m['id']}.patch").write_text(render(m))
    print(f"wrote {len(MUTANTS)} patches to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The tutorials in docs/tutorials/ run as written: their Python blocks execute in order, in one namespace, and
the assertions they contain must hold (a tutorial that no longer works fails here)."""
from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
#: A block that shows a file of the repository is preceded by this marker; it must be that file, to the letter.
QUOTED = re.compile(r"<!-- file: (\S+) -->\n```python\n(.*?)```", flags=re.S)


def test_there_are_tutorials() -> None:
    assert {p.stem for p in TUTORIALS} >= {"verify-your-own-theorem", "add-your-own-algorithm"}


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs_as_written(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # anything a tutorial writes lands in a scratch folder
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "momentum_fedavg"))  # the example package, uninstalled
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    assert blocks, f"{path.name} has no Python block"
    # A real module (dataclasses resolve their annotations through sys.modules).
    module = types.ModuleType(f"tutorial_{path.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"{path.name} [block {i}]", "exec"), module.__dict__)  # noqa: S102 - our own docs


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_quoted_files_are_the_repository_files(path: Path) -> None:
    for name, block in QUOTED.findall(path.read_text()):
        assert block == (ROOT / name).read_text(), f"{path.name} quotes an outdated copy of {name}"

"""Package hygiene: fedtheory is a regular package with a version from its installed metadata."""
from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import fedtheory


def test_regular_package_with_version():
    assert fedtheory.__file__ is not None and fedtheory.__file__.endswith("__init__.py")
    assert fedtheory.__version__ == metadata.version("fedtheory")


def test_second_tree_on_path_does_not_merge(tmp_path: Path):
    # An implicit namespace package would merge a second fedtheory/ folder into its __path__.
    stray = tmp_path / "fedtheory"
    stray.mkdir()
    (stray / "stray_module.py").write_text("X = 1\n")
    code = ("import fedtheory, importlib.util; print(len(fedtheory.__path__)); "
            "print(importlib.util.find_spec('fedtheory.stray_module') is None)")
    root = Path(fedtheory.__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": f"{root}:{tmp_path}", "PATH": ""}, cwd=tmp_path.parent).stdout.split()
    assert out == ["1", "True"]

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


def test_cli_version_prints_the_package_version(capsys):
    import pytest

    from fedtheory import cli

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"fedtheory {fedtheory.__version__}"
    assert fedtheory.__version__ == metadata.version("fedtheory")  # not a number typed into cli.py


def test_cli_version_in_a_real_process():
    root = Path(fedtheory.__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "fedtheory", "--version"], capture_output=True, text=True,
                         check=True, cwd=root, timeout=120).stdout
    assert out.strip() == f"fedtheory {metadata.version('fedtheory')}"


def test_plotting_does_not_import_bench():
    """bench imports plotting (for its figures); plotting must not import bench back (the expression evaluator
    both use lives in fedtheory.expressions), so the layers run one way."""
    import ast

    import pytest

    pytest.importorskip("matplotlib", reason="plotting needs matplotlib (the bench extra)")
    root = Path(fedtheory.__file__).resolve().parent.parent
    code = ("import sys, fedtheory.plotting; "
            "print('fedtheory.bench' in sys.modules, 'fedtheory.expressions' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120).stdout.split()
    assert out == ["False", "True"]
    # and statically, for imports inside functions that the import above would not execute
    for module, forbidden in (("plotting", "bench"), ("expressions", "bench"), ("expressions", "plotting")):
        tree = ast.parse((root / "fedtheory" / f"{module}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module} | {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level
                     and node.module is None for alias in node.names}
        assert forbidden not in imported and f"fedtheory.{forbidden}" not in imported, (module, forbidden)


def test_every_docs_page_a_claim_names_ships_in_the_package():
    """A pip user has the docs inside the package (fedtheory/docs/), so a claim's reference may cite them; a
    "module docstring" or a design file outside the package may not be cited."""
    import re
    from pathlib import Path

    import fedtheory
    from fedtheory.claims import load_all

    shipped = Path(fedtheory.__file__).parent / "docs"
    for c in load_all().values():
        text = " ".join((c.reference, c.statement, c.notes))
        for page in re.findall(r"\bdocs/([\w/-]+\.md)", text):
            assert (shipped / page).is_file(), f"{c.id} cites docs/{page}, which the package does not ship"
        assert "module docstring" not in text and "DESIGN.md" not in text, c.id

"""The mutation harness (benchmarks/mutation/) stays usable: patches apply, headers are complete, the
classification of detector outcomes is right. No mutant is run here (that is `run.py`, minutes per mutant)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "benchmarks" / "mutation"
sys.path.insert(0, str(HARNESS))

import run as harness  # noqa: E402
from catalogue import MUTANTS, SMOKE  # noqa: E402
from importmap import ImportGraph, file_to_module  # noqa: E402

FAMILIES = {"FedAvg", "FedProx", "SCAFFOLD", "FedDyn", "Scaffnew", "FedElasticNet", "DANE", "FedRed", "DoCoFL",
            "FedOGD/OFedIQ", "EFL", "compressors", "certificates", "participation", "theory"}
PATCHES = harness.all_patches()


def test_catalogue_size_and_coverage():
    metas = [harness.read_patch(p) for p in PATCHES]
    assert len(metas) >= 40
    assert len({m["id"] for m in metas}) == len(metas)
    assert {m["family"] for m in metas} >= FAMILIES
    assert {m["id"] for m in metas} == {m["id"] for m in MUTANTS}
    assert set(SMOKE) <= {m["id"] for m in metas} and 3 <= len(SMOKE) <= 8


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize("patch", PATCHES, ids=[p.stem for p in PATCHES])
def test_patch_applies_and_is_small(patch: Path, tmp_path: Path):
    meta = harness.read_patch(patch)
    # a copy of the one file the patch touches: the tree itself is never patched, not even in a dry run
    (tmp_path / meta["file"]).parent.mkdir(parents=True)
    shutil.copy(ROOT / meta["file"], tmp_path / meta["file"])
    res = harness.apply_patch(tmp_path, patch)
    assert res.returncode == 0, res.stdout + res.stderr
    before = (ROOT / meta["file"]).read_text().splitlines()
    after = (tmp_path / meta["file"]).read_text().splitlines()
    assert len(before) == len(after)
    changed = sum(a != b for a, b in zip(before, after))
    assert 1 <= changed <= 3, f"{meta['id']} changes {changed} lines"


def _probe(**statuses: str) -> dict:
    return {"statuses": statuses}


def test_classify_ledger():
    base = {"a": "holds", "b": "violated-as-recorded", "c": "VIOLATED", "d": "holds"}
    assert harness.classify_ledger(_probe(a="VIOLATED", b="violated-as-recorded"), base, False) == ("killed", ["a"])
    assert harness.classify_ledger(_probe(a="holds", b="COUNTEREXAMPLE-LOST"), base, False) == ("killed", ["b"])
    # a claim already violated on the unmutated tree kills nothing
    assert harness.classify_ledger(_probe(a="holds", c="VIOLATED"), base, False) == ("survived", [])
    # a crash is its own category, not a kill; a verdict elsewhere still kills
    assert harness.classify_ledger(_probe(a="ERROR", d="holds"), base, False) == ("error", ["a"])
    assert harness.classify_ledger(_probe(a="ERROR", d="VIOLATED"), base, False) == ("killed", ["d"])
    assert harness.classify_ledger(None, base, True) == ("error", ["<crash>"])
    assert harness.classify_ledger(None, base, False) == ("error", ["<timeout>"])
    assert harness.classify_ledger(_probe(a="holds", b="violated-as-recorded"), base, False) == ("survived", [])


def test_classify_tests():
    assert [harness.classify_tests(rc) for rc in (0, 1, 2, 4, None)] == \
        ["survived", "killed", "error", "error", "error"]


def test_summary_counts():
    rows = [{"ledger": "killed", "tests": "survived"}, {"ledger": "error", "tests": "killed"},
            {"ledger": "survived", "tests": "survived"}]
    s = harness.summary(rows)
    assert s["ledger"] == {"killed": 1, "error": 1, "survived": 1, "total": 3}
    assert s["tests"]["killed"] == 1 and s["either"] == {"killed": 2, "total": 3}


def test_import_map_sees_known_users():
    g = ImportGraph(ROOT)
    # claims modules import algorithms lazily inside functions, and name their paper through a constant
    assert "fedred" in g.papers_for("fedtheory.algorithms.dane")
    assert "fedelasticnet" in g.papers_for("fedtheory.algorithms.feddyn")
    assert "classic" in g.papers_for("fedtheory.theory.gd")
    assert "ofediq" in g.papers_for("fedtheory.compressors.sb_quantizer")
    assert "tests/compressors/test_compressors.py" in g.tests_for("fedtheory.compressors.sparsifiers")
    # the registry's load_all (a submodule importing its auto-loading parent) does not make everything
    # visible to everything
    assert "fedred" not in g.papers_for("fedtheory.theory.gd")
    assert file_to_module(ROOT, "fedtheory/algorithms/federated.py") == "fedtheory.algorithms.federated"


def test_smoke_cli_rejects_unknown_id():
    res = subprocess.run([sys.executable, str(HARNESS / "run.py"), "--only", "no_such_mutant"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "no_such_mutant" in res.stderr


def test_general_tool_sample_is_stratified_and_reproducible():
    """The cosmic-ray sample: at least 2 mutants per file (all of a smaller file), proportional otherwise, and
    the same sample for the same seed."""
    import general_tool

    items = [{"file": f, "operator": "op", "occurrence": i, "line": i} for f, k in (("a.py", 90), ("b.py", 9), ("c.py", 1))
             for i in range(k)]
    first = general_tool.stratified_sample(items, 20, seed=0)
    assert first == general_tool.stratified_sample(items, 20, seed=0)
    assert first != general_tool.stratified_sample(items, 20, seed=1)
    per_file = {f: sum(m["file"] == f for m in first) for f in ("a.py", "b.py", "c.py")}
    assert per_file == {"a.py": 18, "b.py": 2, "c.py": 1}

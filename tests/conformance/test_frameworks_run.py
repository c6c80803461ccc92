"""benchmarks/frameworks/run.py records where a stored report comes from: the kit's commit (``+dirty`` when the
checkout differs from it) and the framework's installed version (docs/frameworks.md, "How to re-run")."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .standins import load_run


@pytest.fixture(scope="module")
def run():
    return load_run()


def _git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_the_commit_is_the_checkouts_head_and_a_changed_kit_says_dirty(run, tmp_path):
    _git(tmp_path, "init", "-q")
    for path in ("fedtheory/kit.py", "benchmarks/frameworks/run.py", "docs/frameworks.md",
                 "benchmarks/frameworks/results/x/a.json"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("one\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = (tmp_path / ".git" / "HEAD").read_text().split()[-1]  # refs/heads/<branch>, read from the files
    sha = (tmp_path / ".git" / head).read_text().strip()
    assert run.kit_commit(tmp_path) == sha
    # the reports run.py writes and the docs are not the kit: changing them leaves the commit clean
    (tmp_path / "benchmarks/frameworks/results/x/a.json").write_text("two\n")
    (tmp_path / "docs/frameworks.md").write_text("two\n")
    assert run.kit_commit(tmp_path) == sha
    for path in ("fedtheory/kit.py", "benchmarks/frameworks/run.py"):
        _git(tmp_path, "checkout", "-q", "--", ".")
        (tmp_path / path).write_text("two\n")
        assert run.kit_commit(tmp_path) == sha + "+dirty", path


def test_outside_a_checkout_the_commit_is_unknown(run, tmp_path):
    assert run.kit_commit(tmp_path) == "unknown"


def test_a_stamped_report_carries_both_and_keeps_the_verdict(run):
    report = {"implementation": "drivers/toy.py:fedavg", "family": "fedavg", "verdict": "pass", "results": []}
    stamped, markdown = run.provenance(report, "# Conformance\n", "abc123", "toy 1.0")
    assert stamped["kit_commit"] == "abc123" and stamped["framework_version"] == "toy 1.0"
    assert {k: stamped[k] for k in report} == report
    assert "Kit commit `abc123`; framework `toy 1.0`." in markdown and markdown.startswith("# Conformance")


def test_the_framework_version_is_read_in_the_venv(run):
    # the running interpreter stands for a venv; pytest is installed in it with a known version
    fw = run.Framework(pip=("pytest==0",), checks=())
    assert run.framework_version(Path(sys.executable), fw) == f"pytest {pytest.__version__}"
    missing = run.Framework(pip=("no-such-framework-xyz==1",), checks=())
    assert run.framework_version(Path(sys.executable), missing) == "no-such-framework-xyz (version unreadable)"


def test_every_check_names_a_driver_module_that_has_its_factory(run):
    """A check runs ``drivers/<driver or framework>.py:<factory>``: the module exists and defines the factory (read as
    text: the drivers import their framework, which CI does not install)."""
    import re

    for name, fw in run.FRAMEWORKS.items():
        for check in fw.checks:
            path = run.DRIVERS / f"{run.driver_of(name, check)}.py"
            assert path.is_file(), f"{name}:{check.name} names {path.name}, which does not exist"
            assert re.search(rf"^def {check.factory}\(", path.read_text(), re.M), \
                f"{name}:{check.name}: {path.name} has no factory {check.factory}()"


def _block(text: str) -> str:
    start = text.index("<!-- generated: framework-verdicts -->\n") + len("<!-- generated: framework-verdicts -->\n")
    return text[start:text.index("<!-- /generated -->", start)]


def test_the_printed_summary_is_the_generated_block_of_the_stored_reports(run):
    root = Path(run.ROOT)
    docs = (root / "docs" / "frameworks.md").read_text()
    assert run.summary(root / "benchmarks" / "frameworks" / "results") == _block(docs)


def test_the_printed_summary_reads_the_reports_in_out(run, tmp_path):
    """A re-run into --out is summarised from --out: one report made inconclusive there shows as inconclusive,
    and a framework with no report there shows '-'."""
    stored = Path(run.ROOT) / "benchmarks" / "frameworks" / "results" / "openfl"
    shutil.copytree(stored, tmp_path / "openfl")
    report = json.loads((tmp_path / "openfl" / "fedadagrad.json").read_text())
    assert report["verdict"] == "pass"
    report["verdict"] = "inconclusive"
    (tmp_path / "openfl" / "fedadagrad.json").write_text(json.dumps(report))
    rows = {line.split(" | ")[0].lstrip("| "): line for line in run.summary(tmp_path).splitlines()}
    assert rows["OpenFL 1.9"].split(" | ")[8] == "inconclusive"  # FedAdagrad's column
    assert rows["flgo 0.4.4"].count(" - ") == 9  # not in --out: no verdict


def test_an_inconclusive_verdict_is_printed_as_inconclusive(run):
    assert [run.verdict_word(v) for v in ("pass", "fail", "inconclusive")] == ["pass", "FAIL", "inconclusive"]
    with pytest.raises(ValueError, match="verdict must be one of"):
        run.verdict_word("passed")


def test_torch_is_installed_first_from_the_cpu_index(run, tmp_path, monkeypatch):
    """run.py's docstring: torch 2.13.0 CPU first where a framework needs torch (PyPI's Linux wheel is CUDA's)."""
    calls = []
    monkeypatch.setattr(run.subprocess, "run", lambda argv, **kw: calls.append(argv))
    run.install(tmp_path, "toy", run.Framework(pip=("toy==1",), checks=(), torch=True), recreate=False)
    assert calls[1][-3:] == ["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"]
    assert calls[2][-1] == "toy==1"
    calls.clear()
    run.install(tmp_path / "b", "toy", run.Framework(pip=("toy==1",), checks=()), recreate=False)
    assert not any("torch==2.13.0" in argv for argv in calls)

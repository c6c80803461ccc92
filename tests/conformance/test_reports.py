"""The kit's machine-readable reports (fedtheory/conformance/reports.py) and the CI recipe that uses them
(docs/ci/conformance-workflow.yml, docs/conformance.md "The kit in a framework's CI"): the JUnit XML is checked
against the elements and attributes of the JUnit schema CI systems read (Jenkins' and Ant's junit XSD, which
GitHub Actions reporters, GitLab and Azure Pipelines follow), the JSON against the report and the git checkout,
and the workflow's command line against fedtheory's own parser."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("hypothesis", reason="the conformance kit needs hypothesis (pip install 'fedtheory[test]')")

from fedtheory import conformance  # noqa: E402
from fedtheory.cli import build_parser  # noqa: E402
from fedtheory.cli import main as cli_main
from fedtheory.conformance import (
    FAMILIES,  # noqa: E402
    reports,  # noqa: E402
)
from fedtheory.conformance.families import properties_of  # noqa: E402
from fedtheory.conformance.families.fedavg.variants import fedavg  # noqa: E402
from fedtheory.conformance.search import PropertyResult, Report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "ci" / "conformance-workflow.yml"

# The JUnit schema's elements and attributes (Jenkins junit-10.xsd / Ant's junit XSD): children and attributes
# a CI system reads; anything else is a typo a reader would silently drop.
SCHEMA = {
    "testsuites": ({"testsuite"}, {"name", "tests", "failures", "errors", "skipped", "disabled", "time"}),
    "testsuite": ({"properties", "testcase", "system-out", "system-err"},
                  {"name", "tests", "failures", "errors", "skipped", "disabled", "time", "timestamp", "hostname",
                   "id", "package", "file", "log", "url", "version", "group"}),
    "properties": ({"property"}, set()),
    "property": (set(), {"name", "value"}),
    "testcase": ({"skipped", "error", "failure", "system-out", "system-err"},
                 {"name", "classname", "time", "assertions", "status", "file", "line"}),
    "failure": (set(), {"message", "type"}),
    "error": (set(), {"message", "type"}),
    "skipped": (set(), {"message"}),
}
REQUIRED = {"testsuite": {"name", "tests"}, "testcase": {"name", "classname"}, "property": {"name", "value"}}


def _validate(root: ET.Element) -> None:
    """``root`` follows the schema above, and the counts of every suite are those of its test cases."""
    assert root.tag == "testsuites"
    for el in root.iter():
        children, attributes = SCHEMA[el.tag]
        assert {c.tag for c in el} <= children, (el.tag, [c.tag for c in el])
        assert set(el.attrib) <= attributes, (el.tag, el.attrib)
        assert REQUIRED.get(el.tag, set()) <= set(el.attrib), el.tag
        for key in ("tests", "failures", "errors", "skipped"):
            if key in el.attrib:
                assert int(el.attrib[key]) >= 0
        if "time" in el.attrib:
            assert float(el.attrib["time"]) >= 0
    for suite in [root, *root.iter("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        for key in ("failure", "error", "skipped"):
            count = sum(c.find(key) is not None for c in cases)
            assert int(suite.get({"failure": "failures", "error": "errors"}.get(key, key))) == count, key
        for c in cases:  # a test case has at most one outcome
            assert sum(c.find(k) is not None for k in ("failure", "error", "skipped")) <= 1


def test_junit_of_a_failing_check_has_one_testcase_per_property_and_the_counterexample():
    report = conformance.check(partial(fedavg, slip="server_step_twice"), "fedavg", max_examples=5, vary=False,
                               properties=["fedavg.one_round", "fedavg.permutation"])
    root = ET.fromstring(reports.junit_xml(report))
    _validate(root)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert list(cases) == ["fedavg.one_round", "fedavg.permutation"]
    failure = cases["fedavg.one_round"].find("failure")
    assert failure is not None and failure.get("type") == "violated"
    assert "server step applied twice" in failure.get("message")
    shrunk = json.loads(failure.text[failure.text.index("{"):])  # the counterexample, reproducible as JSON
    assert shrunk["property_id"] == "fedavg.one_round" and shrunk["case"] == report.failures[0].counterexample.case
    assert cases["fedavg.permutation"].find("failure") is None  # the order of the clients still does not matter
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["verdict"] == "fail" and props["family"] == "fedavg"


def _result(prop, status: str, why: str = "") -> PropertyResult:
    return PropertyResult(prop=prop, status=status, measured=float("nan"), theory=1e-8, examples=0, seconds=0.0,
                          diagnosis=why)


def test_an_unchecked_core_property_is_an_error_and_another_unchecked_one_is_skipped():
    """An inconclusive verdict must not read as green in CI: the core property not checked is an <error>."""
    by_id = {p.id: p for p in properties_of("fedavg")}
    report = Report("fedavg", "mine", {}, [_result(by_id["fedavg.one_round"], "not applicable", "opaque"),
                                           _result(by_id["fedavg.permutation"], "holds"),
                                           _result(by_id["fedavg.num_examples"], "not applicable", "uniform")])
    assert report.verdict == "inconclusive"
    root = ET.fromstring(reports.junit_xml(report))
    _validate(root)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["fedavg.one_round"].find("error").get("type") == "inconclusive"
    assert "opaque" in cases["fedavg.one_round"].find("error").get("message")
    assert cases["fedavg.num_examples"].find("skipped") is not None
    assert len(cases["fedavg.permutation"]) == 0  # passed: no child
    # nothing applicable at all is inconclusive too, and every unchecked property is then an error
    none = Report("fedavg", "mine", {}, [_result(by_id["fedavg.num_examples"], "not applicable", "uniform")])
    root = ET.fromstring(reports.junit_xml(none))
    assert root.get("errors") == "1" and root.get("skipped") == "0"


def test_json_records_the_verdicts_and_the_kits_commit():
    report = conformance.check(partial(fedavg, slip="server_step_twice"), "fedavg", max_examples=5, vary=False,
                               properties=["fedavg.one_round"])
    data = json.loads(json.dumps(reports.report_json(report)))
    assert data["schema"] == reports.SCHEMA and data["verdict"] == "fail"
    assert data["results"][0]["counterexample"]["property_id"] == "fedavg.one_round"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository: the commit is None by design")
    assert data["kit"]["commit"] == head.stdout.strip() and isinstance(data["kit"]["dirty"], bool)


def test_the_commit_is_none_outside_a_checkout_of_fedtheory(tmp_path, monkeypatch):
    """An installed package inside some other repository must not report that repository's commit."""
    other = tmp_path / "project"
    (other / "lib" / "fedtheory").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    monkeypatch.setattr(reports, "_PACKAGE", other / "lib" / "fedtheory")
    assert reports.provenance()["commit"] is None
    monkeypatch.setattr(reports, "_PACKAGE", tmp_path / "nowhere")
    assert reports.provenance()["commit"] is None


class _FakeDistribution:
    """An installed fedtheory as importlib.metadata shows it: its ``direct_url.json`` (PEP 610) and where its
    files are."""

    def __init__(self, direct_url: str | None, package: Path):
        self.direct_url, self.package, self.version = direct_url, package, "0.1.0"

    def read_text(self, name: str) -> str | None:
        return self.direct_url if name == "direct_url.json" else None

    def locate_file(self, path: str) -> Path:
        return self.package.parent / path


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("direct_url, located_here, expected", [
    # pip install "fedtheory[test] @ git+URL@COMMIT" (the CI recipe): the commit pip resolved
    (json.dumps({"url": "https://example.org/fedtheory.git",
                 "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": SHA}}), True, SHA),
    # the same metadata, but the package imported is another copy (PYTHONPATH): not its commit
    (json.dumps({"url": "https://example.org/fedtheory.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}),
     False, None),
    (json.dumps({"url": "file:///src/fedtheory", "dir_info": {"editable": True}}), True, None),  # pip install -e
    (json.dumps({"url": "file:///fedtheory-0.1.0-py3-none-any.whl", "archive_info": {}}), True, None),  # a wheel
    (None, True, None),  # installed from an index: pip writes no direct_url.json
    ("not json", True, None),
    (json.dumps([SHA]), True, None),
])
def test_a_pip_installed_kit_records_the_commit_pip_installed_from_git(tmp_path, monkeypatch, direct_url,
                                                                     located_here, expected):
    package = tmp_path / "site-packages" / "fedtheory"
    package.mkdir(parents=True)
    monkeypatch.setattr(reports, "_PACKAGE", package)  # not a git checkout: git finds no repository here
    where = package if located_here else tmp_path / "elsewhere" / "fedtheory"
    monkeypatch.setattr(reports.metadata, "distribution", lambda name: _FakeDistribution(direct_url, where))
    kit = reports.provenance()
    assert kit["commit"] == expected and kit["dirty"] is None


def test_without_an_installed_distribution_the_commit_is_none(tmp_path, monkeypatch):
    def missing(name):
        raise reports.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(reports, "_PACKAGE", tmp_path / "fedtheory")
    monkeypatch.setattr(reports.metadata, "distribution", missing)
    assert reports.provenance()["commit"] is None


def test_cli_writes_json_and_junit_where_asked(tmp_path, monkeypatch):
    (tmp_path / "ci_recipe_impls.py").write_text(
        "from functools import partial\nfrom fedtheory.conformance.families.fedavg.variants import fedavg\n"
        "def bad():\n    return partial(fedavg, slip='server_step_twice')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out, js, xml = tmp_path / "out", tmp_path / "ci" / "r.json", tmp_path / "ci" / "r.xml"
    status = cli_main(["conform", "ci_recipe_impls:bad", "--as", "fedavg", "--max-examples", "3", "--out", str(out),
                       "--json", str(js), "--junit-xml", str(xml)])
    assert status == 1
    assert json.loads(js.read_text()) == json.loads((out / "conformance.json").read_text())
    root = ET.parse(xml).getroot()
    _validate(root)
    violated = [r["property"] for r in json.loads(js.read_text())["results"] if r["status"] == "violated"]
    assert violated and [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None] == violated


def _workflow() -> dict:
    """The workflow parsed with PyYAML where it is installed; otherwise the parts the checks read, textually."""
    text = WORKFLOW.read_text()
    assert "\t" not in text, "YAML forbids tabs in indentation"
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        return yaml.safe_load(text)
    entries = re.findall(r"- algorithm: (\S+)\n\s+family: (\S+)\n\s+factory: (\S+)\n\s+hyper: \"([^\"]*)\"", text)
    run = re.search(r"run: >-\n((?:\s{10}.*\n)+)", text)[1]
    return {"jobs": {"conformance": {
        "strategy": {"matrix": {"include": [dict(zip(("algorithm", "family", "factory", "hyper"), e))
                                            for e in entries]}},
        "steps": [{"run": " ".join(line.strip() for line in run.splitlines())}]
                 + [{"uses": u, "if": "always()"} for u in re.findall(r"uses: (\S+)", text)]}}}


@pytest.mark.parametrize("with_yaml", [True, False])
def test_the_ci_recipe_runs_the_kit_with_options_fedtheory_accepts(with_yaml, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["conform", "--help"])
    options = set(re.findall(r"(--[a-z][a-z-]*)", capsys.readouterr().out))  # argparse would accept a prefix
    if not with_yaml:  # the textual reading, as where PyYAML is not installed
        monkeypatch.setitem(__import__("sys").modules, "yaml", None)
    job = _workflow()["jobs"]["conformance"]
    entries = job["strategy"]["matrix"]["include"]
    assert entries and all(e["family"] in FAMILIES for e in entries)
    runs = [s["run"] for s in job["steps"] if "fedtheory conform" in s.get("run", "")]
    assert len(runs) == 1
    for e in entries:
        line = runs[0]
        for key, value in e.items():
            line = line.replace("${{ matrix.%s }}" % key, value)
        assert "${{" not in line, line
        argv = shlex.split(line)
        assert argv[:2] == ["fedtheory", "conform"]
        assert {a for a in argv if a.startswith("--")} <= options, argv
        args = build_parser().parse_args(argv[1:])  # a mistyped value exits here
        assert args.family == e["family"] and args.junit_file.endswith(".xml") and args.json_file.endswith(".json")
    uploads = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert uploads and all(s.get("if") == "always()" for s in uploads)  # the reports are kept when the kit fails


def test_the_ci_recipe_installs_a_pinned_fedtheory_and_has_the_steps_the_docs_describe():
    """docs/conformance.md, "The kit in a framework's CI": fedtheory is not on PyPI, so the recipe installs it
    from git pinned to a commit (placeholders the user fills, which a step refuses until then); the report step
    has the token permissions it needs; the reports are kept and shown even when the kit fails."""
    yaml = pytest.importorskip("yaml", reason="PyYAML parses the workflow (it comes with fedtheory[test] via dask)")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert set(workflow[True]) >= {"push", "pull_request"}  # YAML 1.1 reads the key `on` as True
    pinned = workflow["env"]["FEDTHEORY"]
    # a direct reference to a git source at a revision (PEP 508 "name[extra] @ git+URL@REV"), not a bare index name
    assert re.fullmatch(r"fedtheory\[test\] @ git\+\S+@\S+", pinned), pinned
    job = workflow["jobs"]["conformance"]
    assert job["permissions"] == {"contents": "read", "checks": "write"}
    steps = job["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert uses.count("actions/checkout") == 1 and uses.count("actions/setup-python") == 1
    install = next(s["run"] for s in steps if "pip install" in s.get("run", ""))
    assert 'pip install "$FEDTHEORY"' in install and "pip install -e ." in install
    assert not re.search(r"pip install\s+[\"']?fedtheory", install), "a bare PyPI name: fedtheory is not on PyPI"
    order = [i for i, s in enumerate(steps) if "fedtheory conform" in s.get("run", "")
             or s.get("uses", "").startswith(("actions/upload-artifact@", "mikepenz/action-junit-report@"))]
    kit, upload, junit = (steps[i] for i in order)
    assert order == sorted(order) and upload["if"] == junit["if"] == "always()"
    assert junit["with"]["report_paths"] == "conformance/*.xml" and "--junit-xml conformance/" in kit["run"]
    # the guard: the placeholders make the job fail before anything is installed; a filled-in pin passes
    guard = next(s for s in steps if s.get("name") == "Check that fedtheory is pinned")
    assert steps.index(guard) < steps.index(next(s for s in steps if s.get("run") == install))
    for value, status in ((pinned, 2), (f"fedtheory[test] @ git+https://example.org/fedtheory.git@{SHA}", 0)):
        done = subprocess.run(["bash", "-e", "-c", guard["run"]], env={"FEDTHEORY": value}, capture_output=True)
        assert done.returncode == status, (value, done.stdout)

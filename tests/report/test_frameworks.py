"""The README's framework x algorithm verdict table (block ``framework-verdicts``) is what
``fedtheory.report.frameworks`` builds from docs/frameworks.md and benchmarks/frameworks/results/, and a verdict
in a stored report reaches the table: a failing report shows as FAIL, whatever the kit version that wrote it."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fedtheory.report.frameworks import ALGORITHMS, load_verdicts, verdict_table

ROOT = Path(__file__).resolve().parents[2]

DOC = """# Frameworks

<!-- framework: toy | Toy 1.0 | results -->
| algorithm | kit family | verdict | failing property | minimal reproducer | defect or design |
|---|---|---|---|---|---|
| written by hand | ignored | for a results framework | | | |

<!-- framework: byhand | ByHand 2.0 | table -->
| algorithm | kit family | verdict | failing property | minimal reproducer | defect or design |
|---|---|---|---|---|---|
| FedAvg | `fedavg` | pass | - | - | - |
| SCAFFOLD (option II) | `scaffold` | **FAIL** | `one_round` | n = 2 | defect |

Text after the table.
"""


def _report(family: str, passed: bool, verdict: str | None, **hyper) -> dict:
    out = {"implementation": "toy_driver:x", "family": family, "hyper": hyper, "passed": passed, "results": []}
    if verdict is not None:
        out["verdict"] = verdict
    return out


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "frameworks.md").write_text(DOC)
    results = tmp_path / "benchmarks" / "frameworks" / "results" / "toy"
    results.mkdir(parents=True)
    reports = {"fedavg": _report("fedavg", True, "pass", weighting="uniform"),
               "fedavg_num_examples": _report("fedavg", False, "fail", weighting="num_examples"),
               # a report of the kit before the inconclusive verdict: no "verdict", only "passed"
               "feddyn": _report("feddyn", False, None),
               "fedadam": _report("server_optimizer", True, "pass", optimizer="fedadam"),
               "fedyogi": _report("server_optimizer", False, "inconclusive", optimizer="fedyogi")}
    for name, report in reports.items():
        (results / f"{name}.json").write_text(json.dumps(report))
    return tmp_path


def _row(table: str, name: str) -> dict[str, str]:
    line = next(x for x in table.splitlines() if x.startswith(f"| {name} |"))
    return dict(zip(ALGORITHMS, [c.strip() for c in line.strip().strip("|").split("|")][1:]))


def test_a_fail_in_a_result_json_shows_as_fail(checkout: Path):
    row = _row(verdict_table(checkout), "Toy 1.0")
    assert row["FedAvg"] == "pass (uniform); **FAIL** (n_k/n)"
    assert row["FedDyn"] == "**FAIL**"  # passed: false, no verdict field
    assert row["FedAdam"] == "pass" and row["FedYogi"] == "inconclusive"
    assert row["SCAFFOLD"] == row["FedProx"] == "-"


def test_flipping_a_stored_verdict_flips_the_cell(checkout: Path):
    path = checkout / "benchmarks" / "frameworks" / "results" / "toy" / "fedadam.json"
    path.write_text(json.dumps(_report("server_optimizer", False, "fail", optimizer="fedadam")))
    assert _row(verdict_table(checkout), "Toy 1.0")["FedAdam"] == "**FAIL**"


def test_a_declared_table_gives_the_verdicts_of_a_framework_without_reports(checkout: Path):
    row = _row(verdict_table(checkout), "ByHand 2.0")
    assert row["FedAvg"] == "pass" and row["SCAFFOLD"] == "**FAIL** (option II)"
    assert [name for name, _ in load_verdicts(checkout)] == ["Toy 1.0", "ByHand 2.0"]  # the doc's order


def test_an_algorithm_outside_the_columns_is_refused(checkout: Path):
    doc = checkout / "docs" / "frameworks.md"
    doc.write_text(doc.read_text().replace("| FedAvg | `fedavg`", "| FedWhat | `fedavg`"))
    with pytest.raises(ValueError, match="FedWhat"):
        verdict_table(checkout)


@pytest.mark.parametrize("page", ["README.md", "docs/frameworks.md"])
def test_the_pages_block_is_the_generated_table(page: str):
    text = (ROOT / page).read_text()
    block = re.search(r"<!-- generated: framework-verdicts -->\n(.*?)<!-- /generated -->", text, re.S)
    assert block, f"{page} has no generated block 'framework-verdicts'"
    assert block.group(1) == verdict_table(ROOT), f"stale: run python -m fedtheory.report.readme {page}"


def test_every_stored_report_belongs_to_a_declared_framework_and_is_linked_from_its_row():
    # docs/frameworks.md's rows of a results framework are written by hand: each must link its report and agree
    # with its verdict, so the doc and the generated table cannot disagree.
    doc = (ROOT / "docs" / "frameworks.md").read_text()
    results = ROOT / "benchmarks" / "frameworks" / "results"
    declared = {m.group(1) for m in re.finditer(r"<!-- framework: ([\w-]+) \|[^|]+\| results -->", doc)}
    assert declared == {p.name for p in results.iterdir() if p.is_dir()}
    for path in sorted(results.glob("*/*.json")):
        report = json.loads(path.read_text())
        link = f"../benchmarks/frameworks/results/{path.parent.name}/{path.stem}.md"
        rows = [line for line in doc.splitlines() if line.startswith("|") and f"]({link})" in line]
        assert len(rows) == 1, f"{link}: {len(rows)} rows of docs/frameworks.md link it"
        cell = rows[0].strip().strip("|").split("|")[2].replace("*", "").strip().lower()
        expected = report.get("verdict") or ("pass" if report["passed"] else "fail")
        assert cell.startswith(expected), (link, cell, expected)


def test_every_defect_row_links_a_reproducer_that_exists() -> None:
    """A defect claimed of a framework is confirmed a second way: its row in docs/frameworks.md links a script in
    benchmarks/frameworks/repro/ that runs the framework's own code without fedtheory."""
    rows = [line for line in (ROOT / "docs" / "frameworks.md").read_text().splitlines()
            if line.startswith("|") and "**Defect" in line]
    assert len(rows) >= 6
    for row in rows:
        scripts = re.findall(r"\(\.\./(benchmarks/frameworks/repro/[\w.]+\.py)\)", row)
        assert scripts, f"a defect row without a reproducer: {row[:120]}"
        for script in scripts:
            text = (ROOT / script).read_text()
            assert "fedtheory" not in text.split('"""')[2], f"{script} imports fedtheory"


def test_fednova_reports_fill_their_column_and_local_momentum_is_its_own_configuration(checkout: Path):
    results = checkout / "benchmarks" / "frameworks" / "results" / "toy"
    (results / "fednova.json").write_text(json.dumps(_report("fednova", True, "pass", weighting="num_examples")))
    (results / "fednova_momentum.json").write_text(json.dumps(
        _report("fednova", False, "fail", weighting="num_examples", momentum=0.5)))
    assert _row(verdict_table(checkout), "Toy 1.0")["FedNova"] == "pass (n_k/n); **FAIL** (n_k/n, momentum 0.5)"


def test_a_check_at_another_tolerance_says_so_in_its_cell(checkout: Path):
    results = checkout / "benchmarks" / "frameworks" / "results" / "toy"
    report = _report("fednova", True, "pass", weighting="num_examples")
    report["results"] = [{"property": "fednova.one_round", "status": "holds", "measured": 3e-8, "theory": 1e-6}]
    (results / "fednova.json").write_text(json.dumps(report))
    (results / "fednova_default.json").write_text(json.dumps(_report("fednova", False, "fail",
                                                                     weighting="num_examples")))
    assert _row(verdict_table(checkout), "Toy 1.0")["FedNova"] == "pass (n_k/n, rtol 1e-06); **FAIL** (n_k/n)"


#: What a defect report in docs/frameworks/<framework>.md must say for a maintainer to act on it.
REPORT_PARTS = ("**Affected versions.**", "**Paper.**", "**Actual.**", "**Expected vs actual**", "**Smallest fix.**")


def _defect_rows_by_framework(doc: str) -> dict[str, list[str]]:
    """The defect rows of docs/frameworks.md under the framework marker that precedes them."""
    rows: dict[str, list[str]] = {}
    key = None
    for line in doc.splitlines():
        marker = re.match(r"<!-- framework: ([\w-]+) \|", line)
        if marker:
            key = marker.group(1)
        elif line.startswith("|") and "**Defect" in line:
            assert key is not None, f"a defect row before any framework marker: {line[:120]}"
            rows.setdefault(key, []).append(line)
    return rows


def test_every_defect_has_a_report_with_its_reproducers_inlined() -> None:
    """Each framework with a defect row has docs/frameworks/<framework>.md, ready for the framework's tracker: the
    parts a maintainer needs, and every reproducer the rows link, inlined as the script's exact text (so the page
    and benchmarks/frameworks/repro/ cannot drift apart)."""
    rows = _defect_rows_by_framework((ROOT / "docs" / "frameworks.md").read_text())
    assert len(rows) >= 5
    for key, lines in rows.items():
        # one page per framework: the rows of a framework's other paths (flower-message, flower-secagg) go to
        # its page (flower.md)
        page = ROOT / "docs" / "frameworks" / f"{key.split('-')[0]}.md"
        assert page.is_file(), f"{key} has a defect row but no report {page.relative_to(ROOT)}"
        text = page.read_text()
        missing = [part for part in REPORT_PARTS if part not in text]
        assert not missing, f"{page.name} lacks {missing}"
        for script in {s for line in lines for s in re.findall(r"\(\.\./(benchmarks/frameworks/repro/[\w.]+\.py)\)",
                                                                   line)}:
            code = (ROOT / script).read_text().rstrip()
            assert f"```python\n{code}\n```" in text, f"{page.name} does not inline {script} as it is"


def test_a_report_that_drifts_from_its_reproducer_is_caught(tmp_path: Path) -> None:
    """The inlining check compares text: one changed character in the page is not the script."""
    script = (ROOT / "benchmarks" / "frameworks" / "repro" / "nvflare_scaffold.py").read_text().rstrip()
    page = (ROOT / "docs" / "frameworks" / "nvflare.md").read_text()
    assert f"```python\n{script}\n```" in page
    drifted = page.replace("N, dc_0 = 2,", "N, dc_0 = 3,")
    assert drifted != page and f"```python\n{script}\n```" not in drifted


def test_a_configuration_recorded_by_run_py_qualifies_the_cell(tmp_path: Path) -> None:
    """An algorithm checked as shipped and as the paper shows both verdicts, each named by its configuration."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "frameworks.md").write_text("<!-- framework: toy | Toy 1.0 | results -->\n")
    results = tmp_path / "benchmarks" / "frameworks" / "results" / "toy"
    results.mkdir(parents=True)
    shipped = {**_report("scaffold", False, "fail"), "configuration": "as shipped"}
    paper = {**_report("scaffold", True, "pass"), "configuration": "as the paper"}
    (results / "scaffold.json").write_text(json.dumps(shipped))
    (results / "scaffold_fraction.json").write_text(json.dumps(paper))
    row = _row(verdict_table(tmp_path), "Toy 1.0")
    assert row["SCAFFOLD"] == "**FAIL** (as shipped); pass (as the paper)"


def test_every_stored_report_records_the_kit_commit_and_the_framework_version():
    """docs/frameworks.md says so: a verdict names the kit that gave it and the framework version it judged."""
    reports = sorted((ROOT / "benchmarks" / "frameworks" / "results").rglob("*.json"))
    assert reports
    missing = [str(p.relative_to(ROOT)) for p in reports
               if not {"kit_commit", "framework_version"} <= set(json.loads(p.read_text()))]
    assert not missing, f"reports without kit_commit or framework_version (re-run them with run.py): {missing}"


def test_the_page_lists_every_defect_report():
    """docs/frameworks.md's introduction links each page under docs/frameworks/ that is a defect report."""
    page = (ROOT / "docs" / "frameworks.md").read_text()
    intro = page[:page.index("## What a verdict means")]
    reports = [p.name for p in sorted((ROOT / "docs" / "frameworks").glob("*.md"))
               if "Ready to paste into" in p.read_text()]
    assert reports
    missing = [name for name in reports if f"(frameworks/{name})" not in intro]
    assert not missing, f"defect reports not linked from docs/frameworks.md's introduction: {missing}"

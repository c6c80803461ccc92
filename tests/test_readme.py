"""The README's quick start and CI run the same test command, and the CLI's main job is wired up."""
import re
from pathlib import Path

from fedtheory.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def test_quick_start_has_exactly_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)
    assert len(commands) == 2
    assert "fedtheory verify" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1].strip() in ci


def test_ci_runs_command_1_exactly_first_on_a_base_install():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    command_1 = re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)[0].strip()
    assert command_1 == "pip install . && fedtheory verify"
    ci = (ROOT / ".ci" / "run").read_text()
    # command 1 runs (in braces, only to send its output to a log) before the test extras are installed
    base_step = ci.index("{ " + command_1 + "; }")
    assert base_step < ci.index('pip install -e ".[test')
    assert '"$PYTHON" -m venv .venv-base' in ci[:base_step]
    for step in ('fedtheory $command --help', "fedtheory coverage", "fedtheory problems list"):
        assert step in ci[base_step:ci.index('pip install -e ".[test')]


def test_cli_has_main_subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "verify" in sub.choices


def test_the_readmes_generated_numbers_are_current():
    from fedtheory.report.readme import update_readme

    readme = (ROOT / "README.md").read_text()
    for name in ("ledger-summary", "false-statements", "coverage-totals", "framework-verdicts", "discrimination"):
        assert f"<!-- generated: {name} -->" in readme, f"README has no generated block {name!r}"
    assert update_readme(readme) == readme, "stale: run python -m fedtheory.report.readme README.md"


def test_the_false_statements_come_in_three_tables():
    # The papers' statements false as printed, those false under a named reading, and fedtheory's own readings
    # or folklore (not statements of the papers), in this order, each claim in the table of its false_kind.
    from fedtheory.claims import load_all
    from fedtheory.report.readme import blocks

    tables = blocks()["false-statements"]
    heads = ("**False as printed**", "**False under a named reading**",
             "**fedtheory's own readings or folklore found false**")
    assert tables.index(heads[0]) < tables.index(heads[1]) < tables.index(heads[2])
    parts = dict(zip(("printed", "reading", "ours"), (tables.split(heads[1])[0], tables.split(heads[1])[1].split(
        heads[2])[0], tables.split(heads[2])[1])))
    for c in load_all().values():
        if c.expected == "violated":
            assert f"`{c.id}`" in parts[c.false_kind], c.id


def test_every_test_and_benchmark_file_the_docs_name_exists():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {(doc.name, path) for doc in docs
             for path in re.findall(r"\b((?:tests|benchmarks)/[A-Za-z0-9_/]+\.py)\b", doc.read_text())}
    missing = sorted(f"{doc}: {path}" for doc, path in named if not (ROOT / path).exists())
    assert not missing, missing

"""The command line on a base install: every parser builds without the optional packages, and a subcommand that
needs one says which extra to install in one line (exit 2), with no traceback.

A base install is simulated by a process in which importing an optional package fails (CI also runs README
command 1 in a fresh virtual environment with the base dependencies only: .ci/run's first step).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fedtheory.cli import build_parser, subcommands

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("hypothesis", "torch", "flwr", "pfl", "PEPit", "dask", "distributed", "pandas", "pyarrow")

BLOCKING_PRELUDE = textwrap.dedent(f"""
    import sys

    class _Absent:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {OPTIONAL!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, _Absent())
""")


def run_base(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    code = BLOCKING_PRELUDE + f"\nfrom fedtheory.cli import main\nsys.exit(main({args!r}))\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "100"})


@pytest.mark.parametrize("command", ["", *subcommands()])
def test_every_help_works_without_the_optional_packages(command: str) -> None:
    done = run_base([command, "--help"] if command else ["--help"])
    assert done.returncode == 0, done.stderr
    assert "usage: fedtheory" in done.stdout and "Traceback" not in done.stderr


def test_conform_without_hypothesis_names_the_extra_in_one_line() -> None:
    done = run_base(["conform", "mymodule:make", "--as", "fedavg"])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "fedtheory conform: fedtheory conform needs hypothesis, which is not installed: pip install 'fedtheory[test]'"]


def test_worst_case_without_pepit_still_runs_and_reports_no_pep(tmp_path: Path) -> None:
    done = run_base(["verify", "--claim", "classic.gd.contraction", "--worst-case", "--evaluations", "3", "--quiet",
                     "--out", str(tmp_path)])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def _all_help_texts() -> list[tuple[str, str]]:
    """(where, text) of the top-level description and every subcommand's help, description and option help."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    texts = [("fedtheory", parser.description or "")]
    for choice in sub._choices_actions:
        texts.append((f"{choice.dest} (summary)", choice.help or ""))
    for name, p in sub.choices.items():
        texts.append((f"{name} (description)", p.description or ""))
        for action in p._actions:
            if action.help and action.dest != "help":
                texts.append((f"{name} {'/'.join(action.option_strings) or action.dest}", action.help))
    return texts


@pytest.mark.parametrize("where, text", _all_help_texts())
def test_help_texts_are_sentences_without_markup(where: str, text: str) -> None:
    assert text, f"{where}: no help text"
    assert "``" not in text and ":class:" not in text and ":mod:" not in text and ":func:" not in text, where
    assert text[0].isupper() or text[0] in "-'\"", f"{where}: a help text starts a sentence: {text!r}"
    assert text.rstrip().endswith("."), f"{where}: a help text ends its sentence: {text!r}"
    assert "DESIGN.md" not in text and "issue" not in text.lower(), where


def test_conform_imports_a_module_from_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "kit_factory_here.py").write_text("def make():\n    raise ValueError('made it here')\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from fedtheory.cli import main; "
                           "sys.exit(main(['conform', 'kit_factory_here:make', '--as', 'fedavg']))"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    # sys.path[0] of "python -c" is "" (the cwd) already; the console script's is its bin folder: emulate it
    assert "made it here" in done.stderr, done.stderr


def test_a_console_script_finds_the_users_module_in_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "kit_factory_cwd.py").write_text("def make():\n    raise ValueError('found in cwd')\n")
    code = ("import sys; sys.path = [p for p in sys.path if p not in ('', '.')]; "
            "from fedtheory.cli import main; sys.exit(main(['conform', 'kit_factory_cwd:make', '--as', 'fedavg']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and "found in cwd" in done.stderr, done.stderr


def test_the_readme_states_the_claim_count_a_base_install_runs() -> None:
    # README command 1 installs no torch: the claims that need it register nothing, and the README's generated
    # lines for command 1 must count what this install lists, not the full ledger.
    import re

    done = run_base(["verify", "--list"])
    assert done.returncode == 0, done.stderr
    listed = [line for line in done.stdout.splitlines() if line and not line.startswith(" ")]
    readme = (ROOT / "README.md").read_text()
    block = readme.split("README command 1 installs no", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    first = block.splitlines()[0]
    assert re.match(r"(\d+) claims: ", first)[1] == str(len(listed)), (first, len(listed))
    assert sum(int(n) for n in re.findall(r"(\d+) [a-zA-Z-]+(?:,|\.)", first.split(": ", 1)[1])) == len(listed)
    assert not any(line.startswith("neural.") for line in listed)

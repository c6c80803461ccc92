"""Mutation testing of fedtheory: how many plausible implementation slips do the ledger and the tests catch?

Usage (from the repository root)::

    python benchmarks/mutation/run.py                 # every curated mutant (patches/*.patch)
    python benchmarks/mutation/run.py --smoke         # the 5-mutant CI subset (exit 1 unless all are killed)
    python benchmarks/mutation/run.py --only ID ...   # selected mutants
    python benchmarks/mutation/run.py --no-tests      # ledger detector only

For each mutant: copy the tree to a temporary folder (the worktree is never modified), apply the patch with
``patch -p1``, then run two detectors separately, each restricted to what can see the mutated module
(:mod:`importmap`): the ledger of the papers whose claims modules import it (``ledger_probe.py``, the
statuses of ``fedtheory verify --paper ...``) and the test files that import it (``pytest -x``). Every child
process runs under ``nice -n 15``. Results: ``results/results.json`` and ``results/results.md``.

Ledger outcome: ``killed`` (some claim VIOLATED, COUNTEREXAMPLE-LOST, or RUN-DIFFERS: its run certified as not the paper's
algorithm), ``error`` (no verdict, but a claim
ERRORed or the run crashed/timed out: a crash does not tell the user what is wrong), ``survived``.
Test outcome: ``killed`` (pytest exit 1, a failing test), ``error`` (collection/usage error, exit 2-4, or a
timeout), ``survived`` (exit 0). Claims or tests that already fail on the unmutated tree (the baseline) are
not counted as kills.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from catalogue import SMOKE  # noqa: E402
from importmap import ImportGraph, file_to_module  # noqa: E402

KILL_STATUSES = ("VIOLATED", "COUNTEREXAMPLE-LOST", "RUN-DIFFERS")
IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "*.egg-info",
                                "fedtheory-claims", "results", "mutants", "cosmic-ray*", "*.sqlite")


def read_patch(path: Path) -> dict[str, str]:
    """Header fields of a patch file plus the file it touches."""
    meta: dict[str, str] = {"patch": path.name}
    for line in path.read_text().splitlines():
        m = re.match(r"# (\w+): (.*)", line)
        if m:
            meta[m.group(1)] = m.group(2)
        elif line.startswith("+++ b/"):
            meta["file"] = line[len("+++ b/"):].strip()
    missing = {"id", "family", "description", "reference", "file"} - set(meta)
    if missing:
        raise ValueError(f"{path.name}: missing header fields {sorted(missing)}")
    return meta


def all_patches() -> list[Path]:
    return sorted((HERE / "patches").glob("*.patch"))


def apply_patch(tree: Path, patch: Path, dry_run: bool = False) -> subprocess.CompletedProcess:
    cmd = ["patch", "-p1", "--forward", "--silent", "--no-backup-if-mismatch", "-d", str(tree), "-i", str(patch)]
    if dry_run:
        cmd.insert(1, "--dry-run")
    return subprocess.run(cmd, capture_output=True, text=True)


def classify_ledger(probe: dict | None, baseline: dict[str, str], crashed: bool) -> tuple[str, list[str]]:
    """(outcome, claims that decided it) from a ledger probe's statuses; see the module docstring."""
    if probe is None:
        return ("error", ["<crash>"] if crashed else ["<timeout>"])
    statuses = probe["statuses"]
    kills = [cid for cid, s in statuses.items() if s in KILL_STATUSES and baseline.get(cid) not in KILL_STATUSES]
    if kills:
        return "killed", kills
    errors = [cid for cid, s in statuses.items() if s == "ERROR" and baseline.get(cid) != "ERROR"]
    if errors:
        return "error", errors
    return "survived", []


def classify_tests(returncode: int | None) -> str:
    if returncode is None:
        return "error"
    if returncode == 0:
        return "survived"
    if returncode == 1:
        return "killed"
    return "error"


def _run(cmd: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, float]:
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    try:
        p = subprocess.run(["nice", "-n", "15", *cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                           env=env)
        return p.returncode, (p.stdout + p.stderr)[-3000:], time.perf_counter() - start
    except subprocess.TimeoutExpired:
        return None, "timeout", time.perf_counter() - start


def run_ledger(tree: Path, papers: list[str], timeout: float, stop: bool,
               order: Path | None = None) -> tuple[dict | None, bool, float]:
    out = tree / "_probe.json"
    cmd = [sys.executable, str(HERE / "ledger_probe.py"), str(out), *papers] + (["--stop-on-kill"] if stop else [])
    if order is not None and order.exists():
        cmd += ["--order", str(order)]
    rc, log, secs = _run(cmd, tree, timeout)
    if rc == 0 and out.exists():
        return json.loads(out.read_text()), False, secs
    return None, rc is not None, secs


def run_tests(tree: Path, files: list[str], timeout: float) -> tuple[int | None, str, float]:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *files]
    return _run(cmd, tree, timeout)


def copy_tree(dest: Path) -> Path:
    shutil.copytree(ROOT, dest, ignore=IGNORE)
    return dest


def merge_rows(old: list[dict], new: list[dict], detectors: tuple[str, ...]) -> list[dict]:
    """Rows of ``old`` with the fields of ``detectors`` taken from ``new`` (same mutant id); new ids appended."""
    by_id = {r["id"]: dict(r) for r in old}
    for r in new:
        if r["id"] not in by_id:
            by_id[r["id"]] = r
            continue
        for key, value in r.items():
            if not any(key.startswith(d) for d in ("ledger", "tests")) or any(key.startswith(d) for d in detectors):
                by_id[r["id"]][key] = value
    return list(by_id.values())


def write_results(rows: list[dict], out_dir: Path, meta: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps({"meta": meta, "mutants": rows}, indent=1))
    (out_dir / "results.md").write_text(render_markdown(rows, meta))


def summary(rows: list[dict]) -> dict[str, dict[str, int]]:
    out = {}
    for det in ("ledger", "tests"):
        vals = [r[det] for r in rows if r.get(det) is not None]
        out[det] = {k: sum(v == k for v in vals) for k in ("killed", "error", "survived")} | {"total": len(vals)}
    either = [r for r in rows if r.get("tests") is not None]
    out["either"] = {"killed": sum(r["ledger"] == "killed" or r["tests"] == "killed" for r in either),
                     "total": len(either)}
    return out


def render_markdown(rows: list[dict], meta: dict) -> str:
    s = summary(rows)
    lines = ["# Mutation results", "",
             f"Command: `{meta['command']}`; {meta['when']}; {meta['seconds']:.0f} s wall time.", ""]
    for det in ("ledger", "tests"):
        d = s[det]
        if d["total"]:
            lines.append(f"- **{det}**: killed {d['killed']} of {d['total']} "
                         f"({100 * d['killed'] / d['total']:.0f}%), error {d['error']}, survived {d['survived']}")
    if s["either"]["total"]:
        lines.append(f"- **ledger or tests**: killed {s['either']['killed']} of {s['either']['total']}")
    lines += ["", "| # | mutant | family | ledger | decided by | tests | description | reference |",
              "|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        by = ", ".join(f"`{c}`" for c in r.get("ledger_claims", [])[:2])
        lines.append(f"| {i} | `{r['id']}` | {r['family']} | {r['ledger']} | {by} | {r.get('tests') or '-'} | "
                     f"{r['description'].replace('|', '/')} | {r['reference'].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def run_mutant(m: dict, graph: ImportGraph, pristine: Path, tmp: Path, args: argparse.Namespace) -> dict:
    """Apply one mutant to a fresh copy of the pristine tree and run the selected detectors on it."""
    target = file_to_module(ROOT, m["file"])
    papers, tests = graph.papers_for(target), graph.tests_for(target)
    tree = tmp / m["id"]
    shutil.copytree(pristine, tree, ignore=shutil.ignore_patterns("_probe.json"))
    try:
        applied = apply_patch(tree, Path(m["path"]))
        row = {k: m[k] for k in ("id", "family", "file", "description", "reference", "patch")}
        row |= {"papers": papers, "test_files": tests}
        if applied.returncode != 0:
            return row | {"ledger": "not-applied", "tests": None, "error": applied.stdout + applied.stderr}
        row["ledger"] = None
        if not args.no_ledger:
            probe, crashed, lsecs = run_ledger(tree, papers, args.timeout, stop=not args.full_ledger,
                                               order=pristine / "_probe.json")
            row["ledger"], row["ledger_claims"] = classify_ledger(probe, baseline_of(pristine), crashed)
            row["ledger_seconds"] = round(lsecs, 1)
        row["tests"] = None
        if not args.no_tests:
            rc, log, tsecs = run_tests(tree, tests, args.timeout)
            row["tests"], row["tests_seconds"] = classify_tests(rc), round(tsecs, 1)
            row["tests_tail"] = log.strip().splitlines()[-1] if log.strip() else ""
        return row
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def baseline_of(pristine: Path) -> dict[str, str]:
    """Claim statuses of the unmutated tree (written by the baseline ledger run)."""
    probe = pristine / "_probe.json"
    return json.loads(probe.read_text()).get("statuses", {}) if probe.exists() else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help=f"only the CI subset {SMOKE}")
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these mutant ids")
    ap.add_argument("--no-tests", action="store_true", help="skip the test-suite detector")
    ap.add_argument("--no-ledger", action="store_true", help="skip the ledger detector")
    ap.add_argument("--update", action="store_true",
                    help="merge into an existing results.json: only the detectors run now are overwritten")
    ap.add_argument("--full-ledger", action="store_true", help="run every selected claim (no stop at first kill)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per detector per mutant")
    ap.add_argument("--out", default=str(HERE / "results"), help="output folder")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run side by side (default 2: one per core)")
    args = ap.parse_args(argv)

    metas = [read_patch(p) | {"path": str(p)} for p in all_patches()]
    if args.smoke:
        metas = [m for m in metas if m["id"] in SMOKE]
    if args.only:
        unknown = set(args.only) - {m["id"] for m in metas}
        if unknown:
            ap.error(f"unknown mutant id(s) {sorted(unknown)}")
        metas = [m for m in metas if m["id"] in args.only]
    graph = ImportGraph(ROOT)
    start = time.perf_counter()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="fedtheory-mut-") as tmp:
        pristine = copy_tree(Path(tmp) / "pristine")
        needed = [] if args.no_ledger else sorted(
            {p for m in metas for p in graph.papers_for(file_to_module(ROOT, m["file"]))})
        print(f"baseline ledger for {needed} ...", flush=True)
        base_probe, _, secs = run_ledger(pristine, needed, args.timeout * 2, stop=False) if needed else ({}, 0, 0.0)
        baseline = base_probe.get("statuses", {}) if base_probe else {}
        print(f"  {secs:.0f} s; not holding at baseline: "
              f"{ {k: v for k, v in baseline.items() if v not in ('holds', 'violated-as-recorded', 'measured')} }",
              flush=True)
        command = " ".join(["python benchmarks/mutation/run.py", *(argv if argv is not None else sys.argv[1:])])

        def one(m: dict) -> dict:
            row = run_mutant(m, graph, pristine, Path(tmp), args)
            print(f"{m['id']:40s} ledger={row['ledger']!s:9s} ({row.get('ledger_seconds', 0.0):5.0f} s) "
                  f"tests={row['tests']} {row.get('ledger_claims', [])[:1]}", flush=True)
            return row

        # Mutants are independent (each in its own copy of the tree): --jobs of them run side by side.
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(one, m) for m in metas]
            for future in as_completed(futures):
                rows.append(future.result())
                write_results(sorted(rows, key=lambda r: r["patch"]), Path(args.out) / "partial",
                              {"command": command, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "seconds": time.perf_counter() - start, "partial": True})
        rows.sort(key=lambda r: r["patch"])
    meta = {"command": " ".join(["python benchmarks/mutation/run.py", *(argv if argv is not None else sys.argv[1:])]),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seconds": time.perf_counter() - start,
            "partial": False, "baseline_not_holding": {k: v for k, v in baseline.items()
                                                      if v in ("VIOLATED", "COUNTEREXAMPLE-LOST", "RUN-DIFFERS", "ERROR")}}
    if args.update and (Path(args.out) / "results.json").exists():
        previous = json.loads((Path(args.out) / "results.json").read_text())
        detectors = tuple(d for d, off in (("ledger", args.no_ledger), ("tests", args.no_tests)) if not off)
        rows = merge_rows(previous["mutants"], rows, detectors)
        meta["command"] = previous["meta"]["command"] + " && " + meta["command"]
        meta["seconds"] += previous["meta"]["seconds"]
    write_results(rows, Path(args.out), meta)
    print(json.dumps(summary(rows)))
    bad = [r for r in rows if r["ledger"] == "not-applied"]
    if args.smoke:  # the smoke mutants are known kills: anything else means the harness itself is broken
        bad += [r for r in rows if r["ledger"] not in (None, "killed") or r["tests"] not in (None, "killed")]
    for r in bad:
        print(f"FAILED: {r['id']}: ledger={r['ledger']} tests={r['tests']}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

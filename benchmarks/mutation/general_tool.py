"""The general mutation tool (cosmic-ray) over fedtheory/algorithms/, fedtheory/compressors/ and
fedtheory/participation.py, scored against the ledger.

Usage (from the repository root; needs the ``mutation`` extra: ``pip install -e ".[mutation]"``)::

    python benchmarks/mutation/general_tool.py [--sample 150] [--seed 0] [--jobs 2] [--out DIR]

cosmic-ray generates every mutant its operators allow in the three scopes (its own enumeration:
``cosmic_ray.commands.init``); running the ledger on all of them takes days on 2 cores, so this script runs a
seeded random sample, stratified by file (proportional to each file's count, at least 2 per file). Each sampled
mutant is applied by cosmic-ray (``cosmic_ray.mutating.apply_mutation``) to a fresh copy of the tree and scored
by the same ledger detector as the curated mutants (``ledger_probe.py``: the statuses of ``fedtheory verify``
for the papers whose claims import the module, stop at the first kill): ``killed`` (VIOLATED,
COUNTEREXAMPLE-LOST or RUN-DIFFERS), ``error`` (the mutated code crashes the claims, or a timeout), ``survived``.

Operators: all of cosmic-ray's core operators except the binary-operator replacements into bitwise and shift
operators (``|``, ``&``, ``^``, ``<<``, ``>>``): on floating-point arrays they raise TypeError at the first call,
so they are crashes, not semantic slips, and would crowd the sample.

Output: ``general_tool.json`` (every sampled mutant: file, line, operator, the mutated line, outcome, deciding
claim) and ``general_tool.md``; survivors are classified by hand in docs/verification-power.md.
"""
from __future__ import annotations

import argparse
import difflib
import json
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from importmap import ImportGraph, file_to_module  # noqa: E402
from run import IGNORE, classify_ledger, classify_tests, run_ledger, run_tests  # noqa: E402

SCOPES = ("fedtheory/algorithms", "fedtheory/compressors", "fedtheory/participation.py")
EXCLUDED_OPERATOR_PARTS = ("BitOr", "BitAnd", "BitXor", "LShift", "RShift")


def scope_files(root: Path) -> list[Path]:
    files: list[Path] = []
    for scope in SCOPES:
        path = root / scope
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [f for f in files if f.name != "__init__.py" or f.stat().st_size > 0]


def enumerate_mutants(root: Path) -> list[dict]:
    """Every (file, operator, occurrence) cosmic-ray generates in the scopes, minus the excluded operators."""
    from cosmic_ray.commands.init import _all_work_items

    items = []
    for work in _all_work_items([f.relative_to(root) for f in scope_files(root)], {}):
        m = work.mutations[0]
        if any(part in m.operator_name for part in EXCLUDED_OPERATOR_PARTS):
            continue
        items.append({"file": str(m.module_path), "operator": m.operator_name, "occurrence": m.occurrence,
                      "line": m.start_pos[0], "definition": m.definition_name})
    return items


def stratified_sample(items: list[dict], size: int, seed: int) -> list[dict]:
    """``size`` items, proportional to each file's count with at least 2 per file, drawn with ``seed``."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_file[item["file"]].append(item)
    rng = random.Random(seed)
    total = len(items)
    picked: list[dict] = []
    for file in sorted(by_file):
        pool = by_file[file]
        k = min(len(pool), max(2, round(size * len(pool) / total)))
        picked += rng.sample(pool, k)
    return sorted(picked, key=lambda m: (m["file"], m["line"], m["operator"], m["occurrence"]))


def apply(tree: Path, item: dict) -> str | None:
    """Apply one cosmic-ray mutation inside ``tree``; the diff of the changed lines, or None if none applies."""
    from cosmic_ray.mutating import apply_mutation
    from cosmic_ray.plugins import get_operator

    path = tree / item["file"]
    original, mutated = apply_mutation(path, get_operator(item["operator"])(), item["occurrence"])
    if mutated is None:
        return None
    diff = difflib.unified_diff(original.splitlines(), mutated.splitlines(), lineterm="", n=0)
    return "\n".join(line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def write_markdown(out: Path, data: dict) -> None:
    meta, rows = data["meta"], data["mutants"]
    lines = ["# cosmic-ray against the ledger", "", f"`{meta['command']}`; {meta['when']}; {meta['seconds']} s.", "",
             f"Generated {meta['generated']} mutants {meta['generated_per_scope']}; ran a stratified sample of "
             f"{meta['sample']} (seed {meta['seed']}): {meta['summary']}.", ""]
    if "tests_on_survivors" in meta:
        lines += [f"Test detector on the ledger's survivors and errors: {meta['tests_on_survivors']}.", ""]
    lines += ["| file:line | operator | mutated line | ledger | decided by | ledger now | tests | class: reason |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        new = (r.get("diff") or "").splitlines()
        shown = next((line[1:].strip() for line in new if line.startswith("+")), "<removed>")
        why = f"{r['classification']}: {r['reason']}" if "classification" in r else ""
        lines.append(f"| {r['file']}:{r['line']} | {r['operator'].split('/')[-1]}#{r['occurrence']} | "
                     f"`{shown.replace('|', '/')[:90]}` | {r['ledger']} | {', '.join(r.get('ledger_claims', [])[:1])} | "
                     f"{r.get('ledger_now', '')} | {r.get('tests', '')} | {why.replace('|', '/')} |")
    (out / "general_tool.md").write_text("\n".join(lines) + "\n")


#: Always run on a survivor: the bad-input suite (validation paths) and the algorithm-contract suite (examples,
#: registry, draw/round_given, outcome laws). The ledger's own test file is left out: the ledger is the other
#: detector.
CONTRACT_TESTS = ("tests/test_bad_input.py", "tests/test_conformance.py")


def direct_tests(module: str) -> list[str]:
    """The test files that name ``module`` (its dotted path), plus :data:`CONTRACT_TESTS`."""
    named = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "tests").rglob("test_*.py"))
             if module in p.read_text() and p.name not in ("test_claims_ledger.py", "test_mutation_harness.py")]
    return sorted(set(named) | set(CONTRACT_TESTS))


def tests_on_survivors(out: Path, jobs: int, timeout: float) -> dict:
    """Run a test detector on every mutant the ledger did not kill (``pytest -x`` on :func:`direct_tests`: the
    files that name the module and the contract suites; the whole default suite would take hours over ~100
    mutants) and record it as ``tests`` in general_tool.json: a survivor the tests kill is a behaviour the unit
    tests pin down even though no claim observes it."""
    data = json.loads((out / "general_tool.json").read_text())
    todo = [r for r in data["mutants"] if r["ledger"] in ("survived", "error")]
    with tempfile.TemporaryDirectory(prefix="fedtheory-cr-tests-") as tmp:
        pristine = Path(tmp) / "pristine"
        shutil.copytree(ROOT, pristine, ignore=IGNORE)

        def one(index: int, row: dict) -> None:
            tree = Path(tmp) / f"t{index}"
            shutil.copytree(pristine, tree)
            try:
                apply(tree, row)
                rc, log, secs = run_tests(tree, direct_tests(file_to_module(ROOT, row["file"])), timeout)
                row["tests"], row["tests_seconds"] = classify_tests(rc), round(secs, 1)
                row["tests_tail"] = log.strip().splitlines()[-1] if log.strip() else ""
                print(f"{row['file']}:{row['line']} {row['operator']}: tests={row['tests']}", flush=True)
            finally:
                shutil.rmtree(tree, ignore_errors=True)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for future in as_completed([pool.submit(one, i, r) for i, r in enumerate(todo)]):
                future.result()
    data["meta"]["tests_on_survivors"] = {k: sum(r.get("tests") == k for r in todo)
                                          for k in ("killed", "error", "survived")}
    (out / "general_tool.json").write_text(json.dumps(data, indent=1))
    write_markdown(out, data)
    return data["meta"]["tests_on_survivors"]


def key_of(row: dict) -> str:
    return f"{row['file']}:{row['line']}:{row['operator']}#{row['occurrence']}"


def recheck(out: Path, keys: list[str], jobs: int, timeout: float) -> dict:
    """Rerun the ledger on the listed survivors (``file:line:operator#occurrence``) against the current tree and
    record the outcome as ``ledger_now``: what the claims added since the run see."""
    data = json.loads((out / "general_tool.json").read_text())
    graph = ImportGraph(ROOT)
    todo = [r for r in data["mutants"] if key_of(r) in keys]
    if len(todo) != len(set(keys)):
        raise SystemExit(f"unknown keys: {sorted(set(keys) - {key_of(r) for r in todo})}")
    with tempfile.TemporaryDirectory(prefix="fedtheory-cr-recheck-") as tmp:
        pristine = Path(tmp) / "pristine"
        shutil.copytree(ROOT, pristine, ignore=IGNORE)
        papers = sorted({p for r in todo for p in graph.papers_for(file_to_module(ROOT, r["file"]))})
        base, _, _ = run_ledger(pristine, papers, timeout * 2, stop=False)
        baseline = base.get("statuses", {}) if base else {}

        def one(index: int, row: dict) -> None:
            tree = Path(tmp) / f"r{index}"
            shutil.copytree(pristine, tree, ignore=shutil.ignore_patterns("_probe.json"))
            try:
                apply(tree, row)
                probe, crashed, _ = run_ledger(tree, graph.papers_for(file_to_module(ROOT, row["file"])), timeout,
                                               stop=True, order=pristine / "_probe.json")
                row["ledger_now"], row["ledger_now_claims"] = classify_ledger(probe, baseline, crashed)
                print(f"{row['file']}:{row['line']}: ledger now {row['ledger_now']} {row['ledger_now_claims'][:1]}",
                      flush=True)
            finally:
                shutil.rmtree(tree, ignore_errors=True)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for future in as_completed([pool.submit(one, i, r) for i, r in enumerate(todo)]):
                future.result()
    (out / "general_tool.json").write_text(json.dumps(data, indent=1))
    return {r["file"] + ":" + str(r["line"]): r["ledger_now"] for r in todo}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tests-on-survivors", action="store_true",
                    help="after a run: the test detector on the ledger's survivors (results updated in place)")
    ap.add_argument("--recheck", nargs="+", metavar="FILE:LINE:OPERATOR#N",
                    help="after a run: the ledger again on these survivors (the claims added since)")
    ap.add_argument("--sample", type=int, default=150, help="mutants to run (stratified by file)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    if args.recheck:
        print(json.dumps(recheck(Path(args.out), args.recheck, args.jobs, args.timeout)))
        return 0
    if args.tests_on_survivors:
        print(json.dumps(tests_on_survivors(Path(args.out), args.jobs, args.timeout)))
        return 0

    items = enumerate_mutants(ROOT)
    counts = defaultdict(int)
    for item in items:
        counts[next(s for s in SCOPES if item["file"].startswith(s))] += 1
    sample = stratified_sample(items, args.sample, args.seed)
    print(f"cosmic-ray generated {len(items)} mutants ({dict(counts)}); running {len(sample)}", flush=True)
    graph = ImportGraph(ROOT)
    start = time.perf_counter()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="fedtheory-cr-") as tmp:
        pristine = Path(tmp) / "pristine"
        shutil.copytree(ROOT, pristine, ignore=IGNORE)
        papers_all = sorted({p for it in sample for p in graph.papers_for(file_to_module(ROOT, it["file"]))})
        base, _, _ = run_ledger(pristine, papers_all, args.timeout * 2, stop=False)
        baseline = base.get("statuses", {}) if base else {}

        def one(index: int, item: dict) -> dict:
            tree = Path(tmp) / f"m{index}"
            shutil.copytree(pristine, tree, ignore=shutil.ignore_patterns("_probe.json"))
            try:
                diff = apply(tree, item)
                row = dict(item, diff=diff)
                if diff is None:
                    return row | {"ledger": "not-applied"}
                papers = graph.papers_for(file_to_module(ROOT, item["file"]))
                probe, crashed, secs = run_ledger(tree, papers, args.timeout, stop=True, order=pristine / "_probe.json")
                row["ledger"], row["ledger_claims"] = classify_ledger(probe, baseline, crashed)
                row["seconds"] = round(secs, 1)
                return row
            finally:
                shutil.rmtree(tree, ignore_errors=True)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(one, i, item) for i, item in enumerate(sample)]
            for future in as_completed(futures):
                row = future.result()
                rows.append(row)
                print(f"{row['file']}:{row['line']} {row['operator']}#{row['occurrence']}: {row['ledger']} "
                      f"{row.get('ledger_claims', [])[:1]}", flush=True)
    rows.sort(key=lambda m: (m["file"], m["line"], m["operator"], m["occurrence"]))
    summary = {k: sum(r["ledger"] == k for r in rows) for k in ("killed", "error", "survived", "not-applied")}
    meta = {"generated": len(items), "generated_per_scope": dict(counts), "sample": len(sample),
            "seed": args.seed, "excluded_operators": EXCLUDED_OPERATOR_PARTS, "summary": summary,
            "seconds": round(time.perf_counter() - start), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": " ".join(["python benchmarks/mutation/general_tool.py", *(argv if argv is not None else
                                                                                   sys.argv[1:])])}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "general_tool.json").write_text(json.dumps({"meta": meta, "mutants": rows}, indent=1))
    write_markdown(out, {"meta": meta, "mutants": rows})
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Held-out power of the conformance kit: implementations the kit's authors never saw.

What it measures: for every family module in ``benchmarks/heldout/`` (``CORRECT`` and ``WRONG`` lists of
``(name, impl, hyper)``), ``fedtheory.conformance.check(impl, family, shrink=False, **hyper)`` (``fail_fast=True``
for the wrong ones). A wrong implementation counts as *rejected* only with verdict "fail" (a violated property);
"inconclusive", "pass" or a crash of the harness count as not rejected. A correct one counts as *accepted* only
with verdict "pass". ``hyper`` may carry check keywords (``rtol``, ``fixed``) besides hyperparameters.

Independence rule: the implementations were written from the five papers (their statements as published), the classic
papers and the kit's public documentation (docs/conformance.md, docs/design.md, contract.py, __init__.py) only,
without reading the kit's variants.py, native.py, expected.py, fedtheory/algorithms/ or benchmarks/mutation/.
For efl/docofl/ofediq the keyword names of ``draw`` were found by calling ``check`` with a probe that records
its arguments (docs/conformance.md does not list them).

Command:  python -m benchmarks.heldout.run [--batch N] [family ...]      (from the repository root)
Writes benchmarks/heldout/results.md and results.json (only when run without family names; with family names it
only prints). ``--batch 2`` runs the second held-out batch, ``benchmarks/heldout/batch2/`` (written after the
first batch had been used to fix the kit), and writes batch2/results.md and batch2/results.json instead; ``--batch N`` does the same for
``benchmarks/heldout/batchN/`` (the third batch, ``batch3/``, was written after batches 1 and 2 had been used to fix
the kit). Run time: about 90 s for all 105 implementations on the shared 2-core machine (see results.md).
"""
from __future__ import annotations

import importlib
import json
import sys
import time
import traceback
from pathlib import Path

from fedtheory import conformance

HERE = Path(__file__).resolve().parent
FAMILIES = ["dane", "fedred", "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn",
            "efl", "docofl", "ofediq", "fedavg", "fedprox", "scaffold", "feddyn", "scaffnew"]


def first_failing(report):
    """The first violated row of the report's table (its name carries the kit-drawn hyperparameters), and diagnosis."""
    for line in report.table().splitlines():
        if " violated " in line:
            return " ".join(line.split())[:220]
    f = report.failures
    return f"{f[0].prop.id}: {f[0].diagnosis}" if f else ""


def _real_violation(report):
    """A violated row whose diagnosis is not an exception raised inside the implementation."""
    return [r for r in report.failures if not str(r.diagnosis).startswith("raised ")]


def run_one(family, name, impl, hyper, expected, crash_is_bug=False):
    """Verdict "fail" counts as a rejection only through a violated property; a row "raised ..." (an exception in
    OUR code, e.g. because the kit handed an opaque-state implementation a state it never returned) does not,
    unless the crash is the bug itself (``CRASH_IS_THE_BUG``, e.g. a list indexed by the client id). Then the
    check is re-run without fail_fast to see whether another property catches it."""
    t0 = time.perf_counter()
    counted = None
    try:
        rep = conformance.check(impl, family, shrink=False, fail_fast=(expected == "wrong"), **hyper)
        verdict = rep.verdict
        first = first_failing(rep) if verdict == "fail" else (rep.why_inconclusive() if verdict == "inconclusive" else "")
        table = rep.table()
        if verdict == "fail" and not crash_is_bug and not _real_violation(rep):
            if expected == "wrong":
                rep2 = conformance.check(impl, family, shrink=False, fail_fast=False, **hyper)
                table += "\n-- re-run without fail_fast --\n" + rep2.table()
                real = _real_violation(rep2)
                counted = "fail" if real else "fail (crash only)"
                first += f" || real violation: {real[0].prop.id}: {real[0].diagnosis}" if real else " || only crashes"
            else:
                counted = "fail (crash only)"
    except Exception as exc:  # a crash of the harness or of our code: counts against the kit's score
        verdict, first, table = "crash", f"{type(exc).__name__}: {exc}", traceback.format_exc()
    return {"family": family, "name": name, "expected": expected, "verdict": verdict,
            "counted": counted or verdict, "first": str(first),
            "seconds": round(time.perf_counter() - t0, 2), "hyper": {k: repr(v) for k, v in hyper.items()},
            "table": table}


def main(argv):
    pkg, out_dir, batch = "benchmarks.heldout", HERE, "1"
    if argv[:1] == ["--batch"]:
        batch = argv[1]
        if argv[1:2] != ["1"]:
            pkg, out_dir = f"benchmarks.heldout.batch{argv[1]}", HERE / f"batch{argv[1]}"
        argv = argv[2:]
    fams = argv or [f for f in FAMILIES if (out_dir / f"{f}.py").exists()]
    rows = []
    t_all = time.perf_counter()
    for fam in fams:
        mod = importlib.import_module(f"{pkg}.{fam}")
        for expected, lst in (("correct", mod.CORRECT), ("wrong", mod.WRONG)):
            for name, impl, hyper in lst:
                r = run_one(fam, name, impl, dict(hyper), expected, name in getattr(mod, 'CRASH_IS_THE_BUG', ()))
                rows.append(r)
                print(f"{fam:24s} | {name:38s} | {expected:7s} | {r['counted']:12s} | {r['first'][:90]} | {r['seconds']}",
                      flush=True)
    total = time.perf_counter() - t_all
    summ = {}
    for r in rows:
        s = summ.setdefault(r["family"], {"wrong": 0, "rejected": 0, "correct": 0, "accepted": 0})
        if r["expected"] == "wrong":
            s["wrong"] += 1; s["rejected"] += r["counted"] == "fail"
        else:
            s["correct"] += 1; s["accepted"] += r["verdict"] == "pass"
    allw = sum(s["wrong"] for s in summ.values()); allr = sum(s["rejected"] for s in summ.values())
    allc = sum(s["correct"] for s in summ.values()); alla = sum(s["accepted"] for s in summ.values())
    lines = ["# Held-out power of the conformance kit", "",
             "Implementations written for this audit from the papers' specs and the kit's public documentation only",
             "(never from the kit's variants/native/expected modules, fedtheory/algorithms or benchmarks/mutation).",
             f"`python -m benchmarks.heldout.run{'' if batch == '1' else ' --batch ' + batch}` (shrink=False; fail_fast=True for wrong ones). A wrong one counts as",
             "rejected only by a violated property (verdict fail); a rejection made only of exceptions raised in our",
             "code is re-checked without fail_fast and counted only if a real property is violated.", "",
             f"Overall: wrong rejected {allr}/{allw}, correct accepted {alla}/{allc}; run time {total:.0f} s.", "",
             "| family | wrong rejected | correct accepted |", "|---|---|---|"]
    for f, s in summ.items():
        lines.append(f"| {f} | {s['rejected']}/{s['wrong']} | {s['accepted']}/{s['correct']} |")
    lines += ["", "| family | name | expected | verdict | first failing property | seconds |", "|---|---|---|---|---|---|"]
    for r in rows:
        first = r["first"].replace("|", "/").replace("\n", " ")[:200]
        lines.append(f"| {r['family']} | {r['name']} | {r['expected']} | {r['counted']} | {first} | {r['seconds']} |")
    misses = [r for r in rows if (r["expected"] == "wrong" and r["counted"] != "fail") or
              (r["expected"] == "correct" and r["verdict"] != "pass")]
    lines += ["", "## Misses (raw; diagnoses below)", ""]
    for r in misses:
        lines += [f"### {r['family']} / {r['name']} ({r['expected']}, verdict {r['verdict']})", "", "```",
                  r["table"][:4000], "```", ""]
    out_md = "\n".join(lines) + "\n"
    extra = out_dir / "misses_diagnosis.md"
    if extra.exists():
        out_md += "\n" + extra.read_text()
    if not argv:
        (out_dir / "results.md").write_text(out_md)
        (out_dir / "results.json").write_text(json.dumps({"rows": rows, "summary": summ, "seconds": total}, indent=1))
    print("\n".join(lines[:6 + len(summ) + 2]))


if __name__ == "__main__":
    main(sys.argv[1:])

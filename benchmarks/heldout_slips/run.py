"""Held-out slip driver.

For each slip of slips.py: copy the tree under test (without .git) to a temporary folder, apply the slip,
check that it changes behaviour (probe.py digest of a few rounds vs the clean tree's), then run

    python -m fedtheory verify --quiet --jobs 1 --out TMP --claim ID ...

with PYTHONPATH = the copy, on the claims cited for the statements about the broken algorithm:
  * the coverage statements (``python -m fedtheory coverage --json``) of the paper about that algorithm
    (FAMILY_STATEMENTS: its Algorithm and the theorems/lemmas/corollaries about it; tables/figures excluded);
  * for the baselines (FedAvg, FedProx, SCAFFOLD, FedDyn, Scaffnew, GD), whose own papers are not coverage
    papers, also the ``--paper classic`` claims whose citation (``verify --list``) names that baseline's paper.
A slip is rejected when any of those claims fails (VIOLATED, COUNTEREXAMPLE-LOST, RUN-DIFFERS or ERROR; ERRORs
are counted separately). The clean tree's verdicts on the same claims are run first (a claim failing on the
clean tree is excluded from rejection, and said so).

    python benchmarks/heldout_slips/run.py [--tree DIR] [--only ID ...] [--deadline HH:MM] [--full]

Writes results.md and results.json next to this file and prints the count.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from slips import SLIPS  # noqa: E402

FAIL = ("VIOLATED", "COUNTEREXAMPLE-LOST", "RUN-DIFFERS", "ERROR")
PY = sys.executable

# Statements (paper, name) about each algorithm family. None = every statement of that paper that is not a
# Table or Figure.
FAMILY_STATEMENTS = {
    "fedavg": [("fedelasticnet", "Algorithm 1")],
    "fedprox": [("fedelasticnet", "Algorithm 1")],
    "scaffold": [("fedelasticnet", "Algorithm 2")],
    "feddyn": [("fedelasticnet", s) for s in ("Algorithm 3", "Theorem 3.1", "Theorem B.1", "Lemma B.2", "Lemma B.3",
                                              "Lemma B.4", "Lemma B.5", "Theorem B.6")],
    "scaffnew": [],
    "gd": [],
    "dane": [("fedred", s) for s in ("Algorithm 1", "Theorem 1", "Corollary 2", "Theorem 3", "Theorem 4",
                                     "Corollary 5", "Lemma 19", "Lemma 20", "Corollary 21", "Lemma 22", "Theorem 23",
                                     "Theorem 24", "Corollary 25", "Lemma 26", "Lemma 27", "Lemma 28", "Theorem 29",
                                     "Corollary 30", "Corollary 32")],
    "fedred": [("fedred", s) for s in ("Algorithm 2", "Algorithm 3", "Theorem 6", "Theorem 8", "Theorem 9",
                                       "Lemma 11", "Theorem 33", "Theorem 34", "Lemma 35", "Theorem 36",
                                       "Theorem 37")],
    "docofl": [("docofl", None)],
    "online": [("ofediq", None)],
    "efl": [("efl", None)],
}
# Baseline papers: classic claims whose citation matches are the baseline's own statements.
BASELINE_CITES = {
    "fedavg": r"McMahan", "fedprox": r"Li et al\.? 2020|FedProx", "scaffold": r"Karimireddy",
    "feddyn": r"Acar", "scaffnew": r"Mishchenko", "gd": r"Nesterov",
}


def env_for(tree: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the working copy's files change between slips: no stale .pyc
    return env


def coverage(tree: Path) -> list[dict]:
    out = subprocess.run([PY, "-m", "fedtheory", "coverage", "--json"], cwd=tree, env=env_for(tree),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["statements"]


def classic_citations(tree: Path) -> dict[str, str]:
    out = subprocess.run([PY, "-m", "fedtheory", "verify", "--paper", "classic", "--list"], cwd=tree,
                         env=env_for(tree), capture_output=True, text=True).stdout
    cites: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"^(classic\.\S+)\s+\[classic\]", line)
        if m:
            current = m.group(1)
            cites[current] = ""
        elif current and line.startswith(" "):
            cites[current] += " " + line.strip()
    return cites


def claims_for(family: str, statements: list[dict], cites: dict[str, str]) -> tuple[list[str], list[str]]:
    names, claims = [], []
    for paper, name in FAMILY_STATEMENTS[family]:
        for e in statements:
            if e["paper"] != paper or not e["claims"]:
                continue
            if name is None and e["statement"].startswith(("Table", "Figure")):
                continue
            if name is not None and e["statement"] != name:
                continue
            names.append(f"{paper} {e['statement']}")
            claims += [c for c in e["claims"] if c not in claims]
    if family in BASELINE_CITES:
        pat = re.compile(BASELINE_CITES[family])
        for cid, text in cites.items():
            if pat.search(text) and cid not in claims:
                claims.append(cid)
        names.append(f"classic claims citing /{BASELINE_CITES[family]}/")
    return names, claims


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".git", "__pycache__", "_work", "*.pyc",
                                                             "fedtheory-claims", ".pytest_cache"))


def apply(tree: Path, slip: dict) -> None:
    path = tree / slip["file"]
    text = path.read_text()
    n = text.count(slip["old"])
    if n != 1:
        raise RuntimeError(f"slip {slip['id']}: snippet occurs {n} times in {slip['file']}")
    path.write_text(text.replace(slip["old"], slip["new"]))


def probe(tree: Path, name: str) -> str:
    r = subprocess.run([PY, str(HERE / "probe.py"), name], env=env_for(tree), capture_output=True, text=True,
                       timeout=300)
    return (r.stdout.strip() or r.stderr.strip()[-300:])


def verify(tree: Path, claims: list[str] | None, out: Path, timeout: float) -> dict:
    """Run the listed claims (None: the whole ledger)."""
    if claims is not None and not claims:
        return {"rc": None, "statuses": {}, "errors": {}, "seconds": 0.0}
    cmd = [PY, "-m", "fedtheory", "verify", "--quiet", "--jobs", "1", "--out", str(out)]
    for c in claims or []:
        cmd += ["--claim", c]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, cwd=tree, env=env_for(tree), capture_output=True, text=True, timeout=timeout)
        rc = r.returncode
        tail = (r.stdout + r.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        rc, tail = "timeout", ""
    statuses, errors, claim_seconds = {}, {}, {}
    f = out / "claims.json"
    if f.exists():
        for c in json.loads(f.read_text()):
            statuses[c["id"]] = c["status"]
            claim_seconds[c["id"]] = float(c.get("seconds") or 0.0)
            if c.get("error"):
                errors[c["id"]] = str(c["error"])[-400:]
    return {"rc": rc, "statuses": statuses, "errors": errors, "seconds": time.time() - t0, "tail": tail,
            "claim_seconds": claim_seconds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=str(HERE.parent.parent))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--deadline", default=None, help="HH:MM UTC: slips not started by then are NOT RUN")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--full", action="store_true", help="also run the whole ledger once per slip")
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--probe-only", action="store_true", help="only check which slips change behaviour (no verify)")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    slips = [s for s in SLIPS if not args.only or s["id"] in args.only]
    deadline = None
    if args.deadline:
        hh, mm = map(int, args.deadline.split(":"))
        now = dt.datetime.now(dt.timezone.utc)
        deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    work = Path(tempfile.mkdtemp(prefix="heldout_slips_"))
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    print(f"tree {tree} at {commit}; work dir {work}", flush=True)

    statements = coverage(tree)
    cites = classic_citations(tree)
    fam_claims = {f: claims_for(f, statements, cites) for f in FAMILY_STATEMENTS}

    # clean tree: probe digests and the clean verdicts of every family's claims
    clean = work / "clean"
    copy_tree(tree, clean)
    # one verify call for the union of the families' claims (the verdict of a claim does not depend on which
    # other claims run with it)
    fams = sorted({s["family"] for s in slips})
    union = sorted({c for f in fams for c in fam_claims[f][1]})
    res = verify(clean, [] if args.probe_only else union, work / "clean_verify", args.timeout)
    clean_verdicts: dict[str, dict] = {}
    for fam in fams:
        st = {c: res["statuses"].get(c, "MISSING") for c in fam_claims[fam][1]}
        clean_verdicts[fam] = {"statuses": st}
        bad = {c: v for c, v in st.items() if v in FAIL or v == "MISSING"}
        print(f"clean {fam}: {len(st)} claims" + (f", FAILING ON CLEAN: {bad}" if bad else ""), flush=True)
    print(f"clean verify: rc={res['rc']}, {res['seconds']:.0f}s", flush=True)
    # round-robin over families so that a deadline cut leaves a spread sample
    by_fam: dict[str, list] = {}
    for s in slips:
        by_fam.setdefault(s["family"], []).append(s)
    order = []
    while any(by_fam.values()):
        for f in list(by_fam):
            if by_fam[f]:
                order.append(by_fam[f].pop(0))
    slips = order

    results = []
    copy = work / "slip"  # one working copy; each slip is applied, run, and the file restored
    copy_tree(tree, copy)
    seconds = res.get("claim_seconds", {})
    clean_digest: dict[str, str] = {}
    for k, slip in enumerate(slips):
        row = {k2: slip[k2] for k2 in ("id", "family", "category", "eq", "file")}
        if deadline and dt.datetime.now(dt.timezone.utc) >= deadline:
            row.update(verdict="NOT RUN (deadline)")
            results.append(row)
            continue
        path = copy / slip["file"]
        original = path.read_text()
        try:
            apply(copy, slip)
        except RuntimeError as exc:
            row.update(verdict=f"NOT APPLICABLE ({exc})")
            results.append(row)
            continue
        try:
            names, claims = fam_claims[slip["family"]]
            row.update(statements=names, claims_run=len(claims))
            clean_bad = {c for c, v in clean_verdicts[slip["family"]]["statuses"].items() if v in FAIL or v == "MISSING"}
            # cheap claims first; the costly ones run only if the cheap ones do not reject (same verdict: "any fails")
            cheap = [c for c in claims if seconds.get(c, 0.0) <= 0.5]
            costly = [c for c in claims if c not in cheap]
            failing, errors, rcs, secs, ran_claims = {}, {}, [], 0.0, 0
            for stage, group in enumerate((cheap, costly) if not args.probe_only else ()):
                if not group:
                    continue
                r = verify(copy, group, work / f"out{k:02d}_{stage}", args.timeout)
                rcs.append(r["rc"])
                secs += r["seconds"]
                ran_claims += len(group)
                for c, v in r["statuses"].items():
                    if v in FAIL and c not in clean_bad:
                        failing[c] = v
                        if v == "ERROR":
                            errors[c] = r["errors"].get(c, "")
                if any(v != "ERROR" for v in failing.values()) or r["rc"] == "timeout":
                    break
            non_error = {c: v for c, v in failing.items() if v != "ERROR"}
            if "timeout" in rcs:
                verdict = "TIMEOUT"
            elif non_error:
                verdict = "REJECTED"
            elif errors:
                verdict = "REJECTED (ERROR only)"
            else:
                verdict = "SURVIVED" if claims else "SURVIVED (no claims)"
            row.update(failing=failing, errors=errors, rc=rcs, seconds=round(secs, 1), claims_executed=ran_claims)
            # behaviour check: a rejected slip evidently changes behaviour; a survivor is probed against the clean
            # tree (a few rounds of a configuration on the slip's path) and excluded if it does not change it
            changed = True
            if not verdict.startswith("REJECTED"):
                if slip["probe"] not in clean_digest:
                    path.write_text(original)
                    clean_digest[slip["probe"]] = probe(copy, slip["probe"])
                    apply(copy, slip)
                dig = probe(copy, slip["probe"])
                changed = dig != clean_digest[slip["probe"]]
                row.update(probe=slip["probe"], probe_crash=dig if dig.startswith("CRASH") else "")
                if not changed:
                    verdict = "EQUIVALENT on probe (excluded)"
                elif args.probe_only:
                    verdict = "PROBED (not verified)"
            row.update(verdict=verdict, changed=changed)
            if args.full and changed:
                full = verify(copy, None, work / f"full{k:02d}", args.timeout)
                row["full_failing"] = {c: v for c, v in full["statuses"].items() if v in FAIL}
        finally:
            path.write_text(original)
        results.append(row)
        print(f"[{k + 1}/{len(slips)}] {slip['id']}: {row['verdict']} {row.get('failing', {})} "
              f"({row.get('seconds', 0):.0f}s) {dt.datetime.now(dt.timezone.utc):%H:%M:%S}", flush=True)
        write(outdir, results, commit, fam_claims, clean_verdicts, len(slips))
    write(outdir, results, commit, fam_claims, clean_verdicts, len(slips))
    shutil.rmtree(work, ignore_errors=True)


def write(outdir: Path, results, commit, fam_claims, clean_verdicts, total) -> None:
    ran = [r for r in results if r.get("changed")]
    rej = [r for r in ran if r["verdict"].startswith("REJECTED")]
    rej_noerr = [r for r in ran if r["verdict"] == "REJECTED"]
    lines = [f"# Held-out slips: results against {commit}", "",
             f"Slips: {total}; run so far: {len(results)}; behaviour-changing: {len(ran)}; "
             f"equivalent on probe: {sum(1 for r in results if r.get('changed') is False)}; "
             f"not run: {sum(1 for r in results if r['verdict'].startswith('NOT RUN'))}.",
             f"**Rejected: {len(rej)} / {len(ran)}** ({len(rej_noerr)} by a non-ERROR status, "
             f"{len(rej) - len(rej_noerr)} by ERROR only).", "",
             "| # | slip | family | category | statements (claims run) | verdict | rejected by (status) |",
             "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(results, 1):
        by = ", ".join(f"{c} ({s})" for c, s in sorted(r.get("failing", {}).items()))
        if len(by) > 300:
            by = by[:300] + " ..."
        st = "; ".join(r.get("statements", []))
        lines.append(f"| {i} | `{r['id']}` | {r['family']} | {r['category']} | {st} ({r.get('claims_run', '-')}) | "
                     f"{r['verdict']} | {by} |")
    for key in ("family", "category"):
        lines += ["", f"## By {key}", "", f"| {key} | rejected / behaviour-changing |", "|---|---|"]
        for v in sorted({r[key] for r in results}):
            rr = [r for r in ran if r[key] == v]
            lines.append(f"| {v} | {sum(1 for r in rr if r['verdict'].startswith('REJECTED'))} / {len(rr)} |")
    lines += ["", "## Errors", ""]
    for r in results:
        for c, e in r.get("errors", {}).items():
            lines.append(f"* `{r['id']}` / `{c}`: {e.strip().splitlines()[-1] if e.strip() else ''}")
    lines += ["", "## Claims per family (clean-tree verdict)", ""]
    for fam, (names, claims) in fam_claims.items():
        cv = clean_verdicts.get(fam)
        bad = {c: s for c, s in (cv or {}).get("statuses", {}).items() if s in FAIL}
        lines.append(f"* {fam}: {len(claims)} claims from {'; '.join(names) or '-'}"
                     + (f" — failing on the clean tree (excluded): {bad}" if bad else ""))
    (outdir / "results.md").write_text("\n".join(lines) + "\n")
    (outdir / "results.json").write_text(json.dumps({"commit": commit, "results": results}, indent=1, default=str))
    print(f"rejected {len(rej)} / {len(ran)} behaviour-changing slips ({total} slips)", flush=True)


if __name__ == "__main__":
    main()

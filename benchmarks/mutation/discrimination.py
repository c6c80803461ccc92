"""Discrimination of the ledger's bound and rate claims: does each one reject plausibly broken algorithms?

Usage (from the repository root)::

    python benchmarks/mutation/discrimination.py             # every bound/rate claim that runs an algorithm
    python benchmarks/mutation/discrimination.py --quick     # the claims cheaper than 1 s at baseline
    python benchmarks/mutation/discrimination.py --only ID ...
    python benchmarks/mutation/discrimination.py --jobs 2    # claims side by side (one process each)

**Which claims.** A *bound claim* here is a claim of kind ``bound`` or ``rate``, expected to hold, whose check
runs an algorithm of :mod:`fedtheory.algorithms` (detected by running its default instances once with every
algorithm family's round instrumented: a claim that never runs a round bounds a formula, not an algorithm,
and is left out). N counts them.

**Which variants.** For each algorithm family the claim runs, the broken variants of :mod:`variants` (a server
that does not learn, a sign flipped, a drift correction removed, a state not carried, a step or weight off by a
constant factor), applied in-process by patching the family's round for the duration of one evaluation of the
claim's default instances (``fedtheory verify``'s instances and statuses), then restored.

**Outcome of a cell** (claim x variant): ``X`` rejected (the claim is VIOLATED), ``E`` rejected by an error of
the check (the broken run diverged: non-finite numbers, a solver failure, or the per-claim time budget), ``.``
not rejected (the claim still holds), ``~`` inert (the variant never changed a round's output at these
instances: the broken part is not exercised, so no instance could tell), ``-`` not applicable, ``?`` the
variant itself raised a programming error (never counted as a rejection).

**Criterion.** A claim *discriminates* when at least one of its required variants (role ``required``:
frozen server, ascent, the family's drift correction or carried state) is live at its instances and every live
required variant is rejected. Factor variants (``half_step``, ``uniform_weights``, ``no_ipw``,
``no_correction``) are shown but not required: an upper bound can hold for a slower or reweighted algorithm.
A claim that calls a family's local solver but never runs its round (every required variant inert: a per-point
lemma about the local step) is judged on the family's local variants instead (role ``local``, e.g. DANE+'s
control variate dropped or sign-flipped in the local objective): at least one live, every live one rejected.
Elsewhere the local variants are not run (they would be shown only).
DoCoFL's ``no_correction`` and FedDyn's ``local_correction_flipped`` also break a client's step, which
per-round lemmas on that step are about; they are run on every claim and shown with the factor variants.
A claim declares what part of its algorithm it is about (``@claim(scope=...)``, see
:attr:`fedtheory.claims.registry.Claim.scope`): ``"step"`` for one round from whatever state it is given (a
per-round lemma: the carried-state variants, which only start a round from another state the algorithm can be in,
do not apply), ``"local"`` for the clients' local computation (judged on the local variants, which are then run).
A claim that cannot be made to discriminate is flagged in the ledger (``@claim(non_discriminating=
"reason")``), shown in claims.md and the coverage page; F must stay at most 5% of N.

The run ends with ``DISCRIMINATION bound_claims=N discriminating=M flagged=F`` and exits 1 when a claim is
neither discriminating nor flagged, when F > 5% of N, or when a flagged claim does discriminate (a stale flag).
Results: ``results/discrimination.json`` and ``results/discrimination.md``. Run time: 14 minutes wall time
for every claim with ``--jobs 2`` on a shared two-core machine (5 CPU-minutes: each broken round also runs the
faithful one, to tell a live variant from an inert one); ``--quick`` keeps the claims under 1 s in the last
``results/discrimination.json``.
"""
from __future__ import annotations

import argparse
import functools
import json
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from variants import VARIANTS, family_classes, family_of, local_methods  # noqa: E402

KINDS = ("bound", "rate")
REJECT = ("X", "E")
#: Exceptions that say the broken variant's code is wrong, not that the broken algorithm failed.
PROGRAMMING_ERRORS = (TypeError, AttributeError, NameError, NotImplementedError, KeyError)
#: Per-claim time budget of one broken run: this many times the faithful run, at least MIN_BUDGET seconds.
BUDGET_FACTOR = 20.0
MIN_BUDGET = 30.0


class Budget(Exception):
    """The broken run exceeded its time budget (a stalled run is a rejection: the ledger would not finish)."""


def _alarm(signum: int, frame: Any) -> None:
    raise Budget("time budget exceeded")


def _arrays(state: Any) -> list[np.ndarray]:
    if isinstance(state, np.ndarray):  # a local solver's output (its first element: the local models)
        return [state] if state.dtype.kind == "f" else []
    out = []
    for v in vars(state).values():
        if hasattr(v, "peek"):
            v = v.peek()
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            out.append(v)
    return out


def _differs(a: Any, b: Any) -> bool:
    """Whether two algorithm states differ beyond rounding (any float array field)."""
    for x, y in zip(_arrays(a), _arrays(b)):
        if x.shape != y.shape:
            return True
        scale = 1.0 + float(np.max(np.abs(x), initial=0.0)) if np.all(np.isfinite(x)) else 1.0
        if not np.all(np.isfinite(y)) or float(np.max(np.abs(x - y), initial=0.0)) > 1e-10 * scale:
            return True
    return False


class Patch:
    """While active, the family's round runs the broken ``variant`` and records whether it was live."""

    def __init__(self, family: str, variant: Any | None, method: str | None = None) -> None:
        method = method or getattr(variant, "method", None)
        self.cls, self.method = family_classes()[family] if method is None else local_methods()[(family, method)]
        self.family, self.variant = family, variant
        self.live = False
        self.not_applicable = False
        self.bug: str | None = None
        self.families: set[str] = set()

    def __enter__(self) -> "Patch":
        orig = self.cls.__dict__[self.method]
        self.orig = orig
        patch = self

        @functools.wraps(orig)
        def wrapped(a: Any, *args: Any) -> Any:
            fam = family_of(a)
            if fam is not None:
                patch.families.add(fam)
            if patch.variant is None or fam != patch.family:
                return orig(a, *args)
            faithful = orig(a, *args)
            try:
                broken = patch.variant.apply(orig, a, *args)
            except NotImplementedError:
                patch.not_applicable = True
                return faithful
            except PROGRAMMING_ERRORS as exc:
                patch.bug = f"{type(exc).__name__}: {exc}"
                raise
            if _differs(faithful[0], broken[0]):
                patch.live = True
            return broken

        setattr(self.cls, self.method, wrapped)
        return self

    def __exit__(self, *exc: Any) -> None:
        setattr(self.cls, self.method, self.orig)


class Recorder:
    """Every family's round instrumented (no variant): which families a claim runs."""

    def __enter__(self) -> "Recorder":
        self.patches = [Patch(f, None) for f in family_classes()] + \
            [Patch(f, None, method) for f, method in local_methods()]
        for p in self.patches:
            p.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for p in reversed(self.patches):
            p.__exit__()

    @property
    def families(self) -> list[str]:
        return sorted(set().union(*(p.families for p in self.patches)))


def clear_caches() -> None:
    """Empty the claims modules' memo caches (a module-level dict named ``*_CACHE*``, an ``lru_cache``), so a
    broken run recomputes what the faithful run memoised instead of reading it back."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("fedtheory.claims") or module is None:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, dict) and attr.strip("_").endswith("CACHE"):
                value.clear()
            elif callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def _measured(result: Any) -> list[float]:
    return [] if result is None else [e.measured for e in result.evidence]


def run_claim(cid: str) -> dict[str, Any]:
    """The claim's baseline status, the families it runs, and every variant's cell."""
    from fedtheory.claims import load_all

    return evaluate_variants(load_all()[cid])


def evaluate_variants(c: Any) -> dict[str, Any]:
    """:func:`run_claim` for a :class:`~fedtheory.claims.registry.Claim` (registered or not)."""
    from fedtheory.claims import evaluate

    cid = c.id
    clear_caches()
    with Recorder() as rec:
        base = evaluate(c, certify=False)  # whether the verdict bites by itself (run certification apart)
    row: dict[str, Any] = {"id": cid, "kind": c.kind, "baseline": base.status, "seconds": round(base.seconds, 2),
                           "families": rec.families, "flag": getattr(c, "non_discriminating", ""),
                           "scope": getattr(c, "scope", "run"), "cells": {}}
    if not rec.families or base.status != "holds":
        return row
    budget = max(MIN_BUDGET, BUDGET_FACTOR * base.seconds)
    signal.signal(signal.SIGALRM, _alarm)
    # The local variants last, and only for a claim about the local step or whose required variants are all
    # inert (elsewhere they would be shown only: not run, so they cost nothing there).
    order = [(fam, v) for fam in rec.families for v in VARIANTS[fam] if v.role != "local"] + \
        [(fam, v) for fam in rec.families for v in VARIANTS[fam] if v.role == "local"]
    for fam, v in order:
        if v.role == "local" and row["scope"] != "local" and any(
                c["role"] == "required" and c["cell"] not in ("~", "-") for c in row["cells"].values()):
            continue
        start = time.perf_counter()
        clear_caches()
        with Patch(fam, v) as p:
            signal.setitimer(signal.ITIMER_REAL, budget)
            try:
                r = evaluate(c, certify=False)
            except Budget:  # raised outside a check (e.g. between instances): the same verdict
                r = None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        status = "ERROR" if r is None else r.status
        error = "time budget exceeded" if r is None else (r.error or "").splitlines()[0][:200] if r.error else ""
        if p.bug:
            cell = "?"
        elif p.not_applicable and not p.live:
            cell = "-"
        elif status == "VIOLATED":
            cell = "X"
        elif status == "ERROR":
            cell = "E"
        elif not p.live:
            cell = "~"
        else:
            cell = "."
        moved = r is None or _measured(r) != _measured(base)
        row["cells"][f"{fam}.{v.name}"] = {"cell": cell, "role": v.role, "status": status, "error": error,
                                           "bug": p.bug, "moved": moved, "measured": _measured(r),
                                           "seconds": round(time.perf_counter() - start, 2)}
    row["measured"] = _measured(base)
    return row


#: Variants that replace a carried state by another state the algorithm can be in: not applicable to a claim of
#: scope "step" (one round from whatever state it is given).
CARRIED_STATE = ("state_not_carried",)


def judged_on(row: dict[str, Any]) -> str:
    """The role of the variants a row is judged on: ``local`` for a claim of scope "local" or whose required
    variants are all inert (it never runs the family's round), else ``required`` (module docstring)."""
    if row.get("scope") == "local":
        return "local"
    live = [c for c in row["cells"].values() if c["role"] == "required" and c["cell"] not in ("~", "-")]
    return "required" if live or not any(c["role"] == "local" for c in row["cells"].values()) else "local"


def _applies(row: dict[str, Any], name: str) -> bool:
    return not (row.get("scope") == "step" and name.split(".", 1)[1] in CARRIED_STATE)


def discriminates(row: dict[str, Any]) -> bool:
    """At least one live variant of the role the row is judged on, and every live one rejected."""
    role = judged_on(row)
    req = [c["cell"] for name, c in row["cells"].items()
           if c["role"] == role and c["cell"] not in ("~", "-") and _applies(row, name)]
    return bool(req) and all(x in REJECT for x in req)


def render(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    names: list[str] = []
    for fam in VARIANTS.values():
        for v in fam:
            if v.name not in names:
                names.append(v.name)
    head = ["claim", "family", *names, "verdict"]
    lines = ["# Discrimination of the bound and rate claims", "",
             f"Command: `{meta['command']}`; {meta['when']}; {meta['seconds']:.0f} s wall time.", "",
             "Cells: X rejected (VIOLATED), E rejected (ERROR: diverged or over budget), . not rejected, "
             "~ inert at these instances, - not applicable, ? variant bug. Required variants: frozen, ascent and "
             "the family's correction/state (a state not carried does not apply to a claim of scope \"step\", one "
             "round from the state it is given); the local variants (local_*, no_correction) are run for, and "
             "required of, a claim of scope \"local\" or one that never runs the round, instead of the required "
             "ones; the others, in parentheses, are shown only (benchmarks/mutation/discrimination.py).",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        role = judged_on(r)
        for fam in r["families"]:
            cells = []
            for n in names:
                c = r["cells"].get(f"{fam}.{n}")
                shown = c is not None and c["role"] == role and _applies(r, f"{fam}.{n}")
                cells.append("" if c is None else (c["cell"] if shown else f"({c['cell']})"))
            lines.append("| " + " | ".join([f"`{r['id']}`", fam, *cells, verdict(r)]) + " |")
    lines += ["", summary_line(rows)]
    return "\n".join(lines) + "\n"


def verdict(row: dict[str, Any]) -> str:
    d = discriminates(row)
    if row["flag"]:
        return "flagged (stale: discriminates)" if d else "flagged: " + row["flag"]
    return "discriminates" if d else "DOES NOT DISCRIMINATE"


def counts(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    bound = [r for r in rows if r["families"] and r["baseline"] == "holds"]
    return len(bound), sum(discriminates(r) for r in bound), sum(bool(r["flag"]) for r in bound)


def summary_line(rows: list[dict[str, Any]]) -> str:
    n, m, f = counts(rows)
    return f"DISCRIMINATION bound_claims={n} discriminating={m} flagged={f}"


def select_ids(args: argparse.Namespace) -> list[str]:
    from fedtheory.claims import load_all

    reg = load_all()
    ids = [c.id for c in reg.values() if c.kind in KINDS and c.expected == "holds"]
    if args.only:
        unknown = sorted(set(args.only) - set(ids))
        if unknown:
            raise SystemExit(f"not a bound/rate claim expected to hold: {unknown}")
        ids = [i for i in ids if i in args.only]
    return ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these claim ids")
    ap.add_argument("--quick", action="store_true", help="only the claims whose faithful run takes under 1 s")
    ap.add_argument("--jobs", type=int, default=1, help="claims run side by side, one process each")
    ap.add_argument("--out", default=str(HERE / "results"), help="output folder")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    ids = select_ids(args)
    if args.quick:
        baseline = HERE / "results" / "discrimination.json"
        secs = {r["id"]: r["seconds"] for r in json.loads(baseline.read_text())["claims"]} if baseline.exists() else {}
        ids = [i for i in ids if secs.get(i, 0.0) < 1.0]
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("fork")) as pool:
            rows = list(pool.map(run_claim, ids))
    else:
        rows = [run_claim(i) for i in ids]
    rows = [r for r in rows if r["families"] and r["baseline"] == "holds"] + \
           [r for r in rows if not (r["families"] and r["baseline"] == "holds")]
    command = " ".join(["python benchmarks/mutation/discrimination.py",
                        *(argv if argv is not None else sys.argv[1:])])
    meta = {"command": command, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": time.perf_counter() - start}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bound = [r for r in rows if r["families"] and r["baseline"] == "holds"]
    text = render(bound, meta)
    (out / "discrimination.md").write_text(text)
    (out / "discrimination.json").write_text(json.dumps({"meta": meta, "claims": rows}, indent=1))
    print(text.rstrip("\n").rsplit("\n", 1)[0])
    skipped = [r for r in rows if r not in bound and r["families"]]
    for r in skipped:
        print(f"not evaluated (baseline {r['baseline']}): {r['id']}", file=sys.stderr)
    n, m, f = counts(rows)
    undecided = [r["id"] for r in bound if not discriminates(r) and not r["flag"]]
    stale = [r["id"] for r in bound if discriminates(r) and r["flag"]]
    for cid in undecided:
        print(f"DOES NOT DISCRIMINATE (not flagged): {cid}", file=sys.stderr)
    for cid in stale:
        print(f"STALE FLAG (the claim discriminates): {cid}", file=sys.stderr)
    print(summary_line(rows))
    return 1 if undecided or stale or f > 0.05 * n or skipped else 0


if __name__ == "__main__":
    raise SystemExit(main())

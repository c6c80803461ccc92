"""Discrimination of the ledger's claims: does each claim that runs an algorithm reject broken versions of it?

Usage (from the repository root)::

    python benchmarks/mutation/discrimination.py             # every claim that runs an algorithm, every variant
    python benchmarks/mutation/discrimination.py --smoke     # the CI subset (under 2 minutes; exit 1 on a miss)
    python benchmarks/mutation/discrimination.py --only ID ...
    python benchmarks/mutation/discrimination.py --jobs 2    # claims side by side (one process each)

**Which claims.** Every claim of any kind (bound, rate, statistical, invariant, metamorphic, identity, ...) with a
verdict (expected to hold, or a recorded counterexample) whose check runs an algorithm of
:mod:`fedtheory.algorithms` (detected by running its default instances once with every algorithm family's round
instrumented: a claim that never runs a round checks a formula, not an algorithm, and is left out).

**Which variants.** Two catalogues. For the bound and rate claims, the *coarse* variants of :mod:`variants` (a
server that does not learn, an ascent, a drift correction removed, a state not carried, a step or weight off by a
constant factor), applied by patching the family's round. The *subtle* variants of :mod:`slip_catalogue` (at
least eight per family): a few characters' slip in the real source of one method, written from the categories
sign, constant factor, normalisation applied twice, stale point, missing or doubled correction, wrong local path,
schedule, shared or aliased state, participation bookkeeping and quantity logged off by one, installed as the
class's method attribute (:mod:`slips`) so that the run certification wraps the broken code. A slip applies to a
claim whose run instantiates the slipped class (or a subclass).

**Outcome of a cell** (claim x variant), first by the claim's own check (``evaluate(certify=False)``):
``X`` rejected (VIOLATED, or COUNTEREXAMPLE-LOST for a recorded counterexample), ``E`` rejected by an error of
the check (the broken run diverged: non-finite numbers, a solver failure, the per-claim time budget), ``.`` not
rejected, ``~`` inert (the variant never changed a result at these instances), ``-`` not applicable,
``?`` **variant error**: the variant itself raised where the faithful code did not, either in a pre-run of the
claim's first instance outside the claim (the variant run beside the faithful code, whose results the check
sees) or during the claim. A variant error is counted on its own and never as a rejection.
Then with the run certification (``evaluate(certify=True)``, where the installed ``fedtheory`` has it): the
cells the own check did not reject are run again; ``X`` the certified claim fails (the run differs from the
paper's algorithm), ``n`` no reference for the claim's algorithm yet (certification could not judge it; not a
rejection), ``.`` still holds.

**Criterion (coarse variants).** A bound or rate claim *discriminates* when at least one of its required coarse
variants (role ``required``: frozen server, ascent, the family's drift correction or carried state) is live at its
instances and every live required variant is rejected. Factor variants (``half_step``, ``uniform_weights``,
``no_ipw``, ``no_correction``) are shown but not required: an upper bound can hold for a slower or reweighted
algorithm. A claim that calls a family's local solver but never runs its round is judged on the family's local
variants (role ``local``). A claim declares what part of its algorithm it is about (``@claim(scope=...)``, see
:attr:`fedtheory.claims.registry.Claim.scope`): ``"step"`` (the carried-state variants do not apply),
``"local"`` (judged on the local variants). A bound or rate claim that cannot be made to discriminate is flagged
(``@claim(non_discriminating="reason")``). The flag also says why no instance brings a correct run near the
bound (the ledger's own rule, :func:`fedtheory.report.ledger.loose_bounds`), so a flagged claim may still
discriminate here: it is reported as such, not as a stale flag.

**Per statement.** The cells are gathered per numbered statement the claims cite (:mod:`statements`): the
variants live in some claim of the statement, how many of them the statement's claims reject by their own
checks, how many with certification, which claim rejects each; ``--write-docs`` regenerates the tables in
docs/verification-power.md and the README's figure comes from the same results file.

The run ends with ``DISCRIMINATION bound_claims=N discriminating=M flagged=F`` and the per-statement line, and
exits 1 when a bound claim is neither discriminating nor flagged, or when a slip of the catalogue is inert on
every claim it applies to (a variant bug).
Results: ``results/discrimination.json`` and ``results/discrimination.md`` (and, while a ``--jobs`` run goes,
``discrimination.partial.json`` with every claim finished so far; ``--render-only FILE`` renders from one).
Cost: each variant is run on the claim's first instance beside the faithful code (the pre-run), then on every
instance up to the first that fails the claim (twice per round while it is not yet known to be live), then, if
live and not rejected, again with certification.
"""
from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from slip_catalogue import SLIPS  # noqa: E402
from slips import LineTrace, Slip, SlipPatch, faithful_function  # noqa: E402
from variants import VARIANTS, family_classes, family_of, local_methods  # noqa: E402

from fedtheory.claims.budget import CLAIM_BUDGET_SECONDS  # noqa: E402

KINDS = ("bound", "rate")  # the kinds the per-claim criterion (discriminates / flagged) is about
REJECT = ("X", "E")
#: Statuses that are a claim's verdict against the run (a recorded counterexample that is no longer found).
REJECTED = ("VIOLATED", "COUNTEREXAMPLE-LOST")
PASSING = ("holds", "violated-as-recorded")
#: Per-claim time budget of one broken run: this many times the faithful run, at least MIN_BUDGET seconds.
BUDGET_FACTOR = 20.0
MIN_BUDGET = 30.0
#: The CI subset: (claim, variants) pairs whose outcome is known (module docstring; ``--smoke``).
SMOKE = {"classic.gd.contraction": ("GradientDescent.frozen", "gd_sign", "gd_default_step_2L", "gd_grad_over_n"),
         "classic.rounds.reference_identity": ("fedavg_delta_sign", "scaffold_correction_sign", "feddyn_x_h_sign"),
         "fedred.dane.lyapunov": ("DANEPlus.frozen", "dane_cv_sign")}


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
    """While active, the family's round runs the broken ``variant`` and records whether it was live;
    ``shadow=True`` runs it beside the faithful round but returns the faithful result (the pre-run)."""

    def __init__(self, family: str, variant: Any | None, method: str | None = None, shadow: bool = False,
                 dual: bool = True) -> None:
        method = method or getattr(variant, "method", None)
        self.cls, self.method = family_classes()[family] if method is None else local_methods()[(family, method)]
        self.family, self.variant, self.shadow, self.dual = family, variant, shadow, dual
        self.live = False
        self.not_applicable = False
        self.bug: str | None = None
        self.families: set[str] = set()
        self.classes: set[type] = set()

    def __enter__(self) -> "Patch":
        orig = self.cls.__dict__[self.method]
        self.orig = orig
        patch = self

        @functools.wraps(orig)
        def wrapped(a: Any, *args: Any) -> Any:
            fam = family_of(a)
            if fam is not None:
                patch.families.add(fam)
                patch.classes.add(type(a))
            if patch.variant is None or fam != patch.family:
                return orig(a, *args)
            if not patch.dual:  # known live: the broken round alone
                return patch.variant.apply(orig, a, *args)
            faithful = orig(a, *args)
            try:
                broken = patch.variant.apply(orig, a, *args)
            except NotImplementedError:
                patch.not_applicable = True
                return faithful
            except Exception as exc:  # the faithful round returned: the variant's own code raised
                patch.bug = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
                if patch.shadow:
                    return faithful
                raise
            if _differs(faithful[0], broken[0]):
                patch.live = True
            return faithful if patch.shadow else broken

        setattr(self.cls, self.method, wrapped)
        return self

    def __exit__(self, *exc: Any) -> None:
        setattr(self.cls, self.method, self.orig)


class Recorder:
    """Every family's round instrumented (no variant): which families (and classes) a claim runs."""

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

    @property
    def classes(self) -> set[type]:
        return set().union(*(p.classes for p in self.patches))


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


def certification_available() -> bool:
    """Whether the installed fedtheory's ``evaluate`` takes ``certify`` (the run certification)."""
    from fedtheory.claims import evaluate

    return "certify" in inspect.signature(evaluate).parameters


def _evaluate(c: Any, budget: float, certify: bool = False, instances: Any = None) -> Any:
    """``evaluate`` under the wall-clock ``budget`` (a stalled broken run ends as ERROR, a rejection: the ledger
    would not finish); ``certify`` is passed where the installed fedtheory has the run certification."""
    from fedtheory.claims import evaluate

    kwargs: dict[str, Any] = {"budget": budget}
    if certification_available():
        kwargs["certify"] = certify
    if instances is not None:
        kwargs["instances"] = instances
    return evaluate(c, **kwargs)


def no_reference(result: Any) -> bool:
    """Whether certification could not judge (part of) the run: an algorithm the claim ran has no reference."""
    cert = getattr(result, "certification", None)
    return bool(cert is not None and cert.uncertified)


def run_claim(cid: str, variants: tuple[str, ...] | None = None, certify: bool = True) -> dict[str, Any]:
    """The claim's baseline status, the families it runs, and every variant's cell."""
    from fedtheory.claims import load_all

    return evaluate_variants(load_all()[cid], variants=variants, certify=certify)


def _variant_key(fam: str, v: Any) -> str:
    return v.name if isinstance(v, Slip) else f"{fam}.{v.name}"


def _patch(fam: str, v: Any, shadow: bool = False, dual: bool = True) -> Any:
    if isinstance(v, Slip):
        return SlipPatch(v, entry=family_classes().get(fam), shadow=shadow, dual=dual)
    return Patch(fam, v, shadow=shadow, dual=dual)


def _run(c: Any, budget: float, certify: bool, instances: list[Any]) -> tuple[str, Any]:
    """The claim's status on ``instances``, stopping at the first instance that fails it (a claim expected to
    hold fails as soon as one instance does; a recorded counterexample needs every instance: run at once)."""
    if c.expected != "holds":
        r = _evaluate(c, budget, certify, instances)
        return r.status, r
    r = None
    for inst in instances:
        r = _evaluate(c, budget, certify, [inst])
        if r.status not in PASSING:
            return r.status, r
    return "holds", r


def evaluate_variants(c: Any, variants: tuple[str, ...] | None = None, certify: bool = True,
                      slips: Sequence[Slip] | None = None) -> dict[str, Any]:
    """:func:`run_claim` for a :class:`~fedtheory.claims.registry.Claim` (registered or not); ``variants``: only
    these keys (``Family.name`` for a coarse variant, the slip's name for a slip); ``slips``: the catalogue
    (default :data:`slip_catalogue.SLIPS`)."""
    cid = c.id
    catalogue = list(SLIPS if slips is None else slips)
    clear_caches()
    trace = LineTrace([faithful_function(s) for s in catalogue])  # the methods themselves, before any wrapping
    with trace, Recorder() as rec:
        base = _evaluate(c, CLAIM_BUDGET_SECONDS)
    status = base.status
    row: dict[str, Any] = {"id": cid, "kind": c.kind, "baseline": status,
                           "seconds": round(base.seconds, 2),
                           "families": rec.families, "flag": getattr(c, "non_discriminating", ""),
                           "scope": getattr(c, "scope", "run"), "expected": c.expected,
                           "cites": [f"{x.paper} {x.label}" for x in c.citations] or [f"{c.paper} (uncited)"],
                           "cells": {}}
    if not rec.families or status not in PASSING:
        return row
    budget = max(MIN_BUDGET, BUDGET_FACTOR * base.seconds)
    certifying = certify and certification_available()
    row["certification"] = "unavailable"
    if certifying:
        clear_caches()
        base_cert = _evaluate(c, budget, certify=True)
        cert_of = getattr(base_cert, "certification", None)
        row["certification"] = (f"fails on the faithful run: {base_cert.status}" if base_cert.status not in PASSING
                                else "none certified" if cert_of is not None and not cert_of.rounds
                                else "no reference" if no_reference(base_cert) else "ok")
    classes = rec.classes
    # The local variants last, and only for a claim about the local step or whose required variants are all
    # inert (elsewhere they would be shown only: not run, so they cost nothing there).
    # The coarse variants for the bound and rate claims (the per-claim criterion is about them); the slips for all.
    coarse = rec.families if c.kind in KINDS else []
    order: list[tuple[str, Any]] = \
        [(fam, v) for fam in coarse for v in VARIANTS[fam] if v.role != "local"] + \
        [(fam, v) for fam in coarse for v in VARIANTS[fam] if v.role == "local"]
    for s in catalogue:
        if any(issubclass(k, s.cls) for k in classes):
            fam = next((f for f in rec.families if issubclass(s.cls, family_classes()[f][0])
                        or issubclass(family_classes()[f][0], s.cls)), rec.families[0])
            order.append((fam, s))
    instances = list(c.instances(False))
    first = instances[:1]
    for fam, v in order:
        key = _variant_key(fam, v)
        if variants is not None and key not in variants:
            continue
        if v.role == "local" and row["scope"] != "local" and any(
                x["role"] == "required" and x["cell"] not in ("~", "-") for x in row["cells"].values()):
            continue
        start = time.perf_counter()
        if isinstance(v, Slip) and not trace.reached(v):  # the faithful run never executes the slipped lines
            row["cells"][key] = {"cell": "~", "cert": "~", "role": v.role, "family": v.family,
                                 "category": v.category, "status": "not reached", "error": "", "bug": None,
                                 "measured": [], "seconds": 0.0}
            continue
        # The pre-run: the variant beside the faithful code on the claim's first instance, outside the claim.
        clear_caches()
        with _patch(fam, v, shadow=True) as pre:
            _evaluate(c, budget, instances=first)
        r, p, st = None, None, "not run"
        if pre.bug is None:
            clear_caches()
            # live on the first instance already: the broken code alone (no faithful twin to compare with)
            with _patch(fam, v, dual=not pre.live) as p:
                st, r = _run(c, budget, False, instances)
        error = (r.error or "").splitlines()[0][:200] if r is not None and r.error else ""
        bug = pre.bug or (p.bug if p is not None else None)
        live = pre.live or (p is not None and p.live)
        if bug:
            cell = "?"
        elif getattr(p, "not_applicable", False) and not live:  # a coarse variant that does not apply
            cell = "-"
        elif st in REJECTED:
            cell = "X"
        elif st == "ERROR":
            cell = "E"
        elif not live:
            cell = "~"
        else:
            cell = "."
        cert = cell if cell != "." else "unavailable"
        if cell == "." and certifying:
            if row["certification"] == "none certified":
                cert = "n"  # no algorithm the claim runs has a reference: certification cannot reject anything
            elif row["certification"] not in ("ok", "no reference"):
                cert = "b"  # certification fails on the faithful run already: it cannot judge the variant
            else:
                clear_caches()
                with _patch(fam, v, dual=False):
                    st_c, rc = _run(c, budget, True, instances)
                cert = "X" if st_c not in PASSING else "n" if no_reference(rc) else "."
        row["cells"][key] = {"cell": cell, "cert": cert, "role": v.role, "family": getattr(v, "family", fam),
                             "category": getattr(v, "category", "coarse"), "status": st, "error": error,
                             "bug": bug, "measured": _measured(r), "seconds": round(time.perf_counter() - start, 2)}
    row["measured"] = _measured(base)
    print(f"{time.strftime('%H:%M:%S')} {cid}: {len(row['cells'])} variants, "
          f"{sum(x['seconds'] for x in row['cells'].values()):.0f} s", file=sys.stderr, flush=True)
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
        return ("discriminates (flagged: its bound is not nearly attained)" if d else "flagged: " + row["flag"])
    return "discriminates" if d else "DOES NOT DISCRIMINATE"


def counts(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    bound = [r for r in rows if r["families"] and r["baseline"] == "holds" and r["kind"] in KINDS]
    return len(bound), sum(discriminates(r) for r in bound), sum(bool(r["flag"]) for r in bound)


def summary_line(rows: list[dict[str, Any]]) -> str:
    n, m, f = counts(rows)
    return f"DISCRIMINATION bound_claims={n} discriminating={m} flagged={f}"


def select_ids(args: argparse.Namespace) -> list[str]:
    """Every claim with a verdict (expected to hold, or a recorded counterexample), of any kind; whether it runs
    an algorithm is found when it runs (:class:`Recorder`)."""
    from fedtheory.claims import load_all

    reg = load_all()
    ids = [c.id for c in reg.values() if c.expected in ("holds", "violated")]
    wanted = list(SMOKE) if args.smoke else args.only
    if wanted:
        unknown = sorted(set(wanted) - set(ids))
        if unknown:
            raise SystemExit(f"not a claim with a verdict: {unknown}")
        ids = [i for i in ids if i in wanted]
    return ids


def _job(cid: str, smoke: bool, certify: bool) -> dict[str, Any]:
    return run_claim(cid, SMOKE[cid] if smoke else None, certify)


def _as_completed(pool: Any, job: Any, ids: list[str]) -> Any:
    """``job``'s rows in the order the claims finish (so a stopped run keeps every finished claim)."""
    from concurrent.futures import as_completed

    for future in as_completed([pool.submit(job, i) for i in ids]):
        yield future.result()


def smoke_failures(rows: list[dict[str, Any]]) -> list[str]:
    """The smoke pairs are known rejections by the claim's own check; anything else means the harness is broken."""
    out = []
    for r in rows:
        for key in SMOKE.get(r["id"], ()):
            cell = r["cells"].get(key, {}).get("cell")
            if cell not in REJECT:
                out.append(f"{r['id']} x {key}: {cell}")
    return out


def main(argv: list[str] | None = None) -> int:
    import statements

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these claim ids")
    ap.add_argument("--smoke", action="store_true", help=f"only the CI subset {sorted(SMOKE)}")
    ap.add_argument("--quick", action="store_true", help="only the claims whose faithful run takes under 1 s")
    ap.add_argument("--no-certify", action="store_true", help="skip the certify=True column")
    ap.add_argument("--jobs", type=int, default=1, help="claims run side by side, one process each")
    ap.add_argument("--out", default=str(HERE / "results"), help="output folder")
    ap.add_argument("--reuse", metavar="JSON", help="keep the rows of the claims this (partial) results file has")
    ap.add_argument("--render-only", metavar="JSON", help="no run: the tables and docs from this results file")
    ap.add_argument("--write-docs", action="store_true",
                    help="regenerate docs/verification-power.md's tables and the README's figure from this run")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    ids = select_ids(args)
    if args.quick:
        baseline = HERE / "results" / "discrimination.json"
        secs = {r["id"]: r["seconds"] for r in json.loads(baseline.read_text())["claims"]} if baseline.exists() else {}
        ids = [i for i in ids if secs.get(i, 0.0) < 1.0]
    job = functools.partial(_job, smoke=args.smoke, certify=not args.no_certify)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rendered_from = None
    if args.render_only:  # the docs and tables again from a results file (e.g. a partial run's)
        data = json.loads(Path(args.render_only).read_text())
        rows = data["claims"]
        rendered_from = data.get("meta", {}).get("command", "python benchmarks/mutation/discrimination.py --jobs 2")
    elif args.jobs > 1:
        # the cheapest claims first (by the last run's seconds); every finished claim is appended to
        # discrimination.partial.json, so a run stopped early still has its rows
        last = HERE / "results" / "discrimination.json"
        secs = {r["id"]: r["seconds"] for r in json.loads(last.read_text())["claims"]} if last.exists() else {}
        got: dict[str, Any] = {}
        if args.reuse:  # the rows of claims a stopped run finished (same catalogue and code)
            got = {r["id"]: r for r in json.loads(Path(args.reuse).read_text())["claims"] if r["id"] in ids}
        ordered = sorted((i for i in ids if i not in got), key=lambda i: secs.get(i, 0.5))
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("fork")) as pool:
            for row in _as_completed(pool, job, ordered):
                got[row["id"]] = row
                (out / "discrimination.partial.json").write_text(json.dumps(
                    {"meta": {"partial": True, "of": len(ids)}, "claims": list(got.values())}))
        rows = [got[i] for i in ids]
    else:
        rows = [job(i) for i in ids]
    command = " ".join(["python benchmarks/mutation/discrimination.py",
                        *(argv if argv is not None else sys.argv[1:])])
    if rendered_from is not None:
        command = f"{rendered_from} (stopped after {len(rows)} of {len(ids)} claims; rendered with --render-only)" \
            if len(rows) < len(ids) else rendered_from
    meta = {"command": command, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": time.perf_counter() - start, "certification": certification_available()
            and not args.no_certify}
    run = [r for r in rows if r["families"] and r["baseline"] in PASSING]
    totals = statements.summary(run, examined=len(rows), selected=len(ids))
    bound = [r for r in run if r["kind"] in KINDS and r["expected"] == "holds"]
    text = render(bound, meta) + "\n## Per numbered statement\n\n" + statements.render_statements(run) + \
        "\n## The catalogue of subtle variants\n\n" + \
        statements.render_catalogue(run, statements.load_check(ROOT)) + \
        "\n" + statements.summary_line(run) + "\n"
    (out / "discrimination.md").write_text(text)
    (out / "discrimination.json").write_text(json.dumps(
        {"meta": meta, "summary": totals, "statements": statements.per_statement(run),
         "catalogue": statements.catalogue_check(run), "claims": rows}, indent=1))
    if args.write_docs:
        statements.write_docs(run, ROOT, totals)
        from fedtheory.report.readme import blocks, update_readme

        readme = ROOT / "README.md"
        readme.write_text(update_readme(readme.read_text(), blocks(root=ROOT)))
    skipped = [r for r in rows if r["families"] and r["baseline"] not in PASSING]
    for r in skipped:
        print(f"not evaluated (baseline {r['baseline']}): {r['id']}", file=sys.stderr)
    undecided = [r["id"] for r in bound if not discriminates(r) and not r["flag"]]
    for cid in undecided:
        print(f"DOES NOT DISCRIMINATE (not flagged): {cid}", file=sys.stderr)
    s = totals
    inert = [] if args.smoke or args.only or args.quick or len(rows) < len(ids) else s["slips_inert"] + s["slips_not_run"]
    for name in inert:
        print(f"INERT SLIP (changes no run of the ledger: a catalogue bug): {name}", file=sys.stderr)
    smoke_bad = smoke_failures(rows) if args.smoke else []
    for line in smoke_bad:
        print(f"SMOKE: not rejected: {line}", file=sys.stderr)
    print(summary_line(rows))
    print(statements.summary_line(run))
    return 1 if undecided or skipped or inert or smoke_bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

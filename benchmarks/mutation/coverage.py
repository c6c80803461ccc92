"""Structural coverage of the ledger: which algorithm options and instance features its default instances run.

Usage (from the repository root)::

    python benchmarks/mutation/coverage.py [--paper KEY ...] [--out DIR]

A claim that only ever runs one kind of instance cannot see a bug on the other kinds: mutation testing found
exactly such blind spots (a dropped server step passed because every claim used eta_g = 1; an unweighted
average passed because the weights were equal). This script makes the question mechanical. It runs the ledger's
default instances (the same :func:`fedtheory.claims.registry.evaluate` as ``fedtheory verify``) with every
registered algorithm's ``round_given`` (and ``local_step`` / ``local_models``, which claims about a local solver
drive directly) wrapped to record the *features* of each round it executes:

* every value of every ``Literal`` option (``Optional[Literal]`` includes None), both values of every bool;
* the participation scheme's class (Full, UniformSubset, Bernoulli, ...);
* every numeric option at its default and away from it (e.g. ``server_step`` = 1 and != 1);
* the problem: equal or unequal client weights.

The universe of features comes from the algorithm classes' type hints and defaults, so a new option is audited
without touching this file. Output: ``coverage.json`` and ``coverage.md`` (feature -> first claim that
exercised it); exit status 1 when a feature is neither exercised nor listed in :data:`NOT_APPLICABLE` with a
reason.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import time
import types
import typing
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Fields that are not semantic options (callbacks), or whose values are objects audited by their type.
IGNORED_FIELDS = {"upload_metrics"}

#: Features the ledger does not need to run, with the reason. Everything else must be exercised.
NOT_APPLICABLE: dict[tuple[str, str], str] = {}


def _literal_values(tp) -> tuple | None:
    """The values of a Literal or Optional[Literal] hint (None included for Optional), else None."""
    if typing.get_origin(tp) is typing.Literal:
        return typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        values: list = []
        for arg in typing.get_args(tp):
            if arg is type(None):
                values.append(None)
            elif typing.get_origin(arg) is typing.Literal:
                values.extend(typing.get_args(arg))
            else:
                return None
        return tuple(values)
    return None


def _participation_classes(tp) -> tuple[str, ...] | None:
    """Class names of a participation hint that is a class or a union of classes."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    if args and all(isinstance(a, type) for a in args):
        return tuple(a.__name__ for a in args)
    return None


def _is_numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _accepts(cls: type, field: str, value) -> bool:
    """Whether ``cls`` accepts ``field=value`` on its example (DANE, for one, rejects DANE+'s other options)."""
    try:
        dataclasses.replace(cls.example(), **{field: value})
    except (ValueError, TypeError):
        return False
    return True


def universe(cls: type) -> dict[str, str]:
    """feature -> field for every feature a run of ``cls`` can have (see the module docstring)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, str] = {"weights=equal": "weights", "weights=unequal": "weights"}
    for f in dataclasses.fields(cls):
        if f.name in IGNORED_FIELDS or not f.init:
            continue
        tp = hints.get(f.name)
        literal = _literal_values(tp)
        if literal is not None:
            out.update({f"{f.name}={v!r}": f.name for v in literal if _accepts(cls, f.name, v)})
        elif tp is bool:
            out.update({f"{f.name}={v}": f.name for v in (True, False) if _accepts(cls, f.name, v)})
        elif f.name == "participation":
            classes = _participation_classes(tp) if tp is not typing.Any else None
            # a class-valued scheme, or (EFL, OFedIQ) a probability that is one scalar or one per client
            out.update({f"participation={c}": f.name for c in (classes or ("scalar", "per-client"))})
        elif f.default is not dataclasses.MISSING and (f.default is None or _is_numeric(f.default)):
            out[f"{f.name}=default"] = f.name
            if _accepts_other(cls, f.name, f.default):
                out[f"{f.name}=other"] = f.name
    return out


def _accepts_other(cls: type, field: str, default) -> bool:
    """Whether ``cls`` accepts some non-default value of a numeric option. A class that refuses every probe
    (DANE refuses DANE+'s inexact-solver options) has no 'other' feature; one probe accepted is enough."""
    probes = (0.5, 1.0, 2, 3, 0.01) if default is None else (default * 2 or 0.5, default / 2 or 1, default + 1)
    return any(_accepts(cls, field, v) for v in probes if v != default)


@functools.cache
def _hints(cls: type) -> dict:
    return typing.get_type_hints(cls)


def features(alg, problem) -> set[str]:
    """The features of one executed round (a subset of :func:`universe` of ``type(alg)``)."""
    import numpy as np

    w = np.asarray(problem.weights)
    out = {"weights=equal" if np.all(w == w[0]) else "weights=unequal"}
    hints = _hints(type(alg))
    for f in dataclasses.fields(alg):
        if f.name in IGNORED_FIELDS or not f.init:
            continue
        value, tp = getattr(alg, f.name), hints.get(f.name)
        if _literal_values(tp) is not None:
            out.add(f"{f.name}={value!r}")
        elif tp is bool:
            out.add(f"{f.name}={bool(value)}")
        elif f.name == "participation":
            out.add(f"participation={_participation_kind(value)}")
        elif f.default is not dataclasses.MISSING and (f.default is None or _is_numeric(f.default)):
            out.add(f"{f.name}={'default' if _same(value, f.default) else 'other'}")
    return out


def _participation_kind(value) -> str:
    if _is_numeric(value):
        return "scalar"
    if isinstance(value, (tuple, list)) or hasattr(value, "shape"):
        return "per-client"
    return type(value).__name__


def _same(value, default) -> bool:
    if default is None or value is None:
        return value is default
    try:
        return bool(value == default)
    except ValueError:  # an array-valued option (e.g. per-client probabilities) is never the scalar default
        return False


class Recorder:
    """Wraps ``round_given`` (and the local solvers' entry points) of every registered algorithm class; records
    feature -> first claim id."""

    def __init__(self) -> None:
        from fedtheory.algorithms import ALGORITHMS

        self.classes = dict(ALGORITHMS)
        self.current = "<none>"
        self.seen: dict[str, dict[str, str]] = defaultdict(dict)
        #: claim id -> algorithm name -> every feature the claim's rounds ran (the per-statement report)
        self.by_claim: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        wrapped: set[type] = set()
        for cls in self.classes.values():
            for klass in cls.__mro__:  # round_given may be inherited from a shared base class
                if klass in wrapped:
                    continue
                wrapped.add(klass)
                # GD has only round(); the rest may use either. Claims about a local solver alone (FedRed's
                # local_step, DANE+'s local_models) drive it without a round: their options are exercised too.
                for method in ("round", "round_given", "local_step", "local_models"):
                    if method in vars(klass):
                        setattr(klass, method, self._wrap(vars(klass)[method]))

    def _wrap(self, fn):
        recorder = self

        def recorded(alg, problem, *args, **kwargs):
            name = getattr(type(alg), "name", type(alg).__name__)
            seen = recorder.seen[name]
            ran = recorder.by_claim[recorder.current][name]
            for feat in features(alg, problem):  # every call: an id()-keyed cache would alias freed objects
                ran.add(feat)
                if feat not in seen:
                    seen[feat] = recorder.current
            return fn(alg, problem, *args, **kwargs)

        recorded.__wrapped__ = fn
        return recorded


def statement_paths(claims, recorder: Recorder) -> list[dict]:
    """Per numbered statement (the ``cites`` of the claims), per algorithm its claims run: the features those
    claims execute and the features of the algorithm's universe they do not (a slip confined to one of those is
    invisible to the statement's own claims; the run certification and other statements' claims may still see
    it)."""
    by_statement: dict[str, dict] = {}
    for c in claims:
        for cite in c.citations:
            key = f"{cite.paper}:{cite.label}"
            entry = by_statement.setdefault(key, {"statement": key, "claims": [], "algorithms": defaultdict(set)})
            entry["claims"].append(c.id)
            for name, feats in recorder.by_claim.get(c.id, {}).items():
                entry["algorithms"][name] |= feats
    out = []
    for key in sorted(by_statement):
        entry = by_statement[key]
        algorithms = {}
        for name, feats in sorted(entry["algorithms"].items()):
            cls = recorder.classes.get(name)
            every = set(universe(cls)) if cls is not None else set(feats)
            algorithms[name] = {"run": sorted(feats & every), "not_run": sorted(every - feats)}
        out.append({"statement": key, "claims": sorted(entry["claims"]), "algorithms": algorithms})
    return out


def render_statement_paths(statements: list[dict], meta: dict) -> str:
    lines = ["# Which options of its algorithms each numbered statement's claims run", "",
             f"`python benchmarks/mutation/coverage.py`; {meta['claims']} claims; {meta['when']}.", "",
             "A statement about an algorithm is checked only on the options its claims execute; the options listed "
             "as not run are the paths a slip could hide in from that statement's own verdicts (the run "
             "certification of docs/verification-power.md still compares every recorded round with the paper's "
             "equations, and other statements' claims may run them). Statements whose claims run no algorithm "
             "(closed forms, compressors, certificates) are left out.", "",
             "| statement | algorithm | options run | options not run |", "|---|---|---|---|"]
    for entry in statements:
        for name, paths in entry["algorithms"].items():
            run = ", ".join(f"`{f}`" for f in paths["run"])
            not_run = ", ".join(f"`{f}`" for f in paths["not_run"]) or "none"
            lines.append(f"| {entry['statement']} | {name} | {run} | {not_run} |")
    return "\n".join(lines) + "\n"


#: The statements whose claims must account for every option of their algorithm they do not run: the ones
#: about an algorithm's runs. Experiments (tables, figures) are measured on chosen configurations by design.
PATH_CHECKED_KINDS = ("Theorem", "Lemma", "Corollary", "Proposition", "Remark", "eq.", "Algorithm")


def check_paths(statements: list[dict], papers: set[str] | None = None) -> list[str]:
    """Problems with the inventories' :attr:`~fedtheory.papers.inventory.Statement.paths` against what the claims
    ran: a not-run option of a checked statement that is not declared, a declared option the claims do run (or of
    an algorithm they never run), for every statement of a paper with an inventory (of ``papers`` when given: the
    ones whose claims ran)."""
    from fedtheory.papers import PAPER_KEYS, paper

    problems: list[str] = []
    seen: set[str] = set()
    for entry in statements:
        key, _, label = entry["statement"].partition(":")
        if key not in PAPER_KEYS or label.partition(" ")[0] not in PATH_CHECKED_KINDS:
            continue
        seen.add(entry["statement"])
        declared = dict(paper(key).statement(label).paths)
        for name, paths in entry["algorithms"].items():
            for feat in paths["not_run"]:
                if declared.pop(f"{name}:{feat}", None) is None:
                    problems.append(f"{entry['statement']}: `{name}:{feat}` is not run by its claims and not "
                                    "declared in its paths (outside: or unrun: with the reason)")
        problems += [f"{entry['statement']}: paths declares `{k}`, which its claims run (or whose algorithm they "
                     "never run): remove it" for k in declared]
    for key in PAPER_KEYS:
        if papers is not None and key not in papers:
            continue
        for s in paper(key).statements:
            if s.paths and f"{key}:{s.label}" not in seen:
                problems.append(f"{key}:{s.label}: paths declared, but no claim of the ledger runs an algorithm for "
                                "it")
    return problems


def render_unrun(statements: list[dict]) -> str:
    """The Markdown table of the admitted paths no claim of their statement runs (for docs/verification-power.md)."""
    from fedtheory.papers import PAPER_KEYS, paper

    lines = ["| statement | path admitted by its hypotheses, not run by its claims | why |", "|---|---|---|"]
    outside = 0
    for entry in statements:
        key, _, label = entry["statement"].partition(":")
        if key not in PAPER_KEYS or label.partition(" ")[0] not in PATH_CHECKED_KINDS:
            continue
        for path, why in paper(key).statement(label).paths.items():
            kind, _, reason = why.partition(": ")
            if kind == "unrun":
                lines.append(f"| {entry['statement']} | `{path}` | {reason} |")
            else:
                outside += 1
    lines += ["", f"Besides these, {outside} options the statements' claims do not run are outside their "
              "hypotheses (declared `outside` in the inventories, `fedtheory/papers/<paper>.py`)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--paper", action="append", help="only this paper's claims (repeatable)")
    ap.add_argument("--out", default=str(HERE / "results"), help="output folder")
    ap.add_argument("--check-paths", action="store_true",
                    help="exit 1 when a statement's claims leave an option of its algorithm unrun without the "
                         "inventory's paths saying why (or declare one they run); writes unrun_paths.md")
    ap.add_argument("--write-docs", action="store_true",
                    help="with --check-paths on every paper: regenerate docs/verification-power.md's table of "
                         "the admitted paths no claim of their statement runs")
    args = ap.parse_args(argv)

    recorder = Recorder()  # before the claims import the algorithms' methods by reference
    from fedtheory.claims import evaluate, load_all

    claims = [c for c in load_all().values() if not args.paper or c.paper in args.paper]
    start = time.perf_counter()
    for c in sorted(claims, key=lambda c: c.id):
        recorder.current = c.id
        evaluate(c)
    rows, missing = [], []
    for name, cls in sorted(recorder.classes.items()):
        for feat, field in universe(cls).items():
            by = recorder.seen[name].get(feat)
            reason = NOT_APPLICABLE.get((name, feat))
            rows.append({"algorithm": name, "feature": feat, "field": field, "exercised_by": by,
                         "not_applicable": reason})
            if by is None and reason is None:
                missing.append(f"{name}: {feat}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"claims": len(claims), "seconds": round(time.perf_counter() - start, 1),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (out / "coverage.json").write_text(json.dumps({"meta": meta, "features": rows, "missing": missing}, indent=1))
    lines = ["# Structural coverage of the ledger's default instances", "",
             f"`python benchmarks/mutation/coverage.py`; {meta['claims']} claims; {meta['when']}; "
             f"{meta['seconds']:.0f} s.", "",
             f"{sum(r['exercised_by'] is not None for r in rows)} of {len(rows)} features exercised, "
             f"{sum(r['not_applicable'] is not None for r in rows)} not applicable, {len(missing)} missing.", "",
             "| algorithm | feature | first claim that runs it |", "|---|---|---|"]
    for r in rows:
        by = f"`{r['exercised_by']}`" if r["exercised_by"] else (f"n/a: {r['not_applicable']}"
                                                                   if r["not_applicable"] else "**MISSING**")
        lines.append(f"| {r['algorithm']} | `{r['feature']}` | {by} |")
    (out / "coverage.md").write_text("\n".join(lines) + "\n")
    statements = statement_paths(claims, recorder)
    (out / "statement_paths.json").write_text(json.dumps(statements, indent=1))
    (out / "statement_paths.md").write_text(render_statement_paths(statements, meta))
    print(f"{len(rows)} features, {len(missing)} missing ({meta['seconds']:.0f} s)")
    for m in missing:
        print("  MISSING", m)
    if not args.check_paths:
        return 1 if missing else 0
    problems = check_paths(statements, set(args.paper) if args.paper else None)
    (out / "unrun_paths.md").write_text(render_unrun(statements))
    if args.write_docs and not args.paper:
        from statements import update_blocks  # the discrimination tool's generated-block writer

        doc = HERE.parents[1] / "docs" / "verification-power.md"
        doc.write_text(update_blocks(doc.read_text(), {"unrun-paths": render_unrun(statements)}))
    print(f"statement paths: {len(problems)} problems")
    for p in problems:
        print("  PATH", p)
    return 1 if missing or problems else 0


if __name__ == "__main__":
    sys.exit(main())

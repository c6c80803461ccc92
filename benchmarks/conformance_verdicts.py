"""The conformance kit's verdict table on its own power set and on fedtheory's implementations, as JSON.

    PYTHONPATH=$PWD python benchmarks/conformance_verdicts.py out.json [--seed-only]

One row per (variant, property): status ("holds" / "violated" / "not applicable"), measured, theory, examples,
diagnosis and the first violating case; every property is searched in full (no fail_fast) and without
shrinking, so the table is deterministic. Used to show that a refactoring of the kit leaves its verdicts
unchanged: compare two tables row by row. Hypothesis mixes literals found in the loaded local modules into its
draws (with probability 0.05 per draw), so editing any fedtheory module can move a few cases; ``--seed-only``
turns that off (through a private hypothesis hook) so that the cases come from the kit's search seed alone and
two trees can be compared bitwise.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

if "--seed-only" in sys.argv:
    import hypothesis.internal.conjecture.providers as providers
    providers._get_local_constants = lambda: providers.Constants()

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.adapters.native import NATIVE  # noqa: E402
from fedtheory.conformance.power import CORRECT, WRONG  # noqa: E402


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def main(out: str) -> None:
    rows, seconds = [], {}
    jobs = ([("wrong", v.family, v.name, v.impl, v.hyper, v.rtol) for v in WRONG]
            + [("correct", v.family, v.name, v.impl, v.hyper, v.rtol) for v in CORRECT]
            + [("native", f, "native", NATIVE[f], {}, 1e-8) for f in sorted(NATIVE)])
    for kind, family, name, impl, hyper, rtol in jobs:
        start = time.perf_counter()
        report = conformance.check(impl, family, rtol=rtol, shrink=False, **hyper)
        if kind == "native":
            seconds[family] = time.perf_counter() - start
        for r in report.results:
            rows.append({"kind": kind, "family": family, "variant": name, "property": r.prop.id, "status": r.status,
                         "measured": _num(r.measured), "theory": _num(r.theory), "examples": r.examples,
                         "diagnosis": r.diagnosis,
                         "case": None if r.counterexample is None else r.counterexample.as_dict()["case"]})
        print(kind, family, name, "accepted" if report.passed else "rejected", file=sys.stderr, flush=True)
    with open(out, "w") as fh:
        json.dump({"rows": rows, "native_seconds": seconds}, fh, indent=0)


if __name__ == "__main__":
    main(next(a for a in sys.argv[1:] if not a.startswith("--")))

"""Run the ledger of some papers in the current tree (cwd) and write each claim's status as JSON.

Usage: ``python ledger_probe.py OUT.json PAPER [PAPER ...] [--stop-on-kill]``. The statuses are exactly
those of ``fedtheory verify --paper ...`` (same :func:`fedtheory.claims.registry.evaluate` and
``ClaimResult.status``); ``--stop-on-kill`` stops at the first VIOLATED / COUNTEREXAMPLE-LOST verdict, since
one verdict is enough to kill a mutant (an ERROR does not stop the run: a later claim may still give a verdict).
"""
from __future__ import annotations

import json
import sys
import time

KILL = ("VIOLATED", "COUNTEREXAMPLE-LOST")


def main(argv: list[str]) -> int:
    stop = "--stop-on-kill" in argv
    args = [a for a in argv if a != "--stop-on-kill"]
    out, papers = args[0], args[1:]
    start = time.perf_counter()
    from fedtheory.claims.registry import evaluate, select

    statuses: dict[str, str] = {}
    errors: dict[str, str] = {}
    for c in select(papers):
        r = evaluate(c)
        statuses[c.id] = r.status
        if r.error:
            errors[c.id] = r.error.splitlines()[0][:300]
        if stop and r.status in KILL:
            break
    with open(out, "w") as fh:
        json.dump({"papers": papers, "statuses": statuses, "errors": errors,
                   "seconds": time.perf_counter() - start}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

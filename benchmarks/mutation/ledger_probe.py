"""Run the ledger of some papers in the current tree (cwd) and write each claim's status as JSON.

Usage: ``python ledger_probe.py OUT.json PAPER [PAPER ...] [--stop-on-kill] [--exit-status]
[--mentions WORD,WORD]``. The statuses are exactly
those of ``fedtheory verify --paper ...`` (same :func:`fedtheory.claims.registry.evaluate` and
``ClaimResult.status``); ``--stop-on-kill`` stops at the first VIOLATED / COUNTEREXAMPLE-LOST / RUN-DIFFERS verdict, since
one verdict is enough to kill a mutant (an ERROR does not stop the run: a later claim may still give a verdict).
``--exit-status`` exits 1 on a kill verdict, 3 on an ERROR without verdict (the general mutation tool reads
the exit code). ``--mentions`` keeps only claims whose check or instance function's source mentions one of
the words (a targeted, fast subset for the general tool).
"""
from __future__ import annotations

import json
import sys
import time

#: A verdict that kills a mutant: a claim violated, a recorded counterexample lost, or the run certified as not
#: the paper's algorithm (RUN-DIFFERS, fedtheory/claims/certify.py).
KILL = ("VIOLATED", "COUNTEREXAMPLE-LOST", "RUN-DIFFERS")


def _mentions(c, words: list[str]) -> bool:
    import inspect

    src = ""
    for fn in (c.check, c.instances):
        try:
            src += inspect.getsource(fn)
        except (OSError, TypeError):
            pass
    return any(w in src for w in words)


def main(argv: list[str]) -> int:
    stop = "--stop-on-kill" in argv
    exit_status = "--exit-status" in argv
    words: list[str] = []
    if "--mentions" in argv:
        i = argv.index("--mentions")
        words = argv[i + 1].split(",")
        argv = argv[:i] + argv[i + 2:]
    order: dict[str, float] = {}
    if "--order" in argv:  # cheapest claims first (seconds from a baseline probe): same verdicts, earlier kills
        i = argv.index("--order")
        with open(argv[i + 1]) as fh:
            order = json.load(fh).get("claim_seconds", {})
        argv = argv[:i] + argv[i + 2:]
    args = [a for a in argv if a not in ("--stop-on-kill", "--exit-status")]
    out, papers = args[0], args[1:]
    start = time.perf_counter()
    from fedtheory.claims import evaluate, select

    statuses: dict[str, str] = {}
    errors: dict[str, str] = {}
    seconds: dict[str, float] = {}
    claims = select(papers)
    if order:
        claims.sort(key=lambda c: order.get(c.id, 0.0))
    for c in claims:
        if words and not _mentions(c, words):
            continue
        r = evaluate(c)
        statuses[c.id] = r.status
        seconds[c.id] = round(r.seconds, 3)
        if r.error:
            errors[c.id] = r.error.splitlines()[0][:300]
        if stop and r.status in KILL:
            break
    with open(out, "w") as fh:
        json.dump({"papers": papers, "statuses": statuses, "errors": errors,
                   "seconds": time.perf_counter() - start, "claim_seconds": seconds}, fh, indent=1)
    if exit_status and any(s in KILL for s in statuses.values()):
        return 1
    if exit_status and "ERROR" in statuses.values():
        return 3
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Which algorithm rounds each claim runs, and whether they are the paper's algorithm.

Runs the selected claims with run certification (fedtheory.claims.certify) and prints, per claim, the algorithms it
ran, the rounds certified against the paper's equations (fedtheory.references), the first difference, and the
algorithms or configurations it ran that have no reference. Exit 1 when a round differs or is uncertified.

    python benchmarks/certification.py [--paper P ...] [--claim ID ...] [--jobs N] [--runs]

``--runs`` prints, for every claim, the ``runs=`` declaration its @claim needs (what it actually ran).
"""
from __future__ import annotations

import argparse
import sys

from fedtheory.claims import select
from fedtheory.ledger import available_cores, run_claims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper", action="append")
    parser.add_argument("--claim", action="append")
    parser.add_argument("--jobs", type=int, default=available_cores())
    parser.add_argument("--runs", action="store_true", help="print the runs= each claim needs")
    args = parser.parse_args(argv)
    results = run_claims(select(args.paper, args.claim), jobs=args.jobs)
    bad = 0
    for r in results:
        cert = r.certification
        if cert is None:
            continue
        if args.runs:
            ran = sorted({name.split(":")[0] for name in cert.algorithms})
            if tuple(ran) != tuple(sorted(r.claim.runs)):
                print(f"{r.claim.id}\t{','.join(ran)}")
            continue
        if not cert.algorithms and r.error is None:
            continue
        line = f"{r.claim.id:55s} {r.status:20s} " + ", ".join(f"{k}:{v}" for k, v in sorted(cert.rounds.items()))
        if cert.differs:
            line += f"\n    DIFFERS: {cert.differs}"
        for u in cert.uncertified:
            line += f"\n    UNCERTIFIED: {u}"
        if r.error:
            line += "\n    ERROR: " + r.error.splitlines()[0]
        bad += bool(cert.differs or cert.uncertified)
        print(line)
    if not args.runs:
        print(f"{len(results)} claims; {bad} with a difference or an uncertified algorithm")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""``fedtheory bench``: algorithms × hyperparameter grids × catalogue problems × seeds, as a long table."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import catalogue
from ..algorithms import ALGORITHMS
from ..validation import read_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="Run a benchmark sweep on the named problem catalogue.",
        description="Run algorithms x hyperparameter grids x catalogue problems x seeds; write one file per cell "
                    "(atomically; a rerun skips finished cells), the long table results.parquet|csv, tuned "
                    "hyperparameters, a rounds-to-eps table and the standard figures. Give a sweep spec file "
                    "(JSON/TOML, see docs/bench.md) or flags.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  fedtheory bench --spec benchmarks/sweeps/delta_mu.json --out bench-results/delta_mu\n"
               "  fedtheory bench --problems 'quad-kappa100-delta*' --algorithm gd --algorithm scaffold \\\n"
               "      --grid scaffold.step==0.1/L,=0.3/L --grid scaffold.local_steps=10 --rounds 500\n"
               "  fedtheory bench --spec sweep.json --scheduler tcp://10.0.0.1:8786")
    p.add_argument("--spec", help="Sweep spec file (.json or .toml); flags below override its fields.")
    p.add_argument("--problems", nargs="+", metavar="NAME", help="Catalogue names or shell patterns.")
    p.add_argument("--algorithm", action="append", metavar="NAME",
                   help="Registered algorithm name (repeatable; see --list).")
    p.add_argument("--grid", action="append", default=[], metavar="ALGO.PARAM=V1,V2",
                   help="Hyperparameter values for an algorithm (JSON values or =expressions over the "
                        "certificate constants, e.g. fedavg.step==0.1/L,=1/L); repeatable.")
    p.add_argument("--seeds", nargs="+", type=int, help="Seeds (default 0).")
    p.add_argument("--rounds", type=int, help="Round budget per cell (default 1000).")
    p.add_argument("--record-every", type=int, help="Record every k-th round (default 1).")
    p.add_argument("--eps", type=float, help="Target relative gap for stopping and tuning (default 1e-8).")
    p.add_argument("--criterion", choices=("rounds", "comm_rounds", "bits", "local_grads"),
                   help="Tuning criterion: fewest rounds / communication rounds / bits / local gradients to "
                        "eps (default rounds).")
    p.add_argument("--sigma2", type=float, help="Variance of a stochastic gradient oracle on every problem "
                                                 "(for algorithms run with stochastic=true; default 0).")
    p.add_argument("--figure-x", help="Also plot tuned rounds-to-eps against this constant, e.g. delta_A/mu_f.")
    p.add_argument("--out", help="Results folder (default bench-results/<spec name>).")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="Table format.")
    p.add_argument("--jobs", type=int, default=-1,
                   help="Local joblib worker processes (default -1: every core; 1: run in this process).")
    p.add_argument("--scheduler", help="Dask scheduler address (tcp://host:port): run the cells on that cluster.")
    p.add_argument("--no-figures", action="store_true", help="Skip the figures.")
    p.add_argument("--quiet", action="store_true", help="No progress bar.")
    p.add_argument("--list", action="store_true", help="List registered algorithms and catalogue problems.")
    p.set_defaults(func=main)


def _parse_value(text: str) -> Any:
    if text.startswith("="):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _spec_dict(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if args.spec:
        path = Path(args.spec)
        if path.suffix == ".toml":
            import tomllib  # here, not at the top: standard from Python 3.11 only

            data = tomllib.loads(path.read_text())
        else:
            data = read_json(path)  # a malformed file is named in the error
        data.setdefault("name", path.stem)
    if args.problems:
        data["problems"] = args.problems
    if args.algorithm:
        data["algorithms"] = [{"name": a} for a in args.algorithm]
    grids: dict[str, dict[str, list]] = {}
    for item in args.grid:
        key, sep, values = item.partition("=")
        algo, dot, param = key.partition(".")
        if not sep or not dot or not param:
            raise ValueError(f"--grid must look like ALGO.PARAM=V1,V2, got {item!r}")
        grids.setdefault(algo, {})[param] = [_parse_value(v) for v in values.split(",")]
    if grids:
        entries = data.setdefault("algorithms", [])
        if isinstance(entries, dict):
            entries = data["algorithms"] = [{"name": k, "grid": v} for k, v in entries.items()]
        for algo, grid in grids.items():
            match = [e for e in entries if (e.get("label") or e["name"]) == algo]
            if not match:
                raise ValueError(f"--grid names {algo!r}, which is not among the sweep's algorithms")
            match[0].setdefault("grid", {}).update(grid)
    for flag, key in (("seeds", "seeds"), ("rounds", "rounds"), ("record_every", "record_every"), ("eps", "eps"),
                      ("criterion", "criterion"), ("figure_x", "figure_x"), ("sigma2", "sigma2")):
        if getattr(args, flag) is not None:
            data[key] = getattr(args, flag)
    data.setdefault("name", "sweep")
    return data


def main(args: argparse.Namespace) -> int:
    # here, not at the top: loaded first of the commands, fedtheory.bench adds 0.1 s of CPU to `fedtheory verify --help`
    from .. import bench

    if args.list:
        print("algorithms: " + ", ".join(sorted(ALGORITHMS)))
        print("problems:   " + ", ".join(catalogue.names()))
        return 0
    try:
        data = _spec_dict(args)
        spec = bench.SweepSpec.from_dict(data)
        out = Path(args.out or Path("bench-results") / spec.name)
        result = bench.sweep(spec, out, jobs=args.jobs, scheduler=args.scheduler, fmt=args.format,
                             progress=not args.quiet, report=False)
    except (ValueError, TypeError, KeyError, FileNotFoundError, ImportError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # str(KeyError) adds quotes
        print(f"fedtheory bench: {msg}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{v} {k}" for k, v in sorted(result.statuses.items())) or "nothing new"
    print(f"{len(result.cells)} cells: {result.skipped} already done, ran {result.ran} ({counts}) "
          f"in {result.seconds:.1f} s" + (f", {result.restarts} worker restarts" if result.restarts else ""))
    if result.missing:
        print(f"{len(result.missing)} cells unfinished; rerun the same command to resume", file=sys.stderr)
        return 1
    written = bench.write_report(spec, out, args.format, figures=not args.no_figures)
    print(f"table: {written['results']}")
    if "rounds_to_eps" in written:
        print(f"tuned: {written['tuned']}; {spec.criterion} to eps: {written['rounds_to_eps']}")
        print(Path(written["rounds_to_eps"]).read_text().split("\n\n", 2)[-1].rstrip())
    for path in written.get("figures", []):
        print(f"figure: {path}")
    errors = result.statuses.get("error", 0)
    if errors:
        print(f"note: {errors} cells raised an error; see the 'error' column of the table", file=sys.stderr)
    return 0

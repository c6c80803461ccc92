"""Reading a sweep's results, tuning hyperparameters and writing the report (tables and figures).

See :mod:`fedtheory.bench` ("Tuning") for the rule: per (problem, algorithm entry) the hyperparameter point with
the smallest median over seeds of the criterion to eps, ties to the smaller median final relative gap.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from .. import catalogue
from ..files import write_text_atomic
from .spec import Cell, SweepSpec
from .table import CRITERIA, TABLE_COLUMNS, cell_path, frame, normalise, read_frame, require_pandas, write_frame


def read_results(out: str | os.PathLike, cells: Sequence[Cell | str] | None = None, fmt: str | None = None):
    """The long table of a results folder (only the cells of its ``sweep.json`` plan, unless ``cells``)."""
    pd = require_pandas()
    out = Path(out)
    meta = json.loads((out / "sweep.json").read_text())
    fmt = fmt or meta["format"]
    ids = [c if isinstance(c, str) else c.id for c in cells] if cells is not None else meta["cells"]
    frames = [read_frame(cell_path(out, cid, fmt), fmt) for cid in ids if cell_path(out, cid, fmt).exists()]
    if not frames:
        return frame({c: [] for c in TABLE_COLUMNS})
    return normalise(pd.concat(frames, ignore_index=True))


def _first_reach(group: Any, eps: float, column: str) -> float:
    hit = group.loc[group["rel_gap"] <= eps, column]
    return float(hit.iloc[0]) if len(hit) else math.inf


def per_run_summary(table: Any, eps: float):
    """One row per cell: rounds/bits/local gradients until rel_gap <= eps (inf if never), final rel_gap, status."""
    pd = require_pandas()
    rows = []
    for cid, g in table.groupby("cell", sort=False):
        g = g.sort_values("round", na_position="first")
        first = g.iloc[0]
        ok = g["round"].notna().any()
        rows.append({"cell": cid, "problem": first["problem"], "algorithm": first["algorithm"],
                     "label": first["label"], "hyperparams": first["hyperparams"],
                     "hyperparams_resolved": first["hyperparams_resolved"], "seed": int(first["seed"]),
                     "status": first["status"],
                     **{f"{k}_to_eps": (_first_reach(g, eps, col) if ok else math.inf) for k, col in CRITERIA.items()},
                     "final_rel_gap": float(g["rel_gap"].iloc[-1]) if ok else math.inf,
                     "error": first["error"].splitlines()[0] if first["error"] else ""})
    return pd.DataFrame(rows)


def tune(table: Any, eps: float, criterion: str = "rounds"):
    """Best hyperparameters per (problem, algorithm entry): smallest median-over-seeds ``criterion`` to eps.

    Ties (including "never reached eps") go to the smaller median final relative gap. Returns one row per
    (problem, label) with the winning ``hyperparams`` and its medians of rounds, bits and local gradient
    evaluations to eps.
    """
    require_pandas()  # the tables below are DataFrames: say which extra is missing first
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
    runs = per_run_summary(table, eps)
    if runs.empty:
        return runs
    agg = (runs.groupby(["problem", "label", "algorithm", "hyperparams"], sort=False)
           .agg(**{f"{k}_to_eps": (f"{k}_to_eps", "median") for k in CRITERIA},
                final_rel_gap=("final_rel_gap", "median"),
                n_seeds=("seed", "count"), statuses=("status", lambda s: ",".join(sorted(set(s)))),
                hyperparams_resolved=("hyperparams_resolved", "first"))
           .reset_index())
    agg["final_rel_gap"] = agg["final_rel_gap"].fillna(math.inf)
    key = f"{criterion}_to_eps"
    # Output order: problems in natural order, algorithm labels in the order they appear in the table (the sweep's).
    problem_rank = {p: i for i, p in enumerate(sorted(set(agg["problem"]), key=catalogue.natural_key))}
    label_rank = {lab: i for i, lab in enumerate(dict.fromkeys(runs["label"]))}
    agg["_p"], agg["_l"] = agg["problem"].map(problem_rank), agg["label"].map(label_rank)
    agg = agg.sort_values(["_p", "_l", key, "final_rel_gap", "hyperparams"], kind="mergesort")
    best = agg.groupby(["problem", "label"], sort=False).head(1).drop(columns=["_p", "_l"]).reset_index(drop=True)
    best.insert(2, "criterion", criterion)
    best.insert(3, "eps", eps)
    return best


def rounds_to_eps_table(tuned: Any, criterion: str = "rounds"):
    """Problems × algorithm labels, each cell the tuned median ``criterion`` to eps (inf = never reached)."""
    pivot = tuned.pivot(index="problem", columns="label", values=f"{criterion}_to_eps")
    labels = list(dict.fromkeys(tuned["label"]))  # algorithms in the sweep's order, problems in natural order
    return pivot.loc[sorted(pivot.index, key=catalogue.natural_key), labels]


def problems_table(names: Iterable[str], root: str | None = None):
    """Certificate constants of the given catalogue instances, one row each."""
    pd = require_pandas()
    rows = []
    for name in names:
        inst = catalogue.spec(name, root)
        rows.append({"problem": name, "version": inst.version, "citation": inst.citation,
                     **catalogue.constants(catalogue.load(name, root))})
    return pd.DataFrame(rows)


def _markdown(df: Any, floatfmt: str = ".4g") -> str:
    cols = [df.index.name or ""] + [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for idx, row in df.iterrows():
        cells = [str(idx)] + [("never" if isinstance(v, float) and math.isinf(v) else
                               (format(v, floatfmt) if isinstance(v, float) else str(v))) for v in row.values]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(spec: SweepSpec, out: str | os.PathLike, fmt: str | None = None, figures: bool = True) -> dict:
    """Combine the cells into ``results.<fmt>`` and write tuning, the rounds-to-eps table and the figures."""
    from .. import plotting  # here, not at the top: plotting imports matplotlib (1 s); only figures need it

    out = Path(out)
    meta = json.loads((out / "sweep.json").read_text())
    fmt = fmt or meta["format"]
    table = read_results(out, fmt=fmt)
    path = out / f"results.{fmt}"
    write_frame(table, path, fmt)
    tuned = tune(table, spec.eps, spec.criterion)
    problems = problems_table(list(dict.fromkeys(table["problem"])), spec.catalogue_root)
    write_text_atomic(out / "tuned.csv", tuned.to_csv(index=False))
    write_text_atomic(out / "problems.csv", problems.to_csv(index=False))
    written = {"results": path, "tuned": out / "tuned.csv", "problems": out / "problems.csv"}
    if not tuned.empty:
        pivot = rounds_to_eps_table(tuned, spec.criterion)
        write_text_atomic(out / "rounds_to_eps.csv", pivot.to_csv())
        header = (f"# {spec.name}: tuned {spec.criterion} until (f(x)-f*)/(f(x0)-f*) <= {spec.eps:g}\n\n"
                  f"Median over seeds {list(spec.seeds)} of the best hyperparameter point per algorithm "
                  "('never' = not reached within the round budget).\n\n")
        write_text_atomic(out / "rounds_to_eps.md", header + _markdown(pivot))
        written["rounds_to_eps"] = out / "rounds_to_eps.md"
    if figures and not tuned.empty:
        written["figures"] = plotting.standard_figures(table, tuned, problems, out / "figures",
                                                       eps=spec.eps, figure_x=spec.figure_x,
                                                       criterion=spec.criterion)
    return written

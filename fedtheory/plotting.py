"""Matplotlib figures for the bench and the notebooks.

Everything here draws on :class:`matplotlib.figure.Figure` objects created directly (no ``pyplot`` state),
so the functions work under the Agg backend, in worker threads and on headless machines, and never open a
window. Pass an ``ax`` to draw into your own figure (e.g. in a notebook); the ``*_figure`` helpers create and
return a new :class:`~matplotlib.figure.Figure`.

Conventions: relative gaps (f(x) - f*)/(f(x0) - f*) on a log scale (geometric rates are straight lines),
one colour per algorithm entry, one line per seed (the first seed carries the legend label).
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

from .expressions import evaluate_expression

__all__ = ["X_AXES", "plot_convergence", "convergence_figure", "plot_rounds_vs", "rounds_vs_figure",
           "standard_figures", "trace_figure"]

#: The x axes of the standard convergence figures: table column -> axis label.
X_AXES: dict[str, str] = {
    "round": "rounds (iterations)",
    "comm_rounds": "communication rounds",
    "cum_bits": "communicated bits (uplink + downlink, cumulative)",
    "cum_local_grad_evals": "local gradient evaluations (all clients, cumulative)",
}
_FLOOR = 1e-300  # exact zeros cannot sit on a log axis; they are drawn at this floor


def _colors(labels: Sequence[str]) -> dict[str, Any]:
    cmap = colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(labels)}


def plot_convergence(ax: Axes, table: Any, problem: str, *, x: str = "round",
                     selection: Mapping[str, str] | None = None, eps: float | None = None,
                     colors: Mapping[str, Any] | None = None) -> Axes:
    """Relative gap against ``x`` (a key of :data:`X_AXES`) on ``problem``, one colour per label.

    ``selection`` maps a label to the hyperparameter JSON to draw (the tuned point); without it every
    hyperparameter point is drawn. ``eps`` draws the target as a dotted line.
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {sorted(X_AXES)}, got {x!r}")
    rows = table[(table["problem"] == problem) & table["round"].notna()]
    labels = list(dict.fromkeys(rows["label"]))
    colors = dict(colors or _colors(labels))
    for label in labels:
        sub = rows[rows["label"] == label]
        if selection is not None:
            if label not in selection:
                continue
            sub = sub[sub["hyperparams"] == selection[label]]
        first = True
        for _, g in sub.groupby(["hyperparams", "seed"], sort=True):
            g = g.sort_values("round")
            y = np.maximum(g["rel_gap"].to_numpy(dtype=float), _FLOOR)
            status = g["status"].iloc[0]
            name = label + (" (diverged)" if status == "diverged" else "")
            ax.plot(g[x].to_numpy(dtype=float), y, color=colors.get(label), lw=1.2, alpha=0.85,
                    label=name if first else None)
            first = False
    if eps is not None:
        ax.axhline(eps, color="0.4", ls=":", lw=1, label=f"ε = {eps:g}")
    ax.set_yscale("log")
    ax.set_xlim(left=0)
    if x != "round":
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4))
    ax.set_xlabel(X_AXES[x])
    ax.set_ylabel("(f(x) − f*) / (f(x⁰) − f*)")
    ax.grid(True, which="major", alpha=0.3)
    return ax


def convergence_figure(table: Any, problem: str, *, selection: Mapping[str, str] | None = None,
                       eps: float | None = None, xs: Sequence[str] = ("comm_rounds", "cum_bits", "cum_local_grad_evals")) -> Figure:
    """One panel per x axis (rounds, bits, local gradients) of the relative gap on ``problem``."""
    fig = Figure(figsize=(5.0 * len(xs), 4.0), layout="constrained")
    axes = fig.subplots(1, len(xs), squeeze=False)[0]
    labels = list(dict.fromkeys(table.loc[table["problem"] == problem, "label"]))
    colors = _colors(labels)
    for ax, x in zip(axes, xs):
        plot_convergence(ax, table, problem, x=x, selection=selection, eps=eps, colors=colors)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{problem}: tuned hyperparameters per algorithm" if selection is not None else problem)
    return fig


def plot_rounds_vs(ax: Axes, tuned: Any, problems: Any, x: str, *, criterion: str = "rounds",
                   colors: Mapping[str, Any] | None = None) -> Axes:
    """Tuned ``criterion``-to-eps of each algorithm label against a constant expression ``x`` of the problems.

    ``x`` is evaluated on each problem's certificate constants (e.g. ``"delta_A/mu_f"``). Points where an
    algorithm never reached eps are not drawn and are counted in the legend.
    """
    xs = {}
    for _, row in problems.iterrows():
        names = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        names.update(n=row["n_clients"], d=row["dim"])
        xs[row["problem"]] = float(evaluate_expression(x, names))
    labels = list(dict.fromkeys(tuned["label"]))
    colors = dict(colors or _colors(labels))
    key = f"{criterion}_to_eps"
    for label in labels:
        sub = tuned[tuned["label"] == label]
        pts = sorted((xs[p], float(v)) for p, v in zip(sub["problem"], sub[key]) if p in xs)
        ok = [(a, b) for a, b in pts if math.isfinite(b)]
        missing = len(pts) - len(ok)
        name = label + (f" ({missing} not reached)" if missing else "")
        if ok:
            ax.plot([a for a, _ in ok], [b for _, b in ok], "o-", color=colors.get(label), label=name)
        else:
            ax.plot([], [], "o-", color=colors.get(label), label=name)
    # Values within 1e-9 of the largest are floating-point zeros (delta_A = 1e-15 for identical Hessians):
    # the symlog axis keeps them at 0 and spreads the positive values logarithmically.
    top = max(xs.values(), default=0.0)
    positive = [v for v in xs.values() if v > 1e-9 * top]
    if positive and min(xs.values()) >= 0:
        lo = min(positive)
        ax.set_xscale("symlog", linthresh=lo, linscale=0.5)
        decades = range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(max(positive)) + 1e-9) + 1)
        ticks = [10.0 ** k for k in decades]
        if len(positive) < len(xs):
            ticks = [0.0] + ticks
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(_CRITERION_NAMES[criterion] + " to ε (tuned)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


_CRITERION_NAMES = {"rounds": "rounds", "comm_rounds": "communication rounds", "bits": "communicated bits",
                    "local_grads": "local gradient evaluations"}


def rounds_vs_figure(tuned: Any, problems: Any, x: str, *, criterion: str = "rounds", eps: float | None = None,
                     title: str | None = None) -> Figure:
    fig = Figure(figsize=(6.0, 4.5), layout="constrained")
    ax = fig.add_subplot()
    plot_rounds_vs(ax, tuned, problems, x, criterion=criterion)
    target = f"(f − f*)/(f(x⁰) − f*) ≤ {eps:g}" if eps else "ε"
    fig.suptitle(title or f"{_CRITERION_NAMES[criterion]} to {target}\n(best grid point per algorithm, "
                          "median over seeds)", fontsize=10)
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def standard_figures(table: Any, tuned: Any, problems: Any, folder: str | Path, *, eps: float,
                     figure_x: str | None = None, criterion: str = "rounds", dpi: int = 110) -> list[Path]:
    """Write the bench's standard figures to ``folder`` and return their paths.

    ``convergence__<problem>.png``: relative gap against rounds, communicated bits and local gradient
    evaluations for each algorithm's tuned hyperparameters; ``<criterion>_vs_<figure_x>.png`` when
    ``figure_x`` is given.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for problem in dict.fromkeys(tuned["problem"]):
        sel = tuned[tuned["problem"] == problem]
        selection = dict(zip(sel["label"], sel["hyperparams"]))
        fig = convergence_figure(table, problem, selection=selection, eps=eps)
        path = folder / f"convergence__{_slug(problem)}.png"
        fig.savefig(path, dpi=dpi)
        paths.append(path)
    if figure_x:
        fig = rounds_vs_figure(tuned, problems, figure_x, criterion=criterion, eps=eps)
        path = folder / f"{criterion}_vs_{_slug(figure_x.replace('/', '_over_'))}.png"
        fig.savefig(path, dpi=dpi)
        paths.append(path)
    return paths


def trace_figure(traces: Mapping[str, Any] | Iterable[tuple[str, Any]], *, x: str = "round",
                 metric: str = "gap", title: str = "") -> Figure:
    """Quick look at :class:`~fedtheory.trace.Trace` objects (label -> trace) on a log scale.

    ``x`` is ``"round"`` or a cost column (plotted cumulatively, e.g. ``"uplink_bits"``).
    """
    items = traces.items() if isinstance(traces, Mapping) else traces
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for label, trace in items:
        xs = trace.round if x == "round" else trace.cumulative(x)
        ax.plot(xs, np.maximum(getattr(trace, metric), _FLOOR), label=label)
    ax.set_yscale("log")
    ax.set_xlabel("rounds" if x == "round" else f"cumulative {x}")
    ax.set_ylabel(metric)
    ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig

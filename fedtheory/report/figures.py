"""The HTML report's figures: inline SVG drawn by matplotlib from one claim's claims.json record.

* :func:`evidence_figure`: what each instance measured against the theory's side (the bound, the closed form or
  the tolerance), the verdict per instance (marker shape and colour), the counterexample of a claim recorded
  false, and the tightness (measured / bound) per instance with, where ``--worst-case`` added them, the worst
  point found by the adversarial search and the exact PEP worst case;
* :func:`series_figure`: the series an instance's ``details`` carry (per round, or against an instance parameter
  such as L or δ_A/μ), e.g. DANE's rounds against δ_A/μ next to the bound's rounds.

matplotlib is imported inside the functions (Agg canvas, SVG output) so that importing the report costs nothing
until a figure is drawn. Text stays text in the SVG (``svg.fonttype: none``): the page's font, searchable, small.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .symbols import symbols

__all__ = ["Series", "find_series", "evidence_figure", "series_figure", "number"]

#: Marker and colour per verdict: shape and colour both say it (the legend names them), not colour alone.
HOLDS_STYLE = {"marker": "o", "color": "#1b7837", "label": "measured, holds"}
FAILS_STYLE = {"marker": "X", "color": "#c51b1b", "label": "measured, fails"}
THEORY_STYLE = {"marker": "_", "color": "#333333", "label": "theory: bound, exact value or tolerance"}
#: Detail names read as the x axis of the other series of the same length (instance parameters and grids).
PARAMETER_NAMES = {"L", "K", "T", "E", "S", "b", "p", "s", "mu", "eta", "lam", "lambda", "sigma", "delta_A",
                   "delta_B", "delta_A/mu", "tau", "sizes", "n_a", "gamma", "beta", "q", "d", "n"}
MAX_LINES = 6  # series per panel, so a legend still reads


def number(value: Any) -> float:
    """A claims.json number as a float: non-finite values are stored as strings ("inf", "nan")."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


@dataclass(frozen=True)
class Series:
    """Curves sharing an x axis, read from one instance's details."""

    xlabel: str
    x: tuple[float, ...]
    ys: Mapping[str, tuple[float, ...]]


def _numeric_list(v: Any) -> bool:
    return (isinstance(v, list) and len(v) >= 3
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))


def find_series(details: Mapping[str, Any]) -> list[Series]:
    """The series in one instance's details: numeric lists (against a parameter list of the same length when
    one is named in :data:`PARAMETER_NAMES`, else against the index, "round" when the name says so), tables
    named by their columns ("S, measured, exact": rows of numbers; the first column is x), and lists of
    records with numeric fields (the first field is x)."""
    out: list[Series] = []
    lists = {k: v for k, v in details.items() if _numeric_list(v)}
    by_length: dict[int, dict[str, list]] = {}
    for k, v in lists.items():
        by_length.setdefault(len(v), {})[k] = v
    for length, group in by_length.items():
        params = [k for k in group if k in PARAMETER_NAMES]
        xname = params[0] if params and len(group) > 1 else None
        ys = {k: tuple(map(number, v)) for k, v in group.items() if k != xname}
        if xname is not None:
            x = tuple(map(number, group[xname]))
        else:
            x = tuple(float(i) for i in range(length))
            xname = "round" if any("round" in k for k in ys) else "index"
        out.append(Series(xname, x, ys))
    for k, v in details.items():
        if not (isinstance(v, list) and len(v) >= 2):
            continue
        names = [n.strip() for n in re.sub(r"^\((.*)\)$", r"\1", k).split(",")]
        if all(isinstance(row, list) and len(row) == len(names) >= 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in row) for row in v):
            columns = list(zip(*v))
            out.append(Series(names[0], tuple(map(number, columns[0])),
                              {f"{k}: {n}" if len(names) == 2 else n: tuple(map(number, c))
                               for n, c in zip(names[1:], columns[1:])}))
        elif all(isinstance(row, dict) and row and list(row) == list(v[0]) for row in v):
            fields = [f for f in v[0] if all(isinstance(row[f], (int, float)) for row in v)]
            if len(fields) >= 2:
                out.append(Series(fields[0], tuple(number(row[fields[0]]) for row in v),
                                  {f: tuple(number(row[f]) for row in v) for f in fields[1:]}))
    return out


def _svg(fig: Any, salt: str) -> str:
    """The figure as an inline <svg> element (no XML prolog), with ids unique to ``salt`` so that several
    figures on one page do not share clip-path ids, and no date (the same ledger gives the same page)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):].replace("<svg ", '<svg role="img" ', 1)


def _figure(width: float, ncols: int, legend_lines: int) -> tuple[Any, list[Any]]:
    """A figure of ``ncols`` panels 1.9 inches high with fixed margins in inches, the legends below them (never
    over the data): a layout engine or a tight bounding box would draw every figure two or three times to
    measure its text (most of the report's time)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    below = 0.5 + 0.145 * legend_lines  # the axis label, then one line per legend entry
    height = 0.3 + 1.9 + below
    fig = Figure(figsize=(width, height))
    FigureCanvasSVG(fig)
    fig.subplots_adjust(left=0.62 / width, right=1 - 0.12 / width, bottom=below / height, top=1 - 0.3 / height,
                        wspace=0.7 * ncols / width)
    with _style():
        axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _style() -> Any:
    import matplotlib

    return matplotlib.rc_context({"font.size": 8, "axes.titlesize": 9, "axes.spines.top": False,
                                  "axes.spines.right": False, "legend.fontsize": 7, "legend.frameon": False,
                                  "font.family": "sans-serif"})


def _legend(ax: Any) -> None:
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=1, borderaxespad=0)


def _scale(ax: Any, values: Sequence[float]) -> None:
    """Log scale when every value is positive and they span more than two decades, symmetric log when they
    span many decades with signs, linear otherwise."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return
    nonzero = [abs(v) for v in finite if v != 0]
    if len(nonzero) < 2 or max(nonzero) / min(nonzero) <= 100:
        return
    if all(v > 0 for v in finite):
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=max(min(nonzero), max(nonzero) * 1e-12))


def evidence_figure(record: Mapping[str, Any]) -> str | None:
    """Measured against theory per instance, and the tightness panel when the claim reports tightness (see the
    module docstring); None for a claim with no evidence (a check that errored before any instance)."""
    evidence = record.get("evidence") or []
    if not evidence:
        return None
    measured = [number(e.get("measured")) for e in evidence]
    theory = [number(e.get("theory")) for e in evidence]
    holds = [bool(e.get("holds")) for e in evidence]
    tightness = [number(e.get("tightness")) for e in evidence]
    searched = {k: number(record.get(k)) for k in ("adversarial_tightness", "pep_worst_case")}
    with_tightness = any(math.isfinite(t) for t in tightness) or any(math.isfinite(v) for v in searched.values())
    n = len(evidence)
    panel = min(4.6, 1.9 + 0.22 * n)
    fig, axes = _figure(panel * (2 if with_tightness else 1) + 0.4, 2 if with_tightness else 1, 4)
    with _style():
        ax = axes[0]
        xs = range(1, n + 1)
        for i, m, t in zip(xs, measured, theory):
            if math.isfinite(m) and math.isfinite(t):
                ax.plot([i, i], [m, t], color="#bbbbbb", linewidth=1, zorder=1)
        ax.scatter(xs, theory, s=260, linewidths=2, zorder=2, **THEORY_STYLE)
        for verdict, style in ((True, HOLDS_STYLE), (False, FAILS_STYLE)):
            pts = [(i, m) for i, m, h in zip(xs, measured, holds) if h is verdict]
            if pts:
                ax.scatter(*zip(*pts), s=36 if verdict else 70, zorder=3, **style)
        if record.get("expected") == "violated":
            for i, m, h in zip(xs, measured, holds):
                if not h and math.isfinite(m):
                    ax.annotate("counterexample", (i, m), xytext=(6, 8), textcoords="offset points",
                                color=FAILS_STYLE["color"], fontsize=7)
                    break
        _scale(ax, measured + theory)
        ax.set_xticks(list(xs))
        ax.set_xlim(0.4, n + 0.6)
        ax.set_xlabel("instance (numbered as in the table below)")
        ax.set_title("measured against theory")
        _legend(ax)
        if with_tightness:
            _tightness_panel(axes[1], tightness, holds, searched)
    return _svg(fig, f"{record['id']}/evidence")


def _tightness_panel(ax: Any, tightness: Sequence[float], holds: Sequence[bool], searched: Mapping[str, float]) -> None:
    xs = list(range(1, len(tightness) + 1))
    colours = [HOLDS_STYLE["color"] if h else FAILS_STYLE["color"] for h in holds]
    finite = [(x, t, c) for x, t, c in zip(xs, tightness, colours) if math.isfinite(t)]
    if finite:
        bars = ax.bar([x for x, _, _ in finite], [t for _, t, _ in finite], color=[c for _, _, c in finite],
                      width=0.6, label="measured / bound per instance (hatched: fails)")
        for bar, (x, _, _) in zip(bars, finite):
            if not holds[x - 1]:  # the verdict in the bar's texture too, not in its colour alone
                bar.set_hatch("///")
                bar.set_edgecolor("white")
    ax.axhline(1.0, color="#333333", linewidth=1, label="bound attained (1)")
    if math.isfinite(searched["adversarial_tightness"]):
        ax.axhline(searched["adversarial_tightness"], color="#8c510a", linestyle="--", linewidth=1.2,
                   label=f"worst found by the search ({searched['adversarial_tightness']:.3g})")
    if math.isfinite(searched["pep_worst_case"]):
        ax.axhline(searched["pep_worst_case"], color="#542788", linestyle=":", linewidth=1.5,
                   label=f"PEP worst case ({searched['pep_worst_case']:.3g})")
    values = [t for _, t, _ in finite] + [v for v in searched.values() if math.isfinite(v)] + [1.0]
    _scale(ax, values)
    ax.set_xticks(xs)
    ax.set_xlim(0.4, len(xs) + 0.6)
    ax.set_xlabel("instance")
    ax.set_title("tightness (measured / bound)")
    _legend(ax)


def series_figure(record: Mapping[str, Any], max_panels: int = 3) -> str | None:
    """The series of :func:`find_series` from the first instances that carry any (one panel each, at most
    ``max_panels``); None when no instance's details carry a series."""
    panels: list[tuple[int, Series]] = []
    for k, e in enumerate(record.get("evidence") or [], start=1):
        for s in find_series(e.get("details") or {}):
            if len(panels) < max_panels and all(
                    (s.xlabel, tuple(s.ys)) != (p.xlabel, tuple(p.ys)) for _, p in panels):
                panels.append((k, s))
    if not panels:
        return None
    fig, axes = _figure(3.3 * len(panels) + 0.3, len(panels), min(MAX_LINES, max(len(s.ys) for _, s in panels)))
    with _style():
        for ax, (k, s) in zip(axes, panels):
            values: list[float] = []
            for (name, ys), _ in zip(s.ys.items(), range(MAX_LINES)):
                ax.plot(s.x, ys, marker="o", markersize=3, linewidth=1.2, label=symbols(name))
                values += list(ys)
            _scale(ax, values)
            if s.xlabel not in ("index", "round") and len(s.x) > 2 and all(v > 0 for v in s.x) \
                    and max(s.x) / min(s.x) > 100:
                ax.set_xscale("log")
            ax.set_xlabel(symbols(s.xlabel))
            ax.set_title(f"instance {k}: recorded series", fontsize=8)
            _legend(ax)
    return _svg(fig, f"{record['id']}/series")

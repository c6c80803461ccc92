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
import textwrap
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .symbols import symbols

__all__ = ["Series", "find_series", "evidence_figure", "series_figure", "evidence_axes", "series_axes", "number",
           "legend_height", "MAX_TICKS", "MAX_INSTANCE_TICKS"]

#: Marker and colour per verdict: shape and colour both say it (the legend names them), not colour alone.
HOLDS_STYLE = {"marker": "o", "color": "#1b7837", "label": "measured, holds"}
FAILS_STYLE = {"marker": "X", "color": "#c51b1b", "label": "measured, fails"}
THEORY_STYLE = {"marker": "_", "color": "#333333", "label": "theory: bound, exact value or tolerance"}
#: An exploratory claim's measurement (no verdict: expected="exploratory") and the value it is reported against.
MEASURED_STYLE = {"marker": "D", "color": "#2c5d9e", "label": "measured (no verdict)"}
REFERENCE_STYLE = {"marker": "_", "color": "#777777", "label": "the claim's reference value (not a bound)"}
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
    import matplotlib  # here, not at the top: matplotlib (0.8 s)

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):].replace("<svg ", '<svg role="img" ', 1)


#: Layout in inches: the left margin holds the y tick labels and the y label; below each panel come its tick
#: labels and x label, then its legend (never over the data).
LEFT, RIGHT, TOP, PANEL_HEIGHT, BELOW_AXIS, GAP = 0.95, 0.15, 0.4, 1.9, 0.5, 0.95
#: One legend line at the legend's 7 pt font (line height 1.2 em, entries 0.5 em apart) and the characters of
#: DejaVu Sans 7 pt that fit in an inch (0.6 em a character, conservatively), after the legend's handle.
LEGEND_LINE, LEGEND_GAP, CHARS_PER_INCH, HANDLE = 7 * 1.2 / 72, 7 * 0.5 / 72, 72 / (7 * 0.6), 0.45
#: At most this many labelled major ticks on a value axis, so that tick labels never crowd (a log axis over 17
#: decades would otherwise label every decade); an instance axis numbers each of up to MAX_INSTANCE_TICKS
#: instances (small integers, to be read against the table).
MAX_TICKS, MAX_INSTANCE_TICKS = 6, 12


def _wrap(label: str, panel: float) -> str:
    """A legend label wrapped to the width of its panel (``panel`` inches), so that the legend is never wider
    than the panel and clipped."""
    return "\n".join(textwrap.wrap(label, max(12, int((panel - HANDLE) * CHARS_PER_INCH)),
                                   break_on_hyphens=False)) or label


def legend_height(labels: Sequence[str], panel: float) -> float:
    """The height in inches of a one-column legend of ``labels`` wrapped by :func:`_wrap`."""
    lines = sum(_wrap(label, panel).count("\n") + 1 for label in labels)
    return lines * LEGEND_LINE + max(0, len(labels) - 1) * LEGEND_GAP + 0.1


def _figure(panel: float, ncols: int, legends: Sequence[Sequence[str]]) -> tuple[Any, list[Any]]:
    """A figure of ``ncols`` panels ``panel`` inches wide and :data:`PANEL_HEIGHT` high with fixed margins in
    inches, room below each for its legend (``legends``: the labels of each panel's legend): a layout engine or
    a tight bounding box would draw every figure two or three times to measure its text (most of the report's
    time); the margins are computed from the wrapped labels instead (tests/report/test_figures.py measures
    that every legend lies inside its figure)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG  # here, not at the top: matplotlib (0.8 s)
    from matplotlib.figure import Figure  # here, not at the top: matplotlib (0.8 s)

    below = BELOW_AXIS + max((legend_height(labels, panel) for labels in legends), default=0.0) + 0.05
    width = LEFT + ncols * panel + (ncols - 1) * GAP + RIGHT
    height = TOP + PANEL_HEIGHT + below
    fig = Figure(figsize=(width, height))
    FigureCanvasSVG(fig)
    fig.subplots_adjust(left=LEFT / width, right=1 - RIGHT / width, bottom=below / height, top=1 - TOP / height,
                        wspace=GAP / panel)
    with _style():
        axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _style() -> Any:
    import matplotlib  # here, not at the top: matplotlib (0.8 s)

    return matplotlib.rc_context({"font.size": 8, "axes.titlesize": 9, "axes.spines.top": False,
                                  "axes.spines.right": False, "legend.fontsize": 7, "legend.frameon": False,
                                  "font.family": "sans-serif"})


def _legend(ax: Any, panel: float) -> None:
    """The panel's legend below its x label, each label wrapped to the panel's width."""
    handles, labels = ax.get_legend_handles_labels()
    below = -BELOW_AXIS / PANEL_HEIGHT  # the axes' height is PANEL_HEIGHT inches: the legend starts BELOW_AXIS under
    ax.legend(handles, [_wrap(label, panel) for label in labels], loc="upper center", bbox_to_anchor=(0.5, below),
              ncols=1, borderaxespad=0, borderpad=0)


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


def _readable_ticks(axis: Any, most: int = MAX_TICKS) -> None:
    """At most ``most`` labelled major ticks on ``axis``, at least 1/``most`` of the axis apart (measured on the
    axis's own scale, so on a symmetric log axis 0 and ±10^-12 are not printed over each other); minor ticks
    unlabelled. The limits must be final (called after plotting)."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullFormatter  # here, not at the top: matplotlib (0.8 s)

    if axis.get_scale() == "linear":
        axis.set_major_locator(MaxNLocator(nbins=most - 1, steps=[1, 2, 2.5, 5, 10]))
        return
    lo, hi = sorted(axis.get_view_interval())
    transform = axis.get_transform()
    span = float(transform.transform([hi])[0] - transform.transform([lo])[0])
    kept: list[float] = []
    for tick in sorted(t for t in axis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi):
        position = float(transform.transform([tick])[0])
        if not kept or position - float(transform.transform([kept[-1]])[0]) >= span / most:
            kept.append(tick)
    while len(kept) > most:
        kept = kept[::2]
    axis.set_major_locator(FixedLocator(kept))
    axis.set_minor_formatter(NullFormatter())


def _instance_axis(ax: Any, n: int) -> None:
    """Instances 1..n on the x axis: every number while they fit, else whole numbers at readable steps."""
    from matplotlib.ticker import MaxNLocator  # here, not at the top: matplotlib (0.8 s)

    ax.set_xlim(0.4, n + 0.6)
    if n <= MAX_INSTANCE_TICKS:
        ax.set_xticks(list(range(1, n + 1)))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))


def _styles(record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The measured points' styles (holds, fails) and the theory's: an exploratory claim (a measurement, no
    verdict) is drawn in one neutral style against its reference value, never as passing or failing."""
    if record.get("expected") == "exploratory":
        return MEASURED_STYLE, MEASURED_STYLE, REFERENCE_STYLE
    return HOLDS_STYLE, FAILS_STYLE, THEORY_STYLE


def _counterexample_label(ax: Any, i: float, m: float, n: int) -> None:
    """"counterexample" beside the first failing point, with an arrow to it: offset by more than the marker's
    and the theory tick's half widths (8 pt), towards the inside of the panel, so that it never covers them."""
    ax.annotate("counterexample", (i, m), xytext=(-14 if i > (n + 1) / 2 else 14, 12), textcoords="offset points",
                ha="right" if i > (n + 1) / 2 else "left", va="bottom", color=FAILS_STYLE["color"], fontsize=7,
                arrowprops={"arrowstyle": "-", "color": FAILS_STYLE["color"], "linewidth": 0.8,
                            "shrinkA": 0, "shrinkB": 5})


def evidence_figure(record: Mapping[str, Any]) -> str | None:
    """Measured against theory per instance, and the tightness panel when the claim reports tightness (see the
    module docstring); None for a claim with no evidence (a check that errored before any instance)."""
    fig = evidence_axes(record)
    return None if fig is None else _svg(fig, f"{record['id']}/evidence")


def evidence_axes(record: Mapping[str, Any]) -> Any:
    """The matplotlib Figure of :func:`evidence_figure` (None without evidence)."""
    evidence = record.get("evidence") or []
    if not evidence:
        return None
    measured = [number(e.get("measured")) for e in evidence]
    theory = [number(e.get("theory")) for e in evidence]
    holds = [bool(e.get("holds")) for e in evidence]
    tightness = [number(e.get("tightness")) for e in evidence]
    searched = {k: number(record.get(k)) for k in ("adversarial_tightness", "pep_worst_case")}
    with_tightness = any(math.isfinite(t) for t in tightness) or any(math.isfinite(v) for v in searched.values())
    exploratory = record.get("expected") == "exploratory"
    holds_style, fails_style, theory_style = _styles(record)
    n = len(evidence)
    panel = min(4.6, 2.6 + 0.15 * n)
    verdicts = [style["label"] for verdict, style in ((True, holds_style), (False, fails_style))
                if verdict in holds]
    legends = [[theory_style["label"], *dict.fromkeys(verdicts)]]
    if with_tightness:
        legends.append(_tightness_labels(searched, exploratory))
    fig, axes = _figure(panel, len(legends), legends)
    with _style():
        ax = axes[0]
        xs = range(1, n + 1)
        for i, m, t in zip(xs, measured, theory):
            if math.isfinite(m) and math.isfinite(t):
                ax.plot([i, i], [m, t], color="#bbbbbb", linewidth=1, zorder=1)
        ax.scatter(xs, theory, s=260, linewidths=2, zorder=2, **theory_style)
        if exploratory:
            ax.scatter(xs, measured, s=40, zorder=3, **holds_style)
        else:
            for verdict, style in ((True, holds_style), (False, fails_style)):
                pts = [(i, m) for i, m, h in zip(xs, measured, holds) if h is verdict]
                if pts:
                    ax.scatter(*zip(*pts), s=36 if verdict else 70, zorder=3, **style)
        _scale(ax, measured + theory)
        _instance_axis(ax, n)
        if record.get("expected") == "violated":
            for i, m, h in zip(xs, measured, holds):
                if not h and math.isfinite(m):
                    _counterexample_label(ax, i, m, n)
                    break
        ax.set_xlabel("instance (as numbered in the table)")
        ax.set_ylabel("measured; reference value" if exploratory else "measured; theory's value")
        ax.set_title("measured (no verdict)" if exploratory else "measured against theory")
        _readable_ticks(ax.yaxis)
        _legend(ax, panel)
        if with_tightness:
            _tightness_panel(axes[1], tightness, holds, searched, exploratory, panel)
    return fig


def _tightness_labels(searched: Mapping[str, float], exploratory: bool) -> list[str]:
    labels = ["measured / reference value per instance" if exploratory
              else "measured / bound per instance (hatched: fails)",
              "measured = reference (1)" if exploratory else "bound attained (1)"]
    if math.isfinite(searched["adversarial_tightness"]):
        labels.append(f"worst found by the search ({searched['adversarial_tightness']:.3g})")
    if math.isfinite(searched["pep_worst_case"]):
        labels.append(f"PEP worst case ({searched['pep_worst_case']:.3g})")
    return labels


def _tightness_panel(ax: Any, tightness: Sequence[float], holds: Sequence[bool], searched: Mapping[str, float],
                     exploratory: bool, panel: float) -> None:
    labels = _tightness_labels(searched, exploratory)
    xs = list(range(1, len(tightness) + 1))
    colours = [MEASURED_STYLE["color"] if exploratory else HOLDS_STYLE["color"] if h else FAILS_STYLE["color"]
               for h in holds]
    finite = [(x, t, c) for x, t, c in zip(xs, tightness, colours) if math.isfinite(t)]
    if finite:
        bars = ax.bar([x for x, _, _ in finite], [t for _, t, _ in finite], color=[c for _, _, c in finite],
                      width=0.6, label=labels[0])
        for bar, (x, _, _) in zip(bars, finite):
            if not holds[x - 1] and not exploratory:  # the verdict in the bar's texture too, not its colour alone
                bar.set_hatch("///")
                bar.set_edgecolor("white")
    ax.axhline(1.0, color="#333333", linewidth=1, label=labels[1])
    if math.isfinite(searched["adversarial_tightness"]):
        ax.axhline(searched["adversarial_tightness"], color="#8c510a", linestyle="--", linewidth=1.2,
                   label=labels[2])
    if math.isfinite(searched["pep_worst_case"]):
        ax.axhline(searched["pep_worst_case"], color="#542788", linestyle=":", linewidth=1.5, label=labels[-1])
    values = [t for _, t, _ in finite] + [v for v in searched.values() if math.isfinite(v)] + [1.0]
    _scale(ax, values)
    _instance_axis(ax, len(xs))
    ax.set_xlabel("instance")
    ax.set_ylabel("measured / reference" if exploratory else "measured / bound")
    ax.set_title("measured / reference value" if exploratory else "tightness (measured / bound)")
    _readable_ticks(ax.yaxis)
    _legend(ax, panel)


def series_figure(record: Mapping[str, Any], max_panels: int = 3) -> str | None:
    """The series of :func:`find_series` from the first instances that carry any (one panel each, at most
    ``max_panels``); None when no instance's details carry a series."""
    fig = series_axes(record, max_panels)
    return None if fig is None else _svg(fig, f"{record['id']}/series")


def series_axes(record: Mapping[str, Any], max_panels: int = 3) -> Any:
    """The matplotlib Figure of :func:`series_figure` (None without a series)."""
    panels: list[tuple[int, Series]] = []
    for k, e in enumerate(record.get("evidence") or [], start=1):
        for s in find_series(e.get("details") or {}):
            if len(panels) < max_panels and all(
                    (s.xlabel, tuple(s.ys)) != (p.xlabel, tuple(p.ys)) for _, p in panels):
                panels.append((k, s))
    if not panels:
        return None
    panel = 3.0
    legends = [[symbols(name) for name in list(s.ys)[:MAX_LINES]] for _, s in panels]
    fig, axes = _figure(panel, len(panels), legends)
    with _style():
        for ax, (k, s), names in zip(axes, panels, legends):
            values: list[float] = []
            for name, ys in zip(names, s.ys.values()):
                ax.plot(s.x, ys, marker="o", markersize=3, linewidth=1.2, label=name)
                values += list(ys)
            _scale(ax, values)
            if s.xlabel not in ("index", "round") and len(s.x) > 2 and all(v > 0 for v in s.x) \
                    and max(s.x) / min(s.x) > 100:
                ax.set_xscale("log")
            ax.set_xlabel(symbols(s.xlabel))
            ax.set_ylabel("recorded value")
            ax.set_title(f"instance {k}: recorded series", fontsize=8)
            _readable_ticks(ax.yaxis)
            _readable_ticks(ax.xaxis)
            _legend(ax, panel)
    return fig


#: Curve metrics drawn on a log scale (fedtheory/experiments/fedred.py's relative gap).
LOG_METRICS = ("relative_gap",)
#: The most instances of one experiment claim drawn side by side.
MAX_CURVE_PANELS = 4


def curves_figure(record: Mapping[str, Any]) -> str | None:
    """A neural experiment's curves (``details["curves"]`` of its instances, written by
    fedtheory/claims/neural/shapes.py): test accuracy (or the metric each curve names) against rounds per method,
    the mean over the held-out seeds with a band from their minimum to their maximum, one panel per instance (at
    most :data:`MAX_CURVE_PANELS`: FedRed Figure 2's data sets side by side); None when no instance carries
    curves."""
    panels = [e for e in record.get("evidence") or []
              if isinstance(e.get("details"), Mapping) and e["details"].get("curves")][:MAX_CURVE_PANELS]
    if not panels:
        return None
    panel = 4.5
    legends = [list(e["details"]["curves"])[:MAX_LINES] for e in panels]
    fig, axes = _figure(panel, len(panels), legends)
    with _style():
        for ax, evidence, names in zip(axes, panels, legends):
            curves = evidence["details"]["curves"]
            for name in names:
                c = curves[name]
                line, = ax.plot(c["round"], c["mean"], linewidth=1.2, label=name)
                ax.fill_between(c["round"], c["low"], c["high"], color=line.get_color(), alpha=0.2, linewidth=0)
            first = curves[names[0]]
            metric = first.get("metric", "test_accuracy")
            if metric in LOG_METRICS:  # a gap spans decades
                ax.set_yscale("log")
            ax.set_xlabel(first.get("xlabel", "round"))
            ax.set_ylabel(metric.replace("_", " "))
            title = ("mean over the held-out seeds; band: their min to max" if len(panels) == 1 else
                     f"{str(evidence.get('instance', '')).split(' (')[0]}: held-out mean, min-max band")
            ax.set_title(title, fontsize=8)
            _readable_ticks(ax.yaxis)
            _readable_ticks(ax.xaxis)
            _legend(ax, panel)
    return _svg(fig, f"{record['id']}/curves")

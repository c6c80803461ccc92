"""A neural experiment's curves in the HTML report: one line per method with its seed band, or no figure."""
from __future__ import annotations

from fedtheory.report.figures import curves_figure


def _record(curves):
    return {"id": "fedelasticnet.neural.table3", "evidence": [{"details": {"curves": curves}}]}


def test_each_method_is_drawn_with_its_band() -> None:
    curves = {"FedDyn": {"round": [0, 5, 10], "mean": [0.1, 0.3, 0.4], "low": [0.1, 0.25, 0.35],
                         "high": [0.1, 0.35, 0.45]},
              "Alg. 3": {"round": [0, 5, 10], "mean": [0.1, 0.2, 0.3], "low": [0.1, 0.2, 0.3],
                         "high": [0.1, 0.2, 0.3]}}
    svg = curves_figure(_record(curves))
    assert svg is not None and svg.startswith("<svg")
    assert "FedDyn" in svg and "Alg. 3" in svg and "test accuracy" in svg
    assert svg.count("<path") >= 4  # two lines and two bands at least


def test_no_curves_no_figure() -> None:
    assert curves_figure({"id": "x", "evidence": [{"details": {}}]}) is None
    assert curves_figure({"id": "x", "evidence": []}) is None


def test_every_instance_gets_a_panel_with_its_metric() -> None:
    gap = {"DANE+-GD": {"round": [0, 10], "mean": [1.0, 1e-4], "low": [1.0, 1e-5], "high": [1.0, 1e-3],
                        "metric": "relative_gap", "xlabel": "communications"}}
    record = {"id": "fedred.figure2.experiment",
              "evidence": [{"instance": f"{name} (full: ...)", "details": {"curves": gap}}
                           for name in ("fedred.figure2.wine", "fedred.figure2.digits")]}
    svg = curves_figure(record)
    assert svg is not None and "relative gap" in svg and "communications" in svg and "test accuracy" not in svg
    assert "fedred.figure2.wine" in svg and "fedred.figure2.digits" in svg  # one titled panel per instance

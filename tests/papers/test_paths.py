"""A statement's declared paths (the options of its algorithm its own claims do not run) are well formed and name
real options: ``benchmarks/mutation/coverage.py --check-paths`` compares them with the runs; this test needs no
run."""
from __future__ import annotations

import pytest

from fedtheory.algorithms import ALGORITHMS
from fedtheory.papers import all_papers
from fedtheory.papers.inventory import Statement


def test_a_path_without_its_kind_or_reason_is_refused():
    with pytest.raises(ValueError, match="outside: "):
        Statement("Theorem 1", "§1", "x", paths={"fedavg:server_step=other": "because"})
    with pytest.raises(ValueError, match="outside: "):
        Statement("Theorem 1", "§1", "x", paths={"fedavg:server_step=other": "unrun: "})
    with pytest.raises(ValueError, match="<algorithm>:<option>=<value>"):
        Statement("Theorem 1", "§1", "x", paths={"server_step=other": "outside: the theorem fixes eta_g = 1"})


def test_every_declared_path_names_an_option_of_a_registered_algorithm():
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "coverage_tool", pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "mutation" / "coverage.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    unknown = []
    for p in all_papers():
        for s in p.statements:
            for key in s.paths:
                name, _, feature = key.partition(":")
                cls = ALGORITHMS.get(name)
                if cls is None or feature not in tool.universe(cls):
                    unknown.append(f"{p.key}:{s.label}: {key}")
    assert not unknown, f"paths name options no registered algorithm has: {unknown}"

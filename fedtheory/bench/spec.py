"""What a benchmark sweep runs: the spec (file format in :mod:`fedtheory.bench`), its cells, and the ``=``
expressions of its grids over a problem's certificate constants."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import catalogue
from ..algorithms import ALGORITHMS
from ..catalogue import resolve_generator
from ..expressions import evaluate_expression
from ..user_code import import_user_module
from ..validation import check_int, check_nonnegative, check_positive, read_json
from .table import CRITERIA

# ---------------------------------------------------------------------------------------------------------
# Expressions over certificate constants
# ---------------------------------------------------------------------------------------------------------

def expression_names(problem: Any) -> dict[str, Any]:
    """Names available to ``=`` expressions: the certificate constants plus n (clients) and d (dimension)."""
    names = catalogue.constants(problem)
    names["n"] = names["n_clients"]
    names["d"] = names["dim"]
    return names


def _resolve_value(key: str, value: Any, names: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("="):
        result = evaluate_expression(value[1:], names)
        if isinstance(result, float) and not math.isfinite(result):
            raise ValueError(f"hyperparameter {key}={value!r} evaluates to {result}")
        return result
    if isinstance(value, Mapping) and "$call" in value:
        kwargs = {k: _resolve_value(f"{key}.{k}", v, names) for k, v in value.items() if k != "$call"}
        return resolve_generator(str(value["$call"]))(**kwargs)
    if isinstance(value, list):
        return tuple(_resolve_value(key, v, names) for v in value)
    return value


def resolve_hyperparams(hyperparams: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    """Constructor arguments from grid values: ``"=expr"`` strings are evaluated over ``names`` (the
    certificate constants), ``{"$call": "package.Class", **kwargs}`` builds an object (e.g.
    ``{"$call": "fedtheory.participation.UniformSubset", "size": 5}``), lists become tuples; other JSON
    values pass through unchanged (integers stay integers)."""
    return {key: _resolve_value(key, value, names) for key, value in hyperparams.items()}


# ---------------------------------------------------------------------------------------------------------
# Spec and plan
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AlgorithmEntry:
    """One algorithm with its hyperparameter grid (Cartesian product of ``grid``'s lists)."""

    name: str
    grid: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    label: str = ""

    @property
    def display(self) -> str:
        return self.label or self.name

    def points(self) -> list[dict[str, Any]]:
        keys = sorted(self.grid)
        points: list[dict[str, Any]] = [{}]
        for key in keys:
            points = [{**p, key: v} for p in points for v in self.grid[key]]
        return points


@dataclass(frozen=True)
class SweepSpec:
    """What to run; see the module docstring for the file format."""

    problems: tuple[str, ...]
    algorithms: tuple[AlgorithmEntry, ...]
    seeds: tuple[int, ...] = (0,)
    rounds: int = 1000
    record_every: int = 1
    eps: float = 1e-8
    stop_at_eps: bool = True
    criterion: str = "rounds"
    figure_x: str | None = None
    imports: tuple[str, ...] = ()
    catalogue_root: str | None = None
    name: str = "sweep"
    sigma2: float = 0.0

    def __post_init__(self) -> None:
        if not self.problems:
            raise ValueError("problems must name at least one catalogue instance or pattern")
        if not self.algorithms:
            raise ValueError("algorithms must list at least one algorithm")
        if not self.seeds:
            raise ValueError("seeds must list at least one seed")
        for s in self.seeds:
            check_int("seed", s, low=0)
        check_int("rounds", self.rounds, low=1)
        check_int("record_every", self.record_every, low=1)
        check_positive("eps", self.eps)
        check_nonnegative("sigma2", self.sigma2)
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {self.criterion!r}")
        labels = [a.display for a in self.algorithms]
        if len(set(labels)) != len(labels):
            raise ValueError(f"algorithm labels must be unique (give 'label' to repeat an algorithm): {labels}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SweepSpec":
        known = {"problems", "algorithms", "seeds", "rounds", "record_every", "eps", "stop_at_eps", "criterion",
                 "figure_x", "imports", "catalogue_root", "name", "sigma2"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown sweep spec keys {sorted(unknown)}; known: {sorted(known)}")
        algos = data.get("algorithms", ())
        if isinstance(algos, Mapping):  # {"gd": {}, "fedavg": {"step": [...]}} shorthand
            algos = [{"name": k, "grid": v} for k, v in algos.items()]
        entries = []
        for a in algos:
            if isinstance(a, str):
                a = {"name": a}
            extra = set(a) - {"name", "grid", "label"}
            if extra:
                raise ValueError(f"algorithm entry {a.get('name')!r}: unknown keys {sorted(extra)}")
            grid = {k: tuple(v) if isinstance(v, (list, tuple)) else (v,) for k, v in dict(a.get("grid") or {}).items()}
            for k, v in grid.items():
                if not v:
                    raise ValueError(f"algorithm {a['name']!r}: grid for {k!r} is empty")
            entries.append(AlgorithmEntry(name=str(a["name"]), grid=grid, label=str(a.get("label", ""))))
        problems = data.get("problems", ())
        kwargs = {k: data[k] for k in ("rounds", "record_every", "stop_at_eps", "criterion", "figure_x",
                                       "catalogue_root", "name") if k in data}
        if "eps" in data:
            kwargs["eps"] = float(data["eps"])
        if "sigma2" in data:
            kwargs["sigma2"] = float(data["sigma2"])
        return cls(problems=(problems,) if isinstance(problems, str) else tuple(problems),
                   algorithms=tuple(entries), seeds=tuple(data.get("seeds", (0,))),
                   imports=tuple(data.get("imports", ())), **kwargs)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "problems": list(self.problems),
                "algorithms": [{"name": a.name, "label": a.label, "grid": {k: list(v) for k, v in a.grid.items()}}
                               for a in self.algorithms],
                "seeds": list(self.seeds), "rounds": self.rounds, "record_every": self.record_every,
                "eps": self.eps, "stop_at_eps": self.stop_at_eps, "criterion": self.criterion,
                "figure_x": self.figure_x, "imports": list(self.imports), "catalogue_root": self.catalogue_root,
                "sigma2": self.sigma2}


def load_spec(path: str | os.PathLike) -> SweepSpec:
    """Read a sweep spec from a ``.json`` or ``.toml`` file."""
    path = Path(path)
    if path.suffix == ".toml":
        try:
            import tomllib  # here, not at the top: standard from Python 3.11 only
        except ImportError as exc:  # pragma: no cover - Python 3.10
            raise ImportError("TOML sweep specs need Python >= 3.11; use JSON") from exc
        data = tomllib.loads(path.read_text())
    else:
        data = read_json(path)
    data.setdefault("name", path.stem)
    return SweepSpec.from_dict(data)


@dataclass(frozen=True)
class Cell:
    """One unit of work: an algorithm entry at one hyperparameter point on one problem with one seed."""

    problem: str
    problem_version: int
    algorithm: str
    label: str
    hyperparams: Mapping[str, Any]
    seed: int
    rounds: int
    record_every: int
    eps: float | None
    sigma2: float = 0.0

    @property
    def id(self) -> str:
        """Content hash of everything that determines the cell's numbers (and its label)."""
        key = {"problem": self.problem, "version": self.problem_version, "algorithm": self.algorithm,
               "label": self.label, "hyperparams": self.hyperparams, "seed": self.seed, "rounds": self.rounds,
               "record_every": self.record_every, "eps": self.eps}
        if self.sigma2:  # only when set, so ids of noiseless cells are unchanged
            key["sigma2"] = self.sigma2
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]

    def hyperparams_json(self) -> str:
        return json.dumps(dict(self.hyperparams), sort_keys=True)


def import_plugins(imports: Iterable[str]) -> None:
    """Import the modules (dotted names or ``.py`` files) a spec lists, so the algorithms they register can run."""
    for item in imports:
        if item.endswith(".py"):
            path = Path(item).resolve()
            mod_name = f"_fedtheory_plugin_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
            if mod_name in sys.modules:
                continue
            loader_spec = importlib.util.spec_from_file_location(mod_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot import {item}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_name] = module
            loader_spec.loader.exec_module(module)
        else:
            import_user_module(item)


def registered_algorithms() -> dict[str, type]:
    """Name -> algorithm class, fedtheory's registry (:data:`fedtheory.algorithms.ALGORITHMS`)."""
    return ALGORITHMS


def plan(spec: SweepSpec) -> list[Cell]:
    """Expand a spec into its cells (validating problem patterns and algorithm names up front)."""
    import_plugins(spec.imports)
    registry = registered_algorithms()
    for entry in spec.algorithms:
        if entry.name not in registry:
            raise ValueError(f"unknown algorithm {entry.name!r}; registered: {', '.join(sorted(registry))}")
    problems: list[str] = []
    for pattern in spec.problems:
        base = pattern.partition("@v")[0]
        if any(c in base for c in "*?["):
            found = catalogue.names(base, root=spec.catalogue_root)
        else:
            found = [catalogue.spec(pattern, spec.catalogue_root).name]  # checks a pinned @vK version
        if not found:
            raise ValueError(f"problem pattern {pattern!r} matches no catalogue instance "
                             "(see `fedtheory problems list`)")
        for name in found:
            if name not in problems:
                problems.append(name)
    cells = []
    for name in problems:
        inst = catalogue.spec(name, spec.catalogue_root)
        for entry in spec.algorithms:
            for point in entry.points():
                for seed in spec.seeds:
                    cells.append(Cell(problem=inst.name, problem_version=inst.version, algorithm=entry.name,
                                      label=entry.display, hyperparams=point, seed=int(seed), rounds=spec.rounds,
                                      record_every=spec.record_every,
                                      eps=spec.eps if spec.stop_at_eps else None,
                                      sigma2=spec.sigma2))
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError("the sweep spec lists the same cell twice (duplicate grid values or seeds)")
    return cells

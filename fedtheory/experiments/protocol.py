"""The protocol every neural experiment follows: methods x seeds, the same budget for every method, one record.

An :class:`Experiment` names the paper's statements it reproduces, builds the federated problem of one seed
(the split, the initialisation and the run's draws all follow the seed) and the methods to compare (each with
the paper's published hyperparameters, or the same small grid for every method where the paper tuned). A
:class:`Scale` says how many clients, rounds and seeds: ``smoke`` (one seed, a few rounds: CI checks that every
experiment runs), ``full`` (the sizes of docs/torch.md, at most 10 minutes per experiment on 2 CPU cores) and
``large`` (more clients, rounds and seeds, for a GPU). :func:`run_experiment` runs every method on every seed
and returns the record the ledger's shape tests read (``fedtheory/claims/neural/shapes.py``): per method and
seed, the final metrics and the curves (test accuracy and training loss against rounds).

The records of the full scale are stored in ``fedtheory/experiments/recorded/`` (written by
``fedtheory verify --experiments --scale full --record``); ``fedtheory verify --experiments`` runs them afresh
into ``<out>/experiments/`` and the ledger reads those (:func:`results_dir`).
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_text_atomic
from ..run import run

__all__ = [
    "DEVICES",
    "RECORDED",
    "RESULTS_ENV",
    "SCALES",
    "Experiment",
    "Scale",
    "load_record",
    "resolve_device",
    "results_dir",
    "run_experiment",
    "save_record",
]

#: The folder of the recorded full-scale records (package data).
RECORDED = Path(__file__).resolve().parent / "recorded"
#: The environment variable naming the folder of fresh records (set by ``fedtheory verify --experiments``; it
#: reaches the ledger's worker processes too).
RESULTS_ENV = "FEDTHEORY_EXPERIMENTS_DIR"
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Scale:
    """Sizes of one run of an experiment. ``clients`` and ``rounds`` multiply the experiment's own base sizes
    (``clients=1.0`` is the full scale); ``dev_seeds`` fix the shape test's margin and ``held_seeds`` judge it."""
    name: str
    clients: float
    rounds: float
    dev_seeds: tuple[int, ...]
    held_seeds: tuple[int, ...]


SCALES: dict[str, Scale] = {
    "smoke": Scale("smoke", 0.25, 0.05, (), (0,)),
    "full": Scale("full", 1.0, 1.0, (100, 101), (0, 1, 2, 3, 4)),
    "large": Scale("large", 5.0, 4.0, (100, 101, 102), tuple(range(10))),
}


@dataclass(frozen=True)
class Experiment:
    """One experiment of a paper.

    ``problem(n_clients, seed, device)`` builds the seed's federated problem; ``methods(problem)`` the methods,
    name -> algorithm (the same for every seed); ``clients`` and ``rounds`` are the full-scale sizes;
    ``setting`` is one paragraph for docs/torch.md and the HTML report (data, model, split, participation,
    hyperparameters); ``paper_numbers`` the paper's reported numbers shown next to the curves."""
    name: str
    paper: str
    cites: tuple[str, ...]
    setting: str
    problem: Callable[[int, int, str], Any]
    methods: Callable[[Any], Mapping[str, Any]]
    clients: int
    rounds: int
    record_every: int = 5
    paper_numbers: Mapping[str, Any] = field(default_factory=dict)
    #: How one method is run and measured, ``measure(algorithm, problem, rounds, seed, x0) -> {"final": {...},
    #: "curve": {...}}``, for an experiment whose metric is not the final accuracy (rounds to a target, a
    #: time-averaged online loss); None runs ``rounds`` rounds and records accuracy and loss.
    measure: Callable[..., dict[str, Any]] | None = None

    def sizes(self, scale: Scale) -> tuple[int, int]:
        """(clients, rounds) at ``scale`` (at least 4 clients and 2 rounds)."""
        return max(4, round(self.clients * scale.clients)), max(2, round(self.rounds * scale.rounds))


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``"cpu"``/``"cuda"`` as given (ValueError
    for ``"cuda"`` without a GPU, and for anything else)."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' but torch sees no GPU (use 'auto' or 'cpu')")
    return device


def _final(trace: Any, problem: Any) -> dict[str, float]:
    """The last round's metrics plus the communication totals of the run."""
    d = problem.dim
    sent = float(np.sum(trace.vectors_up)) * d
    nnz = float(trace.cumulative("uplink_nnz")[-1])
    out = {"test_accuracy": float(trace.test_accuracy[-1]), "train_loss": float(trace.loss[-1]),
           "train_accuracy": float(trace.accuracy[-1]), "cumulative_nnz": nnz,
           "zero_fraction": 1.0 - nnz / sent if sent else float("nan"),
           "status": trace.status}
    # the totals of :class:`~fedtheory.experiments.uploads.RunningUploads`, when the methods carry it
    for key, name in (("entropy_total", "cumulative_entropy"), ("kurtosis_mean", "excess_kurtosis")):
        if key in trace.extra:
            out[name] = float(trace.extra[key][-1])
    return out


def _curve(trace: Any) -> dict[str, list[float]]:
    return {"round": [int(r) for r in trace.round], "test_accuracy": [float(a) for a in trace.test_accuracy],
            "train_loss": [float(v) for v in trace.loss]}


def run_experiment(exp: Experiment, scale: Scale, device: str = "cpu",
                   progress: Callable[[str], None] | None = None,
                   seed_done: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run every method of ``exp`` on every seed of ``scale``; the record (module docstring). ``progress`` is
    called with a label after every run (one method on one seed), ``seed_done`` after every seed."""
    n, rounds = exp.sizes(scale)
    seeds = (*scale.dev_seeds, *scale.held_seeds)
    methods: dict[str, dict[str, Any]] = {}
    start, cpu = time.perf_counter(), time.process_time()
    for seed in seeds:
        problem = exp.problem(n, seed, device)
        # a convex NumPy problem has no initialisation to draw: it starts at 0
        x0 = problem.initial_point() if hasattr(problem, "initial_point") else np.zeros(problem.dim)
        for name, alg in exp.methods(problem).items():
            t0 = time.perf_counter()
            if exp.measure is not None:
                measured = exp.measure(alg, problem, rounds, seed, x0)
            else:
                trace = run(alg, problem, rounds, seed=seed, x0=x0, record_every=exp.record_every)
                measured = {"final": _final(trace, problem), "curve": _curve(trace)}
            methods.setdefault(name, {})[str(seed)] = {**measured, "seconds": time.perf_counter() - t0}
            if progress is not None:
                progress(f"{name} seed {seed}")
        if seed_done is not None:
            seed_done()
    return {"experiment": exp.name, "paper": exp.paper, "cites": list(exp.cites), "setting": exp.setting,
            "scale": scale.name, "clients": n, "rounds": rounds, "dev_seeds": list(scale.dev_seeds),
            "held_seeds": list(scale.held_seeds), "device": device, "seconds": time.perf_counter() - start,
            # CPU seconds of this process: the time on a machine of its own (the wall time above includes waiting
            # for a shared CPU)
            "cpu_seconds": time.process_time() - cpu,
            "paper_numbers": dict(exp.paper_numbers), "methods": methods}


def results_dir() -> Path:
    """Where the ledger reads experiment records: ``$FEDTHEORY_EXPERIMENTS_DIR`` when set (a fresh run), else
    the recorded full-scale records."""
    env = os.environ.get(RESULTS_ENV)
    return Path(env) if env else RECORDED


def save_record(record: Mapping[str, Any], folder: Path) -> Path:
    """Write ``record`` as ``<folder>/<experiment>.json``; the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['experiment']}.json"
    write_text_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


def load_record(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The record of experiment ``name`` (from :func:`results_dir` by default); FileNotFoundError naming the
    command that writes it."""
    path = (results_dir() if folder is None else folder) / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no record of experiment {name} at {path}: run `fedtheory verify --experiments`")
    return json.loads(path.read_text())

"""``fedtheory verify --experiments``: run the papers' neural experiments, then judge them in the ledger.

The experiments (:mod:`fedtheory.experiments`) run with a progress bar over their runs (one method on one seed)
whose first estimate comes from the recorded full-scale run's seconds per run, scaled by clients x rounds, and
then from the measured pace. Their records go to ``<out>/experiments/``; the ledger's shape tests read them from
there (:data:`fedtheory.experiments.protocol.RESULTS_ENV`), so the verdicts are those of this run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from ..optional import EXTRAS, MissingExtra, require
from . import experiments, run_experiment, save_record
from .protocol import DEVICES, RECORDED, RESULTS_ENV, SCALES, resolve_device

__all__ = ["add_arguments", "run_selected", "selected_statements"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``verify --experiments``."""
    p.add_argument("--experiments", action="store_true",
                   help="Run the papers' neural experiments (needs pip install torch==2.13.0 "
                        "'fedtheory[experiments]') into OUT/experiments/, then the claims that judge them "
                        "(with --paper, only that paper's experiments). docs/torch.md gives sizes and times.")
    p.add_argument("--scale", choices=tuple(SCALES), default="full",
                   help="With --experiments: smoke (one seed, a twentieth of the rounds, a quarter of the "
                        "clients: checks that every experiment runs, no verdict), full (the recorded sizes, at most 10 minutes per experiment "
                        "on 2 cores) or large (5x clients, 4x rounds, 10 held-out seeds: for a GPU). "
                        "Default: %(default)s.")
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="With --experiments: the torch device (auto: cuda when torch sees a GPU). "
                        "Default: %(default)s.")
    p.add_argument("--record", action="store_true",
                   help="With --experiments --scale full: also store the records as the package's recorded "
                        "ones (fedtheory/experiments/recorded/, what the default verify judges).")


def _estimate(exp, scale) -> float | None:
    """Seconds the experiment should take at ``scale``, from its recorded full-scale record (None without one)."""
    path = RECORDED / f"{exp.name}.json"
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    n, rounds = exp.sizes(scale)
    per_seed = rec["seconds"] / max(1, len(rec["dev_seeds"]) + len(rec["held_seeds"]))
    return per_seed * (len(scale.dev_seeds) + len(scale.held_seeds)) * (n * rounds) / (rec["clients"] * rec["rounds"])


def run_selected(papers: list[str] | None, args: argparse.Namespace, out: Path) -> list[str]:
    """Run the experiments of ``papers`` (all when None) at ``args.scale`` on ``args.device``; point the ledger at
    their records; the names run. Raises MissingExtra without torch or mnist1d, ValueError for a bad device."""
    for module in ("torch", "mnist1d"):
        try:
            require(module, "fedtheory verify --experiments")
        except MissingExtra as exc:  # name the extra that brings both
            raise MissingExtra(f"fedtheory verify --experiments needs {module}, which is not installed: "
                               f"{EXTRAS['mnist1d'][1]}") from exc
    device = resolve_device(args.device)
    if device == "cpu":
        # one intra-op thread: the vmapped kernels are small, and extra threads only contend on a shared machine
        require("torch", "fedtheory verify --experiments").set_num_threads(1)
    scale = SCALES[args.scale]
    chosen = [e for e in experiments().values() if papers is None or e.paper in papers]
    folder = out / "experiments"
    estimates = [_estimate(e, scale) for e in chosen]
    known = sum(x for x in estimates if x is not None)
    print(f"{len(chosen)} experiment(s) at scale {scale.name} on {device}: "
          + (f"about {known / 60:.1f} min at the recorded run's pace" if known else "no recorded pace to estimate")
          + (" (some have no recorded run)" if None in estimates and known else ""), file=sys.stderr)
    for exp, estimate in zip(chosen, estimates):
        bar = None
        if not args.quiet:
            from tqdm import tqdm  # here, not at the top: tqdm (0.1 s) only draws the progress bar

            seeds = len(scale.dev_seeds) + len(scale.held_seeds)
            bar = tqdm(total=seeds, desc=exp.name, unit="seed", file=sys.stderr,
                       postfix=None if estimate is None else f"~{tqdm.format_interval(estimate)} at the recorded pace")

        def progress(label: str, bar=bar) -> None:
            if bar is not None:
                bar.set_postfix_str(label[-40:], refresh=True)

        record = run_experiment(exp, scale, device, progress=progress,
                                seed_done=None if bar is None else (lambda bar=bar: bar.update(1)))
        if bar is not None:
            bar.close()
        path = save_record(record, folder)
        if args.record:
            if scale.name != "full":
                print(f"--record stores full-scale records only; {path} not recorded", file=sys.stderr)
            else:
                shutil.copy(path, RECORDED / path.name)
    os.environ[RESULTS_ENV] = str(folder.resolve())
    return [e.name for e in chosen]


def selected_statements(names: list[str]) -> set[tuple[str, str]]:
    """(paper, statement label) of every statement the experiments ``names`` measure."""
    every = experiments()
    return {(every[n].paper, label) for n in names for label in every[n].cites}

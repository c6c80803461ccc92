"""Helpers several EFL claim modules share: the final model of a run, distances, and the harness seeds.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.efl import EFL
from ...run import run

__all__ = ["final_model", "distance", "harness_instances"]


def final_model(alg: EFL, problem, rounds: int, seed: int = 0) -> np.ndarray:
    return run(alg, problem, rounds, seed=seed, record_every=rounds).x_final


def distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b))


def harness_instances(thorough: bool):
    return [0, 1] + ([2, 3, 4, 5] if thorough else [])

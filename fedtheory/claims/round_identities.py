"""The reference instance and helpers of the one-round identities (``<paper>/rounds.py`` of every claims package).

A reference identity runs R rounds of an algorithm from its own state, each round against the paper's update
transcribed client by client in :mod:`fedtheory.references` (:func:`run_against_reference`), so a stale point or a
state not carried shows; a one-round identity runs one round of an algorithm from a state away from zero and compares it with the paper's
update written independently in plain NumPy; the instance is chosen to exercise what a single default instance
would miss: unequal client weights and heterogeneous Hessians. These helpers share nothing with
:mod:`fedtheory.algorithms`, so a bug in an algorithm's helper cannot hide in the expected side.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable

import numpy as np

from ..problems.quadratic import QuadraticProblem
from ..references import REFERENCES, certify_round, has_reference, recorded_rounds
from .patterns import relative_error
from .tolerances import EXACT_REL

__all__ = ["reference_problem", "client_grads", "law_against_draws", "run_against_reference",
           "round_against_reference"]


def reference_problem() -> QuadraticProblem:
    """4 clients in R^3, unequal weights, heterogeneous well-conditioned SPD Hessians (eigs in [1, 4])."""
    rng = np.random.default_rng(20261124)
    n, d = 4, 3
    Q = np.linalg.qr(rng.standard_normal((n, d, d)))[0]
    eig = rng.uniform(1.0, 4.0, size=(n, d))
    A = np.einsum("nij,nj,nkj->nik", Q, eig, Q)
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    b = rng.standard_normal((n, d)) * np.array([[1.0], [3.0], [-2.0], [0.5]])
    return QuadraticProblem(A, b, weights=np.array([0.1, 0.2, 0.3, 0.4]))


def client_grads(problem: QuadraticProblem, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """grad f_i(X_i) = A_i X_i - b_i for the clients ``rows`` (one row of ``X`` per client)."""
    return np.einsum("nij,nj->ni", problem.A[rows], X) - problem.b[rows]


def law_against_draws(alg: Any, problem: Any, state: Any, key: Callable[[Any], Any], n_draws: int = 4000,
                      seed: int = 11) -> tuple[dict, float, list]:
    """(law, worst z, drawn keys not enumerated): ``outcomes()``'s law by ``key(draw)`` against the frequencies
    of ``n_draws`` calls of ``draw()`` (z = |frequency - probability| / its standard error)."""
    law: dict = {}
    for d, p in alg.outcomes(problem, state):
        law[key(d)] = law.get(key(d), 0.0) + p
    rng = np.random.default_rng(seed)
    counts = Counter(key(alg.draw(problem, state, rng)) for _ in range(n_draws))
    worst_z = max(abs(counts.get(k, 0) / n_draws - p) / math.sqrt(max(p * (1.0 - p), 1e-12) / n_draws)
                  for k, p in law.items())
    return law, worst_z, [k for k in counts if k not in law]



def round_against_reference(alg: Any, problem: Any, state: Any, draw: Any, new: Any, log: Any,
                            round_index: int) -> tuple[float, str, str | None]:
    """(largest relative difference over the fields the reference determines, that field, the mismatch sentence of
    :func:`fedtheory.references.certify_round` or None) for one recorded round."""
    if not has_reference(type(alg).name):  # also loads the reference modules
        raise KeyError(f"no reference round for algorithm {type(alg).name!r} (fedtheory/references)")
    expected = REFERENCES[type(alg).name](alg, problem, state, draw)
    worst, where = 0.0, ""
    for source, values in ((new, expected.state), (log, expected.log)):
        for key, want in values.items():
            got = log.extra[key[len("extra."):]] if key.startswith("extra.") else getattr(source, key)
            got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
            err = relative_error(got, want) if got.shape == want.shape else math.inf
            err = err if math.isfinite(err) else math.inf  # a NaN must not compare as small
            if err > worst or not where:
                worst, where = err, key
    # certify_round's floor (1e-12 of the round's inputs, at least 1e-12) passes every difference up to 1e-12:
    # only a larger one needs its verdict (it recomputes the reference)
    mismatch = certify_round(alg, problem, state, draw, new, log, round_index) if worst > EXACT_REL else None
    return worst, where, None if mismatch is None else mismatch.sentence()


def run_against_reference(alg: Any, problem: Any, x0: np.ndarray, rounds: int,
                          seed: int = 0) -> tuple[float, str, str | None, int]:
    """The run :func:`fedtheory.references.certify_run` certifies (:func:`fedtheory.references.recorded_rounds`),
    measured rather than only certified: (worst relative difference over every round, its field and round, the
    first mismatch's sentence or None, the number of rounds nobody took part in)."""
    worst, where, first, idle = 0.0, "", None, 0
    for r, state, draw, new, log in recorded_rounds(alg, problem, x0, rounds, seed):
        err, field, mismatch = round_against_reference(alg, problem, state, draw, new, log, r)
        if err > worst or not where:
            worst, where = err, f"{field} at round {r}"
        first = first or mismatch
        idle += int(draw is not None and len(draw.clients) == 0)
    return worst, where, first, idle

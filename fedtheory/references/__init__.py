"""The papers' update equations, transcribed client by client: the expected side of every algorithm run.

A *reference round* is a plain transcription of one round of a paper's algorithm, written from the paper's
update equations with a loop over the clients, sharing no helper with :mod:`fedtheory.algorithms`,
:mod:`fedtheory.local` or :mod:`fedtheory.compressors` (the expected side is computed independently of the code
under test, docs/design.md). It takes the implementation's hyperparameters (read as attributes of the algorithm
object), the problem, the state the round starts from and the round's draw (what ``draw`` returned and
``round_given`` received: participants, coins, seeds; ``None`` for a deterministic algorithm), and returns the
:class:`Expected` new state and the logged quantities the paper's equations determine.

The ledger certifies every round it records against the reference of the algorithm's ``name``
(:func:`certify_round`): a claim that runs an algorithm is a verdict about *the paper's* algorithm only while its
run is the paper's algorithm, and a difference makes the claim fail (docs/verification-power.md).

A module per paper (``references/<paper>.py``) registers its references with :func:`reference`; the package
imports its modules on first use, so there is nothing else to register.
"""
from __future__ import annotations

from .registry import (
                       ATOL_SCALE,
                       REFERENCES,
                       RTOL,
                       Expected,
                       Mismatch,
                       certify_round,
                       certify_run,
                       has_reference,
                       recorded_rounds,
                       reference,
)

__all__ = ["Expected", "Mismatch", "REFERENCES", "reference", "certify_round", "certify_run", "recorded_rounds",
           "has_reference", "RTOL", "ATOL_SCALE"]

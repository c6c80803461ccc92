"""Every algorithm fedtheory ships has a reference transcription (fedtheory/references/), so every run the ledger
records can be certified against the paper's equations."""
from __future__ import annotations

from fedtheory.algorithms import ALGORITHMS
from fedtheory.references import has_reference


def test_every_algorithm_has_a_reference():
    missing = sorted(name for name in ALGORITHMS if not has_reference(name))
    assert not missing, f"algorithms without a reference transcription in fedtheory/references/: {missing}"

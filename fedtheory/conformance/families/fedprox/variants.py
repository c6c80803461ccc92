"""FedProx's slips on the textbook FedAvg/FedProx (:mod:`fedtheory.conformance.families.fedavg.variants`)."""
from __future__ import annotations

from functools import partial

from ...kit import Variant
from ..fedavg.variants import fedavg

__all__ = ["TEXTBOOK", "WRONG", "CORRECT"]


TEXTBOOK = fedavg
WRONG: list[Variant] = [
    Variant("fedprox", "prox_sign", partial(fedavg, slip="prox_sign")),
    Variant("fedprox", "prox_half", partial(fedavg, slip="prox_half")),
    Variant("fedprox", "prox_center_zero", partial(fedavg, slip="prox_center_zero")),
    Variant("fedprox", "prox_center_moving", partial(fedavg, slip="prox_center_moving")),
]
CORRECT: list[Variant] = []

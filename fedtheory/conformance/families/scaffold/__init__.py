"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II): local steps corrected by c - c_i, control variates
updated by eq. (5) (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

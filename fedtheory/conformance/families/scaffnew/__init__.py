"""Scaffnew (Mishchenko et al. 2022, Alg. 2, ProxSkip): a Geometric(p) number of local steps corrected by
h_i between communications (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

"""FedDyn (Acar et al. 2021, Alg. 1): exact local solves of f_i - <g_i, .> + alpha/2 ||. - x||^2, server
state h (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

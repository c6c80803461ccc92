"""FedProx (Li et al. 2020, Alg. 2): FedAvg with a proximal term lam/2 ||. - x||^2 in the local objective
(docs/conformance.md)."""
from .properties import HYPER, check_hyper  # importing the properties declares them

__all__ = ["HYPER", "check_hyper"]

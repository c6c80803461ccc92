"""FedNova (Wang, Liu, Liang, Joshi & Poor 2020, eqs. (6)-(7)): each client's progress over its own tau_i local
steps is normalised by ||a_i||_1 and the server rescales by tau_eff (docs/conformance.md, "FedNova")."""
from .properties import HYPER, check_hyper  # importing the properties declares them

__all__ = ["HYPER", "check_hyper"]

"""FedAvg (McMahan et al. 2017, Alg. 1): local GD on the clients, the server averages (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

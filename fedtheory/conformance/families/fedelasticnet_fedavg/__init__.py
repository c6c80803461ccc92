"""FedElasticNet, Algorithm 1 (Kim et al.): FedAvg/FedProx with an elastic-net local regulariser
(docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

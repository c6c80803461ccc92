"""FedElasticNet, Algorithm 3 (Kim et al.): FedDyn with an elastic-net local regulariser (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

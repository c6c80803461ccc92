"""FedElasticNet, Algorithm 2 (Kim et al.): SCAFFOLD with an elastic-net local regulariser (docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

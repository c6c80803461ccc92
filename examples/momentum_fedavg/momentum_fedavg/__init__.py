"""An external package built on fedtheory's public API: FedAvg with server momentum, and its claims."""
from .algorithm import FedAvgMomentum, MomentumState

__all__ = ["FedAvgMomentum", "MomentumState"]

"""Server optimizers (Reddi et al. 2021, "Adaptive Federated Optimization", Alg. 2; FedAvgM of Hsu et al. 2019):
FedAdam, FedYogi, FedAdagrad and FedAvgM applied to the clients' averaged delta, with their state across rounds
(docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

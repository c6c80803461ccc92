"""Federated problems with certificates: every constant a theorem needs is computed, not assumed."""
from .base import Certificate, NonFiniteInputError, Problem
from .constructions import general_convex_quadratic, outlier_quadratic, vary_delta, vary_delta_family, vary_L
from .datasets import FederatedData, load_breast_cancer, load_digits, synthetic_fedprox
from .logistic import LogisticProblem, logistic, logistic_perturbed
from .nonconvex import NonconvexProblem, nonconvex
from .partition import dirichlet_partition, iid_partition, lognormal_partition, partition, shard_partition
from .quadratic import Dissimilarity, QuadraticProblem, measure_dissimilarity, quadratic
from .rescaled import RescaledClients, rescaled_clients
from .smooth import SmoothProblem
from .structured import SharedBasisQuadratic, structured_quadratic

__all__ = ["Certificate", "NonFiniteInputError", "Problem", "QuadraticProblem", "Dissimilarity",
           "measure_dissimilarity", "quadratic",
           "general_convex_quadratic", "vary_L", "vary_delta", "vary_delta_family", "outlier_quadratic",
           "FederatedData", "synthetic_fedprox", "load_breast_cancer", "load_digits",
           "LogisticProblem", "logistic", "logistic_perturbed", "NonconvexProblem", "nonconvex", "SmoothProblem",
           "iid_partition", "dirichlet_partition", "lognormal_partition", "shard_partition", "partition",
           "RescaledClients", "rescaled_clients", "SharedBasisQuadratic", "structured_quadratic"]

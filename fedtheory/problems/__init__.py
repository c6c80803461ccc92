"""Federated problems with certificates: every constant a theorem needs is computed, not assumed."""
from .base import Certificate, Problem
from .quadratic import Dissimilarity, QuadraticProblem, measure_dissimilarity, quadratic

__all__ = ["Certificate", "Problem", "QuadraticProblem", "Dissimilarity", "measure_dissimilarity", "quadratic"]

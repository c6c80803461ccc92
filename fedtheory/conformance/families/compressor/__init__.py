"""Compressors (Alistarh et al. 2017, QSGD; Dorfman et al. 2023): unbiased, with a declared variance and bits
(docs/conformance.md)."""
from .properties import HYPER  # importing the properties declares them

__all__ = ["HYPER"]

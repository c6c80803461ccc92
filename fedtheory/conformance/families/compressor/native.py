"""fedtheory's QSGD (s = 2) through the contract (what the kit must accept)."""
from __future__ import annotations

from .variants import Compressor

__all__ = ["compressor"]


compressor = Compressor("qsgd", s=2)

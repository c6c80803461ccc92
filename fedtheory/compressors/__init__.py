"""Compressors with declared (and tested) constants; each module registers its classes.

Every submodule is imported here and its ``__all__`` re-exported.
"""
import sys as _sys

from ..autoload import load_submodules
from .base import COMPRESSORS, Compressor, as_rows, register_compressor

__all__ = ["COMPRESSORS", "Compressor", "as_rows", "register_compressor"]
__all__ += load_submodules(_sys.modules[__name__], globals())

"""Federated algorithms, one module per family; each registers itself with :func:`register_algorithm`.

Every submodule is imported here and its ``__all__`` re-exported, so ``from fedtheory.algorithms import X``
works for every algorithm and adding a module is all it takes to add one.
"""
import sys as _sys

from .._autoload import load_submodules as _load
from .base import ALGORITHMS, FLOAT_BITS, Algorithm, RoundLog, State, dense_log, register_algorithm

__all__ = ["ALGORITHMS", "FLOAT_BITS", "Algorithm", "RoundLog", "State", "dense_log", "register_algorithm"]
__all__ += _load(_sys.modules[__name__], globals())

"""Local subproblem solvers shared by the algorithms (local GD/SGD with gradient counting).

The exact l1 prox the problems' ``solve_local`` use is in :mod:`fedtheory.prox_l1`.
"""
from .gd import LocalResult, local_gd

__all__ = ["LocalResult", "local_gd"]

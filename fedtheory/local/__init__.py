"""Local subproblem solvers shared by the algorithms (exact prox, local GD/SGD with gradient counting)."""
from .prox_l1 import kkt_residual_l1

__all__ = ["kkt_residual_l1"]

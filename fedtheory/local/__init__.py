"""Local subproblem solvers shared by the algorithms (exact prox, local GD/SGD with gradient counting)."""
from .gd import LocalResult, local_gd
from .prox_l1 import kkt_residual_l1

__all__ = ["LocalResult", "local_gd", "kkt_residual_l1"]

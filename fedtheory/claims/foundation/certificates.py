"""The quadratic certificate under unequal client weights: x*, zeta2, mu, L, delta_A and delta_B against their
definitions computed directly from (A_i, b_i, w_i)."""
from __future__ import annotations

import math

import numpy as np

from ...problems.quadratic import QuadraticProblem
from ..patterns import relative_error
from ..registry import Evidence, claim
from ..round_identities import reference_problem
from ..tolerances import ROUND_IDENTITY_RTOL

__all__: list[str] = []


def _cert_instances(thorough: bool):
    yield "dense"
    yield "diagonal"


@claim(id="foundation.certificate.unequal_weights", paper="foundation",
       reference="Jiang, Rodomanov & Stich 2024, Sections 2-3 and Defs. 1-2 (x*, mu = min_i mu_i, delta_A, "
                 "delta_B; weighted by w_i here); zeta^2 = sum_i w_i ||grad f_i(x*)||^2 (docs/problems.md)",
       statement="a QuadraticProblem with unequal client weights certifies x*, zeta2, mu, L, delta_A and delta_B "
                 "equal to their definitions computed directly from (A_i, b_i, w_i), to 1e-9 relative",
       kind="identity", instances=_cert_instances)
def check_certificate_unequal_weights(hessians: str) -> Evidence:
    base = reference_problem()
    if hessians == "diagonal":
        A_diag = np.array([[1.0, 2.0, 4.0], [3.0, 1.5, 1.0], [2.0, 2.0, 0.5], [1.0, 4.0, 3.0]])
        problem = QuadraticProblem(A_diag, base.b, weights=base.weights)
        A = np.einsum("nd,de->nde", A_diag, np.eye(3))
    else:
        problem, A = base, base.A
    w, b = problem.weights, problem.b
    x_star = np.linalg.solve(np.einsum("n,nij->ij", w, A), w @ b)
    r = np.einsum("nij,j->ni", A, x_star) - b
    eigs = np.linalg.eigvalsh(A)
    E = A - np.einsum("n,nij->ij", w, A)
    want = {"zeta2": float(w @ np.sum(r * r, axis=1)), "mu": float(eigs.min()), "L": float(eigs.max()),
            "delta_A": math.sqrt(np.linalg.eigvalsh(np.einsum("n,nij,njk->ik", w, E, E))[-1]),
            "delta_B": max(float(np.max(np.abs(np.linalg.eigvalsh(E_i)))) for E_i in E)}
    c = problem.certificate
    errors = {k: abs(getattr(c, k) - v) / max(abs(v), 1e-12) for k, v in want.items()}
    errors["x_star"] = relative_error(c.x_star, x_star)
    worst = max(errors.values())
    # 3x3 systems with cond <= 16: errors ~1e-15; 1e-9 is far below any formula slip (O(1) relative)
    return Evidence(f"{hessians} Hessians, weights {w.tolist()}", worst, ROUND_IDENTITY_RTOL,
                    worst <= ROUND_IDENTITY_RTOL,
                    details={"relative_errors": errors})


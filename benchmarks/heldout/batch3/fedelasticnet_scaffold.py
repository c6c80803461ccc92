"""FedElasticNet for SCAFFOLD (Kim et al., Alg. 2): K steps of eq. (7)
z <- z - eta_l (grad f_k(z) - c_k + c + lam2 (z - x) + lam1 sign(z - x)), sign(0) = 0; c_k+ = c_k - c +
(x - z)/(K eta_l); x+ = x + eta_g/|P| sum Delta_k; c+ = c + 1/m sum_P (c_k+ - c_k); c = c_k = 0 initially."""
from __future__ import annotations

import numpy as np


def _local(cl, x, ck, c, K, eta, lam2, lam1):
    z = x.copy()
    for _ in range(K):
        z = z - eta * (cl.grad(z) - ck + c + lam2 * (z - x) + lam1 * np.sign(z - x))
    return z


def ens_dict_inplace(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                     server_step=1.0, num_clients=None, **_):
    """Correct: printed reading, the contract's dict state {"c", "c_i"} updated in place."""
    if state is None:
        state = {"c": np.zeros_like(x), "c_i": {}}
    m = num_clients or len(clients)
    c = np.array(state["c"], dtype=float)
    delta = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ck = np.array(state["c_i"].get(cl.cid, np.zeros_like(x)), dtype=float)
        z = _local(cl, x, ck, c, local_steps, local_step, prox, l1)
        new = ck - c + (x - z) / (local_steps * local_step)
        state["c_i"][cl.cid] = new
        delta += z - x; dc += new - ck
    state["c"] = c + dc / m
    return x + server_step * delta / len(clients), state


def ens_late_joiner_copies_c(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                             server_step=1.0, num_clients=None, **_):
    """WRONG: a client's first c_k is the server's c^{t-1} (downloaded with the model) instead of c_k^0 = 0;
    c = 1/m sum c_k (Sec. 3.5's invariant) breaks once a client joins after round 1."""
    c, cks = (np.zeros_like(x), {}) if state is None else (np.array(state["c"], float), dict(state["c_i"]))
    m = num_clients or len(clients)
    delta = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ck = np.array(cks[cl.cid], float) if cl.cid in cks else c.copy()
        z = _local(cl, x, ck, c, local_steps, local_step, prox, l1)
        new = ck - c + (x - z) / (local_steps * local_step)
        cks[cl.cid] = new; delta += z - x; dc += new - ck
    return x + server_step * delta / len(clients), {"c": c + dc / m, "c_i": cks}


def ens_cv_gradient_average(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                            server_step=1.0, num_clients=None, **_):
    """WRONG: c_k+ is the average of the local *loss* gradients along the path, 1/K sum_b grad f_k(z_b), i.e.
    option I's idea extended; line 10's c_k - c + (x - z_K)/(K eta_l) equals the average of the full step
    direction, l1 sign and l2 terms included, so the two differ whenever lam1 > 0."""
    c, cks = (np.zeros_like(x), {}) if state is None else (np.array(state["c"], float), dict(state["c_i"]))
    m = num_clients or len(clients)
    delta = np.zeros_like(x); dc = np.zeros_like(x)
    for cl in clients:
        ck = np.array(cks.get(cl.cid, np.zeros_like(x)), float)
        z = x.copy(); gsum = np.zeros_like(x)
        for _ in range(local_steps):
            g = cl.grad(z); gsum += g
            z = z - local_step * (g - ck + c + prox * (z - x) + l1 * np.sign(z - x))
        new = gsum / local_steps
        cks[cl.cid] = new; delta += z - x; dc += new - ck
    return x + server_step * delta / len(clients), {"c": c + dc / m, "c_i": cks}


CORRECT = [("dict_in_place", ens_dict_inplace, {})]
WRONG = [("late_joiner_copies_c", ens_late_joiner_copies_c, {}),
         ("cv_mean_loss_gradient", ens_cv_gradient_average, {})]

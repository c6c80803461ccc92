"""Textbook implementations of DANE+, FedRed and FedElasticNet through the contract, with ``slip`` options.

Written the way framework code is written (a loop over client objects, each solving on its own data), in a
chosen floating-point ``dtype``; ``slip=None`` is the paper's algorithm and every other value one plausible
mistake. :mod:`fedtheory.conformance.variants` lists which slips the kit must reject and which differently
written correct versions it must accept.
"""
from __future__ import annotations

import numpy as np

__all__ = ["dane", "fedred", "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn"]


def _data(c, dtype):
    Z, t = c.features.astype(dtype), c.targets.astype(dtype)
    return Z, t, Z.T @ Z / dtype(c.num_examples), Z.T @ t / dtype(c.num_examples)


def _weights(clients, weighting, dtype):
    m = np.array([c.num_examples for c in clients], dtype=dtype) if weighting == "num_examples" else \
        np.ones(len(clients), dtype=dtype)
    return m / m.sum()


def dane(x, clients, *, state=None, rng=None, lam=1.0, local_steps=None, local_step=0.1, control_variate="gradient",
         m=1.0, averaging="standard", weighting="uniform", draw=None, slip=None, dtype=np.float64, **_):
    """DANE+ (Jiang, Rodomanov & Stich 2024, Alg. 1): x_i = argmin f_i + <h_i, .> + lam/2||. - x||^2 (or K GD steps
    from x, last iterate); x+ = sum_i w_i x_i or x_{xi}; (B.84) h_i+ = h_i + m (x_i - x+)."""
    x0 = np.asarray(x)
    x = x0.astype(dtype)
    lam, eta = dtype(lam / 2 if slip == "prox_half" else lam), dtype(local_step)
    w = _weights(clients, "uniform" if slip == "uniform_weights" else weighting, dtype)
    data = [_data(c, dtype) for c in clients]
    at = x
    if slip == "cv_stale" and isinstance(state, dict) and "x_prev" in state:
        at = np.asarray(state["x_prev"], dtype=dtype)  # the control variate of the previous round's point
    G = np.stack([A @ at - b for _, _, A, b in data])
    if control_variate == "scaffnew":
        H = np.stack([np.asarray(state["h_i"][c.cid], dtype=dtype) for c in clients]) if state else w @ G - G
    else:
        H = w @ G - G
        H = {"cv_sign": -H, "no_cv": 0 * H}.get(slip, H)
    Y = []
    for (Z, t, A, b), h in zip(data, H):
        if local_steps is None:
            Y.append(np.linalg.solve(A + lam * np.eye(x.size, dtype=dtype), b - h + lam * x))
        else:
            y = x.copy()
            for _k in range(local_steps - (1 if slip == "k_minus_1" else 0)):
                y = y - eta * (A @ y - b + h + lam * (y - x))
            Y.append(y)
    Y = np.stack(Y)
    if averaging == "random" and slip != "random_ignores_draw":
        j = 0 if slip == "random_first" else [c.cid for c in clients].index(draw["client"])
        x_new = Y[j]
    else:
        x_new = w @ Y
    out_state = None
    if control_variate == "scaffnew":
        mm = {"b84_m_half": m / 2, "b84_sign": -m}.get(slip, m)
        H_new = H if slip == "b84_stale" else H + dtype(mm) * (Y - x_new)
        out_state = {"h_i": {c.cid: H_new[i].astype(np.float64) for i, c in enumerate(clients)}}
    elif slip == "cv_stale":
        out_state = {"x_prev": x.copy()}
    x_new = x_new.astype(np.float64)
    return x_new if out_state is None else (x_new, out_state)


def fedred(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
           batch_size=None, weighting="uniform", draw=None, slip=None, dtype=np.float64, **_):
    """One iteration of FedRed (Alg. 2) / FedRed-GD/-SGD (Alg. 3) with control variate (4)."""
    x = np.asarray(x).astype(dtype)
    w = _weights(clients, "uniform" if slip == "average_unweighted" else weighting, dtype)
    data = [_data(c, dtype) for c in clients]

    def cv(at):
        G = np.stack([A @ at - b for _, _, A, b in data])
        return w @ G - G

    if state is None:
        X, H = np.tile(x, (len(clients), 1)), cv(x)
    else:
        # a client without a stored local iterate starts from x~ (Alg. 2's initialisation)
        X = np.stack([np.asarray(state["x_i"].get(c.cid, x), dtype=dtype) for c in clients])
        H = np.stack([np.asarray(state["h_i"][c.cid], dtype=dtype) for c in clients])
    if draw is not None and "communicate" in draw and slip != "always_communicate":
        communicate = bool(draw["communicate"])
    else:
        communicate = slip == "always_communicate" or bool(rng.random() < (p / 2 if slip == "own_coin_biased" else p))
    lam, eta = dtype(lam), dtype(eta)
    Y = []
    for i, (c, (Z, t, A, b)) in enumerate(zip(clients, data)):
        if solver == "exact":
            total = lam + 1 / eta
            rhs = b - H[i] + lam * x + (0 if slip == "exact_wrong_center" else X[i] / eta)
            Y.append(np.linalg.solve(A + total * np.eye(x.size, dtype=dtype), rhs))
            continue
        if batch_size is not None and slip != "sgd_full_batch":
            rows = np.asarray(draw["batches"][c.cid]) if draw and "batches" in draw else \
                rng.choice(c.num_examples, size=batch_size, replace=False)
            g = Z[rows].T @ (Z[rows] @ X[i] - t[rows]) / dtype(len(rows))
        else:
            g = A @ X[i] - b
        if slip == "lam_eta_missing":
            Y.append(X[i] - eta * (g + H[i]))
        else:
            Y.append((X[i] + lam * eta * x - eta * (g + H[i])) / (1 + lam * eta))
    Y = np.stack(Y)
    x_new = x
    if communicate:
        x_new = w @ (X if slip == "ref_from_old_locals" else Y)
        if slip != "cv_not_refreshed":
            H = cv(x_new)
        if (reset and slip != "no_reset") or slip == "always_reset":
            Y = np.tile(x_new, (len(clients), 1))
    st = {"x_i": {c.cid: Y[i].astype(np.float64) for i, c in enumerate(clients)},
          "h_i": {c.cid: H[i].astype(np.float64) for i, c in enumerate(clients)}}
    return x_new.astype(np.float64), st


def _soft(z, t):
    return np.sign(z) * np.maximum(np.abs(z) - t, 0)


def _elastic_solve(A, rhs_lin, x, lam2, lam1, iters=4000):
    """argmin 1/2 y^T A y - rhs_lin^T y + lam2/2||y - x||^2 + lam1||y - x||_1 by proximal gradient (ISTA) in
    u = y - x with step 1/(L + lam2); the l1 problem has no closed form for a general A, so a framework iterates."""
    step = 1.0 / (np.linalg.eigvalsh(A)[-1] + lam2)
    u = np.zeros_like(x)
    g0 = A @ x - rhs_lin
    for _k in range(iters):
        u_new = _soft(u - step * (g0 + A @ u + lam2 * u), step * lam1)
        done = np.max(np.abs(u_new - u)) <= 1e-15 * (1.0 + np.max(np.abs(u_new)))
        u = u_new
        if done:
            break
    return x + u


def _sign(z, slip):
    return np.where(z >= 0, 1.0, -1.0) if slip == "sign_zero_is_one" else np.sign(z)


def fedelasticnet_fedavg(x, clients, *, state=None, rng=None, local_steps=None, local_step=0.1, prox=0.5, l1=0.1,
                         l1_mode="subgradient", server_step=1.0, weighting="num_examples", slip=None, **_):
    """FedElasticNet Alg. 1 (Kim et al.): Delta_k from eq. (4) (exact, ISTA) or K steps; th + sum n_k/n Delta_k."""
    l1 = {"no_l1": 0.0, "l1_sign_flip": -l1}.get(slip, l1)
    mode = "proximal" if slip == "always_proximal" else l1_mode
    D = []
    for c in clients:
        _, _, A, b = _data(c, np.float64)
        if local_steps is None:
            D.append(_elastic_solve(A, b, x, prox, max(l1, 0.0)) - x)
            continue
        y = x.copy()
        for _k in range(local_steps):
            g = A @ y - b + prox * (y - x)
            y = x + _soft(y - x - local_step * g, local_step * l1) if mode == "proximal" else \
                y - local_step * (g + l1 * _sign(y - x, slip))
        D.append(y - x)
    return x + server_step * _weights(clients, weighting, np.float64) @ np.stack(D)


def fedelasticnet_scaffold(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, prox=0.0, l1=0.05,
                           l1_mode="subgradient", server_step=1.0, weighting="uniform", num_clients=None, slip=None,
                           **_):
    """FedElasticNet Alg. 2: eq. (7) K times, c_k+ = c_k - c + (th^{t-1} - th_k)/(K eta_l), uniform averages."""
    state = state or {"c": np.zeros_like(x), "c_i": {}}
    c, c_i = np.asarray(state["c"]), dict(state["c_i"])
    l1 = 0.0 if slip == "no_l1" else l1
    dys, dcs = [], []
    for cl in clients:
        ci = c_i.get(cl.cid, np.zeros_like(x))
        y = x.copy()
        for _k in range(local_steps):
            g = cl.grad(y) - ci + c + prox * (y - x)
            y = x + _soft(y - x - local_step * g, local_step * l1) if l1_mode == "proximal" else \
                y - local_step * (g + l1 * _sign(y - x, slip))
        ci_new = ci - c + (x - y) / (local_steps * local_step)
        dys.append(y - x)
        dcs.append(ci_new - ci)
        c_i[cl.cid] = ci_new
    return x + server_step * np.mean(dys, axis=0), {"c": c + np.sum(dcs, axis=0) / num_clients, "c_i": c_i}


def fedelasticnet_feddyn(x, clients, *, state=None, rng=None, alpha=1.0, l1=0.1, sign_at_zero="printed",
                         weighting="uniform", num_clients=None, slip=None, **_):
    """FedElasticNet Alg. 3: th_k by eq. (10) (ISTA), line 6 by the declared reading, lines 12-13."""
    state = state or {"h": np.zeros_like(x), "g_i": {}}
    h, g_i = np.asarray(state["h"]), dict(state["g_i"])
    reading = {"always_kkt": "kkt", "always_printed": "printed"}.get(slip, sign_at_zero)
    thetas, dh = [], np.zeros_like(x)
    for cl in clients:
        _, _, A, b = _data(cl, np.float64)
        g = g_i.get(cl.cid, np.zeros_like(x))
        th = _elastic_solve(A, b + g, x, alpha, l1)
        D = th - x
        if reading == "kkt":
            g_new = A @ th - b
        else:
            g_new = g - alpha * D - (0.0 if slip == "g_without_l1" else l1 * np.sign(D))
        dh += (g_new - g) if slip != "h_without_l1" else (-alpha * D)
        g_i[cl.cid] = g_new
        thetas.append(th)
    h_new = h + dh / num_clients
    return np.mean(thetas, axis=0) - h_new / alpha, {"h": h_new, "g_i": g_i}


def _st(T, q, slip=None):
    """ST (EFL Alg. 2): the k = max(floor(d q), 1) largest magnitudes -> mean kept magnitude times the sign."""
    if q is None:
        return T.copy()
    k = max(int(np.floor(T.size * q + 1e-12)), 1)
    keep = np.argsort(-np.abs(T), kind="stable")[:k]
    out = np.zeros_like(T)
    out[keep] = T[keep] if slip == "st_keeps_values" else np.abs(T[keep]).mean() * np.sign(T[keep])
    return out


def efl(x, clients, *, state=None, rng=None, E=3, step=0.05, lam=0.1, q=None, aggregation="efl",
        variant="consistent", weighting="num_examples", draw=None, slip=None, dtype=np.float64, **_):
    """EFL (Ma et al., Alg. 1 + Alg. 2): sync w^k + b, s_k steps on the elastic objective (eqs. 2-4), error
    feedback (eq. 5), aggregation with p_tau^k = E p^k / s_k (eq. 6, Section 4.2), server error feedback."""
    x = np.asarray(x)
    d = x.size
    st = state or {"w_i": {}, "r_i": {}, "r": np.zeros(d), "b": np.zeros(d), "U": np.zeros(d), "V": np.zeros(d),
                   "seen": {}}
    U, V = np.asarray(st["U"], dtype=dtype), np.asarray(st["V"], dtype=dtype)
    sign = -1.0 if slip == "elastic_sign" else (0.5 if slip == "elastic_half" else 1.0)
    p = _weights(clients, weighting, np.float64)
    w_i, r_i, seen = dict(st["w_i"]), dict(st["r_i"]), dict(st["seen"])
    sent_sum, ends = np.zeros(d), {}
    for pk, c in zip(p, clients):
        s = int(draw["steps"][c.cid])
        if s == 0 and slip == "inactive_trained":
            s = E
        if s == 0:
            seen[c.cid] = False
            continue
        if slip == "sync_missing" and c.cid in w_i:
            start = np.asarray(w_i[c.cid])  # its own last start model, without the broadcast
        else:
            start = np.asarray(w_i[c.cid]) + np.asarray(st["b"]) if seen.get(c.cid) else x.copy()
        Z, t, A, b = _data(c, dtype)
        w = start.astype(dtype)
        for _k in range(s):
            w = w - dtype(step) * (A @ w - b + dtype(lam) * sign * (U * w - V))
        R = np.zeros(d) if slip == "no_error_feedback" else np.asarray(r_i.get(c.cid, np.zeros(d)))
        delta = R + (w.astype(np.float64) - start)
        comp = _st(delta, q, slip)
        r_i[c.cid] = delta - comp
        coef = pk if aggregation == "fedavg" or slip == "no_compensation" else E * pk / s
        sent_sum += coef * (delta if variant == "printed" else comp)
        w_i[c.cid], seen[c.cid], ends[c.cid] = start, True, w.astype(np.float64)
    RG = np.zeros(d) if slip == "server_no_error_feedback" else np.asarray(st["r"])
    delta_g = RG + sent_sum
    bcast = _st(delta_g, q, slip)
    x_new = x + (delta_g if variant == "printed" else bcast)
    # u^k = diag(I_k) at the end model: diag(A_k) for least squares (unit-variance Gaussian likelihood),
    # v^k = u^k o w^k; U, V sum over this round's reporters
    U_new, V_new = np.zeros(d), np.zeros(d)
    for c in clients:
        if lam > 0 and c.cid in ends:
            u = np.diag(c.features.T @ c.features) / c.num_examples
            U_new, V_new = U_new + u, V_new + u * ends[c.cid]
    return x_new.astype(np.float64), {"w_i": w_i, "r_i": r_i, "r": delta_g - bcast, "b": bcast, "U": U_new,
                                      "V": V_new, "seen": seen}


def docofl(x, clients, *, state=None, rng=None, step=0.1, period=2, queue_size=3, weighting="uniform",
           num_clients=None, draw=None, grid=None, slip=None, **_):
    """DoCoFL (Dorfman et al. 2023, Algs. 1-2) with a dict queue {round: anchor} and the kit's grid compressors."""
    g = grid or {"anchor": 0.0, "correction": 0.0, "gradient": 0.0}

    def C(v, h):
        return v.copy() if not h else h * np.round(v / h)

    st = state or {"t": 0, "queue": {}, "raw": {}}
    t = int(st["t"])
    queue, raw = dict(st["queue"]), dict(st["raw"])
    if t % period == 0 or slip == "anchor_every_round":
        queue[t], raw[t] = C(x, g["anchor"]), x.copy()
        keep = queue_size - 1 if slip == "queue_one_short" else queue_size
        for r in sorted(queue)[:-keep]:
            queue.pop(r), raw.pop(r)
    total = np.zeros_like(x)
    for c in clients:
        lead = 0 if slip == "ignore_lead" else int(draw["leads"][c.cid])
        s = max(t - lead, 0)
        r = period * (s // period)
        if r not in queue:
            r = min(queue)  # the anchor left the queue: take the oldest one still there
        y = queue[r]
        if slip == "no_correction":
            w_hat = y
        elif slip == "correction_vs_raw_anchor":
            w_hat = y + C(x - raw[r], g["correction"])
        else:
            w_hat = y + C(x - y, g["correction"])
        grad_at = x if slip == "gradient_at_server_model" else w_hat
        total += C(c.grad(grad_at), g["gradient"])
    denom = num_clients if slip == "divide_by_N" else len(clients)
    return x - step * total / denom, {"t": t + 1, "queue": queue, "raw": raw}


def _sbq(u, U, s, b, slip):
    """(s, b)-quantizer of OFedIQ (Definition 2): blocks, r = |u|/||u_I||, m = min(floor(s r), s - 1)."""
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    blocks = [np.arange(u.size)] if slip == "quantizer_ignores_blocks" else np.array_split(np.arange(u.size), b)
    for I in blocks:
        nrm = np.linalg.norm(u[I])
        if nrm == 0:
            continue
        r = np.abs(u[I]) / nrm
        m = np.minimum(np.floor(s * r), s - 1)
        up = 0.0 if slip == "quantizer_rounds_down" else (U[I] < s * r - m)
        out[I] = nrm * np.sign(u[I]) * (m + up) / s
    return out


def ofediq(x, clients, *, state=None, rng=None, eta=0.05, period=2, p=0.5, s=4, b=1, weighting="uniform",
           draw=None, slip=None, **_):
    """OFedIQ (Kwon, Park & Hong, Alg. 2) one time step per call, client by client; reports the regret."""
    K = len(clients)
    st = state or {"t": 0, "theta": {}, "acc": {}, "cum": 0.0}
    t = int(st["t"])
    theta, acc = dict(st["theta"]), dict(st["acc"])
    start = t % period == 0 and slip != "no_period_restart"
    loss = sum(c.value(x) for c in clients)
    transmit = (t + 1) % period == 0
    total = np.zeros_like(x)
    sampled = 0
    for c in clients:
        g0 = x if (start or c.cid not in theta) else np.asarray(theta[c.cid])
        grad = c.grad(g0)
        theta[c.cid] = g0 - eta * grad
        acc[c.cid] = grad if (start or c.cid not in acc or slip == "last_gradient_only") else \
            np.asarray(acc[c.cid]) + grad
        if transmit and draw["participate"][c.cid]:
            sampled += 1
            scale = 1.0 if slip == "no_inverse_p" else 1.0 / p
            total += _sbq(acc[c.cid] * scale, np.asarray(draw["uniforms"][c.cid]), s, b, slip)
    x_new = x - eta * total / (max(sampled, 1) if slip == "divide_by_sampled" else K) if transmit else x
    cum = float(st["cum"]) + (sum(c.value(x_new) for c in clients) if slip == "regret_at_new_model" else loss)
    # the comparator: min_w sum_k f_k(w), from the stacked data (the normal equations of all clients)
    Zs = np.vstack([c.features / np.sqrt(c.num_examples) for c in clients])
    ys = np.concatenate([c.targets / np.sqrt(c.num_examples) for c in clients])
    w_opt = np.linalg.lstsq(Zs, ys, rcond=None)[0]
    fmin = sum(c.value(w_opt) for c in clients)
    return x_new, {"t": t + 1, "theta": theta, "acc": acc, "cum": cum, "regret": cum - (t + 1) * fmin}

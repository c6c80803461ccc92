"""Self-check of batch 5, independent of the conformance kit: `python -m benchmarks.heldout.batch5.selfcheck`.

Every CORRECT implementation is compared with a straightforward reference written here (loops over clients,
textbook formulas from the papers) on tiny least-squares instances: several rounds, participants that change
(clients joining late), non-contiguous client ids listed out of order, unequal sizes. Every WRONG one is
smoke-called on the same valid input (it must not raise, unless it is listed in CRASH_IS_THE_BUG, where it must
raise), and the report says whether it deviates from the reference there; the slips that live in an
implementation's own randomness are checked by simulation against the paper's law. Nothing from
fedtheory.conformance is imported.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

FAMILIES = ["dane", "fedred", "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn",
            "efl", "docofl", "ofediq", "fedavg", "fedprox", "scaffold", "feddyn", "scaffnew"]


class Client:
    def __init__(self, cid, Z, y):
        self.cid, self.features, self.targets = cid, Z, y
        self.num_examples = Z.shape[0]

    def grad(self, x):
        return self.features.T @ (self.features @ x - self.targets) / self.num_examples

    def value(self, x):
        r = self.features @ x - self.targets
        return 0.5 * r @ r / self.num_examples


def make_clients(seed=0, d=3, ids=(17, 10, 42, 13), diag=False):
    rng = np.random.default_rng(seed)
    out = []
    for k, cid in enumerate(ids):
        m = d + 1 + k
        if diag:
            Z = np.zeros((m, d))
            Z[:d, :d] = np.diag(rng.uniform(0.8, 2.0, d)) * np.sqrt(m)
        else:
            Z = rng.normal(size=(m, d)) * rng.uniform(0.5, 1.5)
        y = rng.normal(size=m) * 2.0
        out.append(Client(cid, Z, y))
    return out


def A_b(c):
    return c.features.T @ c.features / c.num_examples, c.features.T @ c.targets / c.num_examples


def weights(cl, weighting):
    m = np.array([1.0 if weighting == "uniform" else c.num_examples for c in cl])
    return m / m.sum()


def soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def enet(Q, q, lam1, iters=60000):
    """min_u 1/2 u^T Q u + q^T u + lam1 ||u||_1 by FISTA (a different solver from the implementations')."""
    L = np.linalg.eigvalsh(Q).max()
    u = z = np.zeros(len(q))
    tk = 1.0
    for _ in range(iters):
        un = soft(z - (Q @ z + q) / L, lam1 / L)
        tn = (1 + np.sqrt(1 + 4 * tk * tk)) / 2
        z = un + (tk - 1) / tn * (un - u)
        u, tk = un, tn
    return u


def close(a, b, rtol):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.linalg.norm(a - b) <= rtol * (1.0 + np.linalg.norm(b))


# ----------------------------------------------------------------------------------------------- references
ROUNDS = [[10, 13], [10, 13, 17], [42, 17], [13, 10, 42, 17], [17, 13]]


def pick(cl, ids):
    by = {c.cid: c for c in cl}
    return [by[i] for i in ids]


def ref_fedavg(x, cl, h, prox=0.0):
    new = np.zeros_like(x)
    for a, c in zip(weights(cl, h.get("weighting", "num_examples")), cl):
        w = x.copy()
        for _ in range(h.get("local_steps", 5)):
            w = w - h.get("local_step", 0.1) * (c.grad(w) + prox * (w - x))
        new += a * (w - x)
    return x + h.get("server_step", 1.0) * new


def ref_scaffold(x, cl, st, h, N):
    c = st["c"]
    K, eta = h.get("local_steps", 5), h.get("local_step", 0.1)
    dx, dc, ci_all = np.zeros_like(x), np.zeros_like(x), dict(st["c_i"])
    for a, cli in zip(weights(cl, h.get("weighting", "uniform")), cl):
        ci = ci_all.get(cli.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(K):
            y = y - eta * (cli.grad(y) - ci + c)
        cn = cli.grad(x) if h.get("option", "II") == "I" else ci - c + (x - y) / (K * eta)
        dx += a * (y - x)
        dc += cn - ci
        ci_all[cli.cid] = cn
    return x + h.get("server_step", 1.0) * dx, {"c": c + dc / N, "c_i": ci_all}


def ref_feddyn(x, cl, st, alpha, N):
    thetas, g_all = [], dict(st["g_i"])
    for c in cl:
        A, b = A_b(c)
        g = g_all.get(c.cid, np.zeros_like(x))
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + g + alpha * x)
        g_all[c.cid] = g - alpha * (th - x)
        thetas.append(th)
    h = st["h"] - alpha / N * sum(th - x for th in thetas)
    return np.mean(thetas, axis=0) - h / alpha, {"h": h, "g_i": g_all}


def ref_scaffnew(x, cl, st, h, K):
    gam, p = h.get("step", 0.5), h.get("p", 0.5)
    w = weights(cl, h.get("weighting", "uniform"))
    xs = {c.cid: x.copy() for c in cl}
    hs = {c.cid: st.get(c.cid, np.zeros_like(x)) for c in cl}
    for _ in range(K):
        for c in cl:
            xs[c.cid] = xs[c.cid] - gam * (c.grad(xs[c.cid]) - hs[c.cid])
    xn = sum(wi * (xs[c.cid] - gam / p * hs[c.cid]) for wi, c in zip(w, cl))
    return xn, {c.cid: hs[c.cid] + p / gam * (xn - xs[c.cid]) for c in cl}


def ref_dane_round(x, cl, h, hvars=None):
    lam, K, eta = h.get("lam", 1.0), h.get("local_steps", None), h.get("local_step", 0.1)
    w = weights(cl, h.get("weighting", "uniform"))
    gf = sum(wi * c.grad(x) for wi, c in zip(w, cl))
    loc = {}
    for c in cl:
        hi = gf - c.grad(x) if hvars is None else hvars[c.cid]
        A, b = A_b(c)
        if K is None:
            loc[c.cid] = np.linalg.solve(A + lam * np.eye(len(x)), b - hi + lam * x)
        else:
            z = x.copy()
            for _ in range(K):
                z = z - eta * (c.grad(z) + hi + lam * (z - x))
            loc[c.cid] = z
    return loc, w


def ref_fedred(x, cl, st, h, comm, batches=None):
    lam, eta = h.get("lam", 1.0), h.get("eta", 0.2)
    w = weights(cl, h.get("weighting", "uniform"))

    def cv(z):
        gf = sum(wi * c.grad(z) for wi, c in zip(w, cl))
        return {c.cid: gf - c.grad(z) for c in cl}
    if st is None:
        st = {"x_i": {c.cid: x.copy() for c in cl}, "h_i": cv(x)}
    xn = {}
    for c in cl:
        z, hh = st["x_i"][c.cid], st["h_i"][c.cid]
        if h.get("solver", "linearized") == "exact":
            A, b = A_b(c)
            xn[c.cid] = np.linalg.solve(A + (lam + 1 / eta) * np.eye(len(x)), b - hh + lam * x + z / eta)
        else:
            xn[c.cid] = (z + lam * eta * x - eta * (c.grad(z) + hh)) / (1 + lam * eta)
    if not comm:
        return x, {"x_i": xn, "h_i": st["h_i"]}
    xt = sum(wi * xn[c.cid] for wi, c in zip(w, cl))
    return xt, {"x_i": {c.cid: xt.copy() for c in cl} if h.get("reset", True) else xn, "h_i": cv(xt)}


def ref_fen1(x, cl, h):
    lam1, lam2 = h.get("l1", 0.1), h.get("prox", 0.5)
    out = np.zeros_like(x)
    for a, c in zip(weights(cl, h.get("weighting", "num_examples")), cl):
        A, _ = A_b(c)
        out += a * enet(A + lam2 * np.eye(len(x)), c.grad(x), lam1)
    return x + h.get("server_step", 1.0) * out


def ref_fen2(x, cl, st, h, m):
    K, eta, lam1, lam2 = h.get("local_steps", 5), h.get("local_step", 0.1), h.get("l1", 0.05), h.get("prox", 0.0)
    c0, cis = st["c"], dict(st["c_i"])
    dth, dc = np.zeros_like(x), np.zeros_like(x)
    for c in cl:
        ck = cis.get(c.cid, np.zeros_like(x))
        t = x.copy()
        for _ in range(K):
            if h.get("l1_mode", "subgradient") == "proximal":     # proximal gradient step on the l1 term
                t = x + soft(t - x - eta * (c.grad(t) - ck + c0 + lam2 * (t - x)), eta * lam1)
            else:
                t = t - eta * (c.grad(t) - ck + c0 + lam2 * (t - x) + lam1 * np.sign(t - x))
        cn = ck - c0 + (x - t) / (K * eta)
        dth += t - x
        dc += cn - ck
        cis[c.cid] = cn
    return x + h.get("server_step", 1.0) / len(cl) * dth, {"c": c0 + dc / m, "c_i": cis}


def ref_fen3(x, cl, st, h, m):
    lam2, lam1, mode = h.get("alpha", 1.0), h.get("l1", 0.1), h.get("sign_at_zero", "printed")
    gs, hh, ths = dict(st["g_i"]), st["h"].copy(), []
    for c in cl:
        A, _ = A_b(c)
        g = gs.get(c.cid, np.zeros_like(x))
        dlt = enet(A + lam2 * np.eye(len(x)), c.grad(x) - g, lam1)
        dlt[np.abs(dlt) < 1e-13] = 0.0
        gn = c.grad(x + dlt) if mode == "kkt" else g - lam2 * dlt - lam1 * np.sign(dlt)
        hh = hh + (gn - g) / m
        gs[c.cid] = gn
        ths.append(x + dlt)
    return np.mean(ths, axis=0) - hh / lam2, {"h": hh, "g_i": gs}


def ref_st(T, q):
    if q is None:
        return T.copy()
    k = max(int(np.floor(T.size * q)), 1)
    order = sorted(range(T.size), key=lambda i: -abs(T[i]))[:k]
    out = np.zeros_like(T)
    mu = sum(abs(T[i]) for i in order) / k
    for i in order:
        out[i] = mu * np.sign(T[i])
    return out


def ref_efl(x, cl, st, h, steps):
    E, eta, lam, q = h.get("E", 3), h.get("step", 0.05), h.get("lam", 0.1), h.get("q", None)
    wt = weights(cl, h.get("weighting", "num_examples"))
    R, RG, U, V = dict(st["R"]), st["RG"], st["U"], st["V"]
    agg = np.zeros_like(x)
    for p, c in zip(wt, cl):
        s = steps[c.cid]
        if s == 0:
            continue
        w = x.copy()
        for _ in range(s):
            w = w - eta * (c.grad(w) + lam * (U * w - V))
        dl = R.get(c.cid, np.zeros_like(x)) + w - x
        cc = ref_st(dl, q)
        R[c.cid] = dl - cc
        agg += (E * p / s if h.get("aggregation", "efl") == "efl" else p) * cc
    DG = RG + agg
    b = ref_st(DG, q)
    return x + b, {"R": R, "RG": DG - b, "U": U, "V": V}


def grid(v, hs):
    return v if not hs else hs * np.round(v / hs)


def ref_docofl(x0, cl, h, leads, T, grids):
    K, V, eta = h.get("period", 2), h.get("queue_size", 3), h.get("step", 0.1)
    x, anchors, out = x0.copy(), [], []
    for t in range(T):
        if t % K == 0:
            anchors.append((t, grid(x, grids["anchor"])))
            anchors = anchors[-V:]
        g = np.zeros_like(x)
        for c in cl:
            r = K * (max(t - leads[c.cid], 0) // K)
            y = dict(anchors)[r]
            g += grid(c.grad(y + grid(x - y, grids["correction"])), grids["gradient"])
        x = x - eta * g / len(cl)
        out.append(x.copy())
    return out


def ref_ofediq(x0, cl, h, draws):
    eta, L, p, s, b = h.get("eta", 0.05), h.get("period", 2), h.get("p", 0.5), h.get("s", None), h.get("b", 1)
    x, th, w0, out = x0.copy(), {}, None, []
    for t, dr in enumerate(draws, start=1):
        if (t - 1) % L == 0:
            w0 = x.copy()
            for c in cl:
                th[c.cid] = x.copy()
        for c in cl:
            th[c.cid] = th[c.cid] - eta * c.grad(th[c.cid])
        if t % L == 0:
            acc = np.zeros_like(x)
            for c in cl:
                if dr["participate"][c.cid]:
                    u = -(th[c.cid] - w0) / (eta * p)
                    if s is not None:
                        qv = np.zeros_like(u)
                        for blk in np.array_split(np.arange(u.size), b):
                            nrm = np.linalg.norm(u[blk])
                            for i in blk:
                                r = abs(u[i]) / nrm
                                lv = min(np.floor(s * r), s - 1)
                                up = dr["uniforms"][c.cid][i] < s * r - lv
                                qv[i] = nrm * np.sign(u[i]) * (lv + up) / s
                        u = qv
                    acc += u
            x = w0 - eta / len(cl) * acc
        out.append(x.copy())
    return out


# --------------------------------------------------------------------------------------------- scenarios
def _call(impl, x, cl, state, rng, h):
    out = impl(np.array(x, float), list(cl), state=state, rng=rng, **h)
    return out if isinstance(out, tuple) else (out, None)


def _hyper(h):
    return {k: v for k, v in h.items() if k not in ("rtol", "fixed")}


def scenario(family, impl, hyper):
    """Runs impl on the family's scripted scenario; returns (list of models, list of reference models)."""
    h = _hyper(hyper)
    rng = np.random.default_rng(5)
    x0 = np.array([0.3, -0.7, 1.1])
    got, want = [], []
    if family in ("fedavg", "fedprox"):
        cl = make_clients(1)
        x0 = 4.0 * x0              # far from the clients' optima: long updates
        full = {"local_steps": 5, "local_step": 0.1, "server_step": 0.7, "weighting": "num_examples"}
        if family == "fedprox":
            full.update(prox=0.8, gamma=None)
        full.update(h)
        x = x0.copy()
        for ids in ROUNDS:
            part = pick(cl, ids)
            xn, _ = _call(impl, x, part, None, rng, full)
            if full.get("gamma") is not None:          # Definition 2, client by client, then the aggregate
                inexact = True
                for c in part:
                    xi, _ = _call(impl, x, [c], None, rng, full)
                    wi = x + (xi - x) / full["server_step"]
                    gh = c.grad(wi) + full["prox"] * (wi - x)
                    inexact &= np.linalg.norm(gh) <= full["gamma"] * np.linalg.norm(c.grad(x)) + 1e-12
                ref = x + sum(a * (_call(impl, x, [c], None, rng, full)[0] - x)
                              for a, c in zip(weights(part, full["weighting"]), part))
                if not inexact:       # not a gamma-inexact solution: recorded as a deviation
                    ref = ref + 1.0
            else:
                ref = ref_fedavg(x, part, full, full.get("prox", 0.0))
            got.append(xn); want.append(ref)
            x = ref
    elif family == "scaffold":
        cl = make_clients(2)
        full = {"local_steps": 4, "local_step": 0.1, "server_step": 1.3, "weighting": "uniform", "option": "II",
                "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, {"c": np.zeros(3), "c_i": {}}
        for ids in ROUNDS:
            part = pick(cl, ids)
            xn, st = _call(impl, x, part, st, rng, full)
            ref, rs = ref_scaffold(x, part, rs, full, 4)
            got.append(xn); want.append(ref); x = ref
    elif family == "feddyn":
        cl = make_clients(3)
        full = {"alpha": 0.7, "weighting": "uniform", "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, {"h": np.zeros(3), "g_i": {}}
        for ids in ROUNDS:
            part = pick(cl, ids)
            xn, st = _call(impl, x, part, st, rng, full)
            ref, rs = ref_feddyn(x, part, rs, full["alpha"], 4)
            got.append(xn); want.append(ref); x = ref
    elif family == "scaffnew":
        cl = make_clients(4)
        full = {"step": 0.3, "p": 0.4, "weighting": "uniform", "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, {}
        for K in (2, 1, 3, 1, 4):
            xn, st = _call(impl, x, cl, st, rng, dict(full, local_steps=K))
            ref, rs = ref_scaffnew(x, cl, rs, full, K)
            got.append(xn); want.append(ref); x = ref
    elif family == "dane":
        cl = make_clients(5)
        full = {"lam": 0.9, "local_steps": None, "local_step": 0.1, "control_variate": "gradient", "m": 0.8,
                "averaging": "standard", "weighting": "uniform", "num_clients": 4}
        full.update(h)
        x, st = x0.copy(), None
        hv = None
        for r in range(4):
            order = cl[r % 4:] + cl[:r % 4]
            kw = dict(full)
            if full["averaging"] == "random":
                kw["draw"] = {"client": order[r % 4].cid}
            xn, st = _call(impl, x, order, st, rng, kw)
            if full["control_variate"] == "scaffnew":
                if hv is None:
                    w = weights(order, full["weighting"])
                    gf = sum(wi * c.grad(x) for wi, c in zip(w, order))
                    hv = {c.cid: gf - c.grad(x) for c in order}
                loc, w = ref_dane_round(x, order, full, hv)
                ref = sum(wi * loc[c.cid] for wi, c in zip(w, order))
                hv = {cid: hv[cid] + full["m"] * (loc[cid] - ref) for cid in hv}
            else:
                loc, w = ref_dane_round(x, order, full)
                ref = loc[kw["draw"]["client"]] if full["averaging"] == "random" else \
                    sum(wi * loc[c.cid] for wi, c in zip(w, order))
            got.append(xn); want.append(ref); x = ref
    elif family == "fedred":
        cl = make_clients(6)
        full = {"lam": 0.8, "eta": 0.25, "p": 0.5, "solver": "linearized", "reset": True, "batch_size": None,
                "weighting": "num_examples", "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, None
        for comm in (False, False, True, False, True, True, False, False, True):
            order = cl[::-1] if comm else cl
            xn, st = _call(impl, x, order, st, rng, dict(full, draw={"communicate": comm}))
            ref, rs = ref_fedred(x, cl, rs, full, comm)
            got.append(xn); want.append(ref); x = ref
    elif family == "fedelasticnet_fedavg":
        for diag in (False, True, "ill"):
            cl = make_clients(7, diag=diag is True)
            if diag == "ill":       # condition number ~ 100: slow first-order solvers show
                for c in cl:
                    c.features = c.features * np.array([1.0, 0.3, 0.1])
            full = {"local_steps": None, "local_step": 0.1, "prox": 0.05 if diag == "ill" else 0.5,
                    "l1": 0.005 if diag == "ill" else 0.15,
                    "l1_mode": "subgradient",
                    "server_step": 0.8, "weighting": "num_examples", "num_clients": 4}
            full.update(h)
            x = x0.copy()
            for _ in range(3):
                xn, _ = _call(impl, x, cl, None, rng, full)
                ref = ref_fen1(x, cl, full)
                if diag is True:      # the closed form of the diagonal case, a third check
                    out = np.zeros_like(x)
                    for a, c in zip(weights(cl, "num_examples"), cl):
                        A, _ = A_b(c)
                        out += a * (-soft(c.grad(x), full["l1"]) / (np.diag(A) + full["prox"]))
                    assert close(ref, x + full["server_step"] * out, 1e-9)
                got.append(xn); want.append(ref); x = ref
    elif family == "fedelasticnet_scaffold":
        cl = make_clients(8)
        full = {"local_steps": 4, "local_step": 0.1, "prox": 0.2, "l1": 0.05, "l1_mode": "subgradient",
                "server_step": 1.2, "weighting": "uniform", "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, {"c": np.zeros(3), "c_i": {}}
        for ids in ROUNDS:
            part = pick(cl, ids)
            xn, st = _call(impl, x, part, st, rng, full)
            ref, rs = ref_fen2(x, part, rs, full, 4)
            got.append(xn); want.append(ref); x = ref
    elif family == "fedelasticnet_feddyn":
        cl = make_clients(9)
        full = {"alpha": 0.9, "l1": 0.08, "sign_at_zero": "printed", "weighting": "uniform", "num_clients": 4}
        full.update(h)
        x, st, rs = x0.copy(), None, {"h": np.zeros(3), "g_i": {}}
        for ids in ROUNDS:
            part = pick(cl, ids)
            xn, st = _call(impl, x, part, st, rng, full)
            ref, rs = ref_fen3(x, part, rs, full, 4)
            got.append(xn); want.append(ref); x = ref
    elif family == "efl":
        cl = make_clients(10, d=5)
        x0e = np.array([0.3, -0.7, 1.1, 0.2, -1.5])
        for q in (None, 0.4):
            full = {"E": 3, "step": 0.05, "lam": 0.0, "q": q, "aggregation": "efl", "variant": "consistent",
                    "weighting": "num_examples", "num_clients": 4}
            full.update(h)
            x, st = x0e.copy(), None
            rs = {"R": {}, "RG": np.zeros(5), "U": np.zeros(5), "V": np.zeros(5)}
            for steps in ([1, 2, 3, 2], [0, 3, 1, 0], [2, 0, 0, 1], [3, 3, 1, 2], [1, 0, 2, 3]):
                sd = {c.cid: s for c, s in zip(cl, steps)}
                xn, st = _call(impl, x, cl, st, rng, dict(full, draw={"steps": sd}))
                ref, rs = ref_efl(x, cl, rs, full, sd)
                got.append(xn); want.append(ref); x = ref
        # the elastic term with U, V set in the state after round 1 (lam > 0)
        full = {"E": 3, "step": 0.05, "lam": 0.6, "q": None, "aggregation": "efl", "variant": "consistent",
                "weighting": "num_examples", "num_clients": 4}
        full.update(h)
        sd = {c.cid: 2 for c in cl}
        x1, st = _call(impl, x0e, cl, None, rng, dict(full, draw={"steps": sd}))
        if isinstance(st, dict):
            U, V = np.linspace(0.5, 1.5, 5), np.linspace(-1, 1, 5)
            st = dict(st, U=U, V=V)
            xn, _ = _call(impl, x1, cl, st, rng, dict(full, draw={"steps": sd}))
            ref, _ = ref_efl(x1, cl, {"R": {}, "RG": np.zeros(5), "U": U, "V": V}, full, sd)
            got.append(xn); want.append(ref)
    elif family == "docofl":
        cl = make_clients(11)
        for grids, K, V, leads in (
                ({"anchor": 0.0, "correction": 0.0, "gradient": 0.0}, 2, 3, {10: 0, 13: 3, 17: 4, 42: 1}),
                ({"anchor": 0.0537, "correction": 0.00913, "gradient": 0.0971}, 2, 3, {10: 0, 13: 3, 17: 4, 42: 1}),
                ({"anchor": 0.493, "correction": 0.0971, "gradient": 0.0}, 2, 3, {10: 0, 13: 3, 17: 4, 42: 1}),
                ({"anchor": 0.493, "correction": 0.0971, "gradient": 0.0}, 1, 4, {10: 3, 13: 2, 17: 0, 42: 1})):
            full = {"step": 0.1, "period": K, "queue_size": V, "weighting": "uniform", "num_clients": 4,
                    "grid": grids}
            full.update(h)
            T = 12
            want += ref_docofl(x0, cl, full, leads, T, grids)
            x, st = x0.copy(), None
            for _t in range(T):
                x, st = _call(impl, x, cl, st, rng, dict(full, draw={"leads": leads}))
                got.append(x)
    elif family == "ofediq":
        cl = make_clients(12)
        for s, L in ((None, 2), (3, 2), (2, 3), (4, 1)):
            full = {"eta": 0.05, "period": L, "p": 0.6, "s": s, "b": 2, "weighting": "uniform", "num_clients": 4}
            full.update(h)
            dr = np.random.default_rng(L)
            draws = [{"participate": {c.cid: bool(dr.random() < 0.6) for c in cl},
                      "uniforms": {c.cid: list(dr.random(3)) for c in cl}} for _ in range(7)]
            want += ref_ofediq(x0, cl, full, draws)
            x, st = x0.copy(), None
            for d in draws:
                x, st = _call(impl, x, cl, st, rng, dict(full, draw=d))
                got.append(x)
    return got, want


# ------------------------------------------------------------------------ own randomness, by simulation
def own_randomness(family, name, impl, hyper):
    """(statistic, expected, ok) for the implementations that draw their own coins/rounding, else None."""
    rng = np.random.default_rng(11)
    h = _hyper(hyper)
    if family == "scaffnew":
        cl = make_clients(4, d=1, ids=(21,))
        c = cl[0]
        p, gam = 0.3, 0.2
        ks = []
        for _ in range(3000):       # K read off the model: one client, h = 0, x_K = x - gam sum of steps
            x = np.array([1.0])
            xn, _ = _call(impl, x, [c], None, rng, dict(h, step=gam, p=p, local_steps=None, weighting="uniform"))
            for K in range(1, 200):
                if close(ref_scaffnew(x, [c], {}, {"step": gam, "p": p}, K)[0], xn, 1e-10):
                    ks.append(K)
                    break
        ks = np.array(ks)         # Geometric(p): mean 1/p, variance (1 - p)/p^2
        mean = ks.mean()
        return round(mean, 3), round(1 / p, 3), bool(abs(mean - 1 / p) < 5 * np.sqrt((1 - p) / p ** 2 / 3000)
                                                     and len(ks) == 3000 and abs(np.mean(ks == 1) - p) < 0.04)
    if family == "fedred" and "coin" in name or (family == "fedred" and name in ("fedred_gd_dict", "fedred_exact_object")):
        cl = make_clients(6)[:2]
        p = 0.3
        n = 3000
        comms = 0
        for _ in range(n):
            x = np.array([0.3, -0.7, 1.1])
            xn, _ = _call(impl, x, cl, None, rng, dict(h, p=p))
            comms += not np.allclose(xn, x)
        f = comms / n
        return f, p, abs(f - p) < 5 * np.sqrt(p * (1 - p) / n)
    if family == "dane" and h.get("averaging") == "random":
        cl = make_clients(5)[:3]
        wt = weights(cl, h.get("weighting", "uniform"))
        loc, _ = ref_dane_round(np.zeros(3), cl, dict(h, local_steps=h.get("local_steps")))
        counts = np.zeros(3)
        for _ in range(3000):
            xn = _call(impl, np.zeros(3), cl, None, rng, h)[0]
            counts[[k for k, c in enumerate(cl) if close(loc[c.cid], xn, 1e-9)][0]] += 1
        f = counts / counts.sum()
        return f.round(3).tolist(), wt.round(3).tolist(), bool(np.all(np.abs(f - wt) < 5 * np.sqrt(wt * (1 - wt) / 3000)))
    if family == "ofediq":
        cl = make_clients(12)[:2]
        p = 0.3
        joint = np.zeros(4)
        for _ in range(3000):       # two clients, one period of L = 2, no quantization: the subset off the model
            st, x = None, np.array([0.3, -0.7, 1.1])
            kw = dict(h, eta=0.05, period=2, p=p, s=None, b=1, num_clients=2)
            x1, st = _call(impl, x, cl, st, rng, kw)
            x2, st = _call(impl, x1, cl, st, rng, kw)
            outs = {}
            for a in (0, 1):
                for b in (0, 1):
                    d = {"participate": {cl[0].cid: bool(a), cl[1].cid: bool(b)}, "uniforms": {c.cid: [0.5] * 3 for c in cl}}
                    outs[2 * a + b] = ref_ofediq(x, cl, dict(kw), [d, d])[-1]
            hit = [k for k, v in outs.items() if close(v, x2, 1e-9)]
            if not hit:
                return "a model that is none of the 4 outcomes", "one of the 4 outcomes", False
            joint[hit[0]] += 1
        f = joint / joint.sum()
        law = np.array([(1 - p) ** 2, (1 - p) * p, p * (1 - p), p * p])
        return f.round(3).tolist(), law.round(3).tolist(), bool(np.all(np.abs(f - law) < 5 * np.sqrt(law * (1 - law) / 3000)))
    return None


def main():
    bad = 0
    for fam in FAMILIES:
        mod = importlib.import_module(f"benchmarks.heldout.batch5.{fam}")
        crash = set(getattr(mod, "CRASH_IS_THE_BUG", ()))
        for kind, lst in (("correct", mod.CORRECT), ("wrong", mod.WRONG)):
            for name, impl, hyper in lst:
                rtol = 10 * hyper.get("rtol", 1e-10) if "rtol" in hyper else 1e-9
                try:
                    got, want = scenario(fam, impl, hyper)
                    err = None
                except Exception as exc:      # noqa: BLE001
                    got = want = None
                    err = f"{type(exc).__name__}: {exc}"
                if err is not None:
                    ok = kind == "wrong" and name in crash
                    line = f"raises ({err[:70]})" + (" = its bug" if ok else "")
                else:
                    same = [close(g, w, rtol) for g, w in zip(got, want)]
                    first = next((i for i, s in enumerate(same) if not s), None)
                    if kind == "correct":
                        ok = first is None and len(got) == len(want)
                        line = f"matches the reference on {len(got)} rounds" if ok else f"DIFFERS at call {first}"
                    else:
                        ok = name not in crash
                        line = "runs; " + (f"deviates from the reference at call {first}" if first is not None
                                           else "same as the reference in this scenario (slip elsewhere)")
                own = None if err else own_randomness(fam, name, impl, hyper)
                if own is not None:
                    stat, law, fine = own
                    line += f"; own randomness {stat} vs law {law}: {'as the paper' if fine else 'NOT the paper'}"
                    if kind == "correct" and not fine:
                        ok = False
                bad += not ok
                print(f"{'ok ' if ok else 'BAD'} {fam:23s} {name:36s} {kind:7s} {line}", flush=True)
    print("selfcheck:", "all good" if bad == 0 else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

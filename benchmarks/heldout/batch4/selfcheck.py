"""Self-check of batch 4, independent of the conformance kit (it never imports fedtheory.conformance).

* every CORRECT implementation is compared, over several rounds on tiny problems (sparse, unordered client ids,
  partial participation where the family allows it), with a straightforward reference written here from the
  papers (loops, np.linalg.solve; the elastic-net solves by ISTA, not by the coordinate descent of _common.py);
  own randomness (coins, selection, rounding) is checked by its frequencies;
* every WRONG implementation is run on valid inputs (it must not crash unless listed in CRASH_IS_THE_BUG), and
  compared with the same reference in the situation its docstring names: it must differ there (so none is
  correct by accident).

Run: python -m benchmarks.heldout.batch4.selfcheck      (a few seconds; exit status 1 on any failure)
"""
from __future__ import annotations

import importlib
import math
import sys
import time
from collections import Counter

import numpy as np

FAMILIES = ["dane", "fedred", "fedelasticnet_fedavg", "fedelasticnet_scaffold", "fedelasticnet_feddyn",
            "efl", "docofl", "ofediq", "fedavg", "fedprox", "scaffold", "feddyn", "scaffnew"]


class Client:
    """The contract's client: features (m, d), targets (m,), f(x) = 1/(2m)||Z x - y||^2, grad, value, cid."""

    def __init__(self, cid, Z, y):
        self.cid, self.features, self.targets = cid, Z, y
        self.num_examples = Z.shape[0]

    def grad(self, x):
        return self.features.T @ (self.features @ x - self.targets) / self.num_examples

    def value(self, x):
        r = self.features @ x - self.targets
        return 0.5 * r @ r / self.num_examples


def problem(seed, n=3, d=3, ids=(10, 42, 7, 23, 5, 31), scale=1.0):
    g = np.random.default_rng(seed)
    cl = []
    for i in range(n):
        m = d + i + int(g.integers(0, 2))      # unequal sizes, so weightings differ
        Z = g.normal(size=(m, d)) * scale / math.sqrt(d) * (1 + 0.3 * i)
        y = g.normal(size=m) + 0.5 * i
        cl.append(Client(ids[i], Z, y))
    return cl, g.normal(size=d) * 0.5


def AB(c):
    return c.features.T @ c.features / c.num_examples, c.features.T @ c.targets / c.num_examples


def weights(cl, weighting):
    if weighting == "uniform":
        return np.full(len(cl), 1 / len(cl))
    m = np.array([c.num_examples for c in cl], float)
    return m / m.sum()


def ista(Q, p, l1, iters=20000):
    """min 1/2 u^T Q u + p^T u + l1 ||u||_1 by proximal gradient (FISTA), the reference elastic-net solve."""
    Lq = np.linalg.eigvalsh(Q).max()
    u = np.zeros(len(p)); z = u.copy(); tk = 1.0
    for _ in range(iters):
        v = z - (Q @ z + p) / Lq
        un = np.sign(v) * np.maximum(np.abs(v) - l1 / Lq, 0)
        tn = (1 + math.sqrt(1 + 4 * tk * tk)) / 2
        z = un + (tk - 1) / tn * (un - u)
        u, tk = un, tn
    # polish: exact solve on the support found
    S = np.flatnonzero(np.abs(u) > 1e-12)
    if len(S) and l1 > 0:
        w = np.zeros_like(u)
        w[S] = np.linalg.solve(Q[np.ix_(S, S)], -(p[S] + l1 * np.sign(u[S])))
        if np.all(np.sign(w[S]) == np.sign(u[S])):
            return w
    return u


# ====================================================================== references (one round each)

def ref_fedavg(x, cl, K=5, eta=0.1, eg=1.0, weighting="num_examples", prox=0.0):
    w = weights(cl, weighting)
    new = x.copy()
    for wi, c in zip(w, cl):
        y = x.copy()
        for _ in range(K):
            y = y - eta * (c.grad(y) + prox * (y - x))
        new = new + eg * wi * (y - x)
    return new


def ref_scaffold(x, cl, S, K=5, eta=0.1, eg=1.0, option="II", N=None, weighting="uniform"):
    c0 = S["c"]; N = N or len(cl)
    w = weights(cl, weighting)
    cis = dict(S["c_i"]); dx = 0; dc = 0
    for wi, c in zip(w, cl):
        ci = cis.get(c.cid, np.zeros_like(x))
        y = x.copy()
        for _ in range(K):
            y = y - eta * (c.grad(y) - ci + c0)
        cn = c.grad(x) if option == "I" else ci - c0 + (x - y) / (K * eta)
        dx = dx + wi * (y - x); dc = dc + (cn - ci); cis[c.cid] = cn
    return x + eg * dx, {"c": c0 + dc / N, "c_i": cis}


def ref_feddyn(x, cl, S, alpha=1.0, N=None):
    N = N or len(cl)
    g = dict(S["g_i"]); h = S["h"].copy(); ths = []
    for c in cl:
        A, b = AB(c)
        gk = g.get(c.cid, np.zeros_like(x))
        th = np.linalg.solve(A + alpha * np.eye(len(x)), b + gk + alpha * x)
        g[c.cid] = gk - alpha * (th - x); h = h - alpha / N * (th - x); ths.append(th)
    return np.mean(ths, 0) - h / alpha, {"h": h, "g_i": g}


def ref_scaffnew(x, cl, S, K, gamma=0.5, p=0.5):
    h = {c.cid: S["h_i"].get(c.cid, np.zeros_like(x)) for c in cl}
    xs = {c.cid: x.copy() for c in cl}
    for _ in range(K):
        for c in cl:
            xs[c.cid] = xs[c.cid] - gamma * (c.grad(xs[c.cid]) - h[c.cid])
    xn = sum(xs.values()) / len(cl)
    return xn, {"h_i": {k: h[k] + p / gamma * (xn - xs[k]) for k in h}}


def ref_dane(x, cl, S, lam=1.0, K=None, eta=0.1, cv="gradient", m=1.0, j=None, weighting="uniform"):
    w = weights(cl, weighting)
    gb = sum(wi * c.grad(x) for wi, c in zip(w, cl))
    if cv == "scaffnew" and S is not None:
        h = S
    else:
        h = {c.cid: gb - c.grad(x) for c in cl}
    xs = {}
    for c in cl:
        if K is None:
            A, b = AB(c)
            xs[c.cid] = np.linalg.solve(A + lam * np.eye(len(x)), b - h[c.cid] + lam * x)
        else:
            y = x.copy()
            for _ in range(K):
                y = y - eta * (c.grad(y) + h[c.cid] + lam * (y - x))
            xs[c.cid] = y
    xn = xs[j] if j is not None else sum(wi * xs[c.cid] for wi, c in zip(w, cl))
    return xn, {k: h[k] + m * (xs[k] - xn) for k in h}


def ref_fedred(x, cl, S, comm, lam=1.0, eta=0.2, solver="linearized", reset=True):
    w = weights(cl, "uniform")
    def cv(z):
        gb = sum(wi * c.grad(z) for wi, c in zip(w, cl))
        return {c.cid: gb - c.grad(z) for c in cl}
    if S is None:
        S = {"x_i": {c.cid: x.copy() for c in cl}, "h_i": cv(x)}
    xi = {}
    for c in cl:
        if solver == "exact":
            A, b = AB(c)
            xi[c.cid] = np.linalg.solve(A + (lam + 1 / eta) * np.eye(len(x)),
                                        b - S["h_i"][c.cid] + lam * x + S["x_i"][c.cid] / eta)
        else:
            xo = S["x_i"][c.cid]
            xi[c.cid] = (xo + lam * eta * x - eta * (c.grad(xo) + S["h_i"][c.cid])) / (1 + lam * eta)
    if not comm:
        return x.copy(), {"x_i": xi, "h_i": S["h_i"]}
    xt = sum(wi * xi[c.cid] for wi, c in zip(w, cl))
    return xt, {"x_i": {k: xt.copy() for k in xi} if reset else xi, "h_i": cv(xt)}


def ref_fenet1(x, cl, K=None, eta=0.1, lam2=0.5, lam1=0.1, eg=1.0, weighting="num_examples"):
    w = weights(cl, weighting); out = x.copy()
    for wi, c in zip(w, cl):
        if K is None:
            A, _ = AB(c)
            D = ista(A + lam2 * np.eye(len(x)), c.grad(x), lam1)
        else:
            t = x.copy()
            for _ in range(K):
                t = t - eta * (c.grad(t) + lam2 * (t - x) + lam1 * np.sign(t - x))
            D = t - x
        out = out + eg * wi * D
    return out


def ref_fenet2(x, cl, S, K=5, eta=0.1, lam2=0.0, lam1=0.05, eg=1.0, N=None):
    N = N or len(cl); c0 = S["c"]; cis = dict(S["c_i"]); dth = 0; dc = 0
    for c in cl:
        ck = cis.get(c.cid, np.zeros_like(x)); t = x.copy()
        for _ in range(K):
            t = t - eta * (c.grad(t) - ck + c0 + lam2 * (t - x) + lam1 * np.sign(t - x))
        cn = ck - c0 + (x - t) / (K * eta)
        dth = dth + (t - x) / len(cl); dc = dc + cn - ck; cis[c.cid] = cn
    return x + eg * dth, {"c": c0 + dc / N, "c_i": cis}


def ref_fenet3(x, cl, S, alpha=1.0, lam1=0.1, reading="printed", N=None):
    N = N or len(cl); g = dict(S["g_i"]); h = S["h"].copy(); ths = []
    for c in cl:
        A, _ = AB(c)
        gk = g.get(c.cid, np.zeros_like(x))
        D = ista(A + alpha * np.eye(len(x)), c.grad(x) - gk, lam1)
        th = x + D
        gn = c.grad(th) if reading == "kkt" else gk - alpha * D - lam1 * np.sign(D)
        h = h + (gn - gk) / N; g[c.cid] = gn; ths.append(th)
    return np.mean(ths, 0) - h / alpha, {"h": h, "g_i": g}


def ST(T, q):
    if q is None:
        return T.copy()
    k = max(int(q * len(T)), 1)
    order = sorted(range(len(T)), key=lambda i: -abs(T[i]))[:k]
    mu = sum(abs(T[i]) for i in order) / k
    out = np.zeros_like(T)
    for i in order:
        out[i] = mu * np.sign(T[i])
    return out


def ref_efl(x, cl, S, steps, E=3, eta=0.05, q=None, weighting="num_examples", agg="efl"):
    p = dict(zip([c.cid for c in cl], weights(cl, weighting)))
    Rk = dict(S["R_k"]); tot = np.zeros_like(x)
    for c in cl:
        s = steps[c.cid]
        if s == 0:
            continue
        w = x.copy()
        for _ in range(s):
            w = w - eta * c.grad(w)       # lam > 0 only matters from round 2 (U = V = 0 in round 1); runs use lam = 0
        D = Rk.get(c.cid, 0 * x) + w - x
        cc = ST(D, q); Rk[c.cid] = D - cc
        tot = tot + (E * p[c.cid] / s if agg == "efl" else p[c.cid]) * cc
    DG = S["R_G"] + tot
    bb = ST(DG, q)
    return x + bb, {"R_k": Rk, "R_G": DG - bb}


def gr(v, h):
    return v if not h else h * np.round(v / h)


def ref_docofl(x, cl, S, leads, eta=0.1, K=2, V=3, grid=None):
    grid = grid or {}
    t, Q = S
    Q = list(Q)
    if t % K == 0:
        Q.append((t, gr(x, grid.get("anchor", 0))))
        Q = Q[-V:]
    anchors = dict(Q)
    g = np.zeros_like(x)
    for c in cl:
        y = anchors[K * (max(t - leads[c.cid], 0) // K)]
        g = g + gr(c.grad(y + gr(x - y, grid.get("correction", 0))), grid.get("gradient", 0))
    return x - eta * g / len(cl), (t + 1, Q)


def ref_quant(u, s, b, U):
    if s is None:
        return u.copy()
    out = np.zeros_like(u)
    for I in np.array_split(np.arange(len(u)), b):
        nr = math.sqrt(sum(u[i] ** 2 for i in I))
        for i in I:
            if nr == 0:
                continue
            r = abs(u[i]) / nr
            m = min(math.floor(s * r), s - 1)
            xi = (m + 1) / s if U[i] < s * r - m else m / s
            out[i] = nr * np.sign(u[i]) * xi
    return out


def ref_ofediq(x, cl, S, part, unif, eta=0.05, L=2, p=0.5, s=4, b=1):
    t, th = S
    th = dict(th)
    for c in cl:
        g = x if (t - 1) % L == 0 else th[c.cid]
        th[c.cid] = g - eta * c.grad(g)
    if t % L:
        return x.copy(), (t + 1, th)
    tot = np.zeros_like(x)
    for c in cl:
        if part[c.cid]:
            u = (x - th[c.cid]) / (eta * p)
            tot = tot + (u if s is None else ref_quant(u, s, b, unif[c.cid]))
    return x - eta / len(cl) * tot, (t + 1, th)



FAIL: list = []


def check(name, ok, detail=""):
    print(f"  {'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        FAIL.append(name)


def x_of(out):
    return out[0] if isinstance(out, tuple) else out


# ====================================================================== scenarios
# Each deterministic scenario runs an implementation and the reference side by side and returns the largest
# difference of the models (relative to 1 + |x|); a correct implementation must give ~0, a wrong one > 1e-6.

SUBSETS4 = [[0, 2], [1, 2, 3], [3], [0, 1, 2, 3], [2, 0], [1]]


def chain(impl, ref, hyper, n, rounds, subsets=None, ref_state=None, draws=None, seed=0, d=3):
    cl, x = problem(seed, n=n, d=d)
    rng = np.random.default_rng(seed + 100)
    xi, si, xr, sr = x.copy(), None, x.copy(), ref_state
    worst = 0.0
    for r in range(rounds):
        part = [cl[j] for j in subsets[r]] if subsets else cl
        extra = {"draw": draws[r]} if draws else {}
        out = impl(xi.copy(), list(part), state=si, rng=rng, **hyper, **extra)
        xi, si = out if isinstance(out, tuple) else (out, None)
        xi = np.asarray(xi, float)
        xr, sr = ref(xr, part, sr, r)
        worst = max(worst, np.linalg.norm(xi - xr) / (1 + np.linalg.norm(xr)))
    return worst


def sc_stateless(fam):
    def run(impl, hyper):
        cl, x = problem(1, n=4)
        rng = np.random.default_rng(7)
        h = {k: v for k, v in hyper.items() if k != "rtol"}
        pr = {"prox": 1.0} if fam == "fedprox" else {}
        worst, xc = 0.0, x.copy()
        for r in range(5):
            part = [cl[j] for j in rng.permutation(4)[: 1 + r % 3]]
            got = x_of(impl(xc.copy(), part, state=None, rng=rng, local_steps=5, local_step=0.1, server_step=0.7,
                            **pr, **h))
            if h.get("gamma") is not None:      # Definition 2, client by client, and the a_i-weighted combination
                ws = []
                for c in part:
                    wi = xc + (x_of(impl(xc.copy(), [c], state=None, rng=rng, server_step=0.7, **pr, **h)) - xc) / 0.7
                    res = np.linalg.norm(c.grad(wi) + 1.0 * (wi - xc))
                    worst = max(worst, res / (h["gamma"] * np.linalg.norm(c.grad(xc))) - 1 + 1e-12)
                    ws.append(wi)
                a = weights(part, "num_examples")
                want = xc + 0.7 * sum(ai * (wi - xc) for ai, wi in zip(a, ws))
            else:
                want = ref_fedavg(xc, part, K=5, eta=0.1, eg=0.7, prox=pr.get("prox", 0.0))
            worst = max(worst, np.linalg.norm(got - want) / (1 + np.linalg.norm(want)))
            xc = want
        return worst
    return run


def sc_scaffold(impl, hyper):
    opt = hyper.get("option", "II")
    return chain(impl, lambda x, p, S, r: ref_scaffold(x, p, S, K=4, eta=0.1, eg=0.8, option=opt, N=4),
                 {**hyper, "local_steps": 4, "local_step": 0.1, "server_step": 0.8, "num_clients": 4}, 4, 6,
                 SUBSETS4, {"c": np.zeros(3), "c_i": {}})


def sc_feddyn(impl, hyper):
    return chain(impl, lambda x, p, S, r: ref_feddyn(x, p, S, alpha=0.7, N=4),
                 {**hyper, "alpha": 0.7, "num_clients": 4}, 4, 6, SUBSETS4, {"h": np.zeros(3), "g_i": {}})


KS = [3, 1, 5, 2, 1, 4]


def _sc_scaffnew(impl, hyper):
    cl, x = problem(3)
    xi, si, xr, sr = x.copy(), None, x.copy(), {"h_i": {}}
    rng = np.random.default_rng(0)
    worst = 0
    for r in range(6):
        xi, si = impl(xi, cl, state=si, rng=rng, **{"step": 0.3, "p": 0.7, **hyper, "local_steps": KS[r]})
        xr, sr = ref_scaffnew(xr, cl, sr, KS[r], gamma=0.3, p=0.7)
        worst = max(worst, np.linalg.norm(xi - xr))
    return worst


def sc_dane(impl, hyper):
    cv = hyper.get("control_variate", "gradient")
    K = hyper.get("local_steps")
    rand = hyper.get("averaging") == "random"
    wt = hyper.get("weighting", "uniform")
    worst = 0
    for cvx in ([cv] if cv == "scaffnew" else ["gradient", "scaffnew"]):
        cl, x = problem(4)
        order = [cl[2], cl[0], cl[1]]
        xi, si, xr, sr = x.copy(), None, x.copy(), None
        rng = np.random.default_rng(1)
        for r in range(5):
            j = order[r % 3].cid if rand else None
            extra = {"draw": {"client": j}} if rand else {}
            xi, si = impl(xi, order, state=si, rng=rng, **{**hyper, "control_variate": cvx, "lam": 0.8, "m": 1.3},
                          **extra)
            xr, sr = ref_dane(xr, order, sr if cvx == "scaffnew" else None, lam=0.8, K=K, eta=0.1, cv=cvx, m=1.3,
                              j=j, weighting=wt)
            worst = max(worst, np.linalg.norm(xi - xr))
    return worst


COINS = [False, True, False, False, True, True, False, True]


def sc_fedred(impl, hyper):
    solver, reset = hyper.get("solver", "linearized"), hyper.get("reset", True)
    cl, x = problem(5)
    xi, si, xr, sr = x.copy(), None, x.copy(), None
    rng = np.random.default_rng(1)
    worst = 0
    for k in range(8):
        xi, si = impl(xi, cl, state=si, rng=rng, **{"lam": 0.9, "eta": 0.25, "p": 0.5, **hyper},
                      draw={"communicate": COINS[k]})
        xr, sr = ref_fedred(xr, cl, sr, COINS[k], lam=0.9, eta=0.25, solver=solver, reset=reset)
        worst = max(worst, np.linalg.norm(xi - xr))
    return worst


def sc_fenet1(impl, hyper):
    K = hyper.get("local_steps")
    worst = 0
    for seed in range(3):
        cl, x = problem(10 + seed)
        got = x_of(impl(x, cl, state=None, rng=None, **{"local_step": 0.1, "prox": 0.4, "l1": 0.15,
                                                        "server_step": 1.3, **hyper}))
        want = ref_fenet1(x, cl, K=K, eta=0.1, lam2=0.4, lam1=0.15, eg=1.3)
        worst = max(worst, np.linalg.norm(got - want))
    return worst


def sc_fenet2(impl, hyper):
    return chain(impl, lambda x, p, S, r: ref_fenet2(x, p, S, K=4, eta=0.1, lam2=0.3, lam1=0.07, eg=1.2, N=4),
                 {**hyper, "local_steps": 4, "local_step": 0.1, "prox": 0.3, "l1": 0.07, "server_step": 1.2,
                  "num_clients": 4}, 4, 6, SUBSETS4, {"c": np.zeros(3), "c_i": {}})


def sc_fenet3(impl, hyper):
    reading = hyper.get("sign_at_zero", "printed")
    return chain(impl, lambda x, p, S, r: ref_fenet3(x, p, S, alpha=0.8, lam1=0.12, reading=reading, N=4),
                 {**hyper, "alpha": 0.8, "l1": 0.12, "num_clients": 4}, 4, 4, SUBSETS4[:4],
                 {"h": np.zeros(3), "g_i": {}})


STEPS = [{10: 3, 42: 1, 7: 2}, {10: 0, 42: 2, 7: 3}, {10: 2, 42: 0, 7: 0}, {10: 1, 42: 3, 7: 2},
         {10: 3, 42: 3, 7: 1}]


def sc_efl(impl, hyper):
    q = hyper.get("q"); wt = hyper.get("weighting", "num_examples")
    worst = 0
    for d in (3, 6):
        cl, x = problem(20, d=d)
        xi, si, xr, sr = x.copy(), None, x.copy(), {"R_k": {}, "R_G": np.zeros(d)}
        for r in range(5):
            xi, si = impl(xi, cl, state=si, rng=None, **{"E": 3, "step": 0.07, "lam": 0.0, **hyper},
                          draw={"steps": STEPS[r]})
            xr, sr = ref_efl(xr, cl, sr, STEPS[r], E=3, eta=0.07, q=q, weighting=wt)
            worst = max(worst, np.linalg.norm(xi - xr))
    return worst


GRID = {"anchor": 0.0537, "correction": 0.00913, "gradient": 0.00731}


def sc_docofl(impl, hyper):
    worst = 0
    for K, V in ((2, 3), (3, 2)):
        cl, x = problem(30, n=4)
        rng = np.random.default_rng(4)
        xi, si, xr, sr = x.copy(), None, x.copy(), (0, [])
        for _t in range(K * V + 2 * K + 3):
            part = [cl[j] for j in rng.permutation(4)[:2]]
            leads = {c.cid: int(rng.integers(0, K * (V - 1) + 1)) for c in part}
            xi, si = impl(xi, part, state=si, rng=rng, step=0.1, period=K, queue_size=V, grid=GRID,
                          draw={"leads": leads}, num_clients=4, **hyper)
            xr, sr = ref_docofl(xr, part, sr, leads, eta=0.1, K=K, V=V, grid=GRID)
            worst = max(worst, np.linalg.norm(xi - xr))
    return worst


def sc_ofediq(impl, hyper):
    worst = 0
    for L, s in ((2, 4), (3, None), (1, 3)):
        cl, x = problem(40, d=4)
        rng = np.random.default_rng(6)
        xi, si, xr, sr = x.copy(), None, x.copy(), (1, {})
        for _t in range(7):
            part = {c.cid: bool(rng.random() < 0.6) for c in cl}
            unif = {c.cid: list(rng.random(4)) for c in cl}
            xi, si = impl(xi, cl, state=si, rng=rng, eta=0.07, period=L, p=0.6, s=s, b=2,
                          draw={"participate": part, "uniforms": unif}, num_clients=3, **hyper)
            xr, sr = ref_ofediq(xr, cl, sr, part, unif, eta=0.07, L=L, p=0.6, s=s, b=2)
            worst = max(worst, np.linalg.norm(xi - xr))
    return worst


SCENARIO = {"fedavg": sc_stateless("fedavg"), "fedprox": sc_stateless("fedprox"), "scaffold": sc_scaffold,
            "feddyn": sc_feddyn, "scaffnew": _sc_scaffnew, "dane": sc_dane, "fedred": sc_fedred,
            "fedelasticnet_fedavg": sc_fenet1, "fedelasticnet_scaffold": sc_fenet2,
            "fedelasticnet_feddyn": sc_fenet3, "efl": sc_efl, "docofl": sc_docofl, "ofediq": sc_ofediq}
TOL = {"fedelasticnet_fedavg": 1e-9, "fedelasticnet_feddyn": 1e-9}


# ---------------------------------------------------------------- own randomness (frequencies)

def own_scaffnew_K(impl, hyper, p=0.3, n=4000):
    """K read off a 1-d client f = x^2/2 (each local step multiplies x by 1 - gamma = 0.5)."""
    one = Client(3, np.array([[1.0]]), np.array([0.0]))
    rng = np.random.default_rng(5)
    ks = []
    for _ in range(n):
        xn, _s = impl(np.array([1.0]), [one], state=None, rng=rng, **{**hyper, "step": 0.5, "p": p,
                                                                       "local_steps": None})
        ks.append(int(round(math.log(xn[0]) / math.log(0.5))))
    cnt = Counter(ks)
    law = {k: (1 - p) ** (k - 1) * p for k in range(1, 8)}
    dev = max(abs(cnt[k] / n - law[k]) for k in law)
    return dev, f"max |freq(K=k) - (1-p)^(k-1) p| over k<=7: {dev:.3f}"


def own_fedred_coin(impl, hyper, n_clients=3, p=0.3, chains=500, length=8):
    """Chains of 8 iterations from state None (as the model converges, later iterations would hardly move);
    an iteration communicated when x~ moved."""
    cl, x = problem(5, n=n_clients)
    rng = np.random.default_rng(3)
    seqs = []
    for _ in range(chains):
        xi, si, seq = x.copy(), None, []
        for _k in range(length):
            xn, si = impl(xi, cl, state=si, rng=rng, **{"lam": 0.9, "eta": 0.25, **hyper, "p": p})
            seq.append(bool(np.linalg.norm(xn - xi) > 1e-13))
            xi = xn
        seqs.append(seq)
    f = np.mean([c for sq in seqs for c in sq])
    after1 = [b for sq in seqs for a, b in zip(sq, sq[1:]) if a]
    cond = np.mean(after1) if after1 else float("nan")
    dev = max(abs(f - p), abs(cond - p))
    return dev, f"frequency {f:.3f}, P(comm | comm before) {cond:.3f}, p = {p}"


def own_dane_selection(impl, hyper, n=3000):
    cl, x = problem(4)
    cl = [cl[1], cl[2], cl[0]]
    for c, m in zip(cl, (3, 6, 21)):
        c.features = np.random.default_rng(m).normal(size=(m, 3)); c.targets = np.ones(m); c.num_examples = m
    rng = np.random.default_rng(2)
    sol = {c.cid: ref_dane(x, cl, None, lam=1.0, j=c.cid, weighting="num_examples")[0] for c in cl}
    cnt = Counter()
    for _ in range(n):
        perm = [cl[i] for i in rng.permutation(3)]
        xn = x_of(impl(x, perm, state=None, rng=rng, **{**hyper, "weighting": "num_examples"}))
        cnt[min(sol, key=lambda k: np.linalg.norm(sol[k] - xn))] += 1
    fr = [cnt[c.cid] / n for c in cl]
    dev = max(abs(a - b) for a, b in zip(fr, (0.1, 0.2, 0.7)))
    return dev, f"selection frequencies {np.round(fr, 3)} where w = (0.1, 0.2, 0.7)"


def own_ofediq_participation(impl, hyper, p=0.3, n=3000):
    cl, x = problem(41, n=2, d=2)
    rng = np.random.default_rng(8)
    outs = {(a, b): ref_ofediq(x, cl, (1, {}), {cl[0].cid: a, cl[1].cid: b}, None, eta=0.05, L=1, p=p, s=None)[0]
            for a in (0, 1) for b in (0, 1)}
    cnt = Counter()
    for _ in range(n):
        xn, _ = impl(x, cl, state=None, rng=rng, eta=0.05, period=1, p=p, s=None, b=1, num_clients=2, **hyper)
        cnt[min(outs, key=lambda k: np.linalg.norm(outs[k] - xn))] += 1
    want = {(a, b): (p if a else 1 - p) * (p if b else 1 - p) for a in (0, 1) for b in (0, 1)}
    dev = max(abs(cnt[k] / n - want[k]) for k in want)
    return dev, "outcomes " + ", ".join(f"{k}: {cnt[k] / n:.3f}/{want[k]:.3f}" for k in want)


def own_ofediq_time_independence(impl, hyper, p=0.3, n=3000):
    """One client, L = 1, no quantization, a chain of steps from its own state: P(transmit at t+1 | transmitted at t)
    must be p (independent coins across t)."""
    cl, x = problem(41, n=1, d=2)
    rng = np.random.default_rng(10)
    sent = []
    s_ = None
    for _ in range(n):
        xn, s_ = impl(x, cl, state=s_, rng=rng, eta=0.05, period=1, p=p, s=None, b=1, num_clients=1, **hyper)
        sent.append(bool(np.linalg.norm(xn - x) > 1e-13))
    f = np.mean(sent)
    after = [b for a, b in zip(sent, sent[1:]) if a]
    cond = float(np.mean(after))
    return max(abs(f - p), abs(cond - p)), f"frequency {f:.3f}, P(sent | sent before) {cond:.3f}, p = {p}"


def own_ofediq_rounding(impl, hyper, n=3000):
    cl, x = problem(41, n=2, d=2)
    rng = np.random.default_rng(9)
    one = [cl[0]]
    xs = np.array([impl(x, one, state=None, rng=rng, eta=0.05, period=1, p=1.0, s=2, b=1, num_clients=1, **hyper)[0]
                   for _ in range(n)])
    want = ref_ofediq(x, one, (1, {}), {cl[0].cid: 1}, None, eta=0.05, L=1, p=1.0, s=None)[0]
    z = np.abs(xs.mean(0) - want) / (xs.std(0) / math.sqrt(n) + 1e-15)
    return float(z.max()), f"|mean - unquantized step| / s.e. = {np.round(z, 2)}"


OWN = {  # family -> (check, threshold on the deviation for "right law")
    "scaffnew": (own_scaffnew_K, 0.03), "fedred": (own_fedred_coin, 0.03), "dane": (own_dane_selection, 0.03),
}
OWN_OFEDIQ = [(own_ofediq_participation, 0.03), (own_ofediq_rounding, 4.5), (own_ofediq_time_independence, 0.03)]


def uses_own(fam, hyper):
    if fam == "dane":
        return hyper.get("averaging") == "random"
    return fam in ("scaffnew", "fedred", "ofediq")


# ---------------------------------------------------------------- wrong ones: the situation each is about
# (deterministic scenarios above, unless named here)

def special_wrong(fam, name, impl, hyper):
    """Returns (differs, detail) for wrong implementations whose slip the family scenario does not reach."""
    if name == "fedavg_cached_sizes":
        # the same ids, another problem with other sizes
        cl1, x = problem(50, n=3); cl2, _ = problem(51, n=3)
        for c, m in zip(cl2, (9, 4, 6)):
            c.features = np.random.default_rng(m).normal(size=(m, 3)); c.targets = np.ones(m); c.num_examples = m
        impl(x, cl1, state=None, rng=None, **hyper)
        got = impl(x, cl2, state=None, rng=None, **hyper)
        dev = np.linalg.norm(got - ref_fedavg(x, cl2))
        return dev > 1e-6, f"second problem with the same ids: |x+ - ref| = {dev:.2e}"
    if name == "fedavg_weights_sorted_mismatch":
        cl, x = problem(53, n=3)
        order = [cl[1], cl[2], cl[0]]            # ids 42, 7, 10: not sorted, sizes 3+1.., 3+2.., 3+0..
        dev = np.linalg.norm(impl(x, order, state=None, rng=None, **hyper) - ref_fedavg(x, order))
        return dev > 1e-6, f"clients listed as ids {[c.cid for c in order]}, sizes " \
                           f"{[c.num_examples for c in order]}: |x+ - ref| = {dev:.2e}"
    if name == "fedprox_cg_absolute_tol":
        cl, x = problem(52, n=2, scale=0.3)
        worst = 0
        for c in cl:
            wi = impl(x, [c], state=None, rng=None, prox=1.0, server_step=1.0, **hyper)
            ratio = np.linalg.norm(c.grad(wi) + (wi - x)) / np.linalg.norm(c.grad(x))
            worst = max(worst, ratio)
        return worst > hyper["gamma"], f"small gradients: ||grad h_i(w_i)|| / ||grad f_i(x)|| = {worst:.3f} " \
                                       f"(gamma = {hyper['gamma']})"
    if name == "ofediq_coin_every_other_period":
        dev, det = own_ofediq_time_independence(impl, hyper)
        return dev > 0.03, det
    if name == "ofediq_counter_in_closure":
        a = sc_ofediq(impl, hyper)
        return a > 1e-6, f"second run after the first: worst {a:.2e}"
    return None


# ====================================================================== main

def smoke(fam, impl, hyper):
    """Valid inputs the kit could send: several rounds from state None, with and without the draw."""
    cl, x = problem(60, n=3, d=4, ids=(11, 3, 27))
    rng = np.random.default_rng(0)
    base = dict(hyper)
    base.pop("rtol", None)
    s = None
    for r in range(4):
        kw = dict(base)
        if fam == "scaffnew":
            kw.setdefault("local_steps", [2, None, 1, 3][r])
        if fam == "fedred" and r % 2:
            kw["draw"] = {"communicate": bool(r % 4 == 1)}
        if fam == "docofl":
            kw["draw"] = {"leads": {c.cid: r % 2 for c in cl}}
        if fam == "efl":
            kw["draw"] = {"steps": {c.cid: (r + j) % 4 for j, c in enumerate(cl)}}
        out = impl(x, cl, state=s, rng=rng, **kw)
        x, s = out if isinstance(out, tuple) else (out, None)
        x = np.asarray(x, float)
        assert x.shape == (4,) and np.all(np.isfinite(x))


def main() -> int:
    t0 = time.perf_counter()
    counts = Counter()
    for fam in FAMILIES:
        mod = importlib.import_module(f"benchmarks.heldout.batch4.{fam}")
        crash = set(getattr(mod, "CRASH_IS_THE_BUG", ()))
        print(fam)
        for name, impl, hyper in mod.CORRECT:
            counts["correct"] += 1
            h = {k: v for k, v in hyper.items() if k != "rtol"}
            tol = max(TOL.get(fam, 1e-10), 10 * hyper.get("rtol", 0))
            w = SCENARIO[fam](impl, h)
            check(f"{name}: matches the reference", w <= tol, f"(worst {w:.1e}, tol {tol:.0e})")
            if fam in OWN and uses_own(fam, h):
                f, thr = OWN[fam]
                dev, det = f(impl, h)
                check(f"{name}: own randomness has the paper's law", dev <= thr, det)
            if fam == "ofediq":
                for f, thr in OWN_OFEDIQ:
                    dev, det = f(impl, h)
                    check(f"{name}: own randomness has the paper's law", dev <= thr, det)
            smoke(fam, impl, h)
        for name, impl, hyper in mod.WRONG:
            counts["wrong"] += 1
            h = {k: v for k, v in hyper.items() if k != "rtol"}
            try:
                smoke(fam, impl, h)
                crashed = None
            except Exception as exc:  # noqa: BLE001
                crashed = exc
            check(f"{name}: runs on valid input" + (" (crash is the bug)" if name in crash else ""),
                  (crashed is None) != (name in crash), "" if crashed is None else repr(crashed)[:120])
            sp = special_wrong(fam, name, impl, h)
            if name in crash:
                sp = (crashed is not None, f"raises {type(crashed).__name__} on client ids that are not positions")
            if sp is None:
                w = SCENARIO[fam](impl, h)
                differs, det = w > 1e-6, f"(scenario worst {w:.1e})"
                if not differs and fam in OWN and uses_own(fam, h):
                    f, thr = OWN[fam]
                    dev, det2 = f(impl, h)
                    differs, det = dev > thr, det2
                if not differs and fam == "ofediq":
                    for f, thr in OWN_OFEDIQ:
                        dev, det2 = f(impl, h)
                        if dev > thr:
                            differs, det = True, det2
                            break
            else:
                differs, det = sp
            check(f"{name}: differs from the paper where its docstring says", differs, det)
    print(f"\n{counts['correct']} correct, {counts['wrong']} wrong; {len(FAIL)} failures; "
          f"{time.perf_counter() - t0:.1f} s")
    for f in FAIL:
        print("  FAILED:", f)
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())

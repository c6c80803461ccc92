"""Self-check of batch 2's correct implementations, independent of the conformance kit.

Each correct implementation is compared with a straightforward reference written here (plain loops over
clients and local steps, from the papers' update equations) on tiny instances: 3 clients with non-contiguous,
unsorted ids (10, 13, 11), unequal sizes, d = 3, several rounds with partial participation where the family
allows it. Run: python -m pytest -q -p no:xdist benchmarks/heldout/batch2/selfcheck.py
"""
from __future__ import annotations

import numpy as np
import pytest

from . import (
    dane,
    docofl,
    efl,
    fedavg,
    feddyn,
    fedelasticnet_fedavg,
    fedelasticnet_feddyn,
    fedelasticnet_scaffold,
    fedprox,
    fedred,
    ofediq,
    scaffnew,
    scaffold,
)


class C:
    """A client as the contract describes it: f(x) = 1/(2m) ||Z x - y||^2."""
    def __init__(self, cid, Z, y):
        self.cid, self.features, self.targets, self.num_examples = cid, Z, y, len(y)

    def grad(self, x):
        return self.features.T @ (self.features @ x - self.targets) / self.num_examples

    def value(self, x):
        r = self.features @ x - self.targets
        return r @ r / (2 * self.num_examples)


def make(seed=0, d=3, ids=(10, 13, 11), sizes=(3, 5, 4)):
    r = np.random.default_rng(seed)
    return [C(i, r.normal(size=(m, d)), r.normal(size=m)) for i, m in zip(ids, sizes)], r.normal(size=d)


def close(a, b, rtol=1e-10):
    assert np.allclose(a, b, rtol=rtol, atol=rtol * (1 + np.max(np.abs(b)))), (a, b)


def ref_fedavg(x, cl, K, eta, eg, weighting, prox=0.0):
    a = [c.num_examples if weighting == "num_examples" else 1 for c in cl]
    out = np.zeros_like(x)
    for ai, c in zip(a, cl):
        w = x.copy()
        for _ in range(K):
            w = w - eta * (c.grad(w) + prox * (w - x))
        out += ai / sum(a) * (w - x)
    return x + eg * out


@pytest.mark.parametrize("weighting", ["num_examples", "uniform"])
def test_fedavg_f32(weighting):
    cl, x = make()
    close(fedavg.fedavg_f32_loop(x, cl, local_steps=4, local_step=0.07, server_step=1.3, weighting=weighting),
          ref_fedavg(x, cl, 4, 0.07, 1.3, weighting), rtol=1e-4)


def test_fedprox():
    cl, x = make()
    close(fedprox.fedprox_k_steps_inplace(x.copy(), cl, local_steps=4, local_step=0.07, prox=0.8, server_step=1.3),
          ref_fedavg(x, cl, 4, 0.07, 1.3, "num_examples", prox=0.8))
    # gamma-inexact: each client alone returns a w with ||grad h(w)|| <= gamma ||grad f(x)||; together the a-average
    ws = []
    for c in cl:
        w = x + (fedprox.fedprox_gd_until_gamma(x, [c], prox=0.8, server_step=1.3, gamma=0.25) - x) / 1.3
        assert np.linalg.norm(c.grad(w) + 0.8 * (w - x)) <= 0.25 * np.linalg.norm(c.grad(x))
        assert np.linalg.norm(w - x) > 0
        ws.append(w)
    a = np.array([c.num_examples for c in cl], float); a /= a.sum()
    close(fedprox.fedprox_gd_until_gamma(x, cl, prox=0.8, server_step=1.3, gamma=0.25),
          x + 1.3 * sum(ai * (w - x) for ai, w in zip(a, ws)))


PARTS = [[0, 2], [1], [0, 1, 2], [2], [1, 0]]   # client 13 joins in round 2


def test_scaffold():
    cl, x0 = make()
    K, eta, eg, N = 3, 0.08, 1.4, 3
    for impl, option in ((scaffold.scaffold_opaque_option_I, "I"), (scaffold.scaffold_dict_inplace, "II")):
        x, st, xr, c, ci = x0.copy(), None, x0.copy(), np.zeros(3), {}
        for part in PARTS:
            S = [cl[j] for j in part]
            x, st = impl(x, S, state=st, local_steps=K, local_step=eta, server_step=eg, num_clients=N, option=option)
            dx, dc = np.zeros(3), np.zeros(3)
            for cc in S:
                old = ci.get(cc.cid, np.zeros(3)); y = xr.copy()
                for _ in range(K):
                    y = y - eta * (cc.grad(y) - old + c)
                new = cc.grad(xr) if option == "I" else old - c + (xr - y) / (K * eta)
                ci[cc.cid] = new; dx += (y - xr) / len(S); dc += (new - old) / N
            xr, c = xr + eg * dx, c + dc
            close(x, xr)


def test_feddyn():
    cl, x0 = make()
    alpha, N = 0.7, 3
    x, st, xr, h, g = x0.copy(), None, x0.copy(), np.zeros(3), {}
    for part in PARTS:
        S = [cl[j] for j in part]
        x, st = feddyn.feddyn_opaque_object(x, S, state=st, alpha=alpha, num_clients=N)
        th = []
        for cc in S:
            gi = g.get(cc.cid, np.zeros(3))
            # argmin f - <g, .> + alpha/2 ||. - x||^2 by many GD steps (not a linear solve)
            t = xr.copy()
            for _ in range(20000):
                t = t - 0.05 * (cc.grad(t) - gi + alpha * (t - xr))
            g[cc.cid] = gi - alpha * (t - xr); h = h - alpha / N * (t - xr); th.append(t)
        xr = np.mean(th, 0) - h / alpha
        close(x, xr, 1e-9)


def test_scaffnew():
    cl, x0 = make()
    gam, p = 0.1, 0.3
    x, st, xr, hh = x0.copy(), None, x0.copy(), {c.cid: np.zeros(3) for c in cl}
    for K in (2, 1, 4, 3):
        x, st = scaffnew.scaffnew_opaque_tuple(x, cl, state=st, step=gam, p=p, local_steps=K)
        ys = []
        for cc in cl:
            y = xr.copy()
            for _ in range(K):
                y = y - gam * (cc.grad(y) - hh[cc.cid])
            ys.append(y)
        xr = np.mean(ys, 0)
        for cc, y in zip(cl, ys):
            hh[cc.cid] = hh[cc.cid] + p / gam * (xr - y)
        close(x, xr)


def dane_ref_local(c, x, h, lam, K=None, eta=0.1):
    if K is None:   # exact by long GD
        K, eta = 20000, 0.05
    y = x.copy()
    for _ in range(K):
        y = y - eta * (c.grad(y) + h + lam * (y - x))
    return y


def test_dane():
    cl, x = make()
    w = np.full(3, 1 / 3)
    gf = sum(wi * c.grad(x) for wi, c in zip(w, cl))
    want = sum(wi * dane_ref_local(c, x, gf - c.grad(x), 0.9, K=4, eta=0.08) for wi, c in zip(w, cl))
    close(dane.dane_f32_k_steps(x, cl, lam=0.9, local_steps=4, local_step=0.08), want, 1e-4)
    # (B.84), 4 rounds
    xr, st, xi = x.copy(), None, x.copy()
    h = {c.cid: gf - c.grad(x) for c in cl}
    for _ in range(4):
        xi, st = dane.dane_b84_opaque_exact(xi, cl, state=st, lam=0.9, m=0.6)
        loc = {c.cid: dane_ref_local(c, xr, h[c.cid], 0.9) for c in cl}
        xr = np.mean(list(loc.values()), 0)
        h = {k: h[k] + 0.6 * (loc[k] - xr) for k in h}
        close(xi, xr, 1e-9)
    # random selection: with the draw, and its own law (num_examples weights) by frequency
    for c in cl:
        close(dane.dane_random_own_selection(x, cl, lam=0.9, draw={"client": c.cid}),
              dane_ref_local(c, x, gf - c.grad(x), 0.9), 1e-9)
    rng = np.random.default_rng(1)
    outs = [dane.dane_random_own_selection(x, cl, rng=rng, lam=0.9, weighting="num_examples") for _ in range(3000)]
    wts = np.array([3, 5, 4]) / 12
    gfw = sum(wi * c.grad(x) for wi, c in zip(wts, cl))
    locs = [dane_ref_local(c, x, gfw - c.grad(x), 0.9) for c in cl]
    freq = np.array([np.mean([np.allclose(o, l) for o in outs]) for l in locs])
    assert np.all(np.abs(freq - wts) < 5 * np.sqrt(wts * (1 - wts) / 3000)), freq


def fedred_ref(x0, cl, coins, lam, eta, exact, reset, batches=None):
    """Algs. 2-3 from the pseudo-code: returns x~ after each iteration."""
    def gf(x):
        return np.mean([c.grad(x) for c in cl], 0)
    xt = x0.copy(); xi = {c.cid: x0.copy() for c in cl}; h = {c.cid: gf(x0) - c.grad(x0) for c in cl}
    out = []
    for k, th in enumerate(coins):
        new = {}
        for c in cl:
            if exact:
                y = xi[c.cid].copy()
                for _ in range(20000):
                    y = y - 0.05 * (c.grad(y) + h[c.cid] + lam * (y - xt) + (y - xi[c.cid]) / eta)
            else:
                if batches is None:
                    g = c.grad(xi[c.cid])
                else:
                    r = batches[k][c.cid]
                    g = c.features[r].T @ (c.features[r] @ xi[c.cid] - c.targets[r]) / len(r)
                y = (xi[c.cid] + lam * eta * xt - eta * (g + h[c.cid])) / (1 + lam * eta)
            new[c.cid] = y
        xi = new
        if th:
            xt = np.mean(list(xi.values()), 0)
            if reset:
                xi = {c.cid: xt.copy() for c in cl}
            h = {c.cid: gf(xt) - c.grad(xt) for c in cl}
        out.append(xt.copy())
    return out


def test_fedred():
    cl, x0 = make()
    coins = [False, True, False, False, True, True, False, True]
    want = fedred_ref(x0, cl, coins, 0.8, 0.3, exact=True, reset=False)
    x, st = x0.copy(), None
    for th, wx in zip(coins, want):
        x, st = fedred.fedred_dict_exact(x, cl, state=st, lam=0.8, eta=0.3, reset=False, draw={"communicate": th})
        close(x, wx, 1e-9)
    r = np.random.default_rng(3)
    batches = [{c.cid: r.choice(c.num_examples, 2, replace=False) for c in cl} for _ in coins]
    want = fedred_ref(x0, cl, coins, 0.8, 0.3, exact=False, reset=True, batches=batches)
    x, st = x0.copy(), None
    for th, bt, wx in zip(coins, batches, want):
        x, st = fedred.fedred_opaque_sgd(x, cl, state=st, lam=0.8, eta=0.3, batch_size=2,
                                         draw={"communicate": th, "batches": bt})
        close(x, wx)
    # own coin ~ Bernoulli(p)
    rng = np.random.default_rng(5)
    moved = np.mean([not np.allclose(fedred.fedred_dict_exact(x0, cl, rng=rng, p=0.3)[0], x0) for _ in range(2000)])
    assert abs(moved - 0.3) < 5 * np.sqrt(0.21 / 2000)


def cd_elastic(Q, p, l1, sweeps=5000):
    """Coordinate descent (not FISTA) for min 1/2 u'Qu + p'u + l1 |u|_1."""
    u = np.zeros(len(p))
    for _ in range(sweeps):
        for i in range(len(p)):
            z = p[i] + Q[i] @ u - Q[i, i] * u[i]
            u[i] = -np.sign(z) * max(abs(z) - l1, 0) / Q[i, i]
    return u


def test_fedelasticnet_fedavg():
    for l1 in (0.05, 0.4):
        cl, x = make(seed=2)
        want = x.copy()
        a = np.array([c.num_examples for c in cl], float); a /= a.sum()
        for ai, c in zip(a, cl):
            A = c.features.T @ c.features / c.num_examples
            want += 1.2 * ai * cd_elastic(A + 0.5 * np.eye(3), c.grad(x), l1)
        close(fedelasticnet_fedavg.fen1_exact_fista_active_set(x, cl, prox=0.5, l1=l1, server_step=1.2), want, 1e-9)


def test_fedelasticnet_scaffold():
    cl, x0 = make()
    K, eta, eg, l2, l1, N = 4, 0.08, 1.3, 0.3, 0.07, 3
    x, st, xr, c, ci = x0.copy(), None, x0.copy(), np.zeros(3), {}
    for part in PARTS:
        S = [cl[j] for j in part]
        x, st = fedelasticnet_scaffold.fen2_dict_inplace(x, S, state=st, local_steps=K, local_step=eta, prox=l2,
                                                         l1=l1, server_step=eg, num_clients=N)
        dx, dc = np.zeros(3), np.zeros(3)
        for cc in S:
            old = ci.get(cc.cid, np.zeros(3)); th = xr.copy()
            for _ in range(K):
                th = th - eta * (cc.grad(th) - old + c + l2 * (th - xr) + l1 * np.sign(th - xr))
            new = old - c + (xr - th) / (K * eta)
            ci[cc.cid] = new; dx += (th - xr) / len(S); dc += (new - old) / N
        xr, c = xr + eg * dx, c + dc
        close(x, xr)


def test_fedelasticnet_feddyn_kkt():
    cl, x0 = make(seed=4)
    alpha, l1, N = 0.9, 0.15, 3
    x, st, xr, h, g = x0.copy(), None, x0.copy(), np.zeros(3), {}
    for part in PARTS:
        S = [cl[j] for j in part]
        x, st = fedelasticnet_feddyn.fen3_opaque_kkt(x, S, state=st, alpha=alpha, l1=l1, num_clients=N)
        th = []
        for cc in S:
            A = cc.features.T @ cc.features / cc.num_examples
            gk = g.get(cc.cid, np.zeros(3))
            u = cd_elastic(A + alpha * np.eye(3), cc.grad(xr) - gk, l1)
            new = cc.grad(xr + u)
            h = h + (new - gk) / N; g[cc.cid] = new; th.append(xr + u)
        xr = np.mean(th, 0) - h / alpha
        close(x, xr, 1e-9)


def st_ref(T, q):
    k = max(int(len(T) * q), 1)
    order = sorted(range(len(T)), key=lambda i: -abs(T[i]))[:k]
    out = np.zeros(len(T)); mu = sum(abs(T[i]) for i in order) / k
    for i in order:
        out[i] = mu * np.sign(T[i])
    return out


def test_efl():
    cl, x0 = make(d=5, seed=6)
    E, eta, lam, q = 3, 0.05, 0.2, 0.4
    steps = [{10: 3, 13: 1, 11: 2}, {10: 2, 13: 3, 11: 3}, {10: 1, 13: 2, 11: 3}]
    pk = {c.cid: c.num_examples / 12 for c in cl}
    x, st = x0.copy(), None
    wG, RG, Rk, U, V = x0.copy(), np.zeros(5), {c.cid: np.zeros(5) for c in cl}, np.zeros(5), np.zeros(5)
    for sd in steps:
        x, st = efl.efl_dict_state(x, cl, state=st, E=E, step=eta, lam=lam, q=q, draw={"steps": sd})
        agg, Un, Vn = np.zeros(5), np.zeros(5), np.zeros(5)
        for c in cl:
            w = wG.copy()
            A = c.features.T @ c.features / c.num_examples
            for _ in range(sd[c.cid]):
                w = w - eta * (c.grad(w) + lam * (U * w - V))
            D = Rk[c.cid] + w - wG; Cc = st_ref(D, q); Rk[c.cid] = D - Cc
            agg += E * pk[c.cid] / sd[c.cid] * Cc
            Un += np.diag(A); Vn += np.diag(A) * w
        DG = RG + agg; b = st_ref(DG, q); RG = DG - b; wG = wG + b; U, V = Un, Vn
        close(x, wG)
    # an inactive client does nothing
    x1, _ = efl.efl_dict_state(x0, cl, E=E, step=eta, lam=lam, q=None, draw={"steps": {10: 0, 13: 3, 11: 3}})
    close(x1, x0 + sum(E * pk[c.cid] / 3 * (w - x0) for c in cl[1:] for w in [_gd(c, x0, 3, eta)]))


def _gd(c, x, K, eta):
    for _ in range(K):
        x = x - eta * c.grad(x)
    return x


def test_docofl():
    cl, x0 = make(d=4, seed=7)
    K, V, eta = 2, 3, 0.1
    gr = {"anchor": 0.0537, "correction": 0.00913, "gradient": 0.00731}
    def C(v, s):
        return s * np.round(v / s)
    r = np.random.default_rng(8)
    hist, x, st = [x0.copy()], x0.copy(), None
    for t in range(12):
        part = [cl[j] for j in sorted(r.choice(3, 2, replace=False))]
        leads = {c.cid: int(r.integers(0, K * (V - 1) + 1)) for c in part}
        x, st = docofl.docofl_deque(x, part, state=st, step=eta, period=K, queue_size=V, grid=gr,
                                    draw={"leads": leads})
        w = hist[-1]; tot = np.zeros(4)
        for c in part:
            a = K * (max(t - leads[c.cid], 0) // K)
            y = C(hist[a], gr["anchor"])
            tot += C(c.grad(y + C(w - y, gr["correction"])), gr["gradient"])
        hist.append(w - eta / len(part) * tot)
        close(x, hist[-1])


def test_ofediq():
    cl, x0 = make(d=4, seed=9)
    eta, L, p, s, K = 0.05, 3, 0.4, 3, 3
    r = np.random.default_rng(10)

    def Qref(u, s, b, U):
        out = np.zeros(len(u))
        for blk in np.array_split(np.arange(len(u)), b):
            n = np.sqrt(sum(u[i] ** 2 for i in blk))
            for i in blk:
                if n > 0:
                    rr = abs(u[i]) / n; m = min(int(np.floor(s * rr)), s - 1)
                    out[i] = n * np.sign(u[i]) * ((m + 1) if U[i] < s * rr - m else m) / s
        return out

    for impl, b in ((ofediq.ofediq_dict_loop, 1), (ofediq.ofediq_opaque_vectorised, 2)):
        x, st, w, th = x0.copy(), None, x0.copy(), {}
        for t in range(1, 10):
            draw = {"participate": {c.cid: bool(r.random() < p) for c in cl},
                    "uniforms": {c.cid: list(r.random(4)) for c in cl}}
            x, st = impl(x, cl, state=st, eta=eta, period=L, p=p, s=s, b=b, num_clients=K, draw=draw)
            start = (t - 1) % L == 0
            for c in cl:
                g = w if start else th[c.cid]
                th[c.cid] = g - eta * c.grad(g)
            if t % L == 0:
                w = w - eta / K * sum(Qref(-(th[c.cid] - w) / (eta * p), s, b, draw["uniforms"][c.cid])
                                      for c in cl if draw["participate"][c.cid])
            close(x, w)
    # own coins: a client transmits with probability p (L = 1, no quantizer, two clients)
    rng = np.random.default_rng(11)
    two = cl[:2]; n = 3000; cnt = np.zeros(4)
    g = [-eta / 2 * c.grad(x0) / p for c in two]
    for _ in range(n):
        out, _ = ofediq.ofediq_dict_loop(x0, two, rng=rng, eta=eta, period=1, p=p, s=None, num_clients=2)
        k = [int(np.allclose(out, x0 + a * g[0] + bb * g[1])) for a in (0, 1) for bb in (0, 1)]
        cnt += k
    want = np.array([(1 - p) ** 2, (1 - p) * p, p * (1 - p), p * p])
    assert np.all(np.abs(cnt / n - want) < 5 * np.sqrt(want * (1 - want) / n)), cnt / n


ALL_WRONG_MODULES = (dane, docofl, efl, fedavg, feddyn, fedelasticnet_fedavg, fedelasticnet_feddyn,
                     fedelasticnet_scaffold, fedprox, fedred, ofediq, scaffnew, scaffold)


def test_lists_have_the_harness_shape():
    n_c = n_w = 0
    for mod in ALL_WRONG_MODULES:
        for _name, impl, hyper in mod.CORRECT + mod.WRONG:
            assert callable(impl) and isinstance(hyper, dict) and impl.__doc__ or mod.__doc__
        n_c += len(mod.CORRECT); n_w += len(mod.WRONG)
    assert n_c >= 15 and n_w >= 30

"""Self-check of batch 3's correct implementations, independent of the conformance kit: each is compared with a
straightforward reference written here (textbook loops, closed forms, or long ISTA runs) on tiny instances.

    python -m benchmarks.heldout.batch3.selfcheck      (or pytest benchmarks/heldout/batch3/selfcheck.py)
"""
from __future__ import annotations

import numpy as np

from . import dane, docofl, efl, fedavg, feddyn, fedprox, fedred, ofediq, scaffnew, scaffold
from . import fedelasticnet_fedavg as en1
from . import fedelasticnet_feddyn as en3
from . import fedelasticnet_scaffold as en2


class C:
    """A client as the contract describes it: f(x) = 1/(2m) ||Z x - y||^2."""

    def __init__(self, cid, Z, y):
        self.cid, self.features, self.targets, self.num_examples = cid, Z, y, len(y)

    def grad(self, x):
        return self.features.T @ (self.features @ x - self.targets) / self.num_examples

    def value(self, x):
        return 0.5 * np.mean((self.features @ x - self.targets) ** 2)


def clients(n=3, d=3, seed=0, ids=(17, 4, 30, 11)):
    r = np.random.default_rng(seed)
    out = []
    for i in range(n):
        m = d + 1 + i
        out.append(C(ids[i], r.normal(size=(m, d)) / np.sqrt(2), r.normal(size=m)))
    return out


def A_b(c):
    return c.features.T @ c.features / c.num_examples, c.features.T @ c.targets / c.num_examples


def ista(Q, p, lam1, iters=200000):
    """Reference elastic-net solve: plain ISTA, many iterations (tiny problems, linear convergence)."""
    L = np.linalg.eigvalsh(Q)[-1]; u = np.zeros(len(p))
    for _ in range(iters):
        z = u - (Q @ u + p) / L
        u = np.sign(z) * np.maximum(np.abs(z) - lam1 / L, 0)
    return u


def close(a, b, tol=1e-10):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.linalg.norm(a - b) <= tol * max(1.0, np.linalg.norm(b)), (a, b)


RNG = lambda: np.random.default_rng(5)  # noqa: E731


def ref_fedavg(x, cl, K=5, eta=0.1, eg=1.0, prox=0.0, uniform=False):
    m = np.array([c.num_examples for c in cl], float)
    a = np.full(len(cl), 1 / len(cl)) if uniform else m / m.sum()
    out = x.copy()
    for ai, c in zip(a, cl):
        y = x.copy()
        for _ in range(K):
            y = y - eta * (c.grad(y) + prox * (y - x))
        out = out + eg * ai * (y - x)
    return out


def test_fedavg():
    cl = clients(); x = np.array([0.3, -1.0, 2.0])
    close(fedavg.fedavg_float32(x, cl, rng=RNG(), server_step=0.7), ref_fedavg(x, cl, eg=0.7), 1e-5)
    close(fedavg.fedavg_by_id(x, cl[::-1], server_step=1.3), ref_fedavg(x, cl, eg=1.3))
    close(fedavg.fedavg_by_id(x, cl, weighting="uniform"), ref_fedavg(x, cl, uniform=True))


def test_fedprox_gamma():
    cl = clients(); x = np.array([0.3, -1.0, 2.0]); gam, lam = 0.2, 1.0
    for c in cl:  # each client alone: gamma-inexact (Li et al., Definition 2)
        w = fedprox.fedprox_cg(x, [c], prox=lam, gamma=gam)
        assert np.linalg.norm(c.grad(w) + lam * (w - x)) <= gam * np.linalg.norm(c.grad(x))
    ws = [fedprox.fedprox_cg(x, [c], prox=lam, gamma=gam) for c in cl]
    m = np.array([c.num_examples for c in cl], float)
    close(fedprox.fedprox_cg(x, cl, prox=lam, gamma=gam, server_step=0.5), x + 0.5 * sum(mi / m.sum() * (w - x) for mi, w in zip(m, ws)))


def ref_scaffold(x0, rounds, K=3, eta=0.1, eg=1.0, N=3, option="II"):
    c = np.zeros_like(x0); ci = {}; x = x0.copy(); out = []
    for S in rounds:
        dx, dc, new = np.zeros_like(x), np.zeros_like(x), {}
        for cl in S:
            cc = ci.get(cl.cid, np.zeros_like(x)); y = x.copy()
            for _ in range(K):
                y = y - eta * (cl.grad(y) - cc + c)
            n = cl.grad(x) if option == "I" else cc - c + (x - y) / (K * eta)
            dx += (y - x) / len(S); dc += (n - cc) / N; new[cl.cid] = n
        ci.update(new); x = x + eg * dx; c = c + dc; out.append(x.copy())
    return out


def run(impl, x0, rounds, **h):
    st, x, out = None, x0.copy(), []
    for S in rounds:
        x, st = impl(x, S, state=st, rng=RNG(), **h)
        out.append(x.copy())
    return out


def test_scaffold():
    cl = clients(); x0 = np.array([1.0, 0.0, -1.0]); R = [[cl[0]], cl[1:], cl, [cl[2], cl[0]]]
    for a, b in zip(run(scaffold.scaffold_dict_inplace, x0, R, local_steps=3, server_step=1.5, num_clients=3),
                    ref_scaffold(x0, R, eg=1.5)):
        close(a, b)
    for a, b in zip(run(scaffold.scaffold_opaque_option1, x0, R, local_steps=3, num_clients=3, option="I"),
                    ref_scaffold(x0, R, option="I")):
        close(a, b)


def test_feddyn():
    cl = clients(); x = np.array([1.0, 0.0, -1.0]); al = 0.7; R = [[cl[0]], cl, [cl[2], cl[1]]]
    h = np.zeros(3); g = {c.cid: np.zeros(3) for c in cl}; refs = []
    for S in R:
        ths = []
        for c in S:  # minimise f_i - <g_i, .> + al/2 ||. - x||^2 by plain GD (reference)
            t = x.copy()
            for _ in range(4000):
                t = t - 0.2 * (c.grad(t) - g[c.cid] + al * (t - x))
            g[c.cid] = g[c.cid] - al * (t - x); ths.append(t)
        h = h - al / 3 * sum(t - x for t in ths); x = np.mean(ths, axis=0) - h / al; refs.append(x.copy())
    for a, b in zip(run(feddyn.feddyn_opaque, np.array([1.0, 0.0, -1.0]), R, alpha=al, num_clients=3), refs):
        close(a, b, 1e-9)


def ref_scaffnew(x0, cl, Ks, gam, p):
    """ProxSkip iteration by iteration: x^ = x - gam (grad - h); on the K-th, average and h += p/gam (x - x^)."""
    h = {c.cid: np.zeros_like(x0) for c in cl}; x = x0.copy(); out = []
    for K in Ks:
        xs = {c.cid: x.copy() for c in cl}
        for _k in range(1, K + 1):
            hat = {c.cid: xs[c.cid] - gam * (c.grad(xs[c.cid]) - h[c.cid]) for c in cl}
            xs = hat
        x = np.mean([hat[c.cid] for c in cl], axis=0)
        for c in cl:
            h[c.cid] = h[c.cid] + p / gam * (x - hat[c.cid])
        out.append(x.copy())
    return out


def test_scaffnew():
    cl = clients(); x0 = np.array([1.0, 0.0, -1.0]); Ks = [3, 1, 4, 2]
    for impl in (scaffnew.scaffnew_dict_own_coin, scaffnew.scaffnew_opaque):
        st, x = None, x0.copy()
        for K, want in zip(Ks, ref_scaffnew(x0, cl, Ks, 0.3, 0.4)):
            x, st = impl(x, cl, state=st, rng=RNG(), step=0.3, p=0.4, local_steps=K)
            close(x, want)
    # own coins: P(K = 1) = p, read off one client in one dimension (K = 1 gives x - gam f'(x) exactly)
    c = C(1, np.array([[1.0]]), np.array([0.0])); r = np.random.default_rng(0); ones = 0
    for _ in range(3000):
        xn, _ = scaffnew.scaffnew_dict_own_coin(np.array([1.0]), [c], rng=r, step=0.3, p=0.3)
        ones += abs(xn[0] - 0.7) < 1e-12
    assert abs(ones / 3000 - 0.3) < 5 * np.sqrt(0.21 / 3000), ones


def test_dane():
    cl = clients(); x = np.array([1.0, 0.0, -1.0]); lam = 0.8
    # exact CV (1) standard average = x - [1/n sum (A_i + lam)^{-1}] grad f(x) (DANE on quadratics)
    P = np.mean([np.linalg.inv(A_b(c)[0] + lam * np.eye(3)) for c in cl], axis=0)
    gf = np.mean([c.grad(x) for c in cl], axis=0)
    close(dane.dane_own_random(x, cl, lam=lam, averaging="standard", weighting="uniform"), x - P @ gf)
    # random averaging with a draw: that client's exact local model
    m = np.array([c.num_examples for c in cl], float); w = m / m.sum()
    gw = sum(wi * c.grad(x) for wi, c in zip(w, cl))
    A1, b1 = A_b(cl[1])
    close(dane.dane_own_random(x, cl, draw={"client": cl[1].cid}, lam=lam),
          np.linalg.solve(A1 + lam * np.eye(3), b1 - (gw - cl[1].grad(x)) + lam * x))
    # its own selection follows w
    r = np.random.default_rng(1); hits = 0
    for _ in range(3000):
        hits += np.allclose(dane.dane_own_random(x, cl, rng=r, lam=lam), dane.dane_own_random(x, cl, draw={"client": cl[2].cid}, lam=lam))
    assert abs(hits / 3000 - w[2]) < 5 * np.sqrt(w[2] * (1 - w[2]) / 3000)
    # (B.84) with K steps against a loop
    h = {c.cid: gf - c.grad(x) for c in cl}; xr = x.copy(); st = None; xi = x.copy()
    for _ in range(3):
        loc = {}
        for c in cl:
            z = xr.copy()
            for _ in range(4):
                z = z - 0.1 * (c.grad(z) + h[c.cid] + lam * (z - xr))
            loc[c.cid] = z
        xr = np.mean(list(loc.values()), axis=0)
        for c in cl:
            h[c.cid] = h[c.cid] + 0.5 * (loc[c.cid] - xr)
        xi, st = dane.dane_b84_opaque(xi, cl, state=st, lam=lam, local_steps=4, local_step=0.1, m=0.5)
        close(xi, xr)


def test_fedred():
    cl = clients(); x0 = np.array([1.0, 0.0, -1.0]); lam, eta = 0.7, 0.3; coins = [0, 1, 0, 0, 1, 1]
    for solver, reset, impl in (("linearized", True, fedred.fedred_opaque), ("exact", False, fedred.fedred_exact_inplace)):
        xt = x0.copy(); xi = {c.cid: x0.copy() for c in cl}
        gf = np.mean([c.grad(xt) for c in cl], axis=0); h = {c.cid: gf - c.grad(xt) for c in cl}
        st, x = None, x0.copy()
        for th in coins:
            for c in cl:
                if solver == "exact":  # minimise F_i by long GD (reference)
                    z = xi[c.cid].copy()
                    for _ in range(3000):
                        z = z - 0.2 * (c.grad(z) + h[c.cid] + lam * (z - xt) + (z - xi[c.cid]) / eta)
                    xi[c.cid] = z
                else:
                    xi[c.cid] = (xi[c.cid] + lam * eta * xt - eta * (c.grad(xi[c.cid]) + h[c.cid])) / (1 + lam * eta)
            if th:
                xt = np.mean(list(xi.values()), axis=0)
                gf = np.mean([c.grad(xt) for c in cl], axis=0); h = {c.cid: gf - c.grad(xt) for c in cl}
                if reset:
                    xi = {k: xt.copy() for k in xi}
            x, st = impl(x, cl, state=st, rng=RNG(), draw={"communicate": bool(th)}, lam=lam, eta=eta, solver=solver,
                         reset=reset)
            close(x, xt, 1e-9)


def test_elasticnet():
    cl = clients(); x = np.array([0.2, -0.1, 0.4]); lam2, lam1 = 0.5, 0.3
    m = np.array([c.num_examples for c in cl], float)
    want = x + sum(mi / m.sum() * ista(A_b(c)[0] + lam2 * np.eye(3), A_b(c)[0] @ x - A_b(c)[1], lam1) for mi, c in zip(m, cl))
    close(en1.en_exact_fista(x, cl, prox=lam2, l1=lam1), want, 1e-9)
    # K sub-gradient steps
    ref = x.copy()
    for mi, c in zip(m, cl):
        z = x.copy()
        for _ in range(4):
            g = c.grad(z) + lam2 * (z - x) + lam1 * np.sign(z - x)
            z = z - 0.1 * g
        ref += mi / m.sum() * (z - x)
    close(en1.en_subgradient_steps(x, cl, local_steps=4, prox=lam2, l1=lam1), ref)
    # Alg. 2 over rounds with late joiners
    R = [[cl[0]], cl, [cl[2], cl[1]]]
    c0 = np.zeros(3); ci = {}; xr = x.copy(); st = None; xs = x.copy()
    for S in R:
        dx, dc = np.zeros(3), np.zeros(3)
        for c in S:
            ck = ci.get(c.cid, np.zeros(3)); z = xr.copy()
            for _ in range(3):
                z = z - 0.1 * (c.grad(z) - ck + c0 + 0.2 * (z - xr) + lam1 * np.sign(z - xr))
            n = ck - c0 + (xr - z) / 0.3; dc += (n - ck) / 3; dx += (z - xr) / len(S); ci[c.cid] = n
        xr = xr + 1.2 * dx; c0 = c0 + dc
        xs, st = en2.ens_dict_inplace(xs, S, state=st, local_steps=3, local_step=0.1, prox=0.2, l1=lam1,
                                      server_step=1.2, num_clients=3)
        close(xs, xr, 1e-9)
    # Alg. 3 (printed and KKT) over rounds, the local solve by ISTA
    for reading, impl in (("printed", en3.end_printed_dict), ("kkt", en3.end_kkt_opaque)):
        h = np.zeros(3); g = {}; xr = x.copy(); st = None; xs = x.copy(); al = 0.9
        for S in R:
            ths = []
            for c in S:
                A, b = A_b(c); gk = g.get(c.cid, np.zeros(3))
                th = xr + ista(A + al * np.eye(3), A @ xr - b - gk, lam1)
                gn = c.grad(th) if reading == "kkt" else gk - al * (th - xr) - lam1 * np.sign(np.round(th - xr, 12))
                h = h + (gn - gk) / 3; g[c.cid] = gn; ths.append(th)
            xr = np.mean(ths, axis=0) - h / al
            xs, st = impl(xs, S, state=st, alpha=al, l1=lam1, sign_at_zero=reading, num_clients=3)
            close(xs, xr, 1e-8)


def ST(T, q):
    k = max(int(np.floor(len(T) * q)), 1); idx = np.argsort(-np.abs(T))[:k]
    out = np.zeros_like(T); out[idx] = np.mean(np.abs(T[idx])) * np.sign(T[idx]); return out


def test_efl():
    cl = clients(3, 4); x0 = np.array([1.0, -0.5, 0.2, 0.9]); E, eta, q = 3, 0.1, 0.5
    steps = [{17: 3, 4: 1, 30: 2}, {17: 0, 4: 2, 30: 3}, {17: 2, 4: 0, 30: 0}, {17: 1, 4: 3, 30: 2}]
    m = np.array([c.num_examples for c in cl], float); p = dict(zip([c.cid for c in cl], m / m.sum()))
    for qq, impl in ((q, efl.efl_dict), (None, efl.efl_opaque_uncompressed)):
        comp = (lambda T: ST(T, qq)) if qq else (lambda T: T.copy())
        x = x0.copy(); RG = np.zeros(4); Rk = {}; st = None; xs = x0.copy()
        for sd in steps:
            agg = RG.copy()
            for c in cl:
                s = sd[c.cid]
                if s:
                    w = x.copy()
                    for _ in range(s):
                        w = w - eta * c.grad(w)
                    D = Rk.get(c.cid, 0) + w - x; sent = comp(D); Rk[c.cid] = D - sent
                    agg = agg + E * p[c.cid] / s * sent
            b = comp(agg); RG = agg - b; x = x + b
            xs, st = impl(xs, cl, state=st, draw={"steps": sd}, E=E, step=eta, lam=0.0, q=qq)
            close(xs, x)


def test_docofl():
    cl = clients(3, 3); x0 = np.array([0.7, -0.3, 1.1]); K, V = 2, 2
    g = {"anchor": 0.0537, "correction": 0.00913, "gradient": 0.00731}
    rnd = lambda v, s: s * np.round(v / s)  # noqa: E731
    leads = [{17: 0, 4: 2, 30: 1}] * 3 + [{17: 1, 4: 0, 30: 2}] * 6
    for impl in (docofl.docofl_deque, docofl.docofl_dict_queue):
        x = x0.copy(); anchors = {}; st = None; xs = x0.copy()
        for t, L in enumerate(leads):
            if t % K == 0:
                anchors[t] = rnd(x, g["anchor"])
            gs = []
            for c in cl:
                a = K * (max(t - L[c.cid], 0) // K)
                assert a in anchors and a > t - K * V  # still in the queue of V
                y = anchors[a]; gs.append(rnd(c.grad(y + rnd(x - y, g["correction"])), g["gradient"]))
            x = x - 0.1 * np.mean(gs, axis=0)
            xs, st = impl(xs, cl, state=st, draw={"leads": L}, step=0.1, period=K, queue_size=V, grid=g)
            close(xs, x)


def test_ofediq():
    cl = clients(2, 3); x0 = np.array([0.5, -0.2, 0.1]); eta, L, p, s = 0.05, 2, 0.5, 4
    r = np.random.default_rng(3); x = x0.copy(); theta = {}; st = None; xs = x0.copy(); start = x0.copy()
    for t in range(1, 7):
        for c in cl:
            gk = x if (t - 1) % L == 0 else theta[c.cid]
            theta[c.cid] = gk - eta * c.grad(gk)
        part = {c.cid: bool(r.random() < 0.6) for c in cl}; uni = {c.cid: r.random(3) for c in cl}
        if t % L == 0:
            tot = np.zeros(3)
            for c in cl:
                if part[c.cid]:
                    u = -(theta[c.cid] - start) / (eta * p); nr = np.linalg.norm(u); q = np.zeros(3)
                    for i in range(3):
                        ri = abs(u[i]) / nr; mi = min(np.floor(s * ri), s - 1)
                        q[i] = nr * np.sign(u[i]) * ((mi + 1) if uni[c.cid][i] < s * ri - mi else mi) / s
                    tot += q
            x = start - eta / 2 * tot; start = x.copy()
        xs, st = ofediq.ofediq_tuple(xs, cl, state=st, draw={"participate": part, "uniforms": uni}, eta=eta,
                                     period=L, p=p, s=s, b=1, num_clients=2)
        close(xs, x)
    # FedOGD special case: L = 1, p = 1, no quantization: w - eta/K sum grad
    close(ofediq.ofediq_tuple(x0, cl, rng=RNG(), period=1, p=1.0, s=None, num_clients=2)[0],
          x0 - 0.05 / 2 * sum(c.grad(x0) for c in cl))


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn(); print("ok", name)

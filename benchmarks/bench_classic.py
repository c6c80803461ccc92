"""Per-round time of the vectorised FedAvg, SCAFFOLD and FedDyn against a per-client loop of the same update.

Run: ``python benchmarks/bench_classic.py [--quick] [--repeats R]``.

For each shape (n clients, dimension d, K local steps) we build one dense heterogeneous quadratic, run one
round of the library's algorithm (full participation, deterministic local GD / exact FedDyn solves) and one
round of a straightforward per-client Python loop that implements the same update with the same numerical
method (per-client ``A_i @ y - b_i`` gradients; FedDyn's exact solve through the same cached per-client
eigendecomposition, so only the loop structure differs). Both are timed side by side in this process (best
of ``--repeats`` rounds after a warm-up, the two implementations alternating so that both see the same
load on a shared machine), their results are checked to agree to 1e-10, and the table prints
milliseconds per round and the speed-up loop / vectorised.

FedAvg is also timed against a second reference, a stacked matmul over all clients per local step (no Python
loop, no cache blocking, no bookkeeping: the least a vectorised round can cost without blocking), and its
``ratio`` column is vectorised / best of the two references: the price of the library's round (validation,
the RoundLog, the state) over the bare arithmetic; the goal is <= 1.2 at every shape. The last line is
machine-readable: ``CLASSIC fedavg_ratio <n>x<d>=... ...`` (one entry per shape).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from fedtheory.algorithms import FedAvg, FedDyn, Scaffold
from fedtheory.problems.quadratic import quadratic

SHAPES = [(100, 100, 10), (1000, 20, 10), (10, 500, 10)]
QUICK_SHAPES = [(50, 30, 5), (300, 10, 5), (5, 200, 5)]


# ----- straightforward per-client loops (the reference implementations) -----

def loop_fedavg(problem, x, K, eta):
    deltas = np.empty((problem.n_clients, problem.dim))
    for i in range(problem.n_clients):
        A_i, b_i = problem.A[i], problem.b[i]
        y = x.copy()
        for _ in range(K):
            y = y - eta * (A_i @ y - b_i)
        deltas[i] = y - x
    return x + problem.weights @ deltas


def stacked_fedavg(problem, x, K, eta):
    """The same round with one stacked matmul per local step over all clients (the (n, d, d) Hessians)."""
    A, b = problem.A, problem.b
    Y = np.tile(x, (problem.n_clients, 1))
    for _ in range(K):
        Y = Y - eta * (np.matmul(A, Y[:, :, None])[:, :, 0] - b)
    return x + problem.weights @ (Y - x)


def loop_scaffold(problem, x, c, C, K, eta):
    n = problem.n_clients
    dy = np.empty((n, problem.dim))
    C_new = np.empty_like(C)
    for i in range(n):
        A_i, b_i = problem.A[i], problem.b[i]
        y = x.copy()
        for _ in range(K):
            y = y - eta * (A_i @ y - b_i - C[i] + c)
        C_new[i] = C[i] - c + (x - y) / (K * eta)
        dy[i] = y - x
    w = problem.weights
    return x + w @ dy, c + w @ (C_new - C), C_new


def loop_feddyn(problem, x, h, G, alpha, evals, evecs):
    n = problem.n_clients
    theta = np.empty((n, problem.dim))
    G_new = np.empty_like(G)
    for i in range(n):
        rhs = problem.b[i] + G[i] + alpha * x
        V = evecs[i]
        theta[i] = V @ ((V.T @ rhs) / (evals[i] + alpha))
        G_new[i] = G[i] - alpha * (theta[i] - x)
    w = problem.weights
    h_new = h + w @ (G_new - G)
    return w @ theta - h_new / alpha, h_new, G_new


def paired_times(*functions, repeats: int) -> list[float]:
    """Best-of-``repeats`` time of each function, measured in turn so all see the same machine load."""
    for f in functions:  # warm-up (caches, BLAS threads)
        f()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for f, t in zip(functions, times):
            start = time.perf_counter()
            f()
            t.append(time.perf_counter() - start)
    return [min(t) for t in times]


def bench_shape(n: int, d: int, K: int, repeats: int) -> list[dict]:
    problem = quadratic(n, d, mu=0.1, L=1.0, delta_B=0.3, zeta2=1.0, seed=0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(d)
    eta = 0.5 / problem.certificate.L
    rows = []

    # FedAvg
    fedavg = FedAvg(local_steps=K, local_step=eta)
    st = fedavg.init(problem, x)
    draw = fedavg.draw(problem, st, rng)
    vec = fedavg.round_given(problem, st, draw)[0].x
    ref = loop_fedavg(problem, x, K, eta)
    assert np.allclose(vec, ref, rtol=1e-10, atol=1e-10), "FedAvg loop and vectorised rounds disagree"
    assert np.allclose(vec, stacked_fedavg(problem, x, K, eta), rtol=1e-10, atol=1e-10), "stacked reference"
    tv, tl, ts = paired_times(lambda: fedavg.round_given(problem, st, draw), lambda: loop_fedavg(problem, x, K, eta),
                              lambda: stacked_fedavg(problem, x, K, eta), repeats=repeats)
    rows.append(dict(algorithm="fedavg", n=n, d=d, K=K, vectorised=tv, loop=tl, stacked=ts))

    # SCAFFOLD (option II) from a non-trivial state
    scaffold = Scaffold(local_steps=K, local_step=eta)
    st = scaffold.init(problem, x)
    st = scaffold.round_given(problem, st, draw)[0]
    new = scaffold.round_given(problem, st, draw)[0]
    xr, cr, Cr = loop_scaffold(problem, st.x, st.c, st.C, K, eta)
    assert np.allclose(new.x, xr, rtol=1e-10, atol=1e-10) and np.allclose(new.C, Cr, rtol=1e-10, atol=1e-10)
    tv, tl = paired_times(lambda: scaffold.round_given(problem, st, draw),
                          lambda: loop_scaffold(problem, st.x, st.c, st.C, K, eta), repeats=repeats)
    rows.append(dict(algorithm="scaffold", n=n, d=d, K=K, vectorised=tv, loop=tl))

    # FedDyn (exact local solves through the cached eigendecomposition in both implementations)
    feddyn = FedDyn(alpha=1.0)
    st = feddyn.init(problem, x)
    st = feddyn.round_given(problem, st, draw)[0]
    evals, evecs = problem._eig  # computed once, shared by both implementations
    new = feddyn.round_given(problem, st, draw)[0]
    xr, hr, Gr = loop_feddyn(problem, st.x, st.h, st.G, 1.0, evals, evecs)
    assert np.allclose(new.x, xr, rtol=1e-9, atol=1e-9) and np.allclose(new.G, Gr, rtol=1e-9, atol=1e-9)
    tv, tl = paired_times(lambda: feddyn.round_given(problem, st, draw),
                          lambda: loop_feddyn(problem, st.x, st.h, st.G, 1.0, evals, evecs), repeats=repeats)
    rows.append(dict(algorithm="feddyn", n=n, d=d, K=K, vectorised=tv, loop=tl))
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, few repeats (smoke test)")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    repeats = args.repeats or (3 if args.quick else 15)
    rows = []
    print(f"{'algorithm':10s} {'n':>5s} {'d':>4s} {'K':>3s} {'vectorised ms':>14s} {'loop ms':>10s} {'speed-up':>9s} "
          f"{'stacked ms':>11s} {'ratio':>6s}")
    ratios = []
    for n, d, K in shapes:
        for row in bench_shape(n, d, K, repeats):
            row["speedup"] = row["loop"] / row["vectorised"]
            stacked = ""
            if "stacked" in row:  # vectorised / the best reference
                row["ratio"] = row["vectorised"] / min(row["loop"], row["stacked"])
                ratios.append(f"{n}x{d}={row['ratio']:.3f}")
                stacked = f" {1e3 * row['stacked']:11.3f} {row['ratio']:6.2f}"
            rows.append(row)
            print(f"{row['algorithm']:10s} {n:5d} {d:4d} {K:3d} {1e3 * row['vectorised']:14.3f} "
                  f"{1e3 * row['loop']:10.3f} {row['speedup']:8.1f}x{stacked}")
    print("CLASSIC fedavg_ratio " + " ".join(ratios))
    return rows


if __name__ == "__main__":
    main()

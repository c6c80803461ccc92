"""Batched oracles vs a per-client Python loop of the same maths, measured side by side in one run.

    python benchmarks/bench_oracles.py            # full
    python benchmarks/bench_oracles.py --quick    # fewer repeats, smaller generation check

Prints, for (n, d) in (100, 100), (1000, 20), (10, 500):
  * quadratic grads      A_i x_i - b_i
  * quadratic solve_local (A_i + lam I)^{-1}(b_i - lin_i + lam c_i) through the cached eigendecomposition
  * logistic grads        -(1/m) Z_i^T sigma(-Z_i x_i) + reg x_i   (m = 20 samples per client)
  * logistic solve_local  damped Newton (the loop calls the same solver one client at a time)
the kernel sweep behind fedtheory.linalg.PER_CLIENT_BLAS_MIN_DIM, and the time and peak memory of
generating dense quadratics with d = 50 and n up to 10,000 (target: < 10 s, memory linear in n).
Targets (issue 2): >= 10x at n=1000, d=20; never slower than the loop.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from fedtheory import linalg
from fedtheory.problems import LogisticProblem, quadratic

SHAPES = [(100, 100), (1000, 20), (10, 500)]


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up (caches, BLAS threads)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def row(name: str, n: int, d: int, t_batch: float, t_loop: float) -> None:
    print(f"{name:<24} n={n:<5} d={d:<4} batched {t_batch * 1e3:9.3f} ms   loop {t_loop * 1e3:9.3f} ms   "
          f"speed-up {t_loop / t_batch:7.1f}x")


def bench_quadratic(n: int, d: int, repeats: int) -> None:
    p = quadratic(n, d, mu=0.1, L=10.0, delta_B=1.0, zeta2=1.0, seed=0)
    rng = np.random.default_rng(0)
    X, lin, center = rng.standard_normal((3, n, d))
    A, b = p.A, p.b
    row("quadratic grads", n, d, best_time(lambda: p.grads(X), repeats),
        best_time(lambda: [A[i] @ X[i] - b[i] for i in range(n)], repeats))
    evals, evecs = p._eig  # cached once for both sides
    lam = 0.5

    def loop_solve():
        out = np.empty((n, d))
        for i in range(n):
            r = b[i] - lin[i] + lam * center[i]
            out[i] = evecs[i] @ ((evecs[i].T @ r) / (evals[i] + lam))
        return out

    np.testing.assert_allclose(p.solve_local(lin, center, lam), loop_solve(), rtol=1e-9, atol=1e-12)
    row("quadratic solve_local", n, d, best_time(lambda: p.solve_local(lin, center, lam), repeats),
        best_time(loop_solve, repeats))


def bench_logistic(n: int, d: int, repeats: int, m: int = 20) -> None:
    rng = np.random.default_rng(1)
    feats = [rng.standard_normal((m, d)) / np.sqrt(d) for _ in range(n)]
    labels = [np.where(rng.random(m) < 0.5, -1.0, 1.0) for _ in range(n)]
    p = LogisticProblem(feats, labels, reg=0.1)
    Zs = [a * y[:, None] for a, y in zip(feats, labels)]
    X, lin, center = rng.standard_normal((3, n, d))

    def loop_grads():
        return [-(Z.T @ (1.0 / (1.0 + np.exp(Z @ x)))) / m + 0.1 * x for Z, x in zip(Zs, X)]

    np.testing.assert_allclose(p.grads(X), np.array(loop_grads()), rtol=1e-10, atol=1e-13)
    row("logistic grads", n, d, best_time(lambda: p.grads(X), repeats), best_time(loop_grads, repeats))
    lam = 1.0
    reps = max(1, repeats // 3)

    def loop_solve():
        return [p.solve_local(lin[i:i + 1], center[i:i + 1], lam, clients=np.array([i])) for i in range(n)]

    row("logistic solve_local", n, d, best_time(lambda: p.solve_local(lin, center, lam), reps),
        best_time(loop_solve, reps))


def kernel_sweep(repeats: int) -> None:
    """Stacked matmul vs one BLAS gemv per client for Y[i] = A[i] @ X[i] (sets PER_CLIENT_BLAS_MIN_DIM)."""
    print(f"\nkernel sweep for batched_matvec (current PER_CLIENT_BLAS_MIN_DIM = {linalg.PER_CLIENT_BLAS_MIN_DIM})")
    rng = np.random.default_rng(2)
    for n, d in [(1000, 20), (200, 64), (100, 100), (50, 128), (30, 200), (10, 500)]:
        A = rng.standard_normal((n, d, d))
        X = rng.standard_normal((n, d))
        t_stack = best_time(lambda: np.matmul(A, X[..., None])[..., 0], repeats)

        def per_client():
            out = np.empty((n, d))
            for i in range(n):
                np.dot(A[i], X[i], out=out[i])
            return out

        t_loop = best_time(per_client, repeats)
        print(f"  n={n:<5} d={d:<4} stacked matmul {t_stack * 1e3:8.3f} ms   per-client BLAS {t_loop * 1e3:8.3f} ms   "
              f"-> {'per-client' if t_loop < t_stack else 'stacked'}")


def bench_generation(sizes: list[int]) -> None:
    print("\ngeneration of dense quadratics, d = 50, delta_A = 1, zeta2 = 1 (target: n = 10,000 in < 10 s)")
    for n in sizes:
        tracemalloc.start()
        t = time.perf_counter()
        p = quadratic(n, 50, mu=0.1, L=10.0, delta_A=1.0, zeta2=1.0, seed=0)
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        data = p.A.nbytes
        print(f"  n={n:<6} {elapsed:6.2f} s   peak {peak / 2**20:8.1f} MiB = {peak / data:4.1f} x the Hessians "
              f"({data / 2**20:.1f} MiB)   delta_A error {abs(p.certificate.delta_A - 1.0):.1e}")
        del p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller generation check")
    args = parser.parse_args()
    repeats = 3 if args.quick else 10
    print(f"PER_CLIENT_BLAS_MIN_DIM = {linalg.PER_CLIENT_BLAS_MIN_DIM}; best of {repeats} runs\n")
    for n, d in SHAPES:
        bench_quadratic(n, d, repeats)
        bench_logistic(n, d, repeats)
    kernel_sweep(repeats)
    bench_generation([1000, 2500] if args.quick else [2500, 5000, 10_000])


if __name__ == "__main__":
    main()

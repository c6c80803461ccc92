"""Cross-device scale: generating 10^6 clients, and rounds that cost what participates.

Run: ``python benchmarks/bench_scale.py [--quick] [--n N] [--d D] [--S S] [--K K] [--rounds R]``.

1. Generation: :func:`fedtheory.problems.structured_quadratic` (Hessians sharing one random eigenbasis,
   ``quadratic(..., hessians="eigenbasis")``) with n clients in dimension d, timed with its exact certificate.
2. Rounds: FedAvg and SCAFFOLD (option II) with ``UniformSubset(S)`` participation and K local GD steps, the
   library's ``round`` (sampling, local steps, aggregation, SCAFFOLD's control-variate update in its persistent
   client table) against a stacked-matmul reference written here that touches only the S sampled clients:
   gather their (s_i, c_i) rows once, K steps of ``Y -= eta ((Y Q * s_S - c_S) Q^T (+ c - C_S))``, average, and
   for SCAFFOLD scatter the S new control variates into a plain mutable (n, d) array in place. Both start from the
   same state and the same generator; their new server models are checked to agree to 1e-12 before timing.
   Times are the median over ``--rounds`` rounds after one warm-up round.
3. Peak resident memory of the process (``getrusage``), which includes the problem and both algorithms' state.

The last line is machine-readable:
``SCALE n=... d=... generate_s=... round_ms=... ratio_vs_reference=... peak_rss_gb=...``
with round_ms and ratio_vs_reference the larger of the FedAvg and SCAFFOLD values (docs/problems.md,
"Cross-device scale", reports the measured numbers). ``--quick`` (CI) runs n = 10^5, d = 50, S = 100.
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from fedtheory.algorithms import FedAvg, Scaffold
from fedtheory.participation import UniformSubset
from fedtheory.problems import structured_quadratic


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30  # ru_maxrss is in KiB on Linux


def reference_fedavg(problem, x, S, K, eta):
    """K local GD steps of the S participants, stacked, then the weighted mean of their models."""
    s_S, c_S = problem.s[S], problem.c[S]
    Q = problem.Q
    Y = np.tile(x, (S.size, 1))
    for _ in range(K):
        Z = Y @ Q if Q is not None else Y.copy()
        Z *= s_S
        Z -= c_S
        Y -= eta * (Z @ Q.T if Q is not None else Z)
    w = problem.weights[S]
    return x + (w / w.sum()) @ (Y - x)


def reference_scaffold(problem, x, c, C, S, K, eta):
    """SCAFFOLD option II on the S participants; C (n, d) is updated in place (rows S only)."""
    s_S, c_S, C_S = problem.s[S], problem.c[S], C[S]
    Q = problem.Q
    lin = c - C_S
    Y = np.tile(x, (S.size, 1))
    for _ in range(K):
        Z = Y @ Q if Q is not None else Y.copy()
        Z *= s_S
        Z -= c_S
        G = Z @ Q.T if Q is not None else Z
        G += lin
        Y -= eta * G
    C_new = C_S - c + (x - Y) / (K * eta)
    w = problem.weights[S]
    x_new = x + (w / w.sum()) @ (Y - x)
    c_new = c + w @ (C_new - C_S)
    C[S] = C_new
    return x_new, c_new


def median_ms(times):
    return 1e3 * float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI size: n=1e5, d=50, S=100")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--d", type=int, default=None)
    ap.add_argument("--S", type=int, default=None)
    ap.add_argument("--K", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--basis", choices=("random", "identity"), default="random")
    args = ap.parse_args()
    n = args.n or (10**5 if args.quick else 10**6)
    d = args.d or (50 if args.quick else 100)
    S = args.S or (100 if args.quick else 1000)
    K, R = args.K, args.rounds

    t0 = time.perf_counter()
    problem = structured_quadratic(n, d, mu=0.1, L=1.0, delta_A=0.2, zeta2=1.0, basis=args.basis, seed=0)
    generate_s = time.perf_counter() - t0
    cert = problem.certificate
    print(f"generate: n={n} d={d} basis={args.basis}: {generate_s:.2f} s, arrays {problem.nbytes / 2**30:.2f} GiB; "
          f"certificate mu={cert.mu:.6g} L={cert.L:.6g} delta_A={cert.delta_A:.6g} delta_B={cert.delta_B:.6g} "
          f"zeta2={cert.zeta2:.6g}")

    eta = 0.5 / cert.L
    part = UniformSubset(S)
    results = {}
    for name, alg in (("fedavg", FedAvg(local_steps=K, local_step=eta, participation=part)),
                      ("scaffold", Scaffold(local_steps=K, local_step=eta, participation=part))):
        state = alg.init(problem, np.zeros(d))
        rng = np.random.default_rng(1)
        state, _ = alg.round(problem, state, rng)  # warm-up (and a non-trivial SCAFFOLD state)
        ref_C = state.C.to_array() if name == "scaffold" else None  # the reference's own mutable (n, d) state
        ours, ref = [], []
        for _ in range(R):
            # the library's round
            seed = int(rng.integers(2**32))
            t = time.perf_counter()
            new, _ = alg.round(problem, state, np.random.default_rng(seed))
            ours.append(time.perf_counter() - t)
            # the reference: same draw (the subset is the first thing drawn from the same generator)
            t = time.perf_counter()
            idx = part.draw(n, np.random.default_rng(seed))
            if name == "fedavg":
                x_ref = reference_fedavg(problem, state.x, idx, K, eta)
            else:
                x_ref, c_ref = reference_scaffold(problem, state.x, state.c, ref_C, idx, K, eta)
            ref.append(time.perf_counter() - t)
            err = float(np.max(np.abs(new.x - x_ref)))
            if name == "scaffold":  # the participants' new control variates and c agree with the reference too
                err = max(err, float(np.max(np.abs(new.C.rows(idx) - ref_C[idx]))),
                          float(np.max(np.abs(new.c - c_ref))))
            if err > 1e-12 * max(1.0, float(np.max(np.abs(x_ref)))):
                raise SystemExit(f"{name}: library round and reference disagree by {err:.3g}")
            state = new
        if name == "scaffold":
            # c = sum_i w_i c_i, an exact invariant of SCAFFOLD's update (one O(n d) pass, outside the timing)
            inv = float(np.max(np.abs(state.c - problem.weights @ state.C.peek())))
            print(f"scaffold: |c - sum_i w_i c_i| = {inv:.2e} after {R + 1} rounds")
            del ref_C
        results[name] = (median_ms(ours), median_ms(ref))
        print(f"round {name}: S={S} K={K}: library {results[name][0]:.2f} ms, reference {results[name][1]:.2f} ms, "
              f"ratio {results[name][0] / results[name][1]:.2f}")
    round_ms = max(v[0] for v in results.values())
    ratio = max(v[0] / v[1] for v in results.values())
    print(f"SCALE n={n} d={d} generate_s={generate_s:.2f} round_ms={round_ms:.2f} ratio_vs_reference={ratio:.2f} "
          f"peak_rss_gb={peak_rss_gb():.2f}")


if __name__ == "__main__":
    main()

"""Round time of the torch backend: vmap over clients versus a per-client loop of the same torch code.

Run: ``python benchmarks/bench_torch.py [--quick] [--repeats R] [--threads T]``.

Problem: scikit-learn digits split iid over 100 clients (about 14 samples each), the 2-layer MLP 64-64-10
(4 810 parameters), cross-entropy, float64 on CPU. One round of FedAvg with K = 10 local steps, timed side by
side in this process (best of ``--repeats`` after a warm-up) on two TorchProblems that differ only in
``vectorize``:

* vmap: ``torch.func.vmap(torch.func.grad(client_loss))`` over the stacked (100, P) client parameters, one call
  per local step;
* loop: ``torch.func.grad(client_loss)`` called once per client per local step on that client's unpadded data.

Both local SGD (minibatches of 8, drawn identically) and local full-batch GD are timed; the two backends'
round results are checked to agree to 1e-10 before timing. The table prints milliseconds per round and the
speed-up loop / vmap (issue 11 target: >= 5x on CPU).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from fedtheory.algorithms import FedAvg
from fedtheory.torch import TorchProblem, digits_federated, mlp


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up (vmap tracing, allocator)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and local steps (smoke run)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--hidden", type=int, default=64)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    repeats = args.repeats or (2 if args.quick else 5)
    K = 3 if args.quick else 10

    data, _ = digits_federated(args.clients, partition="iid", seed=0)
    model = mlp(64, 10, hidden=args.hidden)
    fast = TorchProblem(model, data, batch_size=8)
    slow = TorchProblem(model, data, batch_size=8, vectorize=False)
    x0 = fast.initial_point()
    print(f"{args.clients} clients, {model.name}, P = {model.n_params}, K = {K} local steps, "
          f"torch threads = {args.threads}, best of {repeats}")
    print(f"{'local solver':<22}{'vmap ms/round':>15}{'loop ms/round':>15}{'speed-up':>10}")
    for label, stochastic in (("local SGD (batch 8)", True), ("local GD (full batch)", False)):
        alg = FedAvg(local_steps=K, local_step=0.1, stochastic=stochastic)

        def one_round(problem):
            state = alg.init(problem, x0)
            return alg.round(problem, state, np.random.default_rng(0))[0].x

        a, b = one_round(fast), one_round(slow)
        dev = float(np.max(np.abs(a - b)))
        if dev > 1e-10:
            raise SystemExit(f"vmap and loop disagree by {dev:.3g} > 1e-10")
        t_fast = best_time(lambda: one_round(fast), repeats)
        t_slow = best_time(lambda: one_round(slow), repeats)
        print(f"{label:<22}{1e3 * t_fast:>15.1f}{1e3 * t_slow:>15.1f}{t_slow / t_fast:>9.1f}x")


if __name__ == "__main__":
    main()

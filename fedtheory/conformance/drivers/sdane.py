"""The FedRed/DANE+ authors' code (Jiang, Rodomanov & Stich 2024; mlolab/S-DANE, ``src/optimizers/fedred.py``,
class ``FedRed``) through the conformance contract. docs/conformance.md, "The FedRed/DANE+ authors' code
(mlolab/S-DANE)", has the commands and the verdicts. fedtheory does not ship that code: the driver imports it
from a checkout whose path is ``SDANE_PATH`` (or from a module passed in), and CI runs the translation layer
on a stand-in only (tests/conformance/test_sdane_driver.py).

    SDANE_PATH=/path/to/S-DANE fedtheory conform fedtheory.conformance.drivers.sdane:dane_plus --as dane \\
        --hyper local_steps=5

Each call builds the authors' optimizer for one communication round and calls its own ``step()``; nothing
of their algorithm is re-implemented here. The translation layer (the only code of ours in the loop):

* Data. The kit's f_i(x) = 1/(2 m_i) ||Z_i x - y_i||^2 with weights w_i. The authors' code takes a dataset of
  ``{"images", "labels"}`` rows, a user-supplied loss (here 1/2 mean squared residual of a float64
  ``Linear(d, 1, bias=False)``), and uses as grad f_i the client's mean gradient times n m_i / M (M = sum m_j)
  and plain means over clients (docs/fedred.md, "fedtheory vs the authors' code", row "client weights").
  With ``weighting="uniform"`` the driver scales client i's rows by sqrt(M / (n m_i)), which makes their
  grad f_i the kit's exactly; with ``weighting="num_examples"`` it passes the rows unscaled, the code's own
  convention (same global f, different local f_i: a design difference the kit is expected to report).
* Steps. Their local step is semi-implicit, z+ = (z/lr + lam x - (grad f_i(z) - c_i))/(1/lr + lam), i.e. a GD
  step of size lr/(1 + lam lr) on F_i. The kit's ``local_step`` eta is that explicit step, so the driver
  passes lr = eta / (1 - lam eta) (defined for lam eta < 1; ``ValueError`` otherwise). FedRed-GD (Alg. 3)
  *is* their step with lr = eta, so ``eta`` passes unchanged.
* Randomness. Their module draws from the global ``np.random`` (client order, the Geometric(p) local-step
  count through ``np.random.binomial(1, p)`` after each step, the randomized-averaging index through
  ``np.random.randint``) and shuffles the full batch with torch's global generator. During a call the
  module's ``np`` is replaced by a proxy whose ``random`` is a ``RandomState`` seeded from the kit's rng, and
  which returns the kit's draws where the kit supplies them (``draw={"client": cid}``, the FedRed coins).

Configurations (each a zero-argument factory for ``fedtheory conform``, or called with ``module=``):
``dane_plus`` (control variate 1 or 2 = (B.84), lambda, K fixed steps, last iterate), ``fedprox``
(control variate 0), ``fedred_gd`` (``no_prob=False``, one kit iteration per call, see its docstring).
The authors' "Scaffold" is ``dane_plus`` with lam = 0 (control variate 1 recomputed at x^r before the local
steps): it is checked as ``dane`` with lam = 0, its own reading, not as SCAFFOLD.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from ..tolerances import EXACT_REL

__all__ = ["load_authors", "dane_plus", "fedprox", "fedred_gd", "semi_implicit_lr"]

ENV = "SDANE_PATH"


def load_authors(path: str | None = None) -> types.ModuleType:
    """Import ``src/optimizers/fedred.py`` of an S-DANE checkout (``path`` or ``$SDANE_PATH``) as a module."""
    root = path or os.environ.get(ENV)
    if not root:
        raise RuntimeError(f"set {ENV} to a checkout of github.com/mlolab/S-DANE (fedtheory does not ship it)")
    file = os.path.join(root, "src", "optimizers", "fedred.py")
    spec = importlib.util.spec_from_file_location("sdane_fedred", file)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"no module at {file}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sdane_fedred", mod)
    spec.loader.exec_module(mod)
    return mod


def semi_implicit_lr(eta: float, lam: float) -> float:
    """lr with lr / (1 + lam lr) = eta: the authors' semi-implicit step equal to an explicit GD step eta on F_i."""
    if not 0.0 < eta * lam < 1.0 and lam != 0.0:
        raise ValueError(f"an explicit step eta = {eta} with lam = {lam} is not a semi-implicit step (needs lam eta < 1)")
    return eta / (1.0 - lam * eta)


class _Rows(torch.utils.data.Dataset):
    """The authors' dataset interface: item j -> {"images": row, "labels": target}."""

    def __init__(self, Z: np.ndarray, y: np.ndarray):
        self.Z, self.y = torch.tensor(Z), torch.tensor(y)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, j):
        return {"images": self.Z[j], "labels": self.y[j]}


def _half_mse(model, images, labels, sigma2=None, backwards=True):
    """1/2 mean squared residual: per client, f_i(x) = 1/(2 m) ||Z x - y||^2 (sigma2 = 0: no regulariser)."""
    loss = 0.5 * torch.mean((model(images).view(-1) - labels.view(-1)) ** 2)
    if backwards and loss.requires_grad:
        loss.backward()
    return loss


class _Random:
    """``np.random`` for the authors' module: a seeded RandomState, with the kit's draws where supplied."""

    def __init__(self, seed: int, coins: Sequence[int] | None = None, index: int | None = None):
        self._rs = np.random.RandomState(seed)
        self._coins = None if coins is None else list(coins)
        self._index = index
        self.binomial_p: list[float] = []   # the p their coin was drawn with (checked against the kit's)
        self.local_steps: int | None = None

    def binomial(self, n, p, *a, **k):
        self.binomial_p.append(float(p))
        if self._coins is not None:
            if not self._coins:
                raise RuntimeError("the authors' code flipped more coins than the kit supplied")
            return self._coins.pop(0)
        return self._rs.binomial(n, p, *a, **k)

    def randint(self, low, high=None, *a, **k):
        if self._index is not None:
            return self._index
        return self._rs.randint(low, high, *a, **k)

    def __getattr__(self, name):
        return getattr(self._rs, name)


class _Numpy(types.ModuleType):
    """The module-level ``np`` seen by the authors' code during one call: numpy with ``random`` replaced."""

    def __init__(self, random: _Random):
        super().__init__("numpy")
        self.random = random

    def __getattr__(self, name):
        return getattr(np, name)


def _data(clients: Sequence[Any], weighting: str):
    """Stacked rows, idx_users (user j = the j-th listed client), scaled so their grad f_i is the kit's."""
    n = len(clients)
    M = float(sum(c.num_examples for c in clients))
    Z, y, idx, start = [], [], {}, 0
    for j, c in enumerate(clients):
        s = np.sqrt(M / (n * c.num_examples)) if weighting == "uniform" else 1.0
        Z.append(s * np.asarray(c.features, dtype=np.float64))
        y.append(s * np.asarray(c.targets, dtype=np.float64).reshape(-1))
        idx[j] = list(range(start, start + c.num_examples))
        start += c.num_examples
    return _Rows(np.vstack(Z), np.concatenate(y)), idx


def _step(module, x, clients, rng, *, weighting, control_variate, lam, lr, local_steps, outer_lr=1.0,
          averaging="standard", no_prob=True, p=0.25, m=None, random: _Random | None = None,
          c_i: Mapping[int, np.ndarray] | None = None, read_cv: bool = False):
    """One call of the authors' ``FedRed.step()`` from x; returns (x+, their c_i after the round or None)."""
    if weighting not in ("uniform", "num_examples"):
        raise ValueError(f"weighting {weighting!r}")
    d = x.size
    train, idx = _data(clients, weighting)
    model = torch.nn.Linear(d, 1, bias=False).double()
    with torch.no_grad():
        model.weight[:] = torch.tensor(x)[None, :]
    seed = int(rng.integers(2**31))
    random = random or _Random(seed)
    torch.manual_seed(seed)
    opt = module.FedRed(model.parameters(), train_set=train, idx_users=idx, model_base=model,
                        loss_function=_half_mse, sigma2=0, lr=lr, step_size_rule="constant", outer_lr=outer_lr,
                        lambda_reguriz=lam, nb_local_steps=int(local_steps), activate_stopping_criterion=False,
                        control_variate=control_variate, averaging=averaging, no_prob=no_prob, p=p, m=m,
                        batch_size_local_solver="full", batch_size_control_variate="full",
                        nb_clients_sampled="full")
    if c_i is not None:  # (B.84) from a given state: their c_i = -h_i, last iterates at x (so their m-term is 0)
        opt.state["control_variate"] = {j: [torch.tensor(np.asarray(c_i[c.cid], dtype=np.float64))[None, :]]
                                         for j, c in enumerate(clients)}
        opt.state["iterates_list"] = {j: [torch.tensor(x)[None, :]] for j in range(len(clients))}
    saved = module.np
    module.np = _Numpy(random)
    try:
        opt.step()
        cv = None
        if read_cv:  # their (B.84) update runs at the start of the next round: call their own method for it
            opt._update_control_variate(list(range(len(clients))), opt.state["iterates_list"])
            cv = {c.cid: opt.state["control_variate"][j][0].detach().numpy().reshape(-1).copy()
                  for j, c in enumerate(clients)}
    finally:
        module.np = saved
    return model.weight.detach().numpy().reshape(-1).copy(), cv


def _module(module):
    return module if module is not None else load_authors()


def dane_plus(module: types.ModuleType | None = None) -> Callable[..., Any]:
    """Their DANE+ (``control_variate=1``, or 2 = (B.84)), K fixed steps (``activate_stopping_criterion=False``),
    last iterate, as the kit's ``dane`` family. ``local_steps=None`` (exact solves) is not in their code."""
    mod = _module(module)

    def impl(x, clients, *, state=None, rng=None, lam=1.0, local_steps=5, local_step=0.1, control_variate="gradient",
             m=1.0, averaging="standard", weighting="uniform", draw=None, **_):
        if local_steps is None:
            raise ValueError("the authors' code has no exact local solver: pass local_steps=K")
        rng = rng if rng is not None else np.random.default_rng(0)
        cv = {"gradient": 1, "scaffnew": 2}[control_variate]
        index = None
        if averaging == "random" and draw is not None:
            index = [c.cid for c in clients].index(draw["client"])
        c_i = None
        if cv == 2 and state is not None:
            c_i = {cid: -np.asarray(h, dtype=np.float64) for cid, h in state["h_i"].items()}
        random = _Random(int(rng.integers(2**31)), index=index)
        x_new, c_new = _step(mod, x, clients, rng, weighting=weighting, control_variate=cv, lam=lam,
                             lr=semi_implicit_lr(local_step, lam), local_steps=local_steps,
                             averaging={"standard": "standard", "random": "randomized"}[averaging], m=m,
                             random=random, c_i=c_i, read_cv=cv == 2)
        if cv == 2:
            return x_new, {"h_i": {cid: -c for cid, c in c_new.items()}}
        return x_new
    return impl


def fedprox(module: types.ModuleType | None = None) -> Callable[..., Any]:
    """Their FedProx (``control_variate=0``): K semi-implicit steps on f_i + prox/2 ||. - x||^2, server step
    ``outer_lr`` = the kit's ``server_step``; as the kit's ``fedprox`` family."""
    mod = _module(module)

    def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0, prox=1.0,
             weighting="uniform", **_):
        if local_steps is None:
            raise ValueError("the authors' code has no exact local solver: pass local_steps=K")
        rng = rng if rng is not None else np.random.default_rng(0)
        return _step(mod, x, clients, rng, weighting=weighting, control_variate=0, lam=prox,
                     lr=semi_implicit_lr(local_step, prox), local_steps=local_steps, outer_lr=server_step)[0]
    return impl


class Pending(dict):
    """FedRed-GD driver state: the number of kit iterations since the last communication (opaque to the kit:
    their code cannot hold local iterates x_i != x~ or control variates other than (4) at x~)."""


def fedred_gd(module: types.ModuleType | None = None) -> Callable[..., Any]:
    """Their FedRed-GD (``no_prob=False``, ``control_variate=1``, reset to x~) as the kit's ``fedred`` family,
    one kit iteration per call.

    Their ``step()`` is one communication round: K ~ Geometric(p) semi-implicit steps (a coin
    ``np.random.binomial(1, p)`` after each step), then the average. With the reset, the state after a
    communication is determined by x~ (x_i = x~, h_i = (4) at x~), so the driver keeps only the count of
    iterations since the last communication: an iteration with the kit's coin 0 returns x~ unchanged (the
    driver's bookkeeping, not their code), an iteration with coin 1 calls their ``step()`` from x~ with the
    coins 0, ..., 0, 1 supplied to their own Geometric draw, so their K is the kit's count. Without a draw
    (``fedred.coin_frequency``, independent iterations from the start) their own Geometric(p) draw decides:
    the first iteration communicates iff their first coin is 1 (K = 1). A given state with x_i != x~ cannot be
    loaded into their code: the driver then returns an opaque state and the kit reports n.a.
    """
    mod = _module(module)

    def impl(x, clients, *, state=None, rng=None, lam=1.0, eta=0.2, p=0.5, solver="linearized", reset=True,
             batch_size=None, weighting="uniform", draw=None, **_):
        if solver != "linearized" or not reset or batch_size is not None:
            raise ValueError("the authors' FedRed is Alg. 3 (linearized) with the reset and full gradients")
        rng = rng if rng is not None else np.random.default_rng(0)
        pending = _pending(state, x, clients, weighting)
        if pending is None:
            return x.copy(), Pending(unloadable=True)
        kw = dict(weighting=weighting, control_variate=1, lam=lam, lr=eta, local_steps=1, no_prob=False, p=p)
        if draw is None:
            random = _Random(int(rng.integers(2**31)))
            x_new, _ = _step(mod, x, clients, rng, random=random, **kw)
            k = _count(random)
            if pending == 0 and k == 1:
                return x_new, Pending(pending=0)
            return x.copy(), Pending(pending=pending + 1)
        if not draw["communicate"]:
            return x.copy(), Pending(pending=pending + 1)
        random = _Random(int(rng.integers(2**31)), coins=[0] * pending + [1])
        x_new, _ = _step(mod, x, clients, rng, random=random, **kw)
        if any(q != p for q in random.binomial_p):
            raise RuntimeError(f"their coin was drawn with p = {random.binomial_p[0]}, not {p}")
        return x_new, Pending(pending=0)
    return impl


def _count(random: _Random) -> int:
    """Their Geometric draw's value: the number of coins flipped."""
    return len(random.binomial_p)


def _pending(state, x, clients, weighting) -> int | None:
    """Iterations since the last communication; None for a kit state their code cannot start from."""
    if state is None:
        return 0
    if isinstance(state, Pending):
        return None if state.get("unloadable") else int(state["pending"])
    # a kit mapping {"x_i", "h_i"}: loadable only as a post-reset state (x_i = x~, h_i = (4) at x~)
    X = np.stack([np.asarray(state["x_i"][c.cid], dtype=np.float64) for c in clients])
    G = np.stack([c.grad(x) for c in clients])
    H = np.stack([np.asarray(state["h_i"][c.cid], dtype=np.float64) for c in clients])
    w = np.array([c.num_examples for c in clients], dtype=np.float64) if weighting == "num_examples" \
        else np.ones(len(clients))
    scale = 1.0 + float(np.abs(x).max()) + float(np.abs(G).max())
    if np.abs(X - x).max() <= EXACT_REL * scale and np.abs(H - (w @ G / w.sum() - G)).max() <= EXACT_REL * scale:
        return 0
    return None

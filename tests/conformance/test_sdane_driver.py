"""The S-DANE driver's translation layer (fedtheory/conformance/drivers/sdane.py), without the authors'
code: CI has no network and fedtheory does not ship mlolab/S-DANE. The stand-in below has the interface of the
authors' ``FedRed`` optimizer and is re-typed from the facts listed in docs/fedred.md ("fedtheory vs the
authors' code"): semi-implicit local steps z+ = (z/lr + lam x - (grad f_i(z) - c_i))/(1/lr + lam), c_i =
grad f_i - mean_j grad f_j recomputed at x^r (control variate 1), c_i += m (x^{r+1} - x_i) at the start of
the next round (2), grad f_i = n m_i / M times the client's mean gradient, a Geometric(p) step count through
``np.random.binomial(1, p)``, randomized averaging through ``np.random.randint``. The verdicts on the authors'
own code are in docs/conformance.md and are not re-run here.
"""
from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.drivers import sdane as sd  # noqa: E402

_SOURCE = '''
import numpy as np
import torch


def compute_expected_nb_local_steps(p):
    k = 1
    while np.random.binomial(1, p) != 1:
        k += 1
    return k


class FedRed:
    def __init__(self, params, train_set, idx_users, model_base, loss_function, sigma2=0, lr=0.1,
                 step_size_rule="constant", outer_lr=1, lambda_reguriz=1e-5, nb_local_steps=4,
                 activate_stopping_criterion=True, control_variate=1, averaging="standard", no_prob=False,
                 p=0.25, m=None, batch_size_local_solver=32, batch_size_control_variate=32,
                 nb_clients_sampled="full"):
        self.params = list(params)
        self.cfg = dict(lr=lr, outer_lr=outer_lr, lam=lambda_reguriz, K=nb_local_steps, cv=control_variate,
                        averaging=averaging, no_prob=no_prob, p=p, m=p / lr if m is None else m)
        self.data, self.users, self.model, self.loss = train_set, idx_users, model_base, loss_function
        self.state = {"control_variate": {}, "iterates_list": {}}

    def _grad(self, u):
        rows = [self.data[j] for j in self.users[u]]
        Z = torch.stack([r["images"] for r in rows])
        y = torch.stack([r["labels"] for r in rows])
        for q in self.params:
            q.grad = None
        self.loss(self.model, Z, y, sigma2=0, backwards=True)
        M = sum(len(v) for v in self.users.values())
        return self.params[0].grad.detach().clone() * len(self.users) * len(self.users[u]) / M

    def _update_control_variate(self, users, iterates):
        c, st = self.cfg, self.state
        if c["cv"] == 0:
            st["control_variate"] = {u: [torch.zeros_like(self.params[0])] for u in users}
        elif c["cv"] == 1 or not st["control_variate"]:
            G = {u: self._grad(u) for u in users}
            mean = sum(G.values()) / len(G)
            st["control_variate"] = {u: [G[u] - mean] for u in users}
        else:
            x = self.params[0].detach()
            st["control_variate"] = {u: [st["control_variate"][u][0] + c["m"] * (x - iterates[u][0])]
                                     for u in users}

    def step(self):
        c = self.cfg
        x = self.params[0].detach().clone()
        K = c["K"] if c["no_prob"] else compute_expected_nb_local_steps(c["p"])
        users = [int(u) for u in np.random.permutation(len(self.users))]
        self._update_control_variate(users, self.state["iterates_list"])
        for u in users:
            self.params[0].data = x.clone()
            for _ in range(K):
                z = self.params[0].detach().clone()
                g, h = self._grad(u), self.state["control_variate"][u][0]
                self.params[0].data = (z / c["lr"] + c["lam"] * x - (g - h)) / (1 / c["lr"] + c["lam"])
            self.state["iterates_list"][u] = [self.params[0].detach().clone()]
        its = self.state["iterates_list"]
        if c["averaging"] == "standard":
            avg = sum(v[0] for v in its.values()) / len(its)
            self.params[0].data = x + c["outer_lr"] * (avg - x)
        else:
            self.params[0].data = its[np.random.randint(0, len(its))][0].clone()
'''

_SLIPS = {
    "sign": ("- (g - h))", "- (g + h))"),                                    # control variate subtracted twice
    "extra_step": ("compute_expected_nb_local_steps(c[\"p\"])", "compute_expected_nb_local_steps(c[\"p\"]) + 1"),
}


def _standin(slip: str | None = None) -> types.ModuleType:
    src = _SOURCE
    if slip is not None:
        old, new = _SLIPS[slip]
        assert old in src
        src = src.replace(old, new)
    mod = types.ModuleType(f"sdane_standin_{slip}")
    exec(compile(src, mod.__name__, "exec"), mod.__dict__)  # noqa: S102 -- our own stand-in source above
    return mod


DANE = dict(local_steps=3, local_step=0.1, lam=1.0, max_examples=6)


def test_semi_implicit_lr_is_the_explicit_step():
    for eta, lam in [(0.1, 1.0), (0.05, 10.0), (0.3, 0.0)]:
        lr = sd.semi_implicit_lr(eta, lam)
        assert lr / (1 + lam * lr) == pytest.approx(eta, rel=1e-15)
    with pytest.raises(ValueError):
        sd.semi_implicit_lr(0.5, 2.0)


def test_load_authors_needs_a_checkout(monkeypatch):
    monkeypatch.delenv(sd.ENV, raising=False)
    with pytest.raises(RuntimeError, match="SDANE_PATH"):
        sd.load_authors()


def test_standin_dane_plus_passes_as_dane():
    report = conformance.check(sd.dane_plus(_standin()), "dane", **DANE)
    assert report.passed, report.table()
    assert {r.prop.id for r in report.results if r.status == "holds"} >= {"dane.one_round", "dane.multi_round"}


def test_standin_b84_and_random_selection_pass():
    report = conformance.check(sd.dane_plus(_standin()), "dane", control_variate="scaffnew", m=1.0, **DANE)
    assert report.passed, report.table()
    report = conformance.check(sd.dane_plus(_standin()), "dane", averaging="random", **DANE)
    assert report.passed, report.table()


def test_slipped_standin_is_rejected_as_dane():
    report = conformance.check(sd.dane_plus(_standin("sign")), "dane", properties=["dane.one_round"], **DANE)
    assert not report.passed
    assert "wrong sign" in report.failures[0].diagnosis


def test_standin_fedprox_passes_uniform_and_differs_by_design_under_num_examples():
    hyper = dict(local_steps=3, local_step=0.1, prox=1.0, max_examples=6, properties=["fedprox.one_round"])
    assert conformance.check(sd.fedprox(_standin()), "fedprox", weighting="uniform", **hyper).passed
    # the code's own convention (plain mean over clients of n m_i / M f_i) is not FedProx under n_k / n weights
    assert not conformance.check(sd.fedprox(_standin()), "fedprox", weighting="num_examples", **hyper).passed


def test_standin_fedred_gd_follows_the_kits_coins_and_a_slip_is_rejected():
    props = ["fedred.fixed_point", "fedred.multi_round", "fedred.local_iteration"]
    report = conformance.check(sd.fedred_gd(_standin()), "fedred", properties=props, max_examples=6)
    assert report.passed, report.table()
    status = {r.prop.id: r.status for r in report.results}
    assert status["fedred.local_iteration"] == "not applicable"     # their code cannot start from x_i != x~
    assert status["fedred.multi_round"] == "holds"
    bad = conformance.check(sd.fedred_gd(_standin("extra_step")), "fedred", properties=["fedred.multi_round"],
                            max_examples=6)
    assert not bad.passed

"""DANE+ with control variate (B.84) from any start App. B.3 allows (Jiang, Rodomanov & Stich 2024: sum_i w_i h_i0
= 0, zeros included) is accepted, readable or opaque; a start whose control variates do not sum to zero is
rejected, and the diagnosis says so."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the conformance kit needs the test extra (hypothesis)")

from fedtheory import conformance  # noqa: E402
from fedtheory.conformance.families.dane.expected import dane_locals  # noqa: E402
from fedtheory.conformance.families.dane.start import fit_start, round_operators  # noqa: E402
from fedtheory.conformance.instance import make_instance  # noqa: E402
from fedtheory.conformance.statekit import opaque  # noqa: E402

B84 = {"control_variate": "scaffnew", "m": 0.7}


def _make(start):
    """DANE+ (B.84) with exact local solves, written here from Alg. 1 and App. B.3, started from ``start(d, n)``."""
    def impl(x, clients, *, state=None, lam=1.0, m=1.0, weighting="uniform", **_):
        w = np.array([c.num_examples if weighting == "num_examples" else 1.0 for c in clients])
        w = w / w.sum()
        H = start(len(x), len(clients)) if state is None else np.stack([state["h_i"][c.cid] for c in clients])
        Y = []
        for c, h in zip(clients, H):
            A = c.features.T @ c.features / c.num_examples
            b = c.features.T @ c.targets / c.num_examples
            Y.append(np.linalg.solve(A + lam * np.eye(len(x)), b - h + lam * x))
        Y = np.stack(Y)
        x_new = w @ Y
        return x_new, {"h_i": {c.cid: H[i] + m * (Y[i] - x_new) for i, c in enumerate(clients)}}
    return impl


zeros = _make(lambda d, n: np.zeros((n, d)))
ones = _make(lambda d, n: np.ones((n, d)))  # sum_i w_i h_i0 = (1, ..., 1): not allowed


@pytest.mark.parametrize("impl", [zeros, opaque(zeros)], ids=["readable", "opaque"])
def test_a_zero_start_is_accepted(impl):
    report = conformance.check(impl, "dane", properties=["dane.multi_round"], **B84)
    assert report.verdict == "pass", report.table()


@pytest.mark.parametrize("impl", [ones, opaque(ones)], ids=["readable", "opaque"])
def test_a_start_with_a_nonzero_sum_is_rejected(impl):
    report = conformance.check(impl, "dane", properties=["dane.multi_round"], shrink=False, **B84)
    assert report.verdict == "fail", report.table()
    assert "every start App. B.3 allows" in report.failures[0].diagnosis


def test_the_nonzero_sum_is_named_when_the_rounds_are_b84s_otherwise():
    report = conformance.check(opaque(ones), "dane", properties=["dane.multi_round"], shrink=False, **B84)
    assert "which App. B.3 does not allow" in report.failures[0].diagnosis


def test_fit_start_recovers_an_allowed_start_from_the_recursion():
    """The fitted start reproduces the models of the closed-form recursion (dane_locals, not the fit's matrices)
    from a random start with sum_i w_i h_i0 = 0, from the models alone (an opaque state)."""
    inst = make_instance({"n": 3, "d": 2, "mu": 0.5, "L": 4.0, "delta_frac": 0.5, "zeta2": 1.0, "sizes": [2, 3, 5],
                          "weighting": "num_examples", "seed": 1})
    H0 = np.random.default_rng(0).standard_normal((inst.n, inst.d))
    H0 -= inst.weights @ H0
    x, H, models = inst.x0, H0, []
    for _ in range(inst.n + 2):
        X, _ = dane_locals(inst, x, H, lam=1.0, local_steps=None, local_step=0.1)
        x = inst.weights @ X
        H = H + 0.7 * (X - x)
        models.append(x)
    ops = round_operators(inst, lam=1.0, local_steps=None, local_step=0.1)
    fitted = fit_start(inst, *ops, 0.7, [inst.weights] * len(models), models, [None] * len(models))
    np.testing.assert_allclose(fitted, H0, atol=1e-8)

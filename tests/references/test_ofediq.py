"""The FedOGD / OFedAvg / OFedIQ reference (fedtheory/references/ofediq.py) accepts the implementation on every
option (period, sampling rates, inverse-probability weights, (s, b)-quantizer, online and static streams) and
rejects plausible slips of it (each a patched copy of fedtheory/algorithms/ofediq.py or of the quantizer)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import fedtheory.algorithms.ofediq as ofediq_module
import fedtheory.compressors.sb_quantizer as sb_module
from fedtheory.algorithms.ofediq import FedOGD, OFedAvg, OFedIQ
from fedtheory.problems import quadratic
from fedtheory.problems.online import online_logistic, online_ridge
from fedtheory.references import certify_run

ROUNDS = 9


def first_mismatch(alg, problem, rounds: int = ROUNDS, seed: int = 0):
    """The first round of ``rounds`` (from the algorithm's own state) that differs from its reference, or None."""
    return certify_run(alg, problem, np.linspace(-0.3, 0.5, problem.dim), rounds, seed)[1]


PROBLEMS = {"static_quadratic": lambda: quadratic(6, 5, mu=0.5, L=4.0, zeta2=1.0, seed=1),
            "online_ridge": lambda: online_ridge(6, 30, 5, heterogeneity=1.0, drift=0.5, seed=2),
            "online_logistic": lambda: online_logistic(6, 30, 5, heterogeneity=0.5, seed=3)}
ALGS = {"fedogd": lambda: FedOGD(), "fedogd_eta": lambda: FedOGD(eta=0.02),
        "ofedavg": lambda: OFedAvg(p=0.5), "ofedavg_per_client_p": lambda: OFedAvg(p=(0.2, 0.5, 0.9, 1.0, 0.3, 0.7)),
        "ofediq_default": lambda: OFedIQ(), "ofediq_example": OFedIQ.example,
        "ofediq_period3_blocks": lambda: OFedIQ(p=0.5, period=3, s=2, b=2),
        "ofediq_period2_full_p": lambda: OFedIQ(eta=0.02, period=2, s=5),
        "ofediq_uneven_blocks": lambda: OFedIQ(p=(0.3, 0.6, 1.0, 0.8, 0.5, 0.4), period=1, s=1, b=3),
        "omd_no_quantizer": lambda: OFedIQ(period=4)}


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("alg", sorted(ALGS))
def test_reference_accepts_the_implementation(alg, problem):
    assert first_mismatch(ALGS[alg](), PROBLEMS[problem]()) is None


#: (what the slip is, substitutions in fedtheory/algorithms/ofediq.py)
SLIPS = {
    "sign of the server step": [("x = x - eta * (coef @ M)", "x = x + eta * (coef @ M)")],
    "1/p weights missing": [("U = acc / p[:, None]", "U = acc")],
    "1/p applied twice": [("U = acc / p[:, None]", "U = acc / p[:, None] / p[:, None]")],
    "server divides by the number sampled, not K": [("coef = problem.weights * mask",
                                                     "coef = mask / max(mask.sum(), 1)")],
    "stale local point (no reset to the global model, eq. 6)": [
        ("G0 = np.broadcast_to(x, (K, D)) if start else state.theta", "G0 = state.theta")],
    "period's gradient sum not reset": [("acc = grads if start else state.acc + grads", "acc = state.acc + grads")],
    "idle client treated as active": [
        ("mask = np.ones(K, dtype=bool) if draw.participate is None else np.asarray(draw.participate, bool)",
         "mask = np.ones(K, dtype=bool)")],
    "regret logged off by one (comparator of the previous prefix)": [
        ("self._comparator_sum(problem, t)", "self._comparator_sum(problem, max(t - 1, 0))")],
    "loss of the previous step's stream": [("loss = self._loss_sum(problem, t, x)",
                                            "loss = self._loss_sum(problem, max(t - 1, 0), x)")],
    "bits counted for every client": [("bits = participants * self.vector_bits(D)", "bits = K * self.vector_bits(D)")],
    "transmission at the first step of a period": [("return (t + 1) % self.period == 0",
                                                    "return t % self.period == 0")],
}
SLIP_ALG = dict(eta=0.03, p=0.6, period=2, s=3, b=2)


@pytest.mark.parametrize("slip", sorted(SLIPS))
def test_reference_rejects_a_slip(slip, patched_module):
    copy = patched_module(ofediq_module.__name__, SLIPS[slip])
    alg = copy.OFedIQ(**SLIP_ALG)
    assert type(alg).name == "ofediq"
    mismatch = first_mismatch(alg, PROBLEMS["online_ridge"]())
    assert mismatch is not None, f"the reference accepted the slip: {slip}"


#: slips of the (s, b)-quantizer (Definition 2), in a patched copy of fedtheory/compressors/sb_quantizer.py
QUANTIZER_SLIPS = {
    "rounding up with the complementary probability": [("(m + (U < p_up))", "(m + (U > p_up))")],
    "norm of the whole vector, not of the block": [("np.add.reduceat((X / c) ** 2, starts, axis=1))[:, block]",
                                                   "np.sum((X / c) ** 2, axis=1, keepdims=True))")],
    "levels normalised twice": [("return norms * np.sign(X) * (m + (U < p_up)) / self.s",
                                 "return norms * np.sign(X) * (m + (U < p_up)) / self.s / self.s")],
}


@pytest.mark.parametrize("slip", sorted(QUANTIZER_SLIPS))
def test_reference_rejects_a_quantizer_slip(slip, patched_module):
    quantizer = patched_module(sb_module.__name__, QUANTIZER_SLIPS[slip])
    copy = patched_module(ofediq_module.__name__, [], {"SBQuantizer": quantizer.SBQuantizer})
    mismatch = first_mismatch(copy.OFedIQ(**SLIP_ALG), PROBLEMS["online_ridge"]())
    assert mismatch is not None, f"the reference accepted the quantizer slip: {slip}"


def test_at_least_eight_slips():
    assert len(SLIPS) + len(QUANTIZER_SLIPS) >= 8


def test_the_identity_claim_fails_on_a_slipped_algorithm(monkeypatch, patched_module):
    """ofediq.rounds.reference_identity runs the implementation it finds: a slipped copy makes it fail."""
    from fedtheory.claims import select

    (c,) = select(ids=["ofediq.rounds.reference_identity"])
    # the OFedIQ instances with sampling rates below 1 (where the 1/p weights matter)
    instances = [i for i in c.instances(False) if i["alg"] == "ofediq" and i["kw"].get("p", 1.0) != 1.0]
    assert instances and all(c.check(inst).holds for inst in instances)
    copy = patched_module(ofediq_module.__name__, SLIPS["1/p weights missing"])
    for module in (ofediq_module, sys.modules[c.check.__module__]):  # the claim imports OFedIQ at its top
        monkeypatch.setattr(module, "OFedIQ", copy.OFedIQ)
    assert not any(c.check(inst).holds for inst in instances)

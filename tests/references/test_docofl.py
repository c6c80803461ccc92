"""DoCoFL's reference (fedtheory/references/docofl.py) accepts the implementation on every anchor/correction/uplink
compressor and notification option, and rejects plausible slips of it (each a patched copy of
fedtheory/algorithms/docofl.py, one substitution)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import fedtheory.algorithms.docofl as docofl_module
from fedtheory.algorithms.docofl import DoCoFL, TwoClassParticipation
from fedtheory.compressors.ecuq import ECUQ
from fedtheory.compressors.noise import ScaledRademacher, Zero
from fedtheory.compressors.quantizers import QSGD, DeterministicUniformQuantizer, StochasticUniformQuantizer
from fedtheory.compressors.sb_quantizer import SBQuantizer
from fedtheory.compressors.sparsifiers import RandK, TopK
from fedtheory.problems import logistic, quadratic
from fedtheory.references import certify_run
from fedtheory.references.compression import compress

ROUNDS = 8


def first_mismatch(alg, problem, rounds: int = ROUNDS, seed: int = 3):
    """The first round of ``rounds`` (from the algorithm's own state) that differs from its reference, or None."""
    return certify_run(alg, problem, np.linspace(-0.4, 0.6, problem.dim), rounds, seed)[1]


PROBLEMS = {"quadratic": lambda: quadratic(8, 6, mu=0.5, L=4.0, zeta2=1.0, seed=1),
            "logistic": lambda: logistic("synthetic", n_clients=8, dim=5)}
TWO_CLASS = TwoClassParticipation(lead_strong=1, lead_weak=3, strong_fraction=0.5)
CONFIGS = {
    "identity_full": dict(),
    "example": dict(period=2, queue_size=2, anchor_compressor=ECUQ(b=4.0),
                    correction_compressor=ScaledRademacher(scale=0.2), participation=TwoClassParticipation(lead_strong=1)),
    "ecuq_qsgd_suq_two_class": dict(period=2, queue_size=3, anchor_compressor=ECUQ(b=3.0),
                                    correction_compressor=QSGD(s=2), uplink_compressor=StochasticUniformQuantizer(levels=4),
                                    n_sampled=4, participation=TWO_CLASS),
    "ecuq_entropy_coding_randk": dict(period=3, queue_size=3, anchor_compressor=ECUQ(b=1.5, coding="entropy"),
                                      correction_compressor=RandK(k=2), uplink_compressor=SBQuantizer(s=2, b=2),
                                      n_sampled=4, participation=TWO_CLASS),
    "rademacher_per_coordinate_exact": dict(period=1, queue_size=4, anchor_compressor=ScaledRademacher(0.3, True),
                                            correction_compressor=TopK(k=3), uplink_compressor=QSGD(s=3),
                                            stochastic=False, n_sampled=4,
                                            participation=TwoClassParticipation(lead_strong=2, lead_weak=3,
                                                                                strong_fraction=0.25)),
    "grid_anchor_zero_correction": dict(period=2, queue_size=2, anchor_compressor=DeterministicUniformQuantizer(levels=8),
                                        correction_compressor=Zero(), n_sampled=6),
    "naive": dict(naive=True, anchor_compressor=ECUQ(b=2.0), n_sampled=4),
    "meta_algorithm3": "meta",
}


def _alg(cfg):
    if cfg == "meta":
        return DoCoFL.meta(step=0.1, staleness=3, correction_compressor=ScaledRademacher(0.4), n_sampled=4)
    return DoCoFL(**cfg)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_reference_accepts_the_implementation(config, problem):
    assert first_mismatch(_alg(CONFIGS[config]), PROBLEMS[problem]()) is None


#: (what the slip is, substitutions in fedtheory/algorithms/docofl.py)
SLIPS = {
    "sign of the server step": [("x_new = x - self.step_size(problem) * g", "x_new = x + self.step_size(problem) * g")],
    "weight N p_i missing": [("g = (N * problem.weights[clients]) @ U / S", "g = problem.weights[clients] @ U / S")],
    "average normalised twice": [("g = (N * problem.weights[clients]) @ U / S", "g = (N * problem.weights[clients]) @ U / S / S")],
    "stale anchor (notification one round early)": [("s = np.maximum(np.asarray(t) - np.asarray(leads), 0)",
                                                      "s = np.maximum(np.asarray(t) - np.asarray(leads) - 1, 0)")],
    "missing correction": [('"estimates": Y + D_hat', '"estimates": Y')],
    "correction against the uncompressed anchor (footnote 3)": [
        ("self.correction_compressor.compress(x[None, :] - Y, rng)",
         "self.correction_compressor.compress(x[None, :] - state.raw_anchors[slots], rng)")],
    "uncompressed anchor enqueued": [("= y_new[0], x, t, bits_new[0]", "= x, x, t, bits_new[0]")],
    "gradient at the server model, not the estimate": [
        ("G = problem.stochastic_grads(W_hat, rng, clients=clients)",
         "G = problem.stochastic_grads(np.broadcast_to(x, W_hat.shape), rng, clients=clients)")],
    "strong/weak classes off by one": [("leads = np.where(clients < N_s,", "leads = np.where(clients <= N_s,")],
    "offline (anchor) bits not logged": [("downlink_bits=online + offline", "downlink_bits=online")],
    "compressors fed in the wrong order (uplink noise before the correction)": [
        ("        est = self.client_estimates(state, leads, rng)\n",
         "        rng.random(problem.dim)\n        est = self.client_estimates(state, leads, rng)\n")],
}


@pytest.mark.parametrize("slip", sorted(SLIPS))
def test_reference_rejects_a_slip(slip, patched_module):
    copy = patched_module(docofl_module.__name__, SLIPS[slip])
    cfg = dict(CONFIGS["ecuq_qsgd_suq_two_class"], step=0.05)
    alg = copy.DoCoFL(**{**cfg, "participation": copy.TwoClassParticipation(lead_strong=1, lead_weak=2,
                                                                              strong_fraction=0.5)})
    assert type(alg).name == "docofl"
    mismatch = first_mismatch(alg, PROBLEMS["quadratic"]())
    assert mismatch is not None, f"the reference accepted the slip: {slip}"
    assert "differs from the paper's algorithm (docofl)" in mismatch.sentence()


def test_at_least_eight_slips():
    assert len(SLIPS) >= 8


def test_ecuq_transcription_meets_the_paper_window():
    """ECUQ (App. D, Alg. 4), transcribed: the implementation's output and bits, and the output's empirical
    entropy never above the budget b (the window [b - eps, b] is not always reachable: entropy is not monotone in
    the number of levels, compressors/ecuq.py)."""
    rng = np.random.default_rng(0)
    X = rng.lognormal(size=(6, 300))
    for b in (1.0, 2.0, 3.5):
        out, bits = compress(ECUQ(b=b), X, None)
        impl, impl_bits = ECUQ(b=b).compress(X)
        assert np.array_equal(out, impl) and np.allclose(bits, impl_bits, rtol=1e-12)
        for r in range(X.shape[0]):
            _, counts = np.unique(out[r], return_counts=True)
            p = counts / X.shape[1]
            H = -np.sum(p * np.log2(p))
            assert H <= b + 1e-12


def test_the_identity_claim_fails_on_a_slipped_algorithm(monkeypatch, patched_module):
    """docofl.rounds.reference_identity runs the implementation it finds: a slipped copy makes it fail."""
    from fedtheory.claims import select

    (c,) = select(ids=["docofl.rounds.reference_identity"])
    instances = list(c.instances(False))
    assert all(c.check(inst).holds for inst in instances)
    copy = patched_module(docofl_module.__name__, SLIPS["correction against the uncompressed anchor (footnote 3)"])
    for module in (docofl_module, sys.modules[c.check.__module__]):  # the claim imports both at its top
        monkeypatch.setattr(module, "DoCoFL", copy.DoCoFL)
        monkeypatch.setattr(module, "TwoClassParticipation", copy.TwoClassParticipation)
    verdicts = [c.check(inst) for inst in instances]
    assert not all(ev.holds for ev in verdicts)
    assert any("differs from the paper's algorithm" in ev.details["difference"] for ev in verdicts)


#: slips of ECUQ (Alg. 4), in a patched copy of fedtheory/compressors/ecuq.py, caught through DoCoFL's anchors
ECUQ_SLIPS = {
    "bin edges sent instead of bin centres": [("x_hat = np.where(delta > 0, lo + (index + 0.5) * delta, X)",
                                               "x_hat = np.where(delta > 0, lo + index * delta, X)")],
    "2^b levels rounded up": [("return max(1, int(math.floor(2.0**self.b)))", "return max(1, int(math.ceil(2.0**self.b)))")],
    "entropy counted where Huffman bits are sent": [
        ('per_coord = huffman_average_length(res.index) if self.coding == "huffman" else res.entropy',
         "per_coord = res.entropy")],
    "search stops at the first level count below the budget": [("active = (~in_window) & (cap > K0)",
                                                                 "active = np.zeros_like(in_window)")],
}


@pytest.mark.parametrize("slip", sorted(ECUQ_SLIPS))
def test_reference_rejects_an_ecuq_slip(slip, patched_module):
    import fedtheory.compressors.ecuq as ecuq_module

    copy = patched_module(ecuq_module.__name__, ECUQ_SLIPS[slip])
    alg = DoCoFL(period=2, queue_size=3, anchor_compressor=copy.ECUQ(b=1.5), correction_compressor=QSGD(s=2),
                 n_sampled=4, participation=TWO_CLASS)
    assert first_mismatch(alg, PROBLEMS["quadratic"]()) is not None, f"the reference accepted the ECUQ slip: {slip}"

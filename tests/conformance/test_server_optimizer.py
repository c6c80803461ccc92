"""The server-optimizer family (Reddi et al. 2021, Alg. 2; docs/conformance.md, "Server optimizers"): fedtheory's
implementation passes for every optimizer, each kind of slip is rejected with its diagnosis, the drawn
hyperparameters reach the implementation, and the command line offers the family."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("hypothesis")

from fedtheory import conformance  # noqa: E402
from fedtheory.cli import main as cli_main  # noqa: E402
from fedtheory.conformance.adapters.native import NATIVE  # noqa: E402
from fedtheory.conformance.families.server_optimizer import variants as V  # noqa: E402
from fedtheory.conformance.families.server_optimizer.expected import OPTIMIZERS  # noqa: E402

NATIVE_SO = NATIVE["server_optimizer"]


@pytest.mark.parametrize("optimizer", ["fedyogi", "fedadagrad", "fedavgm"])  # fedadam: test_kit.py
def test_native_passes_every_optimizer(optimizer):
    report = conformance.check(NATIVE_SO, "server_optimizer", optimizer=optimizer, max_examples=8)
    assert report.passed, report.table()
    # fedtheory's own optimizer takes the kit's participants: its own sampler is not run (own_sampler n.a.)
    assert [r.status for r in report.results] == ["holds"] * 3 + ["not applicable"]


@pytest.mark.parametrize("slip,optimizer,diagnosis", [
    ("bias_correction", "fedadam", "bias correction with step count t = 1"),
    ("tau_inside_sqrt", "fedyogi", "tau inside the square root"),
    ("pseudo_gradient_sign", "fedavgm", "wrong sign"),
    ("momentum_ema", "fedavgm", "moving average"),
])
def test_slip_is_named(slip, optimizer, diagnosis):
    v = next(w for w in V.WRONG if w.name == f"{optimizer}_{slip}")
    report = conformance.check(v.impl, "server_optimizer", max_examples=8, **v.hyper)
    assert not report.passed
    assert diagnosis in report.failures[0].diagnosis
    assert report.failures[0].counterexample.reproduce(v.impl).violated


def test_state_reset_is_caught_by_multi_round_only_when_the_state_is_opaque():
    from fedtheory.conformance.statekit import opaque
    wrong = opaque(lambda *a, **k: V.server_optimizer(*a, slip="state_reset", **k))
    report = conformance.check(wrong, "server_optimizer", max_examples=8, shrink=False)
    status = {r.prop.id.split(".")[1]: r.status for r in report.results}
    assert status == {"first_round": "holds", "from_state": "not applicable", "multi_round": "violated",
                      "own_sampler": "not applicable"}  # it takes the kit's participants
    assert "reset every round" in report.failures[0].diagnosis


def test_drawn_and_fixed_hyperparameters_reach_the_implementation():
    seen = []

    def spy(x, clients, **kw):
        seen.append({k: kw[k] for k in ("server_step", "beta1", "beta2", "tau")})
        return NATIVE_SO(x, clients, **kw)
    conformance.check(spy, "server_optimizer", max_examples=5, properties=["server_optimizer.first_round"])
    assert len({tuple(s.values()) for s in seen}) > 1  # drawn per case
    seen.clear()
    conformance.check(spy, "server_optimizer", max_examples=3, properties=["server_optimizer.first_round"],
                      server_step=0.5, beta1=0.0, beta2=0.9, tau=1e-3)
    assert seen and all(s == {"server_step": 0.5, "beta1": 0.0, "beta2": 0.9, "tau": 1e-3} for s in seen)


@pytest.mark.parametrize("bad", [{"optimizer": "fedsgd"}, {"beta1": 1.0}, {"tau": 0.0}, {"initial_v": -1.0}])
def test_bad_hyperparameters_name_the_parameter(bad):
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        conformance.check(NATIVE_SO, "server_optimizer", max_examples=1, **bad)


def test_cli_offers_the_family(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myopt.py").write_text(
        "from fedtheory.conformance.families.server_optimizer.variants import server_optimizer\n"
        "def make():\n    return server_optimizer\n")
    code = cli_main(["conform", "myopt:make", "--as", "server_optimizer", "--hyper", "optimizer=fedyogi",
                     "--max-examples", "3"])
    assert code == 0, capsys.readouterr()
    report = json.loads((tmp_path / "fedtheory-conformance" / "conformance.json").read_text())
    assert report["family"] == "server_optimizer" and report["hyper"]["optimizer"] == "fedyogi"
    assert cli_main(["conform", "myopt:make", "--as", "server_optimizer", "--hyper", "optimizer=adamw"]) == 2


def test_expected_side_matches_the_paper_on_a_hand_computed_round():
    """Alg. 2 by hand for one coordinate: Delta = 2, beta1 = 0.5, beta2 = 0.75, tau = 0.5, eta = 1, v_-1 = 0."""
    from fedtheory.conformance.families.server_optimizer.expected import server_step
    h = dict(server_step=1.0, beta1=0.5, beta2=0.75, tau=0.5)
    state, delta, x = {"m": np.zeros(1), "v": np.zeros(1)}, np.array([2.0]), np.zeros(1)
    # m = 1; Adagrad v = 4 -> 1/(2 + .5); Adam v = 1 -> 1/1.5; Yogi v = 0 - .25*4*sign(-4) = 1 -> 1/1.5
    for opt, want in (("fedadagrad", 0.4), ("fedadam", 1 / 1.5), ("fedyogi", 1 / 1.5), ("fedavgm", 2.0)):
        got, _ = server_step(x, state, delta, dict(h, optimizer=opt))
        assert got[0] == pytest.approx(want, rel=1e-15), opt
    assert set(OPTIMIZERS) == {"fedadam", "fedyogi", "fedadagrad", "fedavgm"}


def test_flower_server_optimizers_through_the_family():
    """Flower 1.42.0 (docs/conformance.md, "Flower"): FedYogi follows Alg. 2 over six rounds; FedAdam's first
    step carries Adam's bias correction with t = server_round + 1 = 2."""
    pytest.importorskip("flwr")
    from fedtheory.conformance.drivers.flower import server_optimizer_round
    yogi = conformance.check(server_optimizer_round("FedYogi"), "server_optimizer", optimizer="fedyogi",
                             weighting="num_examples", max_examples=6)
    assert yogi.passed, yogi.table()
    adam = conformance.check(server_optimizer_round("FedAdam"), "server_optimizer", optimizer="fedadam",
                             weighting="num_examples", max_examples=6,
                             properties=["server_optimizer.first_round"])
    assert adam.failures[0].diagnosis == "bias correction with step count t = 2 (one ahead of the rounds)"
    with pytest.raises(ValueError, match="beta1"):
        server_optimizer_round("FedAdagrad")(np.zeros(1), [], beta1=0.9)

"""The experiment protocol: every method on every seed, the record the shape tests read, the device choice."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch", reason="the experiments extra (torch) is not installed")

from fedtheory.experiments import (
    SCALES,
    Scale,
    experiments,
    load_record,
    run_experiment,
    save_record,
)
from fedtheory.experiments.protocol import RECORDED, resolve_device


def _tiny(exp):
    """``exp`` on 4 clients for 2 rounds, one seed each side (the sizes only; the same methods and problem)."""
    from dataclasses import replace

    return replace(exp, clients=4, rounds=2, record_every=1)


def test_a_run_records_every_method_on_every_seed(tmp_path) -> None:
    exp = _tiny(experiments()["fedelasticnet.table3"])
    scale = Scale("t", 1.0, 1.0, (100,), (0,))
    labels = []
    record = run_experiment(exp, scale, progress=labels.append)
    assert set(record["methods"]) == {"FedProx", "Alg. 1", "SCAFFOLD", "Alg. 2", "FedDyn", "Alg. 3"}
    assert len(labels) == 6 * 2
    for seeds in record["methods"].values():
        assert set(seeds) == {"100", "0"}
        run = seeds["0"]
        assert run["curve"]["round"] == [0, 1, 2] and len(run["curve"]["test_accuracy"]) == 3
        final = run["final"]
        assert 0 <= final["test_accuracy"] <= 1 and 0 <= final["zero_fraction"] <= 1
        assert final["cumulative_entropy"] > 0
    # the seed changes the split and the initialisation: the two seeds' runs differ
    a, b = (record["methods"]["FedDyn"][s]["final"]["train_loss"] for s in ("100", "0"))
    assert a != b
    # thresholding makes Alg. 3 send zeros FedDyn does not (epsilon = 5e-3 of Table 5)
    assert record["methods"]["Alg. 3"]["0"]["final"]["zero_fraction"] > record["methods"]["FedDyn"]["0"]["final"][
        "zero_fraction"]
    path = save_record(record, tmp_path)
    assert load_record("fedelasticnet.table3", tmp_path) == json.loads(path.read_text())


def test_a_missing_record_names_the_command_that_writes_it(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="fedtheory verify --experiments"):
        load_record("fedelasticnet.table3", tmp_path)


def test_the_device_is_checked() -> None:
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="device must be one of"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no GPU"):
            resolve_device("cuda")


def test_the_scales_have_the_seeds_the_verdicts_need() -> None:
    from fedtheory.claims.neural.shapes import MIN_HELD_OUT

    for name in ("full", "large"):
        s = SCALES[name]
        assert len(s.held_seeds) >= MIN_HELD_OUT and s.dev_seeds and not set(s.dev_seeds) & set(s.held_seeds)
    assert len(SCALES["smoke"].held_seeds) == 1


@pytest.mark.parametrize("name", list(experiments()))
def test_every_experiment_has_its_full_scale_record(name: str) -> None:
    record = load_record(name, RECORDED)
    exp = experiments()[name]
    assert record["scale"] == "full" and (record["clients"], record["rounds"]) == exp.sizes(SCALES["full"])
    assert record["held_seeds"] == list(SCALES["full"].held_seeds)
    finals = [r["final"] for seeds in record["methods"].values() for r in seeds.values()]
    # the metric each experiment's claims read: test accuracy, or FedRed Figure 2's communications to the target
    # (None when a run misses it within the budget)
    key = "communications" if name.startswith("fedred.") else "test_accuracy"
    assert all(f[key] is None or np.isfinite(f[key]) for f in finals)
    assert any(f[key] is not None for f in finals)

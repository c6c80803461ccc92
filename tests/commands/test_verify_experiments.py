"""``fedtheory verify --experiments``: the experiments run into OUT/experiments/ and the claims judge those
records; what cannot run is refused in one line with exit status 2."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fedtheory.cli import main as cli_main
from fedtheory.experiments.protocol import RESULTS_ENV

torch = pytest.importorskip("torch", reason="the experiments extra (torch) is not installed")


def test_cuda_without_a_gpu_is_refused_in_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --device cuda is valid here")
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "unused"))  # restored afterwards, whatever the run sets
    status = cli_main(["verify", "--experiments", "--device", "cuda", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert status == 2 and "no GPU" in err
    assert not (tmp_path / "experiments").exists()


def test_the_claims_judge_the_records_of_this_run(tmp_path: Path, capsys, monkeypatch) -> None:
    import fedtheory.experiments as package
    import fedtheory.experiments.command as command

    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "unused"))  # the run points it at OUT/experiments
    tiny = {name: replace(e, clients=4, rounds=2, record_every=1) for name, e in package.experiments().items()
            if name == "fedelasticnet.table4"}
    monkeypatch.setattr(command, "experiments", lambda: tiny)  # where `verify --experiments` looks it up
    status = cli_main(["verify", "--experiments", "--scale", "smoke", "--claim", "fedelasticnet.neural.table4",
                       "--out", str(tmp_path), "--quiet", "--jobs", "1"])
    assert status == 0, capsys.readouterr()
    record = json.loads((tmp_path / "experiments" / "fedelasticnet.table4.json").read_text())
    assert record["scale"] == "smoke" and record["held_seeds"] == [0]
    [claim] = json.loads((tmp_path / "claims.json").read_text())
    assert claim["id"] == "fedelasticnet.neural.table4"
    assert claim["evidence"][0]["instance"].startswith("smoke, not a verdict: fedelasticnet.table4 (smoke: 4 clients")

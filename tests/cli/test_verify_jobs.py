"""``fedtheory verify --jobs N`` and ``--scheduler``: the same ledger as the serial run, in registry order.

The expected side is the serial in-process run (``--jobs 1``) of the same claims: every record of claims.json must
be equal except its ``seconds``, including the order of the records, the statuses, the instances and the
measured numbers (compared as parsed JSON, so bitwise for floats).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fedtheory.claims.registry import REGISTRY, Claim, Evidence
from fedtheory.cli import main as cli_main
from fedtheory.ledger import ONE_WORKER_PAPERS, _batches, run_claims, run_worst_case

#: Cheap claims from six modules: bounds, identities, a recorded counterexample (violated-as-recorded), claims
#: with and without an instance space; ``foundation.quadratic.constants_exact`` runs eigendecompositions (BLAS).
CLAIMS = ["classic.gd.contraction_tight_any_step", "docofl.appendix.lemma_c9", "docofl.appendix.lemma_c7",
          "fedelasticnet.hoeffding", "fedred.appendix.weighted_sum.derived", "foundation.quadratic.constants_exact",
          "ofediq.quantizer.sigma2_uneven_blocks"]


def _ledger(tmp_path: Path, name: str, *extra: str) -> list[dict]:
    args = ["verify", "--quiet", "--out", str(tmp_path / name), *extra]
    for c in CLAIMS:
        args += ["--claim", c]
    assert cli_main(args) == 0
    return json.loads((tmp_path / name / "claims.json").read_text())


def _without_seconds(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def test_jobs_2_writes_the_serial_claims_json_but_for_the_seconds(tmp_path: Path) -> None:
    serial = _ledger(tmp_path, "serial", "--jobs", "1")
    parallel = _ledger(tmp_path, "parallel", "--jobs", "2")
    assert [r["id"] for r in serial] == [c for c in REGISTRY if c in CLAIMS]  # registry order
    assert _without_seconds(parallel) == _without_seconds(serial)
    assert {r["status"] for r in serial} == {"holds", "violated-as-recorded"}


def test_results_come_back_in_the_given_order_whatever_order_they_start_in() -> None:
    # with two claims of the torch benchmarks, which run as one task
    claims = [REGISTRY[c] for c in CLAIMS] + [c for c in REGISTRY.values() if c.paper in ONE_WORKER_PAPERS][:2]
    serial = run_claims(claims, jobs=1)
    # Start the last claim first (it "took" longest), the first one last.
    parallel = run_claims(claims, jobs=2, seconds={c.id: float(k) for k, c in enumerate(claims)})
    assert [r.claim for r in parallel] == claims
    assert _without_seconds([r.as_dict() for r in parallel]) == _without_seconds([r.as_dict() for r in serial])


def test_the_torch_claims_form_one_task_and_the_others_one_task_each() -> None:
    # Built from the registry, not from _batches: every claim of a ONE_WORKER_PAPERS paper in one task, in
    # registry order; every other claim alone; each claim in exactly one task.
    claims = list(REGISTRY.values())
    shared = [k for k, c in enumerate(claims) if c.paper in ONE_WORKER_PAPERS]
    assert len(shared) > 1
    for seconds in (None, {c.id: 1.0 for c in claims}):
        batches = _batches(claims, seconds)
        assert sorted(k for b in batches for k in b) == list(range(len(claims)))
        assert shared in batches and all(len(b) == 1 for b in batches if b is not shared and b != shared)
    # longest first: the shared task's time is its claims' sum
    seconds = {c.id: (1.0 if c.paper in ONE_WORKER_PAPERS else 2.0) for c in claims}
    assert _batches(claims, seconds)[0] == shared


def test_worst_case_searches_spread_over_jobs_find_the_serial_records(tmp_path: Path) -> None:
    results = run_claims([REGISTRY[c] for c in CLAIMS], jobs=1)
    serial = run_worst_case(results, 12, jobs=1)
    parallel = run_worst_case(results, 12, jobs=2)
    assert list(serial) == [r.claim.id for r in results if r.claim.space is not None and r.worst_tightness is not None]
    assert list(parallel) == list(serial)
    for cid in serial:
        assert {k: v for k, v in parallel[cid].items() if k != "seconds"} == \
            {k: v for k, v in serial[cid].items() if k != "seconds"}, cid


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_refused_before_any_claim_runs(jobs: str, tmp_path: Path, capsys, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr("fedtheory.commands.verify.run_claims", lambda *a, **k: ran.append(a))
    assert cli_main(["verify", "--claim", CLAIMS[0], "--jobs", jobs, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--jobs must be >= 1" in err and f"got {jobs}" in err and not ran


def test_run_claims_refuses_jobs_below_one() -> None:
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        run_claims([REGISTRY[CLAIMS[0]]], jobs=0)


def test_a_claim_the_workers_cannot_find_is_an_error_result_not_a_crash() -> None:
    def check(x: float) -> Evidence:
        return Evidence(f"x={x}", measured=x, theory=1.0, holds=True)

    # Defined here, never registered: a spawned worker cannot look it up by id.
    stray = Claim(id="tests.stray", paper="toy", source="", statement="", kind="bound", check=check,
                  instances=lambda thorough: [0.5])
    results = run_claims([stray, REGISTRY[CLAIMS[0]]], jobs=2)
    assert results[0].status == "ERROR" and "tests.stray" in results[0].error and "jobs=1" in results[0].error
    assert results[1].status == "holds"


def test_scheduler_without_dask_names_the_extra(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` raise ImportError
    ran = []
    monkeypatch.setattr("fedtheory.commands.verify.run_claims", lambda *a, **k: ran.append(a))
    assert cli_main(["verify", "--claim", CLAIMS[0], "--scheduler", "tcp://127.0.0.1:1",
                     "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install 'fedtheory[scale]'" in err and len(err.splitlines()) == 1 and not ran


def test_dask_local_cluster_gives_the_serial_records() -> None:
    distributed = pytest.importorskip("distributed", reason="dask.distributed is the optional 'scale' extra")
    claims = [REGISTRY[c] for c in CLAIMS]
    serial = run_claims(claims, jobs=1)
    environment = dict(os.environ)  # a local cluster sets OMP/OPENBLAS/MKL_NUM_THREADS=1 here for its workers
    try:
        # In-process workers (threads of this process): no cluster start-up cost; each task still sets this
        # process's thread settings, as on a remote worker.
        with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                                dashboard_address=None) as client:
            on_dask = run_claims(claims, scheduler=client)
    finally:
        os.environ.clear()
        os.environ.update(environment)
    assert _without_seconds([r.as_dict() for r in on_dask]) == _without_seconds([r.as_dict() for r in serial])

"""Out-of-process adapter (docs/conformance.md, "Out of process"): an implementation in another Python process,
speaking JSON lines through fedtheory/conformance/remote_worker.py, is checked like an in-process one."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from fedtheory import conformance
from fedtheory.conformance.adapters.remote import Remote, RemoteError
from fedtheory.conformance.remote_worker import decode, encode

TINY = textwrap.dedent('''
    import sys
    import numpy as np

    assert "fedtheory" not in sys.modules  # the worker runs without fedtheory

    def fedavg(twice=False):
        def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                 weighting="num_examples", **_):
            print("chatter on stdout must not break the protocol")
            ys = []
            for c in clients:
                y = x.copy()
                for _ in range(local_steps):
                    y = y - local_step * c.grad(y)
                ys.append(y)
            m = np.array([c.num_examples for c in clients], float) if weighting == "num_examples" else np.ones(len(clients))
            return x + (2 if twice else 1) * server_step * (m / m.sum()) @ (np.stack(ys) - x)
        return impl

    def fedavg_twice():
        return fedavg(twice=True)

    def fedavg_sampling():
        """Draws its own participants when given clients_per_round and reports them (the sampling protocol)."""
        base = fedavg()

        def impl(x, clients, *, rng=None, clients_per_round=None, **hyper):
            if clients_per_round is None:
                return base(x, clients, rng=rng, **hyper)
            idx = sorted(rng.choice(len(clients), size=clients_per_round, replace=False))
            return base(x, [clients[i] for i in idx], rng=rng, **hyper), None, {"drawn": [clients[i].cid for i in idx]}
        return impl

    def broken():
        def impl(x, clients, **_):
            raise ValueError("no such layer")
        return impl

    def scaffold():
        def impl(x, clients, *, state=None, rng=None, local_steps=5, local_step=0.1, server_step=1.0,
                 num_clients=None, **_):
            state = state or {"c": np.zeros_like(x), "c_i": {}}
            c, c_i = np.asarray(state["c"]), dict(state["c_i"])
            dys, dcs = [], []
            for cl in clients:
                ci = np.asarray(c_i.get(cl.cid, np.zeros_like(x)))
                y = x.copy()
                for _ in range(local_steps):
                    y = y - local_step * (cl.grad(y) + c - ci)
                new = ci - c + (x - y) / (local_steps * local_step)
                dys.append(y - x); dcs.append(new - ci); c_i[cl.cid] = new
            return x + server_step * np.mean(dys, axis=0), {"c": c + np.sum(dcs, axis=0) / num_clients, "c_i": c_i}
        return impl
''')


@pytest.fixture(scope="module")
def worker_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("remote")
    (d / "tiny_fl.py").write_text(TINY)
    return d


def _remote(worker_dir, factory):
    # -S and a PYTHONPATH of the worker's folder only: the worker process cannot import fedtheory from here
    return Remote([sys.executable, "-S", Remote.WORKER, f"tiny_fl:{factory}"], cwd=str(worker_dir),
                  env={"PYTHONPATH": str(worker_dir) + ":" + _numpy_dir()})


def _numpy_dir() -> str:
    import os
    return os.path.dirname(os.path.dirname(np.__file__))


def test_remote_fedavg_passes_and_a_wrong_one_fails(worker_dir):
    with _remote(worker_dir, "fedavg") as impl:
        assert conformance.check(impl, "fedavg", max_examples=5).passed
    with _remote(worker_dir, "fedavg_twice") as impl:
        report = conformance.check(impl, "fedavg", max_examples=5, properties=["fedavg.one_round"])
        assert not report.passed and report.failures[0].diagnosis == "server step applied twice"


def test_remote_state_crosses_as_the_contract_mapping(worker_dir):
    with _remote(worker_dir, "scaffold") as impl:
        report = conformance.check(impl, "scaffold", max_examples=4,
                                   properties=["scaffold.one_round", "scaffold.server_state", "scaffold.multi_round"])
    assert [r.status for r in report.results[:3]] == ["holds", "holds", "holds"], report.table()
    assert report.passed and all(r.prop.id.startswith("scaffold.multi_round @ ") for r in report.results[3:])


def test_remote_exception_is_reported(worker_dir):
    with _remote(worker_dir, "broken") as impl:
        with pytest.raises(RemoteError, match="ValueError: no such layer"):
            impl(np.zeros(2), [], state=None, rng=np.random.default_rng(0))


def test_encoding_round_trip_keeps_client_ids_and_indices():
    state = {"c": np.array([1.0, 0.0]), "c_i": {0: np.array([0.5, 2.0]), 7: np.array([1.0, 1.0])},
             "draw": {"batches": {3: [0, 2]}}}
    back = decode(__import__("json").loads(__import__("json").dumps(encode(state))))
    assert set(back["c_i"]) == {0, 7} and back["c_i"][7].dtype == np.float64
    assert back["draw"]["batches"][3].dtype == np.int64


def test_a_driver_file_named_after_its_framework_is_loaded_by_path(tmp_path, worker_dir):
    """``remote_worker.py path/to/toyfw.py:factory`` loads the driver by path: its ``import toyfw`` reaches the
    framework's package, not the driver itself (fedtheory/conformance/drivers/<framework>.py are named so)."""
    framework = tmp_path / "site" / "toyfw"
    framework.mkdir(parents=True)
    (framework / "__init__.py").write_text(f"import sys\nsys.path.insert(0, {str(worker_dir)!r})\n"
                                           "from tiny_fl import fedavg as FedAvg\n")
    drivers = tmp_path / "drivers"
    drivers.mkdir()
    (drivers / "toyfw.py").write_text("import toyfw\n\ndef fedavg():\n    return toyfw.FedAvg()\n")
    command = [sys.executable, "-S", Remote.WORKER, f"{drivers / 'toyfw.py'}:fedavg"]
    # the drivers' folder is the working directory and on no path: only loading by path finds the driver
    with Remote(command, cwd=str(drivers), env={"PYTHONPATH": str(tmp_path / "site") + ":" + _numpy_dir()}) as impl:
        assert conformance.check(impl, "fedavg", properties=["fedavg.one_round"], max_examples=3).passed


def test_a_missing_driver_file_is_named():
    from fedtheory.conformance.remote_worker import main
    with pytest.raises(SystemExit, match="no driver file .*nowhere.py"):
        main(["/nowhere/nowhere.py:fedavg"])


def test_remote_reports_the_draw_of_an_implementation_that_samples_its_own(worker_dir):
    with _remote(worker_dir, "fedavg_sampling") as impl:
        report = conformance.check(impl, "fedavg", properties=["fedavg.own_sampler"])
    assert [r.status for r in report.results] == ["holds"], report.table()

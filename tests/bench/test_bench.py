"""fedtheory bench: the long table, tuning, figures, resume after a kill, and the Dask path."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas", reason="the bench needs the 'bench' extra (pandas, pyarrow)")

from fedtheory import bench, catalogue  # noqa: E402
from fedtheory.algorithms import GradientDescent  # noqa: E402
from fedtheory.cli import main as cli_main  # noqa: E402
from fedtheory.run import run  # noqa: E402

PROBLEMS = ["quad-kappa10-delta1", "quad-kappa100-delta1"]
EPS = 1e-6


def tiny_spec(**over) -> bench.SweepSpec:
    data = {"name": "tiny", "problems": PROBLEMS,
            "algorithms": [{"name": "gd", "grid": {"step": ["=1/L_f", "=2/(mu_f+L_f)", "=2.5/L_f"]}},
                           {"name": "gd", "label": "gd-invalid", "grid": {"step": [-1.0]}}],
            "seeds": [0, 1], "rounds": 400, "eps": EPS, "figure_x": "delta_A/mu_f"}
    data.update(over)
    return bench.SweepSpec.from_dict(data)


def _comparable(table):
    cols = [c for c in bench.TABLE_COLUMNS if c not in bench.TIMING_COLUMNS]
    return table[cols].sort_values(["cell", "round"], na_position="first").reset_index(drop=True)


@pytest.fixture(scope="module")
def tiny_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    spec = tiny_spec()
    result = bench.sweep(spec, out, jobs=1, progress=False)
    return spec, out, result


def test_tiny_grid_table_matches_direct_runs(tiny_result):
    spec, out, result = tiny_result
    assert result.complete and result.ran == len(result.cells) == 2 * 4 * 2
    table = bench.read_results(out)
    assert tuple(table.columns) == bench.TABLE_COLUMNS
    assert set(table["cell"]) == {c.id for c in result.cells}
    # Every cell's rows equal a direct run() with the resolved hyperparameters, bit for bit.
    for cell in result.cells:
        rows = table[table["cell"] == cell.id].sort_values("round")
        if cell.label == "gd-invalid":
            assert len(rows) == 1 and rows["status"].iloc[0] == "error" and pd.isna(rows["round"].iloc[0])
            assert "ValueError" in rows["error"].iloc[0] and "step" in rows["error"].iloc[0]
            continue
        problem = catalogue.load(cell.problem)
        c = problem.certificate
        step = {"=1/L_f": 1 / c.L_f, "=2/(mu_f+L_f)": 2 / (c.mu_f + c.L_f), "=2.5/L_f": 2.5 / c.L_f}[
            cell.hyperparams["step"]]
        trace = run(GradientDescent(step=step), problem, spec.rounds, seed=cell.seed,
                    tol=EPS * problem.gap(np.zeros(problem.dim)))
        assert rows["status"].iloc[0] == trace.status
        assert rows["gap"].to_numpy().tobytes() == trace.gap.tobytes()
        assert rows["dist2"].to_numpy().tobytes() == trace.dist2.tobytes()
        assert list(rows["round"]) == list(trace.round)  # one row per recorded round, each exactly once
        assert rows["cum_bits"].to_numpy() == pytest.approx(np.cumsum(trace.uplink_bits + trace.downlink_bits),
                                                            rel=0, abs=0)
        assert rows["cum_local_grad_evals"].iloc[-1] == problem.n_clients * trace.round[-1]
    statuses = set(table["status"])
    assert {"converged", "diverged", "error"} <= statuses  # step 2.5/L_f diverges on these problems


def test_tuning_picks_the_fastest_step(tiny_result):
    spec, out, _ = tiny_result
    tuned = pd.read_csv(out / "tuned.csv")
    for name in PROBLEMS:
        c = catalogue.load(name).certificate
        row = tuned[(tuned["problem"] == name) & (tuned["label"] == "gd")].iloc[0]
        # 2/(mu+L) is the optimal GD step on a quadratic (contraction (kappa-1)/(kappa+1) < 1 - 1/kappa).
        assert json.loads(row["hyperparams"]) == {"step": "=2/(mu_f+L_f)"}
        direct = {}
        for label, step in (("1/L", 1 / c.L_f), ("2/(mu+L)", 2 / (c.mu_f + c.L_f))):
            problem = catalogue.load(name)
            tr = run(GradientDescent(step=step), problem, spec.rounds, tol=EPS * problem.gap(np.zeros(problem.dim)))
            direct[label] = tr.round[-1] if tr.status == "converged" else math.inf
        assert row["rounds_to_eps"] == direct["2/(mu+L)"] < direct["1/L"]
        assert math.isinf(tuned[(tuned["problem"] == name) & (tuned["label"] == "gd-invalid")]
                          ["rounds_to_eps"].iloc[0])


def test_reports_and_figures_are_written(tiny_result):
    _, out, _ = tiny_result
    table_md = (out / "rounds_to_eps.md").read_text()
    assert "| problem | gd | gd-invalid |" in table_md and "never" in table_md
    figures = sorted((out / "figures").glob("*.png"))
    names = {p.name for p in figures}
    assert {f"convergence__{p}.png" for p in PROBLEMS} <= names
    assert "rounds_vs_delta_A_over_mu_f.png" in names
    for path in figures:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    assert len(pd.read_parquet(out / "results.parquet")) == len(bench.read_results(out))


def test_rerun_skips_finished_cells_and_reruns_only_missing(tiny_result, tmp_path):
    spec, out, result = tiny_result
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.parquet")}
    again = bench.sweep(spec, out, jobs=1, progress=False, report=False)
    assert again.ran == 0 and again.skipped == len(result.cells)
    victim = result.cells[3]
    bench.cell_path(out, victim, "parquet").unlink()
    again = bench.sweep(spec, out, jobs=1, progress=False, report=False)
    assert again.ran == 1 and again.summaries[0]["cell"] == victim.id
    for p in (out / "cells").glob("*.parquet"):
        if p.stem != victim.id:
            assert p.stat().st_mtime_ns == stamps[p.name]


def test_csv_format_gives_the_same_table(tiny_result, tmp_path):
    spec, out, _ = tiny_result
    bench.sweep(spec, tmp_path, jobs=1, progress=False, fmt="csv", report=False)
    a = _comparable(bench.read_results(out))
    b = _comparable(bench.read_results(tmp_path))
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_dask_localcluster_gives_the_same_table(tiny_result, tmp_path):
    distributed = pytest.importorskip("distributed", reason="the Dask path needs the 'bench' extra")
    spec, out, _ = tiny_result
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster:
        result = bench.sweep(spec, tmp_path, scheduler=cluster.scheduler_address, progress=False, report=False)
    assert result.complete and result.ran == len(result.cells)
    pd.testing.assert_frame_equal(_comparable(bench.read_results(out)), _comparable(bench.read_results(tmp_path)),
                                  check_exact=True)


# ----- a sweep killed half-way -----

SLOW_PLUGIN = textwrap.dedent('''
    """A test-only algorithm: gradient descent that sleeps in every round, so a sweep can be killed mid-way."""
    import time
    from dataclasses import dataclass
    from typing import ClassVar

    from fedtheory.algorithms.base import register_algorithm
    from fedtheory.algorithms.gd import GradientDescent


    @register_algorithm
    @dataclass(frozen=True)
    class SlowGD(GradientDescent):
        delay: float = 0.02
        name: ClassVar[str] = "slow-gd-test"

        def round(self, problem, state, rng):
            time.sleep(self.delay)
            return super().round(problem, state, rng)
''')


def _kill_spec(tmp_path: Path) -> Path:
    plugin = tmp_path / "slow_plugin.py"
    plugin.write_text(SLOW_PLUGIN)
    spec = {"name": "kill", "problems": PROBLEMS, "seeds": [0, 1], "rounds": 10, "stop_at_eps": False,
            "algorithms": [{"name": "slow-gd-test", "grid": {"step": ["=1/L_f", "=0.5/L_f"], "delay": [0.03]}}],
            "imports": [str(plugin)]}
    path = tmp_path / "kill.json"
    path.write_text(json.dumps(spec))
    return path


def _bench_cmd(spec: Path, out: Path, jobs: int) -> list[str]:
    # The plugin is only ever imported in these subprocesses, so the test-only algorithm never enters this
    # process's registry (other test modules iterate over it).
    return [sys.executable, "-m", "fedtheory", "bench", "--spec", str(spec), "--out", str(out), "--jobs", str(jobs),
            "--quiet", "--no-figures"]


def _wait_for_cells(out: Path, count: int, proc: subprocess.Popen, timeout: float = 60.0) -> dict[str, tuple]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = list((out / "cells").glob("*.parquet")) if (out / "cells").exists() else []
        if len(files) >= count:
            return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files}
        if proc.poll() is not None:
            raise AssertionError(f"sweep ended before {count} cells: {proc.stderr.read()}")
        time.sleep(0.02)
    raise AssertionError("timed out waiting for cell files")


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _check_complete_exactly_once(out: Path, n_cells: int, rounds: int) -> None:
    meta = json.loads((out / "sweep.json").read_text())
    assert len(meta["cells"]) == n_cells
    table = bench.read_results(out)
    assert set(table["cell"]) == set(meta["cells"])
    counts = table.groupby("cell")["round"].apply(list)
    for rounds_seen in counts:
        assert rounds_seen == list(range(rounds + 1))  # every round of every cell exactly once
    assert set(table["status"]) == {"completed"}


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds worker processes through /proc (Linux)")
def test_killed_worker_process_is_resumed_without_losing_cells(tmp_path):
    spec, out = _kill_spec(tmp_path), tmp_path / "out"
    proc = subprocess.Popen(_bench_cmd(spec, out, jobs=2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        before = _wait_for_cells(out, 2, proc)
        workers = []
        deadline = time.monotonic() + 20
        while not workers and time.monotonic() < deadline:
            workers = [pid for pid in _children(proc.pid)
                       if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()]
            time.sleep(0.01)
        assert workers, "no joblib worker process found"
        os.kill(workers[0], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "worker process died" in stderr  # the kill really hit a worker mid-sweep
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "cells").glob("*.parquet")}
    assert all(after[name] == stamp for name, stamp in before.items())  # finished cells were not redone
    _check_complete_exactly_once(out, 8, 10)


def test_killed_sweep_is_completed_by_a_rerun(tmp_path):
    spec, out = _kill_spec(tmp_path), tmp_path / "out"
    proc = subprocess.Popen(_bench_cmd(spec, out, jobs=1), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        before = _wait_for_cells(out, 3, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "cells").glob("*.parquet")}
    assert 3 <= len(done) < 8, "the kill must land mid-sweep"
    for p in (out / "cells").glob("*.parquet"):  # every file present is complete (atomic rename)
        assert len(pd.read_parquet(p)) == 11
    rerun = subprocess.run(_bench_cmd(spec, out, jobs=1), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(done)} already done, ran {8 - len(done)}" in rerun.stdout
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "cells").glob("*.parquet")}
    assert all(after[name] == stamp for name, stamp in done.items())
    assert set(before) <= set(done)
    _check_complete_exactly_once(out, 8, 10)


# ----- spec validation, expressions, CLI -----

def test_expressions_are_arithmetic_only():
    names = {"mu_f": 1.0, "L_f": 3.0}
    assert bench.evaluate_expression("2/(mu_f+L_f)", names) == 0.5
    assert bench.evaluate_expression("sqrt(L_f/mu_f) + max(1, 2)", names) == pytest.approx(math.sqrt(3) + 2)
    for bad in ("__import__('os')", "mu_f.real", "[1][0]", "lambda: 1", "mu"):
        with pytest.raises(ValueError):
            bench.evaluate_expression(bad, names)


def test_spec_validation_names_the_problem():
    with pytest.raises(ValueError, match="unknown algorithm 'nope'; registered: .*gd"):
        bench.plan(tiny_spec(algorithms=[{"name": "nope"}]))
    with pytest.raises(ValueError, match="version"):
        bench.plan(tiny_spec(problems=["quad-kappa10-delta1@v7"]))
    assert {c.problem for c in bench.plan(tiny_spec(problems=["quad-kappa10-delta1@v1"]))} == {"quad-kappa10-delta1"}
    with pytest.raises(ValueError, match="matches no catalogue instance"):
        bench.plan(tiny_spec(problems=["zzz-*"]))
    with pytest.raises(ValueError, match="unknown sweep spec keys"):
        tiny_spec(roundz=3)
    with pytest.raises(ValueError, match="labels must be unique"):
        tiny_spec(algorithms=["gd", "gd"])
    with pytest.raises(ValueError, match="criterion"):
        tiny_spec(criterion="speed")
    with pytest.raises(ValueError, match="rounds"):
        tiny_spec(rounds=0)
    with pytest.raises(ValueError, match="jobs"):
        bench.sweep(tiny_spec(), "unused", jobs=0)
    with pytest.raises(ValueError, match="format"):
        bench.sweep(tiny_spec(), "unused", fmt="xlsx")


def test_noise_level_reaches_the_stochastic_oracle(tmp_path):
    """sigma2 > 0 gives the algorithm a noisy oracle (a stochastic run differs from the exact one, and matches
    a direct run on problem.with_noise), and changes the cell ids; sigma2 = 0 leaves ids unchanged."""
    grid = {"local_steps": [2], "local_step": ["=0.1/L"], "stochastic": [True]}
    base = dict(problems=["quad-kappa10-delta1"], algorithms=[{"name": "fedavg", "grid": grid}], seeds=[0],
                rounds=30, stop_at_eps=False, figure_x=None)
    exact, noisy = tiny_spec(**base), tiny_spec(**base, sigma2=0.5)
    assert [c.id for c in bench.plan(exact)] == [c.id for c in bench.plan(tiny_spec(**base, sigma2=0.0))]
    assert {c.id for c in bench.plan(exact)}.isdisjoint(c.id for c in bench.plan(noisy))
    bench.sweep(exact, tmp_path / "a", progress=False, report=False)
    bench.sweep(noisy, tmp_path / "b", progress=False, report=False)
    gap_a = bench.read_results(tmp_path / "a")["gap"].to_numpy()
    gap_b = bench.read_results(tmp_path / "b")["gap"].to_numpy()
    from fedtheory.algorithms import ALGORITHMS

    problem = catalogue.load("quad-kappa10-delta1")
    algo = ALGORITHMS["fedavg"](local_steps=2, local_step=0.1 / problem.certificate.L, stochastic=True)
    direct = run(algo, problem.with_noise(0.5), 30, seed=0)
    assert gap_b.tobytes() == direct.gap.tobytes() and gap_a.tobytes() != gap_b.tobytes()


def test_algorithm_extras_become_columns(tmp_path):
    """Trace.extra (here OFedIQ/FedOGD regret on an online stream) is kept as extra.* columns, NaN elsewhere."""
    from fedtheory.algorithms import ALGORITHMS

    spec = tiny_spec(problems=["online-ridge-het0p5-drift0p1"], algorithms=["fedogd", "gd"], seeds=[0],
                     rounds=20, stop_at_eps=False, figure_x=None)
    bench.sweep(spec, tmp_path, progress=False, report=False, fmt="csv")
    table = bench.read_results(tmp_path)
    direct = run(ALGORITHMS["fedogd"](), catalogue.load("online-ridge-het0p5-drift0p1"), 20, seed=0)
    rows = table[table["algorithm"] == "fedogd"].sort_values("round")
    assert "extra.regret" in table.columns
    np.testing.assert_array_equal(rows["extra.regret"].to_numpy(), direct.extra["regret"])
    assert table.loc[table["algorithm"] == "gd", "extra.regret"].isna().all()


def test_call_values_build_objects():
    from fedtheory.participation import UniformSubset

    names = {"n": 10, "L": 2.0}
    resolved = bench.resolve_hyperparams({"participation": {"$call": "fedtheory.participation.UniformSubset",
                                                            "size": "=int(n/2)"}, "local_step": "=1/L"}, names)
    assert resolved == {"participation": UniformSubset(size=5), "local_step": 0.5}


def test_cli_bench_with_flags(tmp_path, capsys):
    code = cli_main(["bench", "--problems", "quad-kappa10-*", "--algorithm", "gd", "--grid", "gd.step==1/L_f,=1.5/L_f",
                     "--rounds", "100", "--eps", "1e-6", "--out", str(tmp_path), "--format", "csv", "--quiet",
                     "--jobs", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "2 cells: 0 already done, ran 2" in captured.out
    assert (tmp_path / "results.csv").is_file() and (tmp_path / "rounds_to_eps.md").is_file()
    assert len(list((tmp_path / "figures").glob("convergence__*.png"))) == 1
    assert cli_main(["bench", "--problems", "quad-kappa10-*", "--algorithm", "nope", "--out", str(tmp_path),
                     "--quiet"]) == 2
    assert "unknown algorithm" in capsys.readouterr().err


def test_trace_figure_draws_without_pyplot(tmp_path):
    from fedtheory import plotting

    problem = catalogue.load("quad-kappa10-delta1")
    traces = {"1/L": run(GradientDescent(), problem, 30), "0.5/L": run(GradientDescent(step=0.5 / problem.certificate.L_f),
                                                                       problem, 30)}
    fig = plotting.trace_figure(traces, x="uplink_bits", title="GD")
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), traces["1/L"].cumulative("uplink_bits"))
    fig.savefig(tmp_path / "t.png")
    # Agg-safe by construction: the module draws on Figure objects and never touches pyplot's global state.
    assert "pyplot" not in open(plotting.__file__).read().split('"""', 2)[2]

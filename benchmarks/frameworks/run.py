"""Re-create each framework's virtual environment and re-run its conformance verdicts (docs/frameworks.md).

    python benchmarks/frameworks/run.py                      # every framework below
    python benchmarks/frameworks/run.py flgo appfl           # some of them
    python benchmarks/frameworks/run.py --list               # what would run
    python benchmarks/frameworks/run.py flgo --recreate      # delete and re-install the venv first

Run it from the repository's root with fedtheory importable (``PYTHONPATH=$PWD``) and hypothesis installed. Each
framework gets its own venv under ``--venvs`` (default /work/fw-venvs/<name>), created with the interpreter it
needs and its pinned version (torch 2.13.0 first where it needs torch, the CPU build from :data:`TORCH_CPU`); its
driver ``fedtheory/conformance/drivers/<name>.py`` (loaded by path) runs inside that venv behind the out-of-process
adapter (:class:`fedtheory.conformance.adapters.remote.Remote`), one worker per check. Reports go to ``--out``
(default benchmarks/frameworks/results/<name>/<check>.json and .md, each recording the kit's commit and the
framework's installed version); at the end it prints the table of the verdicts it ran and docs/frameworks.md's
"Summary" block regenerated from the reports (``python -m fedtheory.report.readme README.md docs/frameworks.md``
writes that block).

Not part of CI (network for the installs, minutes per framework): CI tests the flgo, nvflare, fl4health, fedml,
appfl, fedjax, openfl, flsim and fedbiomed drivers (and the fedlab driver, not run here) against stand-ins
(tests/conformance/test_<name>_driver.py). Run time on the shared 2-core machine (two or three runs at once), venvs
already present: flgo 634 s for its six checks (FedDyn alone 442 s), APPFL 329 s, FedJAX 446 s, NVFlare 107 s, FedML
20 s; a new venv added 224 s (flgo), 346 s (APPFL), 45 s (FedJAX), 75 s (NVFlare), 247 s (FedML). docs/frameworks.md
("Run time") has the per-check times.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ROOT / "fedtheory" / "conformance" / "drivers"


@dataclass(frozen=True)
class Check:
    """One verdict: the driver's factory checked as ``family`` with ``hyper``."""

    name: str
    factory: str
    family: str
    hyper: dict = field(default_factory=dict)
    rtol: float = 1e-8
    fixed: tuple[str, ...] = ()  # hyperparameters the framework does not take (no server step): not drawn
    #: "as shipped" (the framework's defaults) or "as the paper" (the option that matches the paper), where an
    #: algorithm is checked both ways; recorded in the report and shown in the summary table
    configuration: str = ""


@dataclass(frozen=True)
class Framework:
    pip: tuple[str, ...]
    checks: tuple[Check, ...]
    torch: bool = False
    python: str = "python3"


SO = "server_optimizer"
SHIPPED, PAPER = "as shipped", "as the paper"
# The float32 rule (docs/frameworks.md, "What a verdict means"): where a framework computes part of a round in
# float32 whatever the model's dtype, the rtol 1e-8 check on the (float64) model is labelled F64 and a second check
# at float32's tolerance (rtol 1e-6) judges the algorithm
F64, F32 = "float64 model", "float32 tolerance"
# The framework's own sampler, as shipped: every check of flgo (FedAvg, FedProx, SCAFFOLD, FedDyn, FedAvgM, FedNova), FedML
# (SCAFFOLD, FedNova) and FLSim (FedAvg, FedAvgM, FedAdam) also runs its family's ``own_sampler`` property (docs/conformance.md, "A
# framework's own sampler"): the driver gives the framework the whole population and ``clients_per_round``, the
# framework's sampler draws (flgo's Server.sample, FedML's _client_sampling, FLSim's SyncServer selector) and the
# driver reports the draw; the kit judges each round for the reported clients and the draws in law. The other
# properties pass the kit's participants, as before. flgo's FedProx switches to 'md' sampling below full
# participation (with replacement, by data volume): fedprox.own_sampler judges it under Li et al.'s law.
FRAMEWORKS: dict[str, Framework] = {
    # flgo's FedAvg and FedProx, NVFlare's FedAvg, FedProx and Scaffold have no server step: the kit keeps it at 1
    "flgo": Framework(("flgo==0.4.4",), torch=True, checks=(
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedavg_uniform", "fedavg_uniform", "fedavg", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("fedprox", "fedprox", "fedprox", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("scaffold", "scaffold", "scaffold"),
        Check("feddyn", "feddyn", "feddyn"),
        Check("fedavgm", "fedavgm", SO, {"optimizer": "fedavgm", "server_step": 1.0, "weighting": "num_examples"}),
        # FedNova: aggregate 'other' (flgo.init's and the command line's default, n_k weights), 'uniform' (the
        # default_option_dict of flgo's multi-run helpers), and local momentum
        Check("fednova", "fednova", "fednova"),
        Check("fednova_uniform", "fednova_uniform", "fednova", {"weighting": "uniform"}),
        Check("fednova_momentum", "fednova", "fednova", {"momentum": 0.5}),
    )),
    "nvflare": Framework(("nvflare==2.9.0",), torch=True, checks=(
        Check("fedavg", "fedavg", "fedavg", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("fedavg_num_examples", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedprox", "fedprox", "fedprox", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("scaffold", "scaffold", "scaffold", fixed=("server_step",)),
        Check("fedopt_sgdm", "fedavgm", SO, {"optimizer": "fedavgm"}, configuration=PAPER),
        Check("fedopt_adam", "fedadam", SO, {"optimizer": "fedadam"}, configuration=PAPER),
        Check("fedopt_adagrad", "fedadagrad", SO, {"optimizer": "fedadagrad", "beta1": 0.0}, configuration=PAPER),
        # the three above run FedOpt configured as the paper (a constant server learning rate); as shipped, FedOpt's
        # default schedule (cosine annealing, T_max = 3, eta_min = 0.9) steps the server learning rate every round
        Check("fedopt_sgdm_shipped", "fedavgm_shipped", SO, {"optimizer": "fedavgm"}, configuration=SHIPPED),
        Check("fedopt_adam_shipped", "fedadam_shipped", SO, {"optimizer": "fedadam"}, configuration=SHIPPED),
        Check("fedopt_adagrad_shipped", "fedadagrad_shipped", SO, {"optimizer": "fedadagrad", "beta1": 0.0},
              configuration=SHIPPED),
        # FedOpt as the paper (constant rate) started from an initial checkpoint, the server optimizer's
        # source_model being the user's model object as built
        Check("fedopt_sgdm_checkpoint", "fedavgm_checkpoint", SO, {"optimizer": "fedavgm"},
              configuration="initial checkpoint"),
    )),
    "appfl": Framework(("appfl==1.12.0",), torch=True, checks=(
        # FedAvgAggregator has no server learning rate: the kit keeps server_step at 1
        Check("fedavg", "fedavg", "fedavg", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("fedavg_sample_size", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedadam", "fedadam", SO, {"optimizer": "fedadam", "initial_v": "tau^2"}),
        Check("fedyogi", "fedyogi", SO, {"optimizer": "fedyogi", "initial_v": "tau^2"}),
        Check("fedadagrad", "fedadagrad", SO, {"optimizer": "fedadagrad", "initial_v": "tau^2"}),
        Check("fedavgm", "fedavgm", SO, {"optimizer": "fedavgm", "server_step": 1.0}),
        # FedProxTrainer clients, FedAvgAggregator: as shipped its default client_weights_mode "equal"; n_k/n with
        # "sample_size"
        Check("fedprox", "fedprox", "fedprox", {"weighting": "uniform"}, fixed=("server_step",),
              configuration=SHIPPED),
        Check("fedprox_sample_size", "fedprox", "fedprox", fixed=("server_step",)),
        # secure aggregation (use_secure_agg; pairwise masks, equal weights): a new server's first round, and the
        # rounds after it (the aggregator's global_state set) at float32's tolerance (the masked flats are float32)
        Check("fedavg_secure", "fedavg_secure", "fedavg", {"weighting": "uniform"}, fixed=("server_step",),
              configuration="secure aggregation"),
        # (the float32 rule: SecureAggregator.flatten_state_dict casts the model to float32, whatever its dtype)
        Check("fedavg_secure_later_rounds_f64", "fedavg_secure_later_rounds", "fedavg", {"weighting": "uniform"},
              fixed=("server_step",), configuration=f"secure aggregation, from round 2, {F64}"),
        Check("fedavg_secure_later_rounds", "fedavg_secure_later_rounds", "fedavg", {"weighting": "uniform"},
              fixed=("server_step",), rtol=1e-6, configuration=f"secure aggregation, from round 2, {F32}"),
        # weighted by sample size as APPFL configures it: secure_agg_client_weights_mode "num_examples"
        Check("fedavg_secure_weighted", "fedavg_secure_weighted", "fedavg", fixed=("server_step",), rtol=1e-6,
              configuration=f"secure aggregation, from round 2, {F32}"),
    )),
    # fedjax 0.0.17 calls jax.tree_map, which jax 0.6 removed: pin the last jax 0.4 and an optax that accepts it
    "fedjax": Framework(("fedjax==0.0.17", "jax==0.4.38", "jaxlib==0.4.38", "optax==0.2.4", "chex<0.1.89"), checks=(
        Check("fedavg", "fedavg", "fedavg"),
        # fed_prox.fed_prox: example-count weights (n_k/n) and sgd on the server, as fed_avg
        Check("fedprox", "fedprox", "fedprox"),
        Check("fedavgm", "fedavgm", SO, {"optimizer": "fedavgm", "weighting": "num_examples"}),
        Check("fedadam", "fedadam", SO, {"optimizer": "fedadam", "weighting": "num_examples"}),
        Check("fedyogi", "fedyogi", SO, {"optimizer": "fedyogi", "weighting": "num_examples"}),
        Check("fedadagrad", "fedadagrad", SO, {"optimizer": "fedadagrad", "beta1": 0.0, "weighting": "num_examples"}),
    )),
    # fedml imports pkg_resources, which setuptools >= 81 no longer ships; and wandb, whose import needs
    # sentry_sdk.Hub, gone in sentry-sdk 2 (a fresh venv resolves 2.x: "module 'sentry_sdk' has no attribute 'Hub'")
    "fedml": Framework(("fedml==0.9.6", "setuptools<81", "sentry-sdk<2"), torch=True, checks=(
        Check("scaffold", "scaffold", "scaffold"),
        # FedNova: plain SGD, local momentum, and the proximal term (for which FedML's tau_eff is sum p_i tau_i).
        # Its trainer passes each client's weight p_i as torch.FloatTensor (float32: relative rounding 6e-8 of each
        # p_i and of p_i / ||a_i||_1; measured up to 1.7e-7 of the iterate scale): the default rtol 1e-8 sees that
        # rounding, rtol 1e-6 does not
        # (every algorithmic slip the kit names moves the output by O(eta))
        # (docs/frameworks.md, "What a verdict means": the float32 rule) rtol 1e-8 on the float64 model, and rtol 1e-6
        # (float32's tolerance) for the algorithm
        Check("fednova", "fednova", "fednova", configuration=F64),
        Check("fednova_f32_weights", "fednova", "fednova", rtol=1e-6, configuration=F32),
        Check("fednova_momentum", "fednova", "fednova", {"momentum": 0.5}, rtol=1e-6, configuration=F32),
        Check("fednova_prox_steps", "fednova", "fednova", {"prox": 0.5, "tau_eff": "steps"}, rtol=1e-6,
              configuration=F32),
        # the single-process FedAvgAPI, FedProxTrainer, FedOptAPI and FedDynTrainer (simulation/sp), as
        # SimulatorSingleProcess builds them: n_k/n weights (FedAvg, FedProx, FedOpt), no server step (FedAvg,
        # FedProx), FedOpt's torch optimizer built with the learning rate only (Adam at torch's defaults)
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedprox", "fedprox", "fedprox", fixed=("server_step",)),
        Check("fedopt_sgd", "fedopt_sgd", "fedavg", configuration="FedOpt, server SGD"),
        Check("fedopt_adam", "fedopt_adam", SO, {"optimizer": "fedadam", "beta1": 0.9, "beta2": 0.999, "tau": 1e-8,
                                                 "weighting": "num_examples"}, fixed=("beta1", "beta2", "tau")),
        Check("feddyn", "feddyn", "feddyn"),
    )),
    # OpenFL weights by the collaborators' data sizes (n_k/n) itself; its adaptive aggregations keep OpenFL's
    # initial_accumulator_value (0 for Adam and Yogi, 0.1 for Adagrad) and name tau "epsilon"
    "openfl": Framework(("openfl==1.9",), checks=(
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedadam", "fedadam", SO, {"optimizer": "fedadam", "weighting": "num_examples"}),
        Check("fedyogi", "fedyogi", SO, {"optimizer": "fedyogi", "weighting": "num_examples"}, configuration=SHIPPED),
        # YogiAdaptiveAggregation raises TypeError when built (a keyword typo): NumPyYogi behind the class's body
        Check("fedyogi_numpy", "fedyogi_numpy", SO, {"optimizer": "fedyogi", "weighting": "num_examples"},
              configuration="epsilo typo corrected"),
        Check("fedadagrad", "fedadagrad", SO, {"optimizer": "fedadagrad", "beta1": 0.0, "initial_v": 0.1,
                                               "weighting": "num_examples"}),
    )),
    # FLSim 0.1.0 does not import on Python 3.11 (a dataclass instance as a field default in
    # flsim/common/timeout_simulator.py): Python 3.10. Its clients weigh by the examples they trained on (n_k);
    # FedAvgOptimizer has no server learning rate; FedAdamOptimizerConfig's default weight_decay is 1e-5
    "flsim": Framework(("flsim==0.1.0",), torch=True, python="python3.10", checks=(
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedavgm", "fedavgm", SO, {"optimizer": "fedavgm", "weighting": "num_examples"}),
        Check("fedadam", "fedadam", SO, {"optimizer": "fedadam", "weighting": "num_examples"}, configuration=SHIPPED),
        Check("fedadam_no_decay", "fedadam_no_decay", SO, {"optimizer": "fedadam", "weighting": "num_examples"},
              configuration="weight_decay=0"),
    )),
    # Fed-BioMed: DefaultStrategy (sampling, sample-size weights) and FedAverage without the researcher-node network;
    # FedAverage sums into a float32 buffer (functional.initialize: torch.zeros_like(val).float()), hence a second
    # check at float32's tolerance
    "fedbiomed": Framework(("fedbiomed==6.4.1",), torch=True, checks=(
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",), configuration=SHIPPED),
        Check("fedavg_f32", "fedavg", "fedavg", fixed=("server_step",), rtol=1e-6, configuration="float32 tolerance"),
    )),
    # fl4health 0.4.2 needs Python 3.10 and pins torch==2.6.0 itself; its FedAvg and FedProx have no server step
    "fl4health": Framework(("fl4health==0.4.2",), python="python3.10", checks=(
        Check("fedavg", "fedavg", "fedavg", fixed=("server_step",)),
        Check("fedavg_uniform", "fedavg_uniform", "fedavg", {"weighting": "uniform"}, fixed=("server_step",)),
        Check("fedprox", "fedprox", "fedprox", fixed=("server_step",)),
        Check("fedprox_uniform", "fedprox_uniform", "fedprox", {"weighting": "uniform"}, fixed=("server_step",)),
        # as shipped: Scaffold's default fraction_fit (1.0); configured as the paper: fraction_fit = |S|/N
        Check("scaffold", "scaffold", "scaffold", configuration=SHIPPED),
        Check("scaffold_fraction", "scaffold_fraction", "scaffold", configuration=PAPER),
        # ClientLevelDPFedAvgM with no noise and no clipping: server momentum (FedAvgM)
        Check("dp_fedavgm", "fedavgm", SO, {"optimizer": "fedavgm"}),
    )),
}


#: PyTorch's index of CPU-only wheels, from which ``install`` takes torch first where a framework needs it.
TORCH_CPU = "https://download.pytorch.org/whl/cpu"


def venv_python(venvs: Path, name: str) -> Path:
    return venvs / name / "bin" / "python"


def install(venvs: Path, name: str, fw: Framework, recreate: bool) -> float:
    """Create the venv with its pins (skipped when it exists, unless ``recreate``); returns seconds spent."""
    start, where = time.perf_counter(), venvs / name
    if recreate and where.exists():
        shutil.rmtree(where)
    if not venv_python(venvs, name).exists():
        subprocess.run([fw.python, "-m", "venv", str(where)], check=True)
        pip = [str(venv_python(venvs, name)), "-m", "pip", "install", "-q"]
        if fw.torch:  # the CPU build (PyPI's Linux wheel is the CUDA one): the frameworks then keep it
            subprocess.run(pip + ["torch==2.13.0", "--index-url", TORCH_CPU], check=True)
        subprocess.run(pip + list(fw.pip), check=True)
    return time.perf_counter() - start


#: What a verdict depends on: the package (kit and drivers) and this file's checks. The reports this script
#: writes and the docs are not among them, so writing a report does not make the next one "dirty".
KIT_PATHS = ("fedtheory", "benchmarks/frameworks/run.py")


def kit_commit(root: Path = ROOT) -> str:
    """The fedtheory commit the reports come from (``git rev-parse HEAD``), with ``+dirty`` when the kit's files
    (:data:`KIT_PATHS`) differ from it (a report from uncommitted code says so); ``"unknown"`` outside a git
    checkout."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                *KIT_PATHS], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def framework_version(python: Path, fw: Framework) -> str:
    """The installed version of the framework's package (the first pin's name), as the venv reports it."""
    package = fw.pip[0].split("==")[0].split("<")[0]
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return f"{package} {out.stdout.strip()}" if out.returncode == 0 else f"{package} (version unreadable)"


def provenance(report: dict, markdown: str, commit: str, version: str, configuration: str = "") -> tuple[dict, str]:
    """The report's JSON and Markdown with the kit's commit, the framework's version and the check's
    configuration ("as shipped" / "as the paper", where it has one) recorded."""
    stamped = {"kit_commit": commit, "framework_version": version,
               **({"configuration": configuration} if configuration else {}), **report}
    return stamped, f"{markdown.rstrip()}\n\nKit commit `{commit}`; framework `{version}`.\n"


def run_check(python: Path, name: str, check: Check) -> Any:
    """``check`` of the driver ``drivers/<name>.py`` run by ``python`` (the framework's venv)."""
    from fedtheory import conformance
    from fedtheory.conformance.adapters.remote import Remote
    # the driver is loaded by path: drivers/flgo.py must not shadow the flgo package on sys.path
    command = [str(python), Remote.WORKER, f"{DRIVERS / name}.py:{check.factory}"]
    with Remote(command, name=f"drivers/{name}.py:{check.factory}") as impl:
        return conformance.check(impl, check.family, rtol=check.rtol, fixed=list(check.fixed), **check.hyper)


def verdict_word(verdict: str) -> str:
    """A report's verdict as the tables write it: ``pass``, ``FAIL`` or ``inconclusive`` (not a FAIL: nothing
    failed, but a core property could not be checked)."""
    words = {"pass": "pass", "fail": "FAIL", "inconclusive": "inconclusive"}
    if verdict not in words:
        raise ValueError(f"verdict must be one of {sorted(words)}, got {verdict!r}")
    return words[verdict]


def summary(results: Path, root: Path = ROOT) -> str:
    """docs/frameworks.md's generated "Summary" block as the reports under ``results`` make it (built by
    :func:`fedtheory.report.frameworks.verdict_table`, not written anywhere: ``python -m fedtheory.report.readme
    README.md docs/frameworks.md`` writes it)."""
    from fedtheory.report.frameworks import verdict_table
    return verdict_table(root, results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"frameworks (default: all of {', '.join(FRAMEWORKS)})")
    parser.add_argument("--venvs", type=Path, default=Path("/work/fw-venvs"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "frameworks" / "results")
    parser.add_argument("--recreate", action="store_true", help="delete and re-install the venvs")
    parser.add_argument("--only", default=None, help="run only the check with this name")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    names = args.names or list(FRAMEWORKS)
    unknown = set(names) - set(FRAMEWORKS)
    if unknown:
        parser.error(f"unknown frameworks {sorted(unknown)}; choose from {', '.join(FRAMEWORKS)}")
    rows = []
    for name in names:
        fw = FRAMEWORKS[name]
        if args.list:
            print(name, " ".join(fw.pip), [c.name for c in fw.checks])
            continue
        spent = install(args.venvs, name, fw, args.recreate)
        commit, version = kit_commit(), framework_version(venv_python(args.venvs, name), fw)
        print(f"{name}: venv ready ({spent:.0f} s), {version}, kit {commit}", flush=True)
        for check in fw.checks:
            if args.only and check.name != args.only:
                continue
            start = time.perf_counter()
            report = run_check(venv_python(args.venvs, name), name, check)
            seconds = time.perf_counter() - start
            folder = args.out / name
            folder.mkdir(parents=True, exist_ok=True)
            stamped, markdown = provenance(report.as_dict(), report.markdown(), commit, version, check.configuration)
            (folder / f"{check.name}.json").write_text(json.dumps(stamped, indent=1))
            (folder / f"{check.name}.md").write_text(markdown)
            failed = [f"{r.prop.id}: {r.diagnosis}" for r in report.failures]
            verdict = verdict_word(report.verdict)
            rows.append((name, check.name, check.family, verdict, seconds, failed))
            print(f"{name} {check.name} as {check.family}: {verdict} ({seconds:.0f} s)")
            print(report.table(), flush=True)
    for name, check, family, verdict, seconds, failed in rows:
        print(f"| {name} | {check} | {family} | {verdict} | {seconds:.0f} s | {'; '.join(failed)[:300]} |")
    if not args.list:
        print(f"\nThe summary of docs/frameworks.md as the reports in {args.out} make it:\n")
        print(summary(args.out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

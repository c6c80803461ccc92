"""Running the claims ledger: in this process, in local worker processes, or on a Dask cluster.

``fedtheory verify`` runs every selected claim and reports them in registry order. The claims are
independent (each check builds its own instances from fixed seeds), so they can run side by side:

* ``jobs=1`` runs them one after the other in this process (:func:`~fedtheory.claims.registry.evaluate`);
* ``jobs=N > 1`` runs them in N worker processes (:class:`concurrent.futures.ProcessPoolExecutor`, started
  with ``spawn``: forking a process whose BLAS threads are already running can deadlock);
* ``scheduler="tcp://host:port"`` (or a ``distributed.Client``) submits them to a Dask cluster (the optional
  ``scale`` extra).

A :class:`~fedtheory.claims.registry.Claim` holds functions and need not pickle, so a worker receives the
claim's id (and the module that registered it) and looks it up in its own registry; it returns the evidence,
the error and the seconds, and this process rebuilds the :class:`~fedtheory.claims.registry.ClaimResult`
around its own claim object. The records are therefore the serial run's, bitwise, provided the arithmetic
is: every task runs under this process's BLAS and OpenMP thread counts (``threadpoolctl``, and the
``*_NUM_THREADS`` environment for libraries loaded during the task), because a multi-threaded BLAS reduction
may sum in a different order with a different number of threads (measured: one ledger number moves by 1.6e-15
with OPENBLAS_NUM_THREADS=1; Dask starts its workers with that setting). ``fedtheory verify --compare`` checks it on a whole
run: no verdict and no measured number may differ.

Load balance: the claims start longest first (by the seconds of a previous run when the caller knows them,
else the claims declared ``cost="slow"`` first, each group in registry order), so that a long claim does not
start last and keep one worker busy alone; the results come back in registry order. The claims of the papers in
:data:`ONE_WORKER_PAPERS` (the torch benchmarks) form a single task: each worker that ran one of them would
import torch (1-2 s of CPU) and start torch's own thread pool next to the other workers' BLAS (measured on two
cores: ``--paper neural`` took 17 CPU-seconds with two workers against 10 in one process, for the same wall time).
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from .claims.registry import REGISTRY, Claim, ClaimResult, Evidence, evaluate
from .validation import check_int
from .worstcase import adversarial_search, pep_worst_case

__all__ = ["available_cores", "run_claims", "run_worst_case", "RunEstimate", "SCALE_EXTRA_HINT"]

#: What to install for ``scheduler=`` (named in the error when dask.distributed is missing).
SCALE_EXTRA_HINT = "pip install 'fedtheory[scale]'"

#: ``progress`` callback: called once per finished claim with its id.
Progress = Callable[[str], None]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows have no sched_getaffinity
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs: int) -> int:
    """``jobs`` as a positive int; ValueError naming ``jobs`` and the valid range otherwise."""
    jobs = check_int("jobs", jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1 (1 runs the claims in this process), got {jobs}")
    return jobs


# ----- what a worker runs -----

#: Environment variables that set the thread count of a numerical library when it loads.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def _load_numerical_libraries() -> None:
    """Load the BLAS and OpenMP libraries the claims use (scipy's BLAS, the OpenMP runtime scikit-learn
    ships), so that their thread counts can be read here and set in a worker before any claim runs."""
    # here, not at the top: loading them is this function's purpose, and scikit-learn takes 1.7 s to import
    import scipy.linalg  # noqa: F401
    import sklearn  # noqa: F401


def thread_settings() -> tuple[dict[str, str | None], dict[str, int]]:
    """This process's thread environment (:data:`THREAD_VARIABLES`) and the thread count of every loaded BLAS
    and OpenMP library, keyed by library file prefix."""
    # serial runs of a bare install import this module without threadpoolctl (a parallel run alone needs it)
    # here, not at the top: only a parallel run reads or sets thread counts
    from threadpoolctl import threadpool_info

    _load_numerical_libraries()
    return ({k: os.environ.get(k) for k in THREAD_VARIABLES},
            {info["prefix"]: int(info["num_threads"]) for info in threadpool_info()})


@contextmanager
def _threads_as(settings: tuple[Mapping[str, str | None], Mapping[str, int]]) -> Iterator[None]:
    """Run a task with the thread settings of the process that submitted it: its environment for libraries
    that load during the task (a Dask worker starts with OMP/OPENBLAS_NUM_THREADS=1), its counts for those
    already loaded."""
    # here, not at the top: as in thread_settings
    from threadpoolctl import threadpool_limits

    environment, limits = settings
    for key, value in environment.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    _load_numerical_libraries()
    with threadpool_limits(limits=dict(limits)):
        yield


def _registered(claim_id: str, module: str) -> Claim:
    """The claim ``claim_id`` of this process's registry, importing ``module`` (its check's) if needed."""
    if claim_id not in REGISTRY:
        importlib.import_module("fedtheory.claims")
        if claim_id not in REGISTRY:
            importlib.import_module(module)
    try:
        return REGISTRY[claim_id]
    except KeyError:
        raise ValueError(f"claim {claim_id!r} is not registered when {module} is imported in a worker process; "
                         f"register it on import of that module, or run it with jobs=1") from None


def _portable(evidence: list[Evidence]) -> list[Evidence]:
    """The evidence as is when it pickles; otherwise with its details reduced to their JSON form (the same
    claims.json record, see :meth:`Evidence.as_dict`)."""
    try:
        pickle.dumps(evidence)
        return evidence
    except Exception:  # noqa: BLE001 - any unpicklable detail (a lambda, a generator, a mapping proxy)
        return [Evidence(e.instance, e.measured, e.theory, e.holds, e.tightness, e.as_dict()["details"])
                for e in evidence]


#: Papers whose claims run together in one worker task (see the module docstring).
ONE_WORKER_PAPERS = ("neural",)


def evaluate_by_id(claims: Sequence[tuple[str, str]], thorough: bool,
                   settings: tuple[dict, dict]) -> list[tuple[list[Evidence], str | None, float, Any]]:
    """Worker task: evaluate registered claims, given as (claim id, module of its check), one after the other
    under the given thread settings; [(evidence, error, seconds, certification)] in the given order."""
    outcomes = []
    with _threads_as(settings):
        for claim_id, module in claims:
            result = evaluate(_registered(claim_id, module), thorough=thorough)
            outcomes.append((_portable(list(result.evidence)), result.error, result.seconds, result.certification))
    return outcomes


def worst_case_by_id(claim_id: str, module: str, evaluations: int, settings: tuple[dict, dict]) -> dict[str, Any]:
    """Worker task: the adversarial search and PEP worst case of one claim (see :func:`run_worst_case`)."""
    with _threads_as(settings):
        return _worst_case_record(_registered(claim_id, module), evaluations)


def _worst_case_record(claim: Claim, evaluations: int) -> dict[str, Any]:
    search = adversarial_search(claim, evaluations=evaluations, seed=0)
    record = {**search.as_dict(), "pep_worst_case": pep_worst_case(claim)}
    # A point where a claim expected to hold fails its own check is a counterexample (its verdict, not the ratio
    # alone, decides: some checks compare with a stated relative tolerance).
    record["counterexample_to_expected"] = claim.expected == "holds" and search.counterexample
    return record


# ----- executors: (task function, argument tuples in start order) -> (position, result) as they finish -----

def _run_local(fn: Callable, tasks: Sequence[tuple], jobs: int) -> Iterator[tuple[int, Any]]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
        futures = {pool.submit(fn, *args): k for k, args in enumerate(tasks)}
        for future in as_completed(futures):
            yield futures[future], _outcome(future)


def dask_client_class() -> type:
    """``distributed.Client``; ImportError naming the extra to install when dask.distributed is missing."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise ImportError(f"a Dask scheduler needs dask.distributed: {SCALE_EXTRA_HINT}") from exc
    return Client


def _run_dask(fn: Callable, tasks: Sequence[tuple], scheduler: Any) -> Iterator[tuple[int, Any]]:
    Client = dask_client_class()
    from distributed import as_completed as dask_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        # Higher priority starts first: the tasks are given longest first.
        futures = {client.submit(fn, *args, pure=False, priority=len(tasks) - k): k for k, args in enumerate(tasks)}
        for future in dask_completed(list(futures)):
            yield futures[future], _outcome(future)
    finally:
        if client is not scheduler:
            client.close()


class _TaskFailed:
    """A task whose worker raised or died (the claim becomes an ERROR result, as a crash in process would)."""

    def __init__(self, message: str) -> None:
        self.message = message


def _outcome(future: Any) -> Any:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - a dead worker process, an unpicklable result, a lost Dask worker
        return _TaskFailed(f"{type(exc).__name__} in the worker: {exc}")


def _map(fn: Callable, tasks: Sequence[tuple], jobs: int, scheduler: Any) -> Iterator[tuple[int, Any]]:
    if scheduler is not None:
        return _run_dask(fn, tasks, scheduler)
    return _run_local(fn, tasks, jobs)


# ----- the ledger -----

def _batches(claims: Sequence[Claim], seconds: Mapping[str, float] | None) -> list[list[int]]:
    """The worker tasks as lists of positions in ``claims``: one task for the claims of
    :data:`ONE_WORKER_PAPERS`, one per other claim; longest first by ``seconds`` (a task's time is its claims'
    sum; a claim without a time counts as infinite: it may be long), without any timing the tasks holding a claim
    declared slow first (the shared task counts as slow); ties in the given order (the sort is stable)."""
    shared = [k for k, c in enumerate(claims) if c.paper in ONE_WORKER_PAPERS]
    batches = ([shared] if shared else []) + [[k] for k, c in enumerate(claims) if c.paper not in ONE_WORKER_PAPERS]
    if seconds:
        return sorted(batches, key=lambda b: -sum(seconds.get(claims[k].id, float("inf")) for k in b))
    return sorted(batches, key=lambda b: not (b is shared or any(claims[k].cost == "slow" for k in b)))


def run_claims(claims: Sequence[Claim], *, thorough: bool = False, jobs: int = 1, scheduler: Any = None,
               seconds: Mapping[str, float] | None = None, progress: Progress | None = None) -> list[ClaimResult]:
    """Evaluate ``claims`` and return their results in the given order.

    ``jobs``: 1 runs them in this process; N > 1 in N spawned worker processes. ``scheduler``: a Dask scheduler
    address or ``distributed.Client`` (then ``jobs`` is ignored). ``seconds``: each claim's duration in an
    earlier run, to start the longest first. ``progress(claim_id)`` is called as each claim finishes. With
    workers, every claim must be registered on import of a module (the built-in claims are, by
    ``fedtheory.claims``); the results equal the serial run's (see the module docstring).
    """
    jobs = check_jobs(jobs)
    if scheduler is None and (jobs == 1 or len(claims) <= 1):
        results = []
        for c in claims:
            results.append(evaluate(c, thorough=thorough))
            if progress is not None:
                progress(c.id)
        return results
    batches = _batches(claims, seconds)
    settings = thread_settings()
    tasks = [([(claims[k].id, claims[k].check.__module__) for k in batch], thorough, settings) for batch in batches]
    results: list[ClaimResult | None] = [None] * len(claims)
    for position, outcome in _map(evaluate_by_id, tasks, jobs, scheduler):
        for j, k in enumerate(batches[position]):
            c = claims[k]
            if isinstance(outcome, _TaskFailed):
                results[k] = ClaimResult(c, [], outcome.message, 0.0)
            else:
                evidence, error, elapsed, certification = outcome[j]
                results[k] = ClaimResult(c, evidence, error, elapsed, certification)
            if progress is not None:
                progress(c.id)
    return results  # type: ignore[return-value]  (every position is filled: one outcome per claim of a task)


class RunEstimate:
    """The time left in a ledger run, from the seconds each claim took in the previous run.

    Each claim weighs its previous seconds (a claim new since that run weighs the previous run's mean: it is
    as long as a typical claim); the run's throughput, in previous-run seconds per second, starts at ``jobs``
    (this machine as fast as the previous run's) and moves to the measured one:

        rate = (done + jobs * P) / (elapsed + P),   remaining = (total - done) / rate,

    with P = :data:`PRIOR_FRACTION` of the expected wall time total / jobs. The first claims to finish are not
    a fair sample on their own (the longest start first and with several workers are still running when a
    short one finishes; a rate from the first claim alone gave 46 minutes for a 12-minute run), so the previous
    run's speed is trusted until about that much of the run has passed. Without a previous run every claim
    weighs 1 and the estimate is the measured rate alone (None until a claim has finished).
    """

    #: The share of the expected wall time during which the previous run's speed outweighs this run's.
    PRIOR_FRACTION = 0.25

    def __init__(self, claim_ids: Sequence[str], previous: Mapping[str, float] | None, jobs: int = 1) -> None:
        known = [float(previous[c]) for c in claim_ids if previous and c in previous]
        self.timed = bool(known)
        default = sum(known) / len(known) if known else 1.0
        self.weights = {c: float(previous[c]) if previous and c in previous else default for c in claim_ids}
        self.total = sum(self.weights.values())
        self.jobs = check_jobs(jobs)
        self.done = 0.0
        self.prior = self.PRIOR_FRACTION * self.total / self.jobs if self.timed else 0.0

    def finished(self, claim_id: str) -> None:
        """Count a finished claim."""
        self.done += self.weights.get(claim_id, 0.0)

    def remaining(self, elapsed: float) -> float | None:
        """Seconds left after ``elapsed`` seconds of the run; None when nothing is known yet."""
        if self.done + self.prior <= 0 or elapsed + self.prior <= 0:
            return None
        rate = (self.done + self.jobs * self.prior) / (elapsed + self.prior)
        return max(0.0, self.total - self.done) / rate


def searchable(result: ClaimResult) -> bool:
    """Whether ``--worst-case`` searches a claim: it declares a space, ran, and has a bound to approach."""
    return result.claim.space is not None and result.error is None and result.worst_tightness is not None


def run_worst_case(results: Iterable[ClaimResult], evaluations: int, *, jobs: int = 1,
                   scheduler: Any = None) -> dict[str, dict]:
    """Adversarial search (:mod:`fedtheory.worstcase`) on every claim that declares an instance space, one
    claim per task when ``jobs`` > 1 or ``scheduler`` is given; {claim id: its record}, in the given order.

    Claims without a space, with an error, or without a bound to approach (identity, rate claims) are skipped.
    """
    jobs = check_jobs(jobs)
    claims = [r.claim for r in results if searchable(r)]
    if scheduler is None and (jobs == 1 or len(claims) <= 1):
        return {c.id: _worst_case_record(c, evaluations) for c in claims}
    settings = thread_settings()
    tasks = [(c.id, c.check.__module__, evaluations, settings) for c in claims]
    found: dict[int, dict] = {}
    for position, outcome in _map(worst_case_by_id, tasks, jobs, scheduler):
        if isinstance(outcome, _TaskFailed):
            raise RuntimeError(f"worst-case search of {claims[position].id}: {outcome.message}")
        found[position] = outcome
    return {c.id: found[k] for k, c in enumerate(claims)}

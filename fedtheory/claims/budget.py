"""A wall-clock budget per claim: a check that stalls (a broken algorithm that never reaches its target, a local
solver that never meets its stopping rule) ends as an ERROR naming the budget instead of hanging the ledger.

The budget is enforced with ``SIGALRM`` (``signal.setitimer``), which Python delivers only on the main thread of
a process: it applies to ``fedtheory verify`` in this process (``--jobs 1``) and in the worker processes of
``--jobs N`` (each claim runs on a worker's main thread, fedtheory/ledger.py). It is not enforced where there
is no ``SIGALRM`` (Windows), on another thread (Dask workers run tasks on threads; a claim evaluated from a
thread of your own), or while another interval timer is already running (e.g. pytest-timeout's), which it
leaves untouched; there a stalling claim runs until it ends. The alarm interrupts Python code between
bytecodes, so a single long call into compiled code (one BLAS call) finishes first.
"""
from __future__ import annotations

import math
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["CLAIM_BUDGET_SECONDS", "THOROUGH_BUDGET_SECONDS", "BudgetExceeded", "wall_clock_budget",
           "budget_enforceable"]

#: Seconds one claim may take on its default instances: 15x the slowest claim of the ledger
#: (neural.crosscheck.logistic, 8 s on two shared cores), so only a stalled check reaches it.
CLAIM_BUDGET_SECONDS = 120.0

#: Seconds one claim may take with ``--thorough`` (its longer horizons and extra instances).
THOROUGH_BUDGET_SECONDS = 1200.0


class BudgetExceeded(BaseException):
    """Raised inside a check when its claim's wall-clock budget runs out. A BaseException, so that no
    ``except Exception`` inside a check or a library it calls can swallow it."""


def budget_enforceable() -> bool:
    """Whether :func:`wall_clock_budget` can interrupt a check here (SIGALRM, the main thread, no timer set)."""
    return (hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0)


@contextmanager
def wall_clock_budget(seconds: float, what: str) -> Iterator[None]:
    """Raise :class:`BudgetExceeded` in the block after ``seconds`` of wall-clock time (``math.inf``: no budget;
    a no-op where :func:`budget_enforceable` is False)."""
    if not seconds > 0:
        raise ValueError(f"the budget must be a number of seconds > 0 (math.inf for none), got {seconds}")
    if math.isinf(seconds) or not budget_enforceable():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise BudgetExceeded(f"{what} exceeded its wall-clock budget of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)

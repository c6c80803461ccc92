"""The per-claim wall-clock budget (fedtheory/claims/budget.py): a stalling check ends as an ERROR naming the
budget, promptly, instead of hanging the ledger."""
from __future__ import annotations

import math
import threading
import time

import pytest

from fedtheory import extend
from fedtheory.claims.budget import CLAIM_BUDGET_SECONDS, budget_enforceable, wall_clock_budget

pytestmark = pytest.mark.skipif(not budget_enforceable(), reason="no SIGALRM on this platform or thread, or a "
                                "timer is already running: the budget is documented as not enforced there")


def _stall(instance: dict) -> extend.Evidence:
    """A check that never returns (a broken algorithm that never reaches its target), and swallows ordinary
    exceptions, as a careless check might."""
    while True:
        try:
            time.sleep(0.01)
        except Exception:  # noqa: BLE001 - the budget must not be swallowed by this
            pass


def test_a_stalling_claim_ends_as_an_error_naming_the_budget():
    # declared inside the test: a claim at module level would be collected by fedtheory's pytest plugin
    stalling = extend.claim(id="mylab.stalls", statement="a check that never ends", kind="qualitative",
                            reference="a test", instances=lambda thorough: [{}])(_stall)
    start = time.perf_counter()
    result = extend.run(stalling, budget=0.5)
    elapsed = time.perf_counter() - start
    assert result.status == "ERROR"
    assert "wall-clock budget of 0.5 s" in result.error and "mylab.stalls" in result.error
    assert 0.5 <= elapsed < 5.0


def test_a_claim_within_its_budget_is_untouched_and_the_timer_is_cleared():
    quick = extend.claim(id="mylab.quick", statement="one instance", kind="bound", reference="a test",
                         instances=lambda thorough: [{}])(lambda inst: extend.verdict("x", 0.5, 1.0, rtol=0.0))
    result = extend.run(quick, budget=5.0)
    assert result.status == "holds" and result.error is None
    import signal
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


def test_the_default_budget_is_the_stated_one():
    assert CLAIM_BUDGET_SECONDS == 120.0


def test_no_budget_off_the_main_thread():
    """SIGALRM reaches only the main thread: elsewhere the budget is a documented no-op, not an error."""
    seen = []
    worker = threading.Thread(target=lambda: seen.append(budget_enforceable()))
    worker.start()
    worker.join()
    assert seen == [False]


@pytest.mark.parametrize("seconds", [0.0, -1.0, math.nan])
def test_bad_budget_names_the_parameter(seconds):
    with pytest.raises(ValueError, match="budget"):
        with wall_clock_budget(seconds, "x"):
            pass

"""The one step runner (runtime/step_driver.py) of the local session and the worker's RunGraph."""
import threading

import pytest

from graphrt import errors
from graphrt.rendezvous import LocalRendezvous, ParsedKey
from graphrt.runtime.runner import Runner
from graphrt.runtime.step import Step
from graphrt.runtime.step_driver import StepDriver

DEV0 = "/job:worker/replica:0/task:0/device:CPU:0"
DEV1 = "/job:worker/replica:0/task:1/device:CPU:0"


class _StopsOnAbort:
    """A started partition that runs until its step is aborted, waiting for a tensor from task 1."""

    def __init__(self, step):
        self.step = step
        self.key = ParsedKey(DEV1, 1, DEV0, "edge_3_a")
        step.rendezvous.recv_async(self.key, lambda *_: None)

    def loop(self, deferred):
        self.step.add_abort_callback(lambda err: self.step.executor_done(err), "the test's partition")


@pytest.fixture
def driver():
    runner = Runner(2, name="test-step-driver")
    try:
        yield StepDriver(runner)
    finally:
        runner.shutdown()


def _run_as_worker(driver, step, runs, timeout_ms, where):
    """A worker's RunGraph: start_step returns at once and calls back when the step is over."""
    finished = threading.Event()
    driver.start_step(step, runs, timeout_ms, finished.set, where=where)
    assert finished.wait(10)


@pytest.mark.parametrize("worker", [True, False], ids=["worker", "local"])
def test_a_late_step_fails_with_the_one_deadline_error(driver, worker):
    step = Step(7, LocalRendezvous(7), [], 0, 1)
    run = _StopsOnAbort(step)
    where = " on /job:worker/replica:0/task:0" if worker else ""
    if worker:
        _run_as_worker(driver, step, [run], 100, where)
    else:
        driver.run_step(step, [run], 100)
    assert step.done and isinstance(step.error, errors.DeadlineExceededError)
    lines = step.error.message.splitlines()
    assert lines[0] == f"Timed out after 100 ms waiting for step 7{where} to finish; still waiting:"
    assert lines[1] == "1 rendezvous entry waiting:"
    assert "recv waiting" in lines[2] and f"for send: {DEV1} -> {DEV0} edge_3_a" in lines[2]
    assert lines[3] == "  the test's partition"


def test_an_interrupted_caller_stops_the_step_before_it_raises(driver):
    step = Step(8, LocalRendezvous(8), [], 0, 1)
    run = _StopsOnAbort(step)

    class Interrupted(Exception):
        pass

    started = run.loop

    def interrupting(deferred):
        started(deferred)
        raise Interrupted()
    run.loop = interrupting
    with pytest.raises(Interrupted):
        driver.run_step(step, [run], 0)
    assert step.done and isinstance(step.error, errors.CancelledError)
    assert str(step.error) == "Step 8 was interrupted (Interrupted)"

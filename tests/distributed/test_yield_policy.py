"""YieldPolicy: a thread yields its core after a send unless yields have started to cost slices."""
import time

import numpy as np
import pytest

from graphrt.distributed.yield_policy import CALM_YIELDS, FIRST_PAUSE_S, LONG_S, MAX_PAUSE_S, YieldPolicy

from ..rendezvous.suite import WAIT
from .test_caller_reads import _ends, pair  # noqa: F401 - the module's two-worker fixture


class _Machine:
    """A fake clock and a sched_yield that takes whatever the test says the next one takes."""

    def __init__(self):
        self.now = 100.0
        self.next_yield_s = 2e-6
        self.yields = 0

    def clock(self):
        return self.now

    def sched_yield(self):
        self.yields += 1
        self.now += self.next_yield_s

    def policy(self):
        return YieldPolicy(clock=self.clock, sched_yield=self.sched_yield)


def _sends(policy, n):
    for _ in range(n):
        policy.after_send()


def test_short_yields_go_on_and_one_long_yield_alone_does_not_pause():
    machine = _Machine()
    policy = machine.policy()
    _sends(policy, 5)
    assert machine.yields == policy.yields == 5
    machine.next_yield_s = 3 * LONG_S  # the other task's work, once
    _sends(policy, 1)
    machine.next_yield_s = 2e-6
    _sends(policy, 3)
    assert machine.yields == 9 and policy.long_yields == 1 and policy.yielding


def test_two_long_yields_in_a_row_pause_it_and_pauses_double_until_calm():
    machine = _Machine()
    policy = machine.policy()
    machine.next_yield_s = 2e-3  # a CPU hog's time slice
    _sends(policy, 2)
    assert not policy.yielding and "paused" in repr(policy)
    _sends(policy, 10)
    assert machine.yields == 2  # no yield while paused
    machine.now += FIRST_PAUSE_S + 0.001
    _sends(policy, 2)  # the hog is still there: paused again, twice as long
    assert machine.yields == 4 and not policy.yielding
    machine.now += FIRST_PAUSE_S + 0.001
    _sends(policy, 1)
    assert machine.yields == 4  # 2 * FIRST_PAUSE_S not yet over
    pause = 2 * FIRST_PAUSE_S
    while pause < MAX_PAUSE_S:  # the pauses double, up to MAX_PAUSE_S
        machine.now += pause + 0.001
        _sends(policy, 2)
        pause *= 2
        assert not policy.yielding
    machine.now += MAX_PAUSE_S + 0.001
    _sends(policy, 2)
    machine.now += MAX_PAUSE_S - 0.01
    assert not policy.yielding  # still MAX_PAUSE_S, not more
    machine.now += 0.02
    machine.next_yield_s = 2e-6  # the hog is gone
    _sends(policy, CALM_YIELDS)
    machine.next_yield_s = 2e-3  # a new hog: the pauses start over from the first
    _sends(policy, 2)
    machine.now += FIRST_PAUSE_S + 0.01
    assert policy.yielding


def test_without_sched_yield_nothing_happens():
    policy = YieldPolicy(sched_yield=None)
    _sends(policy, 3)
    assert policy.yields == 0 and not policy.yielding


class _Recording(YieldPolicy):
    def __init__(self):
        super().__init__(sched_yield=lambda: None)
        self.calls = 0

    def after_send(self):
        self.calls += 1
        super().after_send()


def test_a_pull_yields_after_the_request_and_after_the_reply(pair, monkeypatch):  # noqa: F811
    step_id, sender, receiver, key = _ends(pair, "edge_yield")
    requester, answerer = _Recording(), _Recording()
    monkeypatch.setattr(pair.workers[1].channels, "yield_policy", requester)
    monkeypatch.setattr(pair.workers[0], "yield_policy", answerer)
    value = np.arange(8, dtype=np.float32)
    sender.send(key, value)
    got, dead = receiver.recv(key, timeout=WAIT)
    np.testing.assert_array_equal(got, value)
    assert not dead
    deadline = time.monotonic() + WAIT
    while answerer.calls < 1 and time.monotonic() < deadline:
        time.sleep(0.001)  # the worker yields after its send: the reply may arrive before that
    assert requester.calls == 1 and answerer.calls == 1  # the RecvTensor request, and its reply
    pair.cleanup(step_id)


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])

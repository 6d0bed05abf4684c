"""YieldPolicy: a thread yields its core after a send, at the first send of a burst, unless yields have
started to cost slices; a master yields once its RunGraphs to other tasks are out, and a serving loop
after a reply it sends while it runs a step."""
from graphrt.distributed.yield_policy import (BURST_GAP_S, CALM_YIELDS, FIRST_PAUSE_S, LONG_S, MAX_PAUSE_S,
                                              YieldPolicy)

from .test_step_latency_paths import _inline_remote_step


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


def _sends(policy, n, machine, apart=2 * BURST_GAP_S):
    for _ in range(n):
        machine.now += apart
        policy.after_send()


def test_short_yields_go_on_and_one_long_yield_alone_does_not_pause():
    machine = _Machine()
    policy = machine.policy()
    _sends(policy, 5, machine)
    assert machine.yields == policy.yields == 5
    machine.next_yield_s = 3 * LONG_S  # the other task's work, once
    _sends(policy, 1, machine)
    machine.next_yield_s = 2e-6
    _sends(policy, 3, machine)
    assert machine.yields == 9 and policy.long_yields == 1 and policy.yielding


def test_only_the_first_send_of_a_burst_yields():
    machine = _Machine()
    policy = machine.policy()
    _sends(policy, 1, machine)
    _sends(policy, 50, machine, apart=BURST_GAP_S / 4)  # 50 RecvTensors fanned in: ZeroMQ's thread is awake
    assert machine.yields == 1
    _sends(policy, 1, machine)
    assert machine.yields == 2


def test_two_long_yields_in_a_row_pause_it_and_pauses_double_until_calm():
    machine = _Machine()
    policy = machine.policy()
    machine.next_yield_s = 2e-3  # a CPU hog's time slice
    _sends(policy, 2, machine)
    assert not policy.yielding and "paused" in repr(policy)
    _sends(policy, 10, machine)
    assert machine.yields == 2  # no yield while paused
    machine.now += FIRST_PAUSE_S + 0.001
    _sends(policy, 2, machine)  # the hog is still there: paused again, twice as long
    assert machine.yields == 4 and not policy.yielding
    machine.now += FIRST_PAUSE_S + 0.001
    _sends(policy, 1, machine)
    assert machine.yields == 4  # 2 * FIRST_PAUSE_S not yet over
    pause = 2 * FIRST_PAUSE_S
    while pause < MAX_PAUSE_S:  # the pauses double, up to MAX_PAUSE_S
        machine.now += pause + 0.001
        _sends(policy, 2, machine)
        pause *= 2
        assert not policy.yielding
    machine.now += MAX_PAUSE_S + 0.001
    _sends(policy, 2, machine)
    machine.now += MAX_PAUSE_S - 0.01
    assert not policy.yielding  # still MAX_PAUSE_S, not more
    machine.now += 0.02
    machine.next_yield_s = 2e-6  # the hog is gone
    _sends(policy, CALM_YIELDS, machine)
    machine.next_yield_s = 2e-3  # a new hog: the pauses start over from the first
    _sends(policy, 2, machine)
    machine.now += FIRST_PAUSE_S + 0.01
    assert policy.yielding


def test_without_sched_yield_nothing_happens():
    policy = YieldPolicy(sched_yield=None)
    policy.after_send()
    assert policy.yields == 0 and not policy.yielding


class _Recording(YieldPolicy):
    def __init__(self):
        super().__init__(sched_yield=lambda: None)
        self.calls = 0

    def after_send(self):
        self.calls += 1
        super().after_send()


def test_a_step_yields_after_the_masters_run_graph_and_the_inline_runs_tensor():
    with _inline_remote_step() as (remote, sess, y, events):
        master, worker = _Recording(), _Recording()
        sess._backend._yield_policy = master
        remote.yield_policy = worker
        del events[:]
        for _ in range(3):
            assert sess.run(y) == 7.0
        # task 1's inline run answers task 0's RecvTensor: one yield; its RunGraph reply, sent as the
        # loop goes to sleep, none; the master, once task 1's RunGraph is out: one
        assert events.count("tensor") == 3
        assert master.calls == 3 and worker.calls == 3

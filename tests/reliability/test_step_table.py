"""Bounded worker state, in process: the StepTable and GraphQuota keep per-peer state bounded."""
import pytest

from graphrt import errors
from graphrt.distributed.step_table import GraphQuota, StepTable
from graphrt.rendezvous import RendezvousManager, parse_key
from graphrt.rendezvous.local import LocalRendezvous

DEV = "/job:w/replica:0/task:0/device:CPU:0"
KEY = parse_key(f"{DEV};0000000000000001;{DEV};edge_1;0:0")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def table(**kw):
    clock = Clock()
    manager = RendezvousManager(LocalRendezvous)
    return StepTable(manager, "/job:w/replica:0/task:0", clock=clock, **kw), manager, clock


def waiter(outcomes):
    return lambda error, value, is_dead: outcomes.append(error)


def test_unknown_steps_are_capped_and_the_oldest_is_evicted_with_an_error():
    steps, manager, _ = table(max_unowned=3)
    outcomes = []
    for step_id in range(1, 6):
        steps.for_recv(step_id, KEY.full_key)[0].recv_async(KEY, waiter(outcomes))
    assert sorted(manager.active_steps()) == [3, 4, 5]
    assert len(outcomes) == 2 and all(isinstance(e, errors.AbortedError) for e in outcomes)
    assert "was evicted" in outcomes[0].message and "Step 1 " in outcomes[0].message
    assert steps.stats()["evicted"] == 2


def test_unknown_steps_expire():
    steps, manager, clock = table(unowned_ttl_s=60)
    outcomes = []
    steps.for_recv(7, KEY.full_key)[0].recv_async(KEY, waiter(outcomes))
    clock.now += 59
    steps.sweep()
    assert manager.active_steps() == [7] and outcomes == []
    clock.now += 2
    steps.sweep()
    assert manager.active_steps() == []
    assert isinstance(outcomes[0], errors.AbortedError) and "waited longer than 60s" in outcomes[0].message


def test_waiting_requests_in_unknown_steps_are_capped():
    steps, manager, _ = table(max_unowned_recvs=4)
    for i in range(4):
        steps.for_recv(1, f"k{i}")
    # a fifth request for the same step cannot evict its own step: refused
    with pytest.raises(errors.ResourceExhaustedError) as raised:
        steps.for_recv(1, "k4")
    assert "too many RecvTensor requests" in raised.value.message and raised.value.key == "k4"
    # a request for another step evicts the oldest unknown step
    steps.for_recv(2, "k")
    assert manager.active_steps() == [2]


def test_answered_requests_no_longer_count_as_waiting():
    steps, manager, _ = table(max_unowned_recvs=4)
    for i in range(10):  # ten pulls from a step that does not run here, each answered before the next
        _, ticket = steps.for_recv(1, f"k{i}")
        assert steps.stats()["unowned_recvs"] == 1
        steps.recv_answered(1, ticket)
    assert steps.stats()["unowned_recvs"] == 0
    tickets = [steps.for_recv(1, f"w{i}")[1] for i in range(4)]  # four that wait fill the cap again
    with pytest.raises(errors.ResourceExhaustedError):
        steps.for_recv(1, "w4")
    steps.recv_answered(1, tickets[0])
    assert steps.stats()["unowned_recvs"] == 3
    steps.for_recv(1, "w4")


def test_a_ticket_from_before_the_run_counts_nothing_afterwards():
    steps, _, _ = table()
    _, early = steps.for_recv(5, "k")       # before the RunGraph: counted
    assert early is not None and steps.stats()["unowned_recvs"] == 1
    steps.for_run(5)                        # adopted: its requests no longer count
    _, during = steps.for_recv(5, "k2")
    assert during is None and steps.stats()["unowned_recvs"] == 0
    steps.release(5)
    _, late = steps.for_recv(5, "k3")       # after it: counted again, in a new entry
    steps.recv_answered(5, early)           # the early request's answer comes only now
    assert steps.stats()["unowned_recvs"] == 1
    steps.recv_answered(5, late)
    assert steps.stats()["unowned_recvs"] == 0


def test_a_running_step_is_never_evicted_or_expired_and_waits_for_cleanup_afterwards():
    steps, manager, clock = table(max_unowned=1, unowned_ttl_s=10)
    steps.for_recv(5, "k")                 # arrives before the RunGraph
    rendezvous = steps.for_run(5)          # adopted: owned while it runs
    for step_id in range(10, 20):
        steps.for_recv(step_id, "k")
    clock.now += 100
    steps.sweep()
    assert 5 in manager and manager.find(5) is rendezvous
    assert steps.stats()["unowned"] == 0   # the others expired
    steps.release(5)                       # finished, not yet cleaned up: unowned again, bounded
    assert steps.stats()["unowned"] == 1 and 5 in manager
    steps.cleanup(5)
    assert 5 not in manager and steps.stats()["unowned"] == 0


def test_abort_of_an_unknown_step_is_remembered_without_a_rendezvous():
    steps, manager, _ = table(max_aborted=100)
    for step_id in range(1, 1001):
        steps.abort(step_id, errors.CancelledError("x" * 5000))
    assert len(manager) == 0 and steps.stats()["aborted"] == 100
    with pytest.raises(errors.CancelledError) as raised:
        steps.for_run(1000)
    assert errors.is_derived(raised.value) and len(raised.value.message) == 1024
    with pytest.raises(errors.CancelledError):
        steps.for_recv(999, "k")
    steps.for_run(1)                       # forgotten long ago (LRU): may run


def test_an_aborted_step_leaves_nothing_behind():
    steps, manager, _ = table()
    outcomes = []
    steps.for_recv(1, KEY.full_key)[0].recv_async(KEY, waiter(outcomes))   # waiting before its RunGraph
    steps.abort(1, errors.CancelledError("closed"))
    assert 1 not in manager and isinstance(outcomes[0], errors.CancelledError)
    steps.for_run(2)                                                    # running when the abort comes
    steps.abort(2, errors.CancelledError("closed"))
    assert manager.find(2).status is not None                           # aborted, kept while it runs
    steps.release(2)
    assert len(manager) == 0 and steps.stats()["unowned"] == 0


def test_cleaned_steps_refuse_late_requests():
    steps, manager, _ = table()
    steps.for_recv(3, "k")
    steps.cleanup(3)
    assert 3 not in manager
    with pytest.raises(errors.AbortedError, match="already cleaned up"):
        steps.for_recv(3, "k")
    with pytest.raises(errors.AbortedError, match="already cleaned up"):
        steps.for_run(3)


def test_graph_quota_evicts_the_least_recently_used_graphs():
    quota = GraphQuota("/job:w/replica:0/task:0", max_graphs=3, max_bytes=100)
    assert quota.admit("a", 30) == [] and quota.admit("b", 30) == [] and quota.admit("c", 30) == []
    quota.touch("a")                                  # used by a step: b is now the oldest
    assert quota.admit("d", 10) == ["b"]              # count
    assert quota.admit("e", 40) == ["c"]              # bytes: 30 + 30 + 10 + 40 > 100
    assert quota.admit("f", 90) == ["a", "d", "e"]    # until it fits
    assert quota.stats() == {"graphs": 1, "bytes": 90, "evicted": 5}
    quota.release("f")
    assert quota.stats()["bytes"] == 0
    with pytest.raises(errors.ResourceExhaustedError, match="a graph of 101 bytes is larger"):
        quota.admit("g", 101)

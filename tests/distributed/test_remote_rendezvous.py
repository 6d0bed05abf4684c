"""RemoteRendezvous: the shared rendezvous contract across two worker services
connected over ZeroMQ (sender and receiver are different RemoteRendezvous
instances in different workers, talking RecvTensor over TCP), plus the
cases only a remote rendezvous has."""
import itertools
import threading

import numpy as np
import pytest

from graphrt import errors
from graphrt.distributed import wire
from graphrt.distributed.cluster import ClusterSpec, free_port
from graphrt.distributed.worker import WorkerService
from graphrt.rendezvous import ParsedKey, RendezvousManager
from graphrt.rendezvous.base import SEND_WAITING
from graphrt.rendezvous.remote import RemoteRendezvous

from ..rendezvous.suite import (WAIT, Recorder, RendezvousContract, RendezvousEnds, RendezvousManagerContract,
                                _wait_until)

_step_ids = itertools.count(1000)


class Pair:
    """Two in-process worker services of one cluster, each with its own sockets."""

    def __init__(self):
        ports = [free_port()]
        while len(ports) < 2:
            port = free_port()
            if port not in ports:
                ports.append(port)
        self.cluster = ClusterSpec({"worker": [f"127.0.0.1:{p}" for p in ports]})
        self.workers = [WorkerService(self.cluster, "worker", i) for i in range(2)]

    def device(self, i):
        return self.workers[i].devices[0]

    def ends(self, step_id):
        sender = self.workers[0].rendezvous.find_or_create(step_id)
        receiver = self.workers[1].rendezvous.find_or_create(step_id)
        return RendezvousEnds(sender, receiver, src_device=self.device(0).name, dst_device=self.device(1).name,
                              incarnation=self.device(0).incarnation)

    def cleanup(self, step_id):
        for w in self.workers:
            w.rendezvous.cleanup(step_id)

    def stop(self):
        for w in self.workers:
            w.stop()


@pytest.fixture(scope="module")
def pair():
    p = Pair()
    yield p
    p.stop()


@pytest.fixture
def make_rendezvous(pair):
    steps = []

    def make():
        step_id = next(_step_ids)
        steps.append(step_id)
        return pair.ends(step_id)
    yield make
    for step_id in steps:
        pair.cleanup(step_id)


class TestRemoteRendezvousContract(RendezvousContract):
    # done runs on the receiving worker's socket thread, not on the thread that completes the pair
    callbacks_run_on_completing_thread = False
    # errors that cross the process boundary keep their type and message, not their identity
    errors_keep_identity = False


class TestRemoteRendezvousManagerContract(RendezvousManagerContract):
    @pytest.fixture
    def make_manager(self):
        task = "/job:localhost/replica:0/task:0"
        return lambda: RendezvousManager(lambda step_id: RemoteRendezvous(step_id, task, peers=None))


# -- remote-only cases ----------------------------------------------------------------------

def test_tensors_cross_workers_intact(make_rendezvous):
    ends = make_rendezvous()
    values = {"f32": np.random.RandomState(0).randn(64, 33).astype(np.float32),
              "i64": np.arange(10, dtype=np.int64), "empty": np.zeros((0, 4)), "scalar": np.float64(3.5),
              "big": np.arange(1 << 20, dtype=np.float32), "str": np.array([b"a", b"bc"], dtype=object)}
    for name, value in values.items():
        ends.sender.send(ends.key(f"edge_{name}"), value)
    for name, value in values.items():
        got, dead = ends.receiver.recv(ends.key(f"edge_{name}"), timeout=WAIT)
        assert not dead and type(got) is type(value)
        np.testing.assert_array_equal(got, value)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and not got.flags.writeable


def test_recv_tensor_before_the_step_exists_waits_for_it(pair):
    # The receiver asks before the sender's worker has heard of the step (find-or-create).
    step_id = next(_step_ids)
    receiver = pair.workers[1].rendezvous.find_or_create(step_id)
    key = ParsedKey(pair.device(0).name, pair.device(0).incarnation, pair.device(1).name, "edge_early")
    done = Recorder()
    receiver.recv_async(key, done)
    _wait_until(lambda: step_id in pair.workers[0].rendezvous)
    pair.workers[0].rendezvous.find(step_id).send(key, np.ones(3))
    error, value, is_dead = done.wait()
    assert error is None and value.tolist() == [1, 1, 1]
    pair.cleanup(step_id)


def test_answered_pulls_from_a_step_that_does_not_run_there_are_not_capped(make_rendezvous, pair):
    # A sender whose RunGraph has ended keeps the step (unowned) until its CleanupStep; the receiver may
    # pull from it for a while. The cap is on requests that wait there, not on answered ones.
    table = pair.workers[0].step_table
    ends = make_rendezvous()
    before = table.stats()["unowned_recvs"]  # what earlier tests of the module left waiting
    old_cap, table.max_unowned_recvs = table.max_unowned_recvs, before + 4
    try:
        for i in range(12):
            ends.sender.send(ends.key(f"edge_{i}"), np.full(2, i, np.int32))
        for i in range(12):
            got, _ = ends.receiver.recv(ends.key(f"edge_{i}"), timeout=WAIT)
            assert got.tolist() == [i, i]
        assert table.stats()["unowned_recvs"] == before
        waiting = [Recorder() for _ in range(5)]  # five that wait: the fifth is refused, naming its key
        for i, done in enumerate(waiting):
            ends.receiver.recv_async(ends.key(f"edge_wait_{i}"), done)
        error, _, _ = waiting[4].wait()
        assert isinstance(error, errors.ResourceExhaustedError) and "too many RecvTensor requests" in error.message
        assert error.key == ends.key("edge_wait_4").full_key
    finally:
        table.max_unowned_recvs = old_cap


def test_stale_incarnation_is_aborted_naming_the_device(make_rendezvous, pair):
    ends = make_rendezvous()
    ends.incarnation = pair.device(0).incarnation ^ 0x5A5A
    with pytest.raises(errors.AbortedError) as raised:
        ends.receiver.recv(ends.key("edge_old_life"), timeout=WAIT)
    assert "RecvTensor expects a different device incarnation" in raised.value.message
    assert pair.device(0).name in raised.value.message
    assert "worker job was probably restarted" in raised.value.message


def test_keys_must_start_and_end_on_the_right_workers(make_rendezvous, pair):
    ends = make_rendezvous()
    key = ends.key("edge_wrong_way")
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid rendezvous key \(src\)"):
        ends.receiver.send(key, 1)  # the receiver's worker is not the source
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid rendezvous key \(dst\)"):
        ends.sender.recv(key, timeout=WAIT)  # the sender's worker is not the destination
    unknown = ParsedKey("/job:ps/replica:0/task:0/device:CPU:0", 1, ends.dst_device, "edge_nobody")
    with pytest.raises(errors.InternalError, match="No worker known as /job:ps/replica:0/task:0"):
        ends.receiver.recv(unknown, timeout=WAIT)


def test_dead_values_travel(make_rendezvous):
    ends = make_rendezvous()
    ends.sender.send(ends.key("edge_dead"), None, is_dead=True)
    assert ends.receiver.recv(ends.key("edge_dead"), timeout=WAIT) == (None, True)


def test_abort_cancels_requests_on_the_network_and_cleanup_releases_the_sender(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    done = Recorder()
    ends.receiver.recv_async(ends.key("edge_never"), done)
    # the long poll is registered on the sending worker
    _wait_until(lambda: len(ends.sender.pending()) == 1)
    ends.receiver.start_abort(errors.CancelledError("client pressed Ctrl-C"))
    assert isinstance(done.wait()[0], errors.CancelledError)
    assert ends.receiver.pending() == []
    pair.workers[0].rendezvous.cleanup(step_id)   # the master's CleanupStep
    assert ends.sender.pending() == []
    pair.cleanup(step_id)


def test_failed_sender_step_reaches_the_receiver_as_a_derived_error(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    done = Recorder()
    ends.receiver.recv_async(ends.key("edge_x"), done)
    _wait_until(lambda: len(ends.sender.pending()) == 1)
    ends.sender.start_abort(errors.InternalError("matmul exploded"))
    error = done.wait()[0]
    assert type(error) is errors.InternalError and error.message == "matmul exploded"
    assert errors.is_derived(error)  # the receiver's step failed because the sender's did
    pair.cleanup(step_id)


def test_requests_for_a_cleaned_step_fail_instead_of_waiting(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    pair.workers[0]._cleanup_step(b"", wire.Message("CleanupStep", 0, {"step_id": step_id}, []))
    with pytest.raises(errors.AbortedError, match=f"Step {step_id} was already cleaned up"):
        ends.receiver.recv(ends.key("edge_late"), timeout=WAIT)
    pair.cleanup(step_id)


def test_a_peer_that_stops_aborts_waiting_recvs_with_shutdown():
    other = Pair()
    try:
        ends = other.ends(1)
        done = Recorder()
        ends.receiver.recv_async(ends.key("edge_stop"), done)
        _wait_until(lambda: len(ends.sender.pending()) == 1)
        other.workers[0].stop()
        error = done.wait()[0]
        assert isinstance(error, errors.AbortedError) and error.message == "Shutdown"
    finally:
        other.stop()


def test_a_peer_that_goes_away_fails_waiting_recvs_with_unavailable(monkeypatch):
    pair = Pair()
    try:
        ends = pair.ends(1)
        ends.sender.send(ends.key("edge_warmup"), 1)
        assert ends.receiver.recv(ends.key("edge_warmup"), timeout=WAIT) == (1, False)
        waiting = [Recorder() for _ in range(3)]
        for i, done in enumerate(waiting):
            ends.receiver.recv_async(ends.key(f"edge_lost_{i}"), done)
        _wait_until(lambda: len(ends.sender.pending()) == 3)
        # A crash, not a shutdown: the sending worker's socket closes with the requests unanswered.
        monkeypatch.setattr(pair.workers[0].rendezvous, "abort_all", lambda error: None)
        pair.workers[0].stop()
        for done in waiting:
            error = done.wait()[0]
            assert isinstance(error, errors.UnavailableError)
            assert "/job:worker/replica:0/task:0" in error.message and "connection was lost" in error.message
    finally:
        pair.stop()


def test_many_concurrent_large_transfers(make_rendezvous):
    ends = make_rendezvous()
    value = np.arange(1 << 18, dtype=np.float32)
    keys = [ends.key("edge_many", (0, i)) for i in range(16)]
    got = [None] * len(keys)

    def recv(i):
        got[i] = ends.receiver.recv(keys[i], timeout=WAIT)[0]
    threads = [threading.Thread(target=recv, args=(i,)) for i in range(len(keys))]
    for t in threads:
        t.start()
    for k in keys:
        ends.sender.send(k, value)
    for t in threads:
        t.join(WAIT)
    assert all(g is not None and np.array_equal(g, value) for g in got)


# -- prefetch: asking before the recv runs ---------------------------------------------------

def test_a_prefetched_key_is_asked_for_at_once_and_received_from_the_local_table(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    key = ends.key("edge_prefetched")
    ends.receiver.prefetch(key)
    ends.receiver.prefetch(key)  # asked for once
    _wait_until(lambda: len(ends.sender.pending()) == 1)  # the long poll waits on the sender already
    ends.sender.send(key, np.arange(4.0))
    # arrived: it waits in the receiver's own table as a send, for the recv to come
    _wait_until(lambda: [r.kind for r in ends.receiver.pending()] == [SEND_WAITING])
    value, is_dead = ends.receiver.recv(key, timeout=WAIT)
    assert not is_dead and value.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ends.receiver.pending() == [] and ends.sender.pending() == []
    with pytest.raises(errors.AbortedError, match="Duplicated recv"):
        ends.receiver.recv(key, timeout=WAIT)
    pair.cleanup(step_id)


def test_a_recv_that_runs_before_the_prefetched_value_arrives_waits_for_it(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    key = ends.key("edge_waiting")
    ends.receiver.prefetch(key)
    done = Recorder()
    ends.receiver.recv_async(key, done)
    # one request on the network (the prefetch's); the recv waits in the local table behind it, and
    # pending() lists the key once
    _wait_until(lambda: len(ends.sender.pending()) == 1)
    assert [r.key.full_key for r in ends.receiver.pending()] == [key.full_key]
    ends.sender.send(key, None, is_dead=True)
    assert done.wait() == (None, None, True)
    pair.cleanup(step_id)


def test_a_failed_prefetch_fails_the_recv_with_the_senders_error(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    key = ends.key("edge_fails")
    ends.receiver.prefetch(key)
    _wait_until(lambda: len(ends.sender.pending()) == 1)
    ends.sender.start_abort(errors.InternalError("matmul exploded"))
    _wait_until(lambda: ends.receiver.status is not None)
    with pytest.raises(errors.InternalError, match="matmul exploded") as raised:
        ends.receiver.recv(key, timeout=WAIT)
    assert errors.is_derived(raised.value)
    pair.cleanup(step_id)


def test_aborting_a_step_cancels_its_prefetches(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    ends.receiver.prefetch(ends.key("edge_a"))
    ends.receiver.prefetch(ends.key("edge_b"))
    _wait_until(lambda: len(ends.sender.pending()) == 2)
    ends.receiver.start_abort(errors.CancelledError("client pressed Ctrl-C"))
    assert ends.receiver.pending() == []
    with pytest.raises(errors.CancelledError):
        ends.receiver.recv(ends.key("edge_a"), timeout=WAIT)
    pair.workers[0].rendezvous.cleanup(step_id)
    assert ends.sender.pending() == []
    pair.cleanup(step_id)


def test_prefetch_leaves_local_and_unknown_keys_alone(pair):
    step_id = next(_step_ids)
    ends = pair.ends(step_id)
    local = ParsedKey(pair.device(1).name, pair.device(1).incarnation, pair.device(1).name, "edge_local")
    ends.receiver.prefetch(local)
    assert ends.receiver.pending() == []
    ends.receiver.send(local, 7)
    assert ends.receiver.recv(local, timeout=WAIT) == (7, False)
    unknown = ParsedKey("/job:ps/replica:0/task:0/device:CPU:0", 1, ends.dst_device, "edge_nobody")
    ends.receiver.prefetch(unknown)  # no such task: the step fails, naming it
    with pytest.raises(errors.InternalError, match="No worker known as /job:ps/replica:0/task:0"):
        ends.receiver.recv(unknown, timeout=WAIT)
    pair.cleanup(step_id)

"""A thread waiting for its own replies reads them itself (ChannelPool.read_here, CallerReads).

The replies are delivered on the waiting thread, the peer goes back to the I/O thread afterwards
(including a reply that arrived just as the waiter let go), and only one thread reads a peer.
"""
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import channel, worker
from graphrt.rendezvous import ParsedKey

from ..rendezvous.suite import WAIT, Recorder
from .test_remote_rendezvous import Pair

_steps = iter(range(5000, 6000))


@pytest.fixture(scope="module")
def pair():
    p = Pair()
    yield p
    p.stop()


def _ends(pair, name):
    """A fresh step on both workers, a key from worker 0 to worker 1, and the connection warmed up."""
    step_id = next(_steps)
    sender = pair.workers[0].rendezvous.find_or_create(step_id)
    receiver = pair.workers[1].rendezvous.find_or_create(step_id)
    key = ParsedKey(pair.device(0).name, pair.device(0).incarnation, pair.device(1).name, name)
    warm = key.with_frame_iter(0, 99)
    sender.send(warm, 0)
    assert receiver.recv(warm, timeout=WAIT) == (0, False)  # the pool's peer is now connected
    return step_id, sender, receiver, key


def _pool_and_address(pair):
    pool = pair.workers[1].channels
    return pool, pair.cluster.address_of_task("/job:worker/replica:0/task:0")


def _send_once_asked(sender, key, value, delay):
    """Sends `value` `delay` seconds after the receiver's request for `key` reached the sender, so the
    receiver surely waits that long (a timer started before the recv does not, on a busy machine)."""
    def run():
        deadline = time.monotonic() + WAIT
        while not any(r.key.full_key == key.full_key for r in sender.pending()) and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(delay)
        sender.send(key, value)
    threading.Thread(target=run, daemon=True).start()


def _delivery_threads(monkeypatch):
    threads = []
    original = worker._deliver_tensor

    def recording(done, error, message):
        threads.append(threading.get_ident())
        original(done, error, message)
    monkeypatch.setattr(worker, "_deliver_tensor", recording)
    return threads


@pytest.mark.parametrize("spinning", [False, True])
def test_a_blocking_recv_reads_its_reply_on_its_own_thread(pair, monkeypatch, spinning):
    step_id, sender, receiver, key = _ends(pair, "edge_here")
    threads = _delivery_threads(monkeypatch)
    pool, _ = _pool_and_address(pair)
    policy = pool.spin_policy
    monkeypatch.setattr(policy, "spinning", spinning)
    monkeypatch.setattr(policy, "operations", policy.TRIAL_LENGTH)  # no trial of the other way now
    monkeypatch.setattr(policy, "waits_long", False)  # waits have been short (a busy machine's are not)
    spins = []
    monkeypatch.setattr(channel, "spin", lambda poll, seconds: spins.append(seconds) or poll(seconds * 1000))
    value = np.arange(1 << 16, dtype=np.float32)
    _send_once_asked(sender, key, value, 0.05)  # the recv waits for it
    got, dead = receiver.recv(key, timeout=WAIT)
    np.testing.assert_array_equal(got, value)
    assert not dead and threads == [threading.get_ident()]
    assert bool(spins) == spinning and all(0 < s <= 0.001 for s in spins)
    assert all(peer.reader is None for peer in pool._peers.values())  # given back to the I/O thread
    # ...which reads the next reply when nobody waits for it here
    later = key.with_frame_iter(0, 1)
    done = Recorder()
    receiver.recv_async(later, done)
    sender.send(later, 7)
    assert done.wait() == (None, 7, False)
    assert threads[-1] != threading.get_ident()
    pair.cleanup(step_id)


class _RecordingPolicy:
    """A spin policy that never spins and keeps the operation lengths it is told."""

    def __init__(self):
        self.operations = []

    def begin(self):
        return 0, 0.0

    def finished(self, arm, seconds, longest_wait):
        assert 0 < longest_wait <= seconds
        self.operations.append((arm, seconds))


def test_the_spin_policy_hears_each_blocking_operation_from_its_start(pair, monkeypatch):
    step_id, sender, receiver, key = _ends(pair, "edge_timed")
    pool, address = _pool_and_address(pair)
    policy = _RecordingPolicy()
    monkeypatch.setattr(pool, "spin_policy", policy)
    _send_once_asked(sender, key, np.float32(1.5), 0.05)
    start = time.perf_counter()
    assert receiver.recv(key, timeout=WAIT) == (np.float32(1.5), False)
    took = time.perf_counter() - start
    assert len(policy.operations) == 1
    arm, seconds = policy.operations[0]
    assert arm == 0 and 0.05 <= seconds <= took  # the whole recv, not the last wait
    # An operation that never waited says nothing about waiting either way.
    pool.read_here([address]).done()
    # `started` is when the operation began, not when its reader was made.
    reader = pool.read_here([address], started=time.perf_counter() - 10.0)
    later = key.with_frame_iter(0, 1)
    _send_once_asked(sender, later, np.float32(2.5), 0.02)
    receiver.recv_async(later, lambda error, value, is_dead: reader.wake())
    reader.wait(WAIT)
    reader.done()
    assert len(policy.operations) == 2 and policy.operations[1][1] >= 10.0
    pair.cleanup(step_id)


def test_a_blocking_recv_sends_its_request_before_it_takes_the_connection(pair, monkeypatch):
    # The request travels while the reader is set up; a reply that is in before the recv would wait
    # (the value was sent first, and the I/O thread read the answer) needs no reader at all.
    step_id, sender, receiver, key = _ends(pair, "edge_order")
    pool, _ = _pool_and_address(pair)
    events = []
    original_call, original_read_here = type(pool).call, type(pool).read_here

    def call(self, address, msg_type, *args, **kwargs):
        events.append(msg_type)
        return original_call(self, address, msg_type, *args, **kwargs)

    def read_here(self, addresses, started=None):
        events.append("read_here")
        return original_read_here(self, addresses, started)
    monkeypatch.setattr(type(pool), "call", call)
    monkeypatch.setattr(type(pool), "read_here", read_here)
    _send_once_asked(sender, key, np.int32(4), 0.05)
    assert receiver.recv(key, timeout=WAIT) == (np.int32(4), False)
    assert events == ["RecvTensor", "read_here"]
    # A reply that came through the I/O thread before the reader was taken still ends the wait.
    early = key.with_frame_iter(0, 3)
    sender.send(early, np.int32(5))
    monkeypatch.setattr(type(pool), "read_here", lambda self, addresses, started=None: (
        time.sleep(0.1), original_read_here(self, addresses, started))[1])
    threads = _delivery_threads(monkeypatch)
    assert receiver.recv(early, timeout=WAIT) == (np.int32(5), False)
    assert len(threads) == 1 and threads[0] != threading.get_ident()  # the I/O thread delivered it
    assert all(peer.reader is None for peer in pool._peers.values())
    pair.cleanup(step_id)


def test_a_blocking_recv_that_times_out_gives_the_connection_back(pair):
    step_id, sender, receiver, key = _ends(pair, "edge_timeout")
    with pytest.raises(errors.DeadlineExceededError) as raised:
        receiver.recv(key, timeout=0.2)
    assert "edge_timeout" in str(raised.value)
    pool, address = _pool_and_address(pair)
    assert pool._peers[address].reader is None
    other = key.with_frame_iter(0, 2)
    done = Recorder()
    receiver.recv_async(other, done)
    sender.send(other, 3)
    assert done.wait() == (None, 3, False)
    pair.cleanup(step_id)


def test_a_reply_that_arrives_as_the_reader_lets_go_is_delivered_by_the_io_thread(pair):
    step_id, sender, _, key = _ends(pair, "edge_let_go")
    pool, address = _pool_and_address(pair)
    for i, wait_first in enumerate((False, True)):
        key = key.with_frame_iter(0, 10 + i)
        sender.send(key, np.float32(2.5))
        reader = pool.read_here([address])
        assert reader is not None and reader.peers[0].reader is reader
        threads, done = [], Recorder()

        def callback(error, message, done=done, threads=threads):
            threads.append(threading.get_ident())
            done(error, message, False)
        # The reply is read neither by this thread (it never waits) nor, while it reads the peer, by
        # the I/O thread; done() must hand it over whether or not it has reached the socket yet.
        pool.call(address, "RecvTensor", {"step_id": step_id, "key": key.full_key}, callback=callback)
        status = Recorder()
        if wait_first:
            # Let the reply reach the socket; the next send then consumes its wake-up signal.
            threading.Event().wait(0.05)
            pool.call(address, "GetStatus", callback=lambda error, message: status(error, message, False))
        reader.done()
        if wait_first:
            assert status.wait()[0] is None
        error, message, _ = done.wait()
        assert error is None and message.values[0] == np.float32(2.5)
        assert threads != [threading.get_ident()]
    pair.cleanup(step_id)


def test_a_stray_reply_left_by_a_reader_is_read_after_the_next_send(pair):
    # done() leaves the socket unchecked when no call waits on the peer. A message nobody waits for (here
    # a dropped call's reply) may then sit unread behind the reader's own reply, its wake-up signal
    # consumed, and ZeroMQ signals nothing more until it is read: the next send must find it.
    step_id, sender, _, key = _ends(pair, "edge_stray")
    pool, address = _pool_and_address(pair)
    mine, stray = key.with_frame_iter(0, 20), key.with_frame_iter(0, 21)
    sender.send(mine, np.float32(1.5))
    sender.send(stray, np.float32(-1.0))
    reader = pool.read_here([address])
    assert reader is not None
    got = Recorder()
    pool.call(address, "RecvTensor", {"step_id": step_id, "key": mine.full_key},
              callback=lambda error, message: got(error, message, False))
    late = []  # a dropped call's callback must not run (a failure raised there would land on the I/O thread)
    dropped = pool.call(address, "RecvTensor", {"step_id": step_id, "key": stray.full_key},
                        callback=lambda error, message: late.append((error, message)))
    pool.forget(dropped)
    deadline = time.monotonic() + WAIT
    while any(dropped.id in p.outstanding for p in reader.peers) and time.monotonic() < deadline:
        time.sleep(0.001)  # the I/O thread forgets it
    threading.Event().wait(0.05)  # both replies reach the socket
    reader.wait(WAIT)  # reads one reply: the first, ours
    reader.done()
    error, message, _ = got.wait()
    assert error is None and message.values[0] == np.float32(1.5)
    status = Recorder()
    pool.call(address, "GetStatus", callback=lambda error, message: status(error, message, False))
    assert status.wait()[0] is None
    assert late == []
    pair.cleanup(step_id)


def test_wake_ends_a_wait_from_another_thread(pair):
    _, address = _pool_and_address(pair)
    _ends(pair, "edge_wake")
    pool = pair.workers[1].channels
    reader = pool.read_here([address])
    try:
        waited = threading.Thread(target=reader.wait, args=(WAIT,))
        waited.start()
        threading.Timer(0.05, reader.wake).start()
        waited.join(WAIT / 2)
        assert not waited.is_alive()
    finally:
        reader.done()


def test_one_thread_reads_a_peer_at_a_time(pair, monkeypatch):
    _ends(pair, "edge_one")
    pool, address = _pool_and_address(pair)
    first = pool.read_here([address])
    assert first is not None
    other = []
    t = threading.Thread(target=lambda: other.append(pool.read_here([address])))
    t.start()
    t.join(WAIT)
    assert other == [None]
    first.done()
    first.done()  # twice is harmless
    again = pool.read_here([address])
    assert again is not None and again.thread == threading.get_ident()
    again.done()
    assert pool.read_here(["tcp://127.0.0.1:1"]) is None  # never connected
    monkeypatch.setattr(pool._poll, "can_pause", False)  # no epoll: the I/O thread keeps every socket
    assert pool.read_here([address]) is None


def test_closing_the_pool_ends_a_readers_wait():
    p = Pair()
    try:
        step_id, _, _, key = _ends(p, "edge_close")
        pool, address = _pool_and_address(p)
        reader = pool.read_here([address])
        outcome = []

        def callback(error, message):
            outcome.append(error)
            reader.wake()
        pool.call(address, "RecvTensor", {"step_id": step_id, "key": key.full_key}, callback=callback)
        closer = threading.Timer(0.05, pool.close)
        closer.start()
        while not outcome:
            reader.wait(WAIT)
        assert isinstance(outcome[0], errors.CancelledError)
        closer.join(WAIT)
        assert not pool._thread.is_alive()  # sockets, pipes and the I/O thread's poll set are closed
        reader.done()  # and letting go of them afterwards is harmless
        assert pool.read_here([address]) is None
    finally:
        p.stop()


def _scaled_on_task1_shifted_on_task0(width, scale, shift, slow=False):
    """x * scale on task 1, + shift on task 0: one tensor crosses the processes each step. `slow`
    adds tens of milliseconds of work to task 1's part (that changes no value)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [width], name="x")
        with tf.device("/job:worker/task:1"):
            y = tf.multiply(x, scale)
            if slow:
                y += 0.0 * tf.reduce_sum(tf.random.uniform([1 << 22]))
        with tf.device("/job:worker/task:0"):
            z = y + shift
    return g, x, z


def test_a_master_reads_its_steps_replies_on_the_calling_thread(local_task0, monkeypatch):
    _, server = local_task0
    seen = []
    original = channel._deliver

    def recording(call, error, message):
        if call.msg_type == "RunGraph" and not channel.in_process(call.address):
            seen.append(threading.get_ident())
        original(call, error, message)
    monkeypatch.setattr(channel, "_deliver", recording)
    # Task 1's part is slow, so its reply comes while the master waits (one that came before, had the
    # master's own partition run long on a busy machine, would still be the I/O thread's).
    g, x, z = _scaled_on_task1_shifted_on_task0(2, 2.0, 1.0, slow=True)
    with tf.Session(server.target, graph=g) as sess:
        for i in range(10):
            np.testing.assert_array_equal(sess.run(z, {x: [i, -i]}), [2 * i + 1, 1 - 2 * i])
    assert len(seen) == 10 and seen.count(threading.get_ident()) >= 9
    assert all(peer.reader is None for peer in server.service.channels._peers.values())


def test_a_masters_step_is_timed_for_the_spin_policy_from_its_start(local_task0, monkeypatch):
    # Spinning makes the code around the waits faster, so the master reaches its wait sooner and
    # then waits longer: the whole step is what the policy must weigh.
    _, server = local_task0
    pool = server.service.channels
    policy = _RecordingPolicy()
    monkeypatch.setattr(pool, "spin_policy", policy)
    sent = []
    original_call = type(pool)._call

    def call(self, local, address, msg_type, *args):
        if msg_type == "RunGraph":
            sent.append(time.perf_counter())
        return original_call(self, local, address, msg_type, *args)
    monkeypatch.setattr(type(pool), "_call", call)
    starts = []
    original_read_here = type(pool).read_here

    def read_here(self, addresses, started=None):
        starts.append(started)
        return original_read_here(self, addresses, started)
    monkeypatch.setattr(type(pool), "read_here", read_here)
    g, x, z = _scaled_on_task1_shifted_on_task0(2, 2.0, 1.0, slow=True)
    with tf.Session(server.target, graph=g) as sess:
        before = time.perf_counter()
        np.testing.assert_array_equal(sess.run(z, {x: [1, 2]}), [3, 5])
        after = time.perf_counter()
    assert len(starts) == 1 and before <= starts[0] <= sent[0]  # the step's start, before its RunGraphs
    assert len(policy.operations) == 1 and policy.operations[0][1] <= after - starts[0]


def test_steps_from_several_threads_share_the_reading(local_task0):
    # One thread at a time reads a peer; the others' replies are delivered by it (or by the I/O
    # thread once it lets go), and every step still gets its own values.
    _, server = local_task0
    g, x, z = _scaled_on_task1_shifted_on_task0(3, 3.0, -1.0)
    results, failures = {}, []
    with tf.Session(server.target, graph=g) as sess:
        def work(i):
            try:
                results[i] = [(j, sess.run(z, {x: [i, j, -i]})) for j in range(25)]
            except Exception as e:  # noqa: BLE001 - reported below
                failures.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT * 3)
        assert not [t for t in threads if t.is_alive()] and not failures
    for i, runs in results.items():
        for j, got in runs:
            np.testing.assert_array_equal(got, [3 * i - 1, 3 * j - 1, -3 * i - 1])
    assert sorted(results) == [0, 1, 2, 3]
    assert all(peer.reader is None for peer in server.service.channels._peers.values())

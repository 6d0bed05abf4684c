"""The short paths of a distributed step (its cross-process latency):

* a session on its own server's target calls that server's worker on its own
  thread (no socket), with the wire's semantics kept: fetched arrays are the
  caller's own, errors keep their class and message;
* a RunGraph of cheap kernels runs on the worker's serving thread and answers
  when its partitions finish; one with a kernel that may block does not hold
  that thread (RecvTensor and AbortStep are still answered);
* after a successful step the remote tasks' CleanupStep rides on the next
  RunGraph, or goes out as one message shortly after; a serving loop does
  that bookkeeping once the step's replies are out.
"""
import contextlib
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import cleanups as cleanups_module
from graphrt.distributed import wire
from graphrt.distributed.cleanups import DeferredCleanups
from graphrt.distributed.cluster import free_port

from ..client.test_ops_for_tests import block_until_aborted
from .harness import wait_until_idle

T1 = "/job:worker/replica:0/task:1"


@pytest.fixture
def own_server():
    server = tf.train.Server({"worker": [f"127.0.0.1:{free_port()}"]}, job_name="worker", task_index=0)
    yield server
    server.stop()


def test_a_session_on_its_own_server_skips_the_socket(own_server):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        bump = v.assign_add([1.0, 1.0])
        with tf.Session(own_server.target) as sess:
            sess.run(v.initializer)
            sent_before = own_server.service._answers_sent
            first = sess.run(v)
            for _ in range(5):
                sess.run(bump)
            # the fetched array is the caller's own: later updates of the variable do not show in it
            np.testing.assert_array_equal(first, [1.0, 2.0])
            first[0] = 100.0
            np.testing.assert_array_equal(sess.run(v), [6.0, 7.0])
            # nothing went through the worker's socket for these steps
            assert own_server.service._answers_sent == sent_before


def test_errors_from_an_in_process_worker_keep_class_node_and_message(own_server):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.reshape(x, [3], name="bad_reshape")
        with tf.Session(own_server.target) as sess:
            with pytest.raises(errors.InvalidArgumentError) as raised:
                sess.run(y, {x: [1.0, 2.0]})
            assert "bad_reshape" in str(raised.value)
            assert sess.run(x * 2.0, {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]  # the next step is fine


def test_a_remote_step_fetches_through_the_inline_path_many_times(cluster2):
    """Steps on a remote task after its kernels were profiled cheap run on its serving thread."""
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:1"):
            x = tf.placeholder(tf.float32, [], name="x")
            a = x * 3.0
        with tf.device("/job:worker/task:0"):
            b = a + 1.0
        with tf.Session(cluster2.target(0), graph=g) as sess:
            got = [float(sess.run(b, {x: float(i)})) for i in range(20)]
            assert got == [3.0 * i + 1.0 for i in range(20)]
            assert wait_until_idle(sess)  # the deferred CleanupSteps arrived


def test_a_slow_kernel_on_a_remote_task_does_not_hold_its_serving_thread(cluster2):
    """A kernel measured slow runs off the serving thread, which keeps answering (here GetStatus)."""
    with tf.Graph().as_default() as g:
        with tf.device("/job:worker/task:1"):
            y = block_until_aborted(tf.constant(1.0), name="slow")
        with tf.Session(cluster2.target(0), graph=g) as sess:
            short = tf.RunOptions(timeout_in_ms=200)
            for _ in range(4):  # past the profiled first runs: the kernel is known to be slow
                with pytest.raises(errors.DeadlineExceededError):
                    sess.run(y, options=short)
            failure = []

            def run_long():
                try:
                    sess.run(y, options=tf.RunOptions(timeout_in_ms=3000))
                except errors.DeadlineExceededError as e:
                    failure.append(e)
            runner = threading.Thread(target=run_long)
            runner.start()
            try:
                seen_running = False
                deadline = time.monotonic() + 2.5
                while time.monotonic() < deadline and not seen_running:
                    seen_running = sess.status()[T1]["running_steps"] != []
                assert seen_running  # task 1 answered GetStatus while its kernel blocked
            finally:
                runner.join(10)
            assert failure and "slow" in str(failure[0])


class _Sent:
    def __init__(self):
        self.messages = []
        self.event = threading.Event()

    def __call__(self, task, fields):
        self.messages.append((task, fields))
        self.event.set()


@contextlib.contextmanager
def _inline_remote_step():
    """(remote service, session, fetch, events): a step whose task 1 part runs inline on task 1's
    serving loop, reached through its socket as another process would be; `events` records task 1's
    replies as "tensor", "RunGraph reply" or "other"."""
    from graphrt.distributed.channel import stop_serving_in_process
    from graphrt.distributed.cluster import create_local_cluster
    workers, _ = create_local_cluster(num_workers=2)
    remote = workers[1].service
    stop_serving_in_process(remote)
    events = []
    send = remote._send
    run_graph = remote._handlers["RunGraph"]
    run_graph_ids = set()

    def recording_run_graph(identity, message):
        run_graph_ids.add(message.id)
        run_graph(identity, message)

    def recording_send(identity, frames):
        header = wire.decode(frames, expect=frozenset({wire.REPLY}))
        events.append("RunGraph reply" if header.id in run_graph_ids else "tensor" if header.values else "other")
        send(identity, frames)
    remote._handlers["RunGraph"] = recording_run_graph
    remote._send = recording_send
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:1"):
                x = tf.constant(2.0) * 3.0
            with tf.device("/job:worker/task:0"):
                y = x + 1.0
            with tf.Session(workers[0].target) as sess:
                for _ in range(4):  # profiles task 1's kernels: cheap, so its RunGraph runs inline
                    assert sess.run(y) == 7.0
                assert remote._graphs and all(g.runs_inline() for g in remote._graphs.values())
                yield remote, sess, y, events
    finally:
        for server in workers:
            server.stop()


def test_a_serving_loop_answers_waiting_tensors_before_its_inline_run_graph_replies():
    """Task 1's RunGraph (cheap: it runs on its serving loop) and task 0's RecvTensor for the tensor it
    sends reach task 1 together. The tensor goes out before the RunGraph reply: task 0's step waits on
    it, while the master waits for both anyway."""
    with _inline_remote_step() as (remote, sess, y, replies):
        got = []
        with remote._router_lock:  # the loop cannot read until both requests are queued
            runner = threading.Thread(target=lambda: got.append(sess.run(y)))
            runner.start()
            time.sleep(0.3)
            del replies[:]
        runner.join(30)
        assert got == [7.0]
    assert replies[:2] == ["tensor", "RunGraph reply"]


def test_the_data_plane_replies_of_a_step_have_binary_headers():
    """Task 1 sends the tensor (a binary tensor reply) and fetches nothing, so its RunGraph is
    answered with the binary empty reply; a traced step's reply carries its stats, as JSON."""
    with _inline_remote_step() as (remote, sess, y, events):
        kinds = []
        send = remote._send

        def kind_of_each_reply(identity, frames):
            kinds.append(bytes(frames[0][:1]))
            send(identity, frames)
        remote._send = kind_of_each_reply
        assert sess.run(y) == 7.0
        assert sorted(zip(events[-2:], kinds)) == [("RunGraph reply", bytes([wire.BINARY_EMPTY_REPLY])),
                                                   ("tensor", bytes([wire.BINARY_TENSOR_REPLY]))]
        del kinds[:]
        metadata = tf.RunMetadata()
        assert sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=metadata) == 7.0
        assert sorted(zip(events[-2:], kinds)) == [("RunGraph reply", b"{"),
                                                   ("tensor", bytes([wire.BINARY_TENSOR_REPLY]))]
        assert any("task:1" in d.device for d in metadata.step_stats.dev_stats)


def test_a_serving_loop_does_its_bookkeeping_after_an_inline_steps_replies(monkeypatch):
    """On task 1's serving loop, releasing a finished inline step's table and the CleanupStep of the
    step before it (carried by the RunGraph) wait until the step's replies are out: the master's step
    goes on meanwhile, and ZeroMQ's thread may be waiting for the loop to yield or sleep."""
    monkeypatch.setattr(cleanups_module, "FLUSH_AFTER_S", 30.0)  # the cleanups ride on RunGraphs only
    with _inline_remote_step() as (remote, sess, y, events):
        release, forget = remote.step_table.release, remote._forget_step
        remote.step_table.release = lambda step_id: events.append("release") or release(step_id)
        remote._forget_step = lambda step_id: events.append("cleanup") or forget(step_id)
        deadline = time.monotonic() + 10
        while (remote._after_replies or remote.step_table.stats()["owned"]) and time.monotonic() < deadline:
            time.sleep(0.01)  # the warm-up's bookkeeping is done
        del events[:]
        for _ in range(3):
            assert sess.run(y) == 7.0
        deadline = time.monotonic() + 10
        while events.count("release") < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        seen = list(events)  # closing the session sends the last step's CleanupStep on its own
        assert remote.step_table.stats()["owned"] == 0
    # A step's next RunGraph may come before the loop is idle: its bookkeeping then waits longer.
    assert seen[0] == "tensor" and seen.count("cleanup") == seen.count("release") == 3, seen
    answering = False
    for event in seen:
        if event in ("cleanup", "release"):
            assert not answering, seen  # never between a step's tensor and its RunGraph reply
        answering = event == "tensor" or answering and event != "RunGraph reply"


def test_recv_tensor_keys_are_parsed_once_and_the_cache_stays_bounded(monkeypatch):
    import zmq

    from graphrt.distributed import worker as worker_module
    from graphrt.distributed.worker import WorkerService
    from graphrt.rendezvous import ParsedKey
    monkeypatch.setattr(worker_module, "_MAX_CACHED_KEYS", 4)
    service = WorkerService({"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}, "worker", 0)
    sent = []
    service._send = lambda identity, frames: sent.append(wire.decode(frames, expect=frozenset({wire.REPLY})))
    try:
        device = service.devices[0]
        base = ParsedKey(device.name, device.incarnation, "/job:worker/replica:0/task:1/device:CPU:0", "e")
        rendezvous = service.rendezvous.find_or_create(5)
        texts = []
        for i in range(10):
            key = base.with_frame_iter(0, i)
            rendezvous.send(key, np.float32(i))
            texts.append(key.full_key)
        texts.append("not;a;key")

        def ask(text):
            frames = wire.encode("RecvTensor", len(sent) + 1, {"step_id": 5, "key": text})
            service._dispatch([zmq.Frame(b"peer")] + [zmq.Frame(f) for f in frames])
        for text in texts:
            ask(text)
        assert [m.values[0] for m in sent[:10]] == list(range(10))
        assert isinstance(sent[10].error, errors.InvalidArgumentError) and "not;a;key" in str(sent[10].error)
        assert 0 < len(service._recv_keys) <= 4 and "not;a;key" not in service._recv_keys
    finally:
        service.stop()


def test_deferred_cleanups_ride_on_the_next_run_graph():
    sent = _Sent()
    pending = DeferredCleanups(sent)
    pending.add(["/job:w/replica:0/task:1", "/job:w/replica:0/task:2"], 7)
    pending.add(["/job:w/replica:0/task:1"], 8)
    assert pending.take("/job:w/replica:0/task:1") == [7, 8]
    assert pending.take("/job:w/replica:0/task:1") is None
    assert len(pending) == 1
    pending.close()
    assert sent.messages == [("/job:w/replica:0/task:2", {"step_id": 7})]


def test_deferred_cleanups_are_flushed_as_one_message_per_task():
    sent = _Sent()
    pending = DeferredCleanups(sent)
    for step in (1, 2, 3):
        pending.add(["/job:w/replica:0/task:1"], step)
    assert sent.event.wait(10 * cleanups_module.FLUSH_AFTER_S + 5)
    assert sent.messages == [("/job:w/replica:0/task:1", {"step_id": 1, "more_step_ids": [2, 3]})]
    assert len(pending) == 0
    pending.close()


def test_deferred_cleanups_flush_from_one_thread_that_leaves_when_idle(monkeypatch):
    # A thread started per flush would cost a step a thread start every FLUSH_AFTER_S.
    monkeypatch.setattr(cleanups_module, "IDLE_EXIT_S", 0.3)
    sent = _Sent()
    pending = DeferredCleanups(sent)
    flushers = set()
    for step in range(1, 6):
        pending.add(["/job:w/replica:0/task:1"], step)
        flushers.add(pending._thread)
        deadline = time.monotonic() + 5
        while len(sent.messages) < step and time.monotonic() < deadline:
            time.sleep(0.005)
    assert [fields["step_id"] for _, fields in sent.messages] == [1, 2, 3, 4, 5]
    assert len(flushers) == 1 and flushers.pop().name == "graphrt-cleanups"
    flusher = pending._thread
    flusher.join(5)
    assert not flusher.is_alive() and pending._thread is None  # gone once idle
    pending.add(["/job:w/replica:0/task:1"], 6)  # and back when needed
    deadline = time.monotonic() + 5
    while len(sent.messages) < 6 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert sent.messages[-1] == ("/job:w/replica:0/task:1", {"step_id": 6})
    pending.close()


@pytest.mark.parametrize("bad", [[-1], ["3"], [1.5], "12", [1 << 63]])
def test_cleanup_ids_on_the_wire_are_checked(bad):
    frames = wire.encode("RunGraph", 1, {"graph_handle": "h", "step_id": 1, "cleanup_step_ids": bad})
    with pytest.raises(errors.InvalidArgumentError, match="RunGraph.cleanup_step_ids"):
        wire.decode(frames, expect=wire.MESSAGE_TYPES)
    frames = wire.encode("CleanupStep", 0, {"step_id": 1, "more_step_ids": bad})
    with pytest.raises(errors.InvalidArgumentError, match="CleanupStep.more_step_ids"):
        wire.decode(frames, expect=wire.MESSAGE_TYPES)

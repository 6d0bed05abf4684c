"""Faults: a worker killed mid-step, a worker that never answers, recovery."""
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import loopback

from ..client.test_ops_for_tests import block_until_aborted
from .harness import wait_until_idle

T0 = "/job:worker/replica:0/task:0"
T1 = "/job:worker/replica:0/task:1"


def graph():
    """x (fed on task 0) -> a = 2x on task 1 -> out = a + w on task 0, and a hang on task 1."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/job:worker/task:1"):
            w = tf.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")
            a = tf.multiply(x, 2.0, name="a")
            hang = block_until_aborted(a, name="hang")
        with tf.device("/job:worker/task:0"):
            out = tf.add(a, w, name="out")
            hung_out = tf.add(hang, 1.0, name="hung_out")
        init = tf.global_variables_initializer()
    return g, x, out, hung_out, init


XV = np.array([1.0, 0.5, -1.0], np.float32)
EXPECTED = XV * 2 + np.array([1.0, 2.0, 3.0], np.float32)


@pytest.fixture(params=["task 0 in a process", "task 0 in this process", "task 0 in this process, over TCP"])
def two_tasks(request, make_cluster, monkeypatch):
    """(cluster, target of task 0): task 1 always runs in a process of its own; task 0 either too, or
    in this process (the master then shares its worker's connections and its first receives ride on
    task 1's RunGraph). Processes connect over Unix sockets (loopback.py), or loopback TCP."""
    if request.param.endswith("over TCP"):
        monkeypatch.setenv(loopback.ENV_SWITCH, "0")  # inherited by the worker processes
    cluster = make_cluster(2)
    if request.param == "task 0 in a process":
        yield cluster, cluster.target(0)
        return
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    yield cluster, server.target
    server.stop()


@pytest.mark.parametrize("config", [{}, {"operation_timeout_in_ms": 20_000}], ids=["default", "op timeout"])
def test_killed_worker_fails_the_step_then_fails_fast_then_recovers(two_tasks, config):
    cluster, target = two_tasks
    g, x, out, hung_out, init = graph()
    config = tf.ConfigProto(**config)
    with tf.Session(target, graph=g, config=config) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(out, {x: XV}), EXPECTED)

        # Killed in the middle of a step: UnavailableError naming the task (waiting for the
        # 20 s timeout would have been a DeadlineExceededError).
        killer = threading.Timer(0.5, cluster.kill, args=(1,))
        killer.start()
        with pytest.raises(errors.UnavailableError) as raised:
            sess.run(hung_out, {x: XV})
        assert T1 in raised.value.message
        killer.join()

        # Not back: the next step fails fast (well within the 20 s timeout), and says which task is missing.
        start = time.monotonic()
        with pytest.raises(errors.UnavailableError) as raised:
            sess.run(out, {x: XV})
        assert time.monotonic() - start < 10
        assert T1 in raised.value.message

        # Back (new process, new incarnations): graphs are registered again; its variables start over.
        cluster.restart(1)
        sess.run(init)
        np.testing.assert_allclose(sess.run(out, {x: XV}), EXPECTED)
        assert wait_until_idle(sess)


def test_silent_worker_gives_deadline_exceeded_listing_waiting_keys_then_recovers(two_tasks):
    cluster, target = two_tasks
    g, x, out, hung_out, init = graph()
    with tf.Session(target, graph=g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(out, {x: XV}), EXPECTED)
        cluster.pause(1)   # SIGSTOP: the process holds its connections but never answers
        try:
            start = time.monotonic()
            with pytest.raises(errors.DeadlineExceededError) as raised:
                sess.run(out, {x: XV}, options=tf.RunOptions(timeout_in_ms=1500))
            elapsed = time.monotonic() - start
        finally:
            cluster.resume(1)
        # The deadline is the behaviour: never before it; after it by a margin a loaded machine keeps.
        assert 1.45 <= elapsed < 15.0
        message = raised.value.message
        assert message.startswith("Timed out after 1500 ms waiting for step ")
        assert f"No response from RunGraph call to {T1}" in message
        assert f"From {T0}:" in message
        # task 0 waits for a's value from task 1, and holds x for task 1, which never asked
        assert f"recv waiting" in message and f"for send: {T1}/device:CPU:0 -> {T0}/device:CPU:0 edge_" in message
        assert f"send waiting" in message and f"for recv: {T0}/device:CPU:0 -> {T1}/device:CPU:0 edge_" in message
        waiting = [line.split(" for ", 1)[1] for line in message.splitlines() if "recv waiting" in line]
        assert len(waiting) == len(set(waiting)) == 2  # a and w/read, each once (also when prefetched)
        # Back: the next step runs normally (same incarnations, same registered graphs).
        np.testing.assert_allclose(sess.run(out, {x: XV}), EXPECTED)
        np.testing.assert_allclose(sess.run(out, {x: XV + 1}), EXPECTED + 2)


def test_server_command_exits_cleanly_on_sigint_and_sigterm(make_cluster):
    import signal
    cluster = make_cluster(2)
    assert cluster.terminate(0, signal.SIGINT) == 0
    assert cluster.terminate(1, signal.SIGTERM) == 0
    out = [cluster.procs[i].stdout.read().decode() for i in range(2)]
    assert "SIGINT, stopping /job:worker/replica:0/task:0" in out[0] and "stopped" in out[0]
    assert "SIGTERM, stopping /job:worker/replica:0/task:1" in out[1] and "stopped" in out[1]

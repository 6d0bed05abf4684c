"""A session to a cluster (the master backend) against two worker processes: placement over tasks, one
registration per run signature, feeds and fetches through the client task,
per-step cleanup, error propagation and cancellation."""
import _thread
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed.cluster import free_port

from ..client.test_ops_for_tests import block_until_aborted, fail
from .harness import wait_until_idle

T0 = "/job:worker/replica:0/task:0"
T1 = "/job:worker/replica:0/task:1"


def two_task_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [4, 4], name="x")
            a = tf.matmul(x, x, name="a")
        with tf.device("/job:worker/task:1"):
            b = tf.add(tf.nn.relu(a), tf.tanh(a), name="b")
            v = tf.Variable(np.zeros((4, 4), np.float32), name="v")
            upd = tf.assign_add(v, b, name="upd")
        with tf.device("/job:worker/task:0"):
            out = tf.add(b, a * 3.0, name="out")
        init = tf.global_variables_initializer()
    return g, x, out, v, upd, init


def reference(xv):
    a = xv @ xv
    return np.maximum(a, 0) + np.tanh(a), a


@pytest.fixture
def session(cluster2):
    sessions = []

    def make(graph, task=0, **config):
        sess = tf.Session(cluster2.target(task), graph=graph, config=tf.ConfigProto(**config) if config else None)
        sessions.append(sess)
        return sess
    yield make
    for sess in sessions:
        sess.close()


def test_devices_of_every_task_with_incarnations(cluster2, session):
    sess = session(tf.Graph())
    devices = sess.list_devices()
    assert [d.name for d in devices] == [f"{T0}/device:CPU:0", f"{T1}/device:CPU:0"]
    assert all(d.incarnation > 0 for d in devices)
    assert isinstance(sess, tf.Session) and sess.client_task == T0


def test_steps_across_processes_match_numpy_and_keep_variables(session):
    g, x, out, v, upd, init = two_task_graph()
    sess = session(g)
    sess.run(init)
    rng = np.random.RandomState(0)
    total = np.zeros((4, 4), np.float32)
    for _ in range(3):
        xv = rng.randn(4, 4).astype(np.float32)
        b, a = reference(xv)
        got, _ = sess.run([out, upd], {x: xv})
        total += b
        np.testing.assert_allclose(got, b + 3 * a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(v), total, rtol=1e-5, atol=1e-6)


def test_graphs_are_registered_once_and_every_step_is_cleaned_up(session):
    g, x, out, v, upd, init = two_task_graph()
    sess = session(g)
    sess.run(init)
    xv = np.eye(4, dtype=np.float32)
    sess.run(out, {x: xv})
    before = sess.status()
    for _ in range(5):
        sess.run(out, {x: xv})
    assert wait_until_idle(sess)
    after = sess.status()
    for task in (T0, T1):
        assert after[task]["graphs"] == before[task]["graphs"]


def test_ops_without_a_device_run_on_the_client_task(session):
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(2.0, name="c")
        y = tf.multiply(c, 3.0, name="y")
        with tf.device("/job:worker/task:0"):
            z = tf.add(y, 1.0, name="z")
        with tf.device("/cpu:0"):
            w = tf.add(z, 1.0, name="w")
    for task in (0, 1):
        sess = session(g, task=task)
        assert sess.run(w) == 8.0
        placement = sess.plan_for(w).placement
        client = (T0, T1)[task]
        assert placement["y"].startswith(client) and placement["w"].startswith(client)
        assert placement["z"].startswith(T0)


def test_a_step_with_only_targets_on_another_task_runs_there(session):
    # A ps update run from a worker: nothing of the step is on the client's task.
    g = tf.Graph()
    with g.as_default(), tf.device("/job:worker/task:1"):
        v = tf.Variable(1.0, name="v_elsewhere")
        bump = tf.assign_add(v, 2.0, name="bump")
    sess = session(g, task=0)
    sess.run(v.initializer)
    assert sess.run(bump.op) is None
    assert sess.run(bump.op) is None
    assert sess.run(v) == 5.0
    assert all(p.startswith(T1) for p in sess.plan_for(bump.op).placement.values())


def test_feeds_and_fetches_of_many_kinds_go_through_the_client_task(session):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            i = tf.placeholder(tf.int64, [None], name="i")
            s = tf.placeholder(tf.string, [2], name="s")
            flag = tf.placeholder(tf.bool, [], name="flag")
            total = tf.reduce_sum(i * 2)
            same = tf.identity(s)
            neg = tf.logical_not(flag)
    sess = session(g)
    got = sess.run({"total": total, "same": same, "neg": neg, "fed": i},
                   {i: np.arange(5), s: np.array([b"a", b"bcd"], dtype=object), flag: True})
    assert got["total"] == 20 and type(got["total"]) is np.int64
    assert list(got["same"]) == [b"a", b"bcd"]
    assert got["neg"] is np.False_ or got["neg"] == False  # noqa: E712 - a numpy bool scalar
    assert got["fed"].tolist() == [0, 1, 2, 3, 4]
    assert sess.run(total, {i: np.zeros(1 << 18, np.int64)}) == 0  # a 2 MiB feed


def test_a_worker_error_names_its_task_and_the_session_keeps_working(session):
    g, x, out, v, upd, init = two_task_graph()
    with g.as_default(), tf.device("/job:worker/task:1"):
        bad = fail(out, message="kernel exploded on purpose")
    sess = session(g)
    xv = np.eye(4, dtype=np.float32)
    with pytest.raises(errors.InvalidArgumentError) as raised:
        sess.run(bad, {x: xv})
    assert raised.value.message.startswith(f"From {T1}:\n")
    assert "kernel exploded on purpose" in raised.value.message
    np.testing.assert_allclose(sess.run(out, {x: xv}), sum(reference(xv)) + 2 * reference(xv)[1], rtol=1e-5)


def test_an_error_on_one_task_aborts_the_step_on_every_task(session):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [], name="x")
            stuck = block_until_aborted(x, name="stuck")
        with tf.device("/job:worker/task:1"):
            bad = fail(tf.constant(1.0), message="root cause on task 1")
    sess = session(g)
    start = time.monotonic()
    with pytest.raises(errors.InvalidArgumentError) as raised:
        sess.run([stuck, bad], {x: 1.0})
    assert time.monotonic() - start < 20  # released by the abort, not by the test kernel's own 30 s limit
    assert raised.value.message.startswith(f"From {T1}:\n") and "root cause on task 1" in raised.value.message
    assert wait_until_idle(sess)


def test_ctrl_c_cancels_the_step_on_every_task(session, ctrl_c):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/job:worker/task:0"):
            a = block_until_aborted(x, name="a")
        with tf.device("/job:worker/task:1"):
            b = block_until_aborted(x, name="b")
        ok = tf.add(x, 1.0, name="ok")
    sess = session(g)
    assert sess.run(ok, {x: 1.0}) == 2.0
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sess.run([a, b], {x: 1.0})
    assert time.monotonic() - start < 20  # released by the cancel, not by the test kernel's own 30 s limit
    assert wait_until_idle(sess)   # both tasks' blocked kernels were released and the step cleaned up
    assert sess.run(ok, {x: 2.0}) == 3.0


def test_trace_and_partition_graphs_come_from_the_workers(session):
    g, x, out, v, upd, init = two_task_graph()
    sess = session(g)
    md = tf.RunMetadata()
    sess.run(out, {x: np.eye(4, dtype=np.float32)},
             options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
             run_metadata=md)
    devices = sorted({n.device for pg in md.partition_graphs for n in pg.node})
    assert devices == [f"{T0}/device:CPU:0", f"{T1}/device:CPU:0"]
    assert [d.device for d in md.step_stats.dev_stats] == devices
    names = {s.node_name for d in md.step_stats.dev_stats for s in d.node_stats}
    assert {"a", "b", "out"} <= names
    ops = [n.op for pg in md.partition_graphs for n in pg.node]
    assert ops.count("_Send") == ops.count("_Recv")  # feeds and fetches: one client-terminated each


def test_concurrent_runs_from_many_threads(session):
    g, x, out, v, upd, init = two_task_graph()
    sess = session(g)
    results, failures = {}, []

    def work(i):
        try:
            xv = np.full((4, 4), i / 10.0, np.float32)
            results[i] = [sess.run(out, {x: xv}) for _ in range(5)]
        except Exception as e:  # noqa: BLE001
            failures.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not [t.name for t in threads if t.is_alive()]
    assert not failures
    assert sorted(results) == list(range(6))  # every thread finished its five runs
    for i, runs in results.items():
        xv = np.full((4, 4), i / 10.0, np.float32)
        b, a = reference(xv)
        assert len(runs) == 5
        for got in runs:
            np.testing.assert_allclose(got, b + 3 * a, rtol=1e-5)


def test_a_target_nobody_serves_is_unavailable_quickly():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError) as raised:
        tf.Session(f"zmq://127.0.0.1:{port}", graph=tf.Graph(), config=tf.ConfigProto(operation_timeout_in_ms=500))
    assert time.monotonic() - start < 20  # the 500 ms timeout, with a margin for a loaded machine
    assert f"127.0.0.1:{port}" in raised.value.message


def test_bad_targets_are_invalid_arguments():
    with pytest.raises(errors.InvalidArgumentError, match="grpc:// targets"):
        tf.Session("grpc://localhost:2222", graph=tf.Graph())
    with pytest.raises(errors.InvalidArgumentError, match="host:port"):
        tf.Session("zmq://nowhere", graph=tf.Graph())


def test_device_filters_limit_the_tasks_a_session_uses(session):
    g = tf.Graph()
    with g.as_default():
        y = tf.constant(3.0) * 2.0
    sess = session(g, device_filters=["/job:worker/task:0"])
    assert [d.name for d in sess.list_devices()] == [f"{T0}/device:CPU:0"]
    assert sess.run(y) == 6.0


def test_inspect_shows_the_per_device_partitions_a_cluster_session_runs(session):
    g, x, out, v, upd, init = two_task_graph()
    sess = session(g)
    view = tf.partition.inspect(session=sess, fetches=out, feeds={x: np.eye(4, dtype=np.float32)})
    assert sorted(view.partitions) == [f"{T0}/device:CPU:0", f"{T1}/device:CPU:0"]
    assert view.placement["a"] == f"{T0}/device:CPU:0" and view.placement["b"] == f"{T1}/device:CPU:0"
    # a crosses to task 1 and b comes back: each transfer's key names both devices
    keys = [view.key_of(t) for t in view.transfers]
    assert any(k.startswith(f"{T0}/device:CPU:0;") and f";{T1}/device:CPU:0;" in k for k in keys)
    assert any(k.startswith(f"{T1}/device:CPU:0;") and f";{T0}/device:CPU:0;" in k for k in keys)
    assert "b" in view.text()

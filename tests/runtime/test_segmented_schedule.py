"""Segmented schedules (runtime/segmented_schedule.py) for partitions with
receives, against the dataflow executor they replace: same values, same
step stats, same errors, no hang when another partition fails."""
import re
import weakref

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.runtime import segmented_schedule
from graphrt.runtime.segmented_schedule import SegmentedRun
from tests.runtime.random_graphs import random_graph

TWO_CPUS = {"device_count": {"CPU": 2}}


@pytest.fixture(params=[True, False], ids=["segmented", "dataflow"])
def mode(request, monkeypatch):
    monkeypatch.setattr(segmented_schedule, "ENABLED", request.param)
    return request.param


def _model():
    rng = np.random.default_rng(7)
    with tf.device("/cpu:1"):
        w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
        scale = tf.constant(0.5, name="scale")
        bias = tf.reduce_sum(w, axis=0, name="bias")
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        local = tf.reduce_sum(x * 2.0, name="local")          # waits for nothing
        h = tf.nn.relu(tf.matmul(x, w, name="mm") + bias, name="h")  # waits for w and bias
        parts = tf.split(h * scale, 3, axis=1, name="split")   # waits for scale too
        total = tf.add_n([tf.reduce_sum(p) for p in parts] + [local], name="total")
        mixed = tf.identity(local * scale, name="mixed")       # read in two segments: local
    with tf.device("/cpu:1"):
        update = tf.assign_add(w, tf.ones_like(w) * 0.25, name="update")
    return x, [h, parts[2], total, mixed], update


def _run(segmented, runs=5):
    segmented_schedule.ENABLED = segmented
    try:
        with tf.Graph().as_default():
            x, fetches, update = _model()
            with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
                sess.run(tf.global_variables_initializer())
                feed = {x: np.arange(8, dtype=np.float32).reshape(2, 4)}
                values = [sess.run(fetches + [update], feed)[:-1] for _ in range(runs)]
                md = tf.RunMetadata()
                traced = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                  run_metadata=md)
                classes = [ex._run_class for ex in sess.plan_for(fetches, feed).executors]
        stats = {d.device: sorted((n.node_name, tuple((o.slot, o.dtype, tuple(o.shape), o.requested_bytes)
                                                      for o in n.output))
                                  for n in d.node_stats) for d in md.step_stats.dev_stats}
        return values, traced, stats, classes
    finally:
        segmented_schedule.ENABLED = True


def test_same_values_and_step_stats_as_dataflow():
    values_s, traced_s, stats_s, classes_s = _run(True)
    values_d, traced_d, stats_d, classes_d = _run(False)
    assert SegmentedRun in classes_s and SegmentedRun not in classes_d
    for run_s, run_d in zip(values_s, values_d):
        for a, b in zip(run_s, run_d):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(traced_s, traced_d):
        np.testing.assert_array_equal(a, b)
    assert stats_s == stats_d  # the same nodes (the order of a receive's arrival may differ), the same outputs
    names = {n for ns in stats_s.values() for n, _ in ns}
    assert {"mm", "h", "total", "mixed"} <= names
    assert {n.split("/_")[0] for n in names if re.search(r"/_\d+$", n)} >= {"w/read", "bias", "scale"}  # sends, recvs


def test_segments_wait_for_their_receives():
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a, b = tf.constant(1.0), tf.constant(2.0)
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [])
            c = x * 3.0
            d = a * c
            e = d + b + c  # c is read in three segments: kept until the step ends
            # read after d in the compiled order, but run before it: the first segment runs first
            late = c * (((x + 1.0) + 1.0) + 1.0)
        with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
            for _ in range(5):
                assert sess.run([e, c, late], {x: 2.0}) == [14.0, 6.0, 30.0]
            (ex,) = [ex for ex in sess.plan_for([e, c, late], {x: 2.0}).executors if ex.segments is not None]
    waits = sorted(len(s.waits) for s in ex.segments.segments)
    assert waits == [0, 1, 2]


def test_failing_kernel_after_a_receive_names_its_node(mode):
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            y = tf.placeholder(tf.float32, None, name="y")
            y2 = y * 1.0
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, None, name="x")
            bad = tf.matmul(x, y2, name="bad_matmul")
        good = {x: np.ones((2, 3), np.float32), y: np.ones((3, 1), np.float32)}
        with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
            for runs in (0, 5):  # while profiled (timed), then untimed
                for _ in range(runs):
                    sess.run(bad, good)
                with pytest.raises(errors.InvalidArgumentError) as info:
                    sess.run(bad, {x: np.ones((2, 3), np.float32), y: np.ones((2, 3), np.float32)})
                assert info.value.node == "bad_matmul"
                np.testing.assert_array_equal(sess.run(bad, good), np.full((2, 1), 3.0, np.float32))


def test_failure_of_the_sending_partition_stops_the_step(mode):
    def fail(v):
        raise ValueError("sender broke")

    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            sent = tf.py_func(fail, [tf.constant(1.0)], tf.float32, name="failing_sender")
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [])
            out = tf.identity(sent * x, name="after_recv")
        with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(out, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=20_000))
    assert info.value.node == "failing_sender" and "sender broke" in str(info.value)


def test_queue_ops_in_a_segmented_partition(mode):
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            scale = tf.constant(10.0)
        with tf.device("/cpu:0"):
            q = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
            x = tf.placeholder(tf.float32, [])
            enqueue = q.enqueue([x * scale])
            taken = q.dequeue() + 1.0
        with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
            for k in range(6):
                sess.run(enqueue, {x: float(k)})
                assert sess.run(taken) == k * 10.0 + 1.0
            run_classes = {ex._run_class for ex in sess.plan_for(enqueue, {x: 0.0}).executors}
    assert (SegmentedRun in run_classes) == mode


def test_values_read_in_several_segments_are_freed_only_where_the_order_is_sure():
    # segments run in the order their receives arrive, not in a fixed one: a value read in two
    # segments waiting for different receives is kept to the end; one read in segments whose
    # wait-sets nest is freed at its last reader in the segment waiting for the most (it runs last)
    plan = [[("n0", (0,)), ("n1", (1,)), ("n2", (1, 2))],
            [("n3", (0,)), ("n4", (3,)), ("n5", (3, 4))]]
    a, b = frozenset({"recv_a"}), frozenset({"recv_b"})
    assert segmented_schedule._frees(plan, [a, b]) == {(0, 2): (1, 2), (1, 2): (3, 4)}
    assert segmented_schedule._frees(plan, [a, a | b]) == {(0, 2): (1, 2), (1, 0): (0,), (1, 2): (3, 4)}
    assert segmented_schedule._frees(plan, [a | b, b]) == {(0, 0): (0,), (0, 2): (1, 2), (1, 2): (3, 4)}


def test_a_variable_read_before_and_after_a_receive_is_updated_in_place():
    """The forward and backward matmuls read a variable in two segments (the backward one waits
    for the gradient from the other device). Its value is let go after the backward read, so the
    optimizer's update finds it unshared and updates it in place instead of copying it."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((8, 8)).astype(np.float32)
    v0 = np.eye(8, dtype=np.float32)
    x0 = rng.standard_normal((4, 8)).astype(np.float32)
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [4, 8])
        v = tf.Variable(v0, name="v")
        w = tf.Variable(w0, name="w")
        h = tf.matmul(tf.matmul(x, v), w)   # the gradient into the first product reads w again
    with tf.device("/cpu:1"):
        loss = tf.reduce_sum(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.001).minimize(loss, colocate_gradients_with_ops=True)
    with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: x0})
        classes = {type(ex).__name__: ex._run_class for ex in sess.plan_for(train, {x: x0}).executors}
        assert SegmentedRun in classes.values()
        state = sess._backend.devices[0].resources.lookup("", "w")
        held = weakref.ref(state.value)  # a strong reference here would itself force the copy
        for _ in range(5):
            sess.run(train, {x: x0})
            assert state.value is held()
        got = sess.run(w)
    want, v_now = w0.copy(), v0.copy()
    for _ in range(6):
        a = x0 @ v_now
        dh = 2 * (a @ want)
        want, v_now = want - 0.001 * (a.T @ dh), v_now - 0.001 * (x0.T @ (dh @ want.T))
    assert np.isfinite(want).all() and not np.allclose(want, w0, atol=1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(8))
def test_random_two_device_graphs_match_the_dataflow_executor(seed):
    results = {}
    for segmented in (True, False):
        segmented_schedule.ENABLED = segmented
        try:
            with tf.Graph().as_default():
                x, fetched = random_graph(seed, ["/cpu:0", "/cpu:1"])
                with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
                    feed = {x: np.array([-1.25, 0.5, 2.0], np.float32)}
                    results[segmented] = [sess.run(fetched, feed) for _ in range(6)]  # profiled, then untimed
                    classes = {ex._run_class for ex in sess.plan_for(fetched, feed).executors}
            assert (SegmentedRun in classes) == segmented
        finally:
            segmented_schedule.ENABLED = True
    for run_s, run_d in zip(results[True], results[False]):
        for a, b in zip(run_s, run_d):
            np.testing.assert_array_equal(a, b)

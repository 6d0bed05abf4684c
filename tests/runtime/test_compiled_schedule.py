"""Precompiled schedules (runtime/compiled_schedule.py) against the dataflow
executor they replace for partitions without control flow or `_Recv`s."""
import weakref

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.graph_def import GraphDef  # noqa: F401 - the import path the executor uses
from graphrt.runtime import compiled_schedule
from graphrt.runtime.compiled_schedule import CompiledRun
from graphrt.runtime.device import Device
from graphrt.runtime.graph_executor import GraphExecutor
from graphrt.runtime.step import Step


@pytest.fixture(params=[True, False], ids=["compiled", "dataflow"])
def mode(request, monkeypatch):
    monkeypatch.setattr(compiled_schedule, "ENABLED", request.param)
    return request.param


def _model():
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
    h = tf.nn.relu(tf.matmul(x, w, name="mm"), name="relu")
    parts = tf.split(h, 3, axis=1, name="split")  # a multi-output kernel
    total = tf.add_n([tf.reduce_sum(p) for p in parts], name="total")
    scalars = tf.constant(2.0) * tf.constant(3.0) + total
    update = tf.assign_add(w, tf.ones_like(w) * 0.5, name="update")
    return x, w, [h, parts[1], total, scalars], update


def _traced(compiled, runs=5):
    compiled_schedule.ENABLED = compiled
    try:
        with tf.Graph().as_default():
            x, w, fetches, update = _model()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                feed = {x: np.arange(8, dtype=np.float32).reshape(2, 4)}
                values = [sess.run(fetches + [update], feed) for _ in range(runs)]
                md = tf.RunMetadata()
                traced = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                  run_metadata=md)
                plan = sess.plan_for(fetches, feed)
                schedules = [ex.schedule for ex in plan.executors]
        names = {d.device: [n.node_name for n in d.node_stats] for d in md.step_stats.dev_stats}
        return values, traced, names, schedules
    finally:
        compiled_schedule.ENABLED = True


def test_same_values_and_step_stats_as_dataflow():
    values_c, traced_c, names_c, schedules_c = _traced(True)
    values_d, traced_d, names_d, schedules_d = _traced(False)
    assert all(s is not None for s in schedules_c) and all(s is None for s in schedules_d)
    for run_c, run_d in zip(values_c, values_d):
        for a, b in zip(run_c, run_d):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(traced_c, traced_d):
        np.testing.assert_array_equal(a, b)
    assert names_c == names_d  # same nodes, in the same order
    assert any("total" in n for ns in names_c.values() for n in ns)


def test_values_are_freed_after_their_last_use(mode):
    refs = {}

    def make():
        a = np.ones(1000, np.float32)
        refs["a"] = weakref.ref(a)
        return a

    def last_reader(a):
        assert refs["a"]() is a  # the very array make() returned reached this kernel
        return np.float32(a.sum())

    def check(s):
        refs["alive_after_last_use"] = refs["a"]() is not None
        return s

    with tf.Graph().as_default():
        a = tf.py_func(make, [], tf.float32)
        s = tf.py_func(last_reader, [a], tf.float32)
        out = tf.py_func(check, [s], tf.float32)
        with tf.Session() as sess:
            assert sess.run(out) == 1000
    assert refs["alive_after_last_use"] is False


def test_failing_kernel_names_its_node(mode):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        bad = tf.matmul(x, y, name="bad_matmul")
        out = tf.identity(bad * 2.0, name="after")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(out, {x: np.ones((2, 3), np.float32), y: np.ones((2, 3), np.float32)})
            assert "bad_matmul" in str(info.value)
            assert info.value.node == "bad_matmul"
            # the executor survives the failed step
            np.testing.assert_array_equal(sess.run(out, {x: np.ones((2, 3), np.float32),
                                                         y: np.ones((3, 1), np.float32)}),
                                          np.full((2, 1), 6.0, np.float32))


def _executor(build):
    with tf.Graph().as_default() as g:
        build()
    device = Device("/job:localhost/replica:0/task:0/device:CPU:0")
    return GraphExecutor(g.as_graph_def(), device)


def test_aborted_step_stops_before_the_next_kernel():
    ran = []

    def build():
        first = tf.py_func(lambda: ran.append("first") or np.float32(1), [], tf.float32, name="first")
        tf.py_func(lambda v: ran.append("second") or v, [first], tf.float32, name="second")

    ex = _executor(build)
    assert ex.schedule is not None
    step = Step(1, None, [], 0, 1)
    step.abort(errors.DeadlineExceededError("Timed out waiting for the step"))
    run = ex.run_async(step)
    assert isinstance(run, CompiledRun)
    assert step.done and ran == []
    assert isinstance(step.error, errors.DeadlineExceededError)


def test_error_in_a_kernel_stops_the_rest():
    ran = []

    def fail():
        raise ValueError("broken input")

    def build():
        first = tf.py_func(fail, [], tf.float32, name="failing")
        tf.py_func(lambda v: ran.append("second") or v, [first], tf.float32, name="second")

    ex = _executor(build)
    step = Step(1, None, [], 0, 1)
    ex.run_async(step)
    assert step.done and ran == []
    assert isinstance(step.error, errors.InvalidArgumentError)
    assert step.error.node == "failing" and "broken input" in str(step.error)


def test_partitions_that_need_the_dataflow_executor_keep_it():
    def loop():
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])

    assert _executor(loop).schedule is None  # control flow: the frame executor
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a = tf.constant(1.0)
        with tf.device("/cpu:0"):
            b = a * 2.0
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            assert sess.run(b) == 2.0
            kinds = {ex.device.name.rsplit(":", 1)[1]: ex.schedule is not None
                     for ex in sess.plan_for(b, None).executors}
    assert kinds == {"0": False, "1": True}  # the sender compiles; the partition with a _Recv does not


def test_interrupted_run_reports_once_and_the_executor_runs_again():
    interrupt = [True]
    ran = []

    def maybe_interrupt():
        if interrupt[0]:
            raise KeyboardInterrupt
        return np.float32(1)

    def build():
        first = tf.py_func(maybe_interrupt, [], tf.float32, name="interrupting")
        tf.py_func(lambda v: ran.append("second") or v, [first], tf.float32, name="second")

    ex = _executor(build)
    step = Step(1, None, [], 0, 1)
    with pytest.raises(KeyboardInterrupt):
        ex.run_async(step)
    assert step.done and ran == []
    assert isinstance(step.error, errors.CancelledError) and "interrupted" in str(step.error)
    interrupt[0] = False
    step = Step(2, None, [], 0, 1)
    ex.run_async(step)
    assert step.done and step.error is None and ran == ["second"]

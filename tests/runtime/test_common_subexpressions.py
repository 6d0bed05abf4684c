"""Common subexpression elimination in compiled schedules
(runtime/common_subexpressions.py): shared values are exact, kernels that
overwrite an input they owned stop doing so when the input gains readers,
stateful ops and fetches are never shared, and traces keep every node."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.runtime import compiled_schedule
from tests.runtime.random_graphs import random_graph


def _schedule(sess, fetches, feed=None):
    (ex,) = sess.plan_for(fetches, feed).executors
    return ex.schedule


def test_identical_adds_are_computed_once_with_the_same_sum():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.1)
        total = tf.add_n([x + one for _ in range(100)])
        with tf.Session() as sess:
            got = [sess.run(total, {x: np.float32(0.3)}) for _ in range(5)]  # profiled, then fast
            sched = _schedule(sess, total, {x: np.float32(0.3)})
    assert len(sched.entries) - len(sched.fast) == 100  # 99 adds and the constant
    want = np.float32(0)
    term = np.float32(0.3) + np.float32(1.1)
    for _ in range(100):  # AddN sums in order, in float32
        want = want + term
    assert all(type(g) is np.float32 and g == want for g in got)


def test_shared_input_is_not_overwritten_by_a_reader_that_owned_it():
    # a and b are one value after elimination; c and d were each built to add
    # into the array they alone read: both must now allocate
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        a = tf.multiply(x, 2.0, name="a")
        b = tf.multiply(x, 2.0, name="b")
        c = tf.add(a, 1.0, name="c")
        d = tf.add(b, 1.0, name="d")
        e = tf.nn.relu(tf.multiply(x, 2.0, name="e"), name="relu")
        with tf.Session() as sess:
            feed = {x: np.arange(4, dtype=np.float32)}
            for _ in range(6):  # the first runs are profiled, with every node
                got_c, got_d, got_e = sess.run([c, d, e], feed)
                np.testing.assert_array_equal(got_c, np.arange(4, dtype=np.float32) * 2 + 1)
                np.testing.assert_array_equal(got_d, got_c)
                np.testing.assert_array_equal(got_e, np.arange(4, dtype=np.float32) * 2)
            sched = _schedule(sess, [c, d, e], feed)
    assert len(sched.entries) - len(sched.fast) == 7  # b, e and the 5 constants


def test_stateful_ops_are_not_shared():
    with tf.Graph().as_default():
        r1 = tf.random_uniform([64])
        r2 = tf.random_uniform([64])
        with tf.Session() as sess:
            for _ in range(5):  # past the profiled runs
                a, b = sess.run([r1 + 0.0, r2 + 0.0])
            sched = _schedule(sess, [r1, r2])
    assert not np.array_equal(a, b)
    assert [e.it.name for e in sched.fast if e.it.op == "RandomUniform"] == ["random_uniform", "random_uniform_1"]


def test_variable_reads_are_not_shared():
    with tf.Graph().as_default():
        v = tf.Variable(np.float32(1.0))
        before = tf.identity(v) * 1.0
        with tf.control_dependencies([before]):
            bump = tf.assign_add(v, 1.0)
        with tf.control_dependencies([bump]):
            after = tf.identity(v) * 1.0
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run([before, after]) == [1.0, 2.0]


def test_identical_fetches_are_distinct_arrays():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        y1, y2 = x * 3.0, x * 3.0
        with tf.Session() as sess:
            a, b = sess.run([y1, y2], {x: np.ones(3, np.float32)})
    assert a is not b
    a += 1
    np.testing.assert_array_equal(b, np.full(3, 3.0, np.float32))


def test_different_attrs_are_not_shared():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        s0 = tf.reduce_sum(x, axis=0, keepdims=True)
        s1 = tf.reduce_sum(x, axis=0, keepdims=False)
        c1, c2 = tf.cast(x, tf.int32), tf.cast(x, tf.float64)
        with tf.Session() as sess:
            feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
            a, b, i, f = sess.run([s0 + 0.0, s1 + 0.0, c1 + 0, c2 + 0.0], feed)
    assert a.shape == (1, 3) and b.shape == (3,)
    assert i.dtype == np.int32 and f.dtype == np.float64


def test_traced_step_lists_every_node():
    def traced(compiled):
        compiled_schedule.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                x = tf.placeholder(tf.float32, [], name="x")
                total = tf.add_n([tf.add(x, 1.0, name=f"add_{k}") for k in range(5)], name="total")
                with tf.Session() as sess:
                    sess.run(total, {x: 1.0})
                    md = tf.RunMetadata()
                    value = sess.run(total, {x: 1.0}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                     run_metadata=md)
            return value, [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats]
        finally:
            compiled_schedule.ENABLED = True

    value_c, names_c = traced(True)
    value_d, names_d = traced(False)
    assert value_c == value_d == 10.0
    assert names_c == names_d
    assert {f"add_{k}" for k in range(5)} <= set(names_c)


def test_error_of_a_shared_kernel_names_a_node_that_computes_it():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        m1 = tf.matmul(x, y, name="mm1")
        m2 = tf.matmul(x, y, name="mm2")
        with tf.Session() as sess:
            ok = {x: np.ones((2, 3), np.float32), y: np.ones((3, 1), np.float32)}
            sess.run(m1 + m2, ok)
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(m1 + m2, {x: np.ones((2, 3), np.float32), y: np.ones((2, 3), np.float32)})
    assert info.value.node == "mm1" and "mm1" in str(info.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_add_n_of_many_scalars_sums_in_order(dtype):
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        values = (rng.standard_normal(50) * 10.0 ** rng.integers(-6, 6, 50)).astype(dtype)
        values[7], values[30] = np.inf, -np.inf if dtype is np.float64 else values[30]
    else:
        values = rng.integers(np.iinfo(dtype).max // 4, np.iinfo(dtype).max, 50, dtype=dtype)  # they wrap
    with tf.Graph().as_default():
        xs = [tf.placeholder(dtype, [], name=f"x{k}") for k in range(50)]
        total = tf.add_n(xs)
        with tf.Session() as sess:
            got = [sess.run(total, dict(zip(xs, values))) for _ in range(5)][-1]
    want = values[0]
    with np.errstate(all="ignore"):
        for v in values[1:]:
            want = want + v
    assert type(got) is dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_with_shared_nodes_match_the_dataflow_executor(seed):
    results = {}
    for compiled in (True, False):
        compiled_schedule.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                x, fetched = random_graph(seed)
                with tf.Session() as sess:
                    feed = {x: np.array([-1.25, 0.5, 2.0], np.float32)}
                    results[compiled] = [sess.run(fetched, feed) for _ in range(6)]  # profiled, then untimed
                    if compiled:
                        sched = _schedule(sess, fetched, feed)
                        assert len(sched.fast) < len(sched.entries)
        finally:
            compiled_schedule.ENABLED = True
    for run_c, run_d in zip(results[True], results[False]):
        for a, b in zip(run_c, run_d):
            np.testing.assert_array_equal(a, b)

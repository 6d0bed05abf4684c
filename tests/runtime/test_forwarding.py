"""Buffer forwarding: a kernel writes into an input only when the executor
proved at build time that it is that value's sole consumer and the producer
always makes fresh arrays. Nothing anyone else can see may change."""
import time

import numpy as np
import pytest

import graphrt as tf


def items_of(sess, fetch, feed=None):
    plan = sess.plan_for(fetch, feed)
    return {it.name: it for ex in plan.executors for it in ex.items}


def test_sole_consumers_of_fresh_values_may_reuse_them():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.constant(np.ones((4, 3), np.float32), name="w")
        h = tf.nn.relu(tf.matmul(x, w, name="mm") + np.ones(3, np.float32), name="relu")
        shared = tf.multiply(h, 2.0, name="shared")
        out = tf.add(shared, shared * 3.0, name="out")
    with tf.Session(graph=g) as sess:
        feed = {x: np.ones((2, 4), np.float32)}
        items = items_of(sess, out, feed)
        assert items["add"].forwardable == frozenset({0})        # matmul output, used once
        assert items["relu"].forwardable == frozenset({0})
        assert items["shared"].forwardable == frozenset({0})     # relu output used once
        assert items["out"].forwardable == frozenset({1})        # 'shared' has two consumers; mul is ours
        assert items["mm"].forwardable == frozenset()            # a feed and a constant are never ours
        np.testing.assert_allclose(sess.run(out, feed), np.full((2, 3), 5 * 2 * 4, np.float32))


def test_values_with_other_readers_are_not_overwritten():
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        c = tf.constant(np.ones((2, 3), np.float32), name="c")
        a = x * 2.0
        b = a + c          # a is also fetched: b must not write into it
        d = tf.nn.relu(x)  # a feed: must not be written
        e = c + 1.0        # a constant: must not be written
    with tf.Session(graph=g) as sess:
        for _ in range(3):
            av, bv, dv, ev = sess.run([a, b, d, e], {x: xv})
            np.testing.assert_array_equal(av, xv * 2)
            np.testing.assert_array_equal(bv, xv * 2 + 1)
            np.testing.assert_array_equal(dv, xv)
            np.testing.assert_array_equal(ev, np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(xv, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_in_place_gradient_step_matches_numpy_and_leaves_fetched_gradients_alone():
    rng = np.random.RandomState(0)
    xv = rng.randn(8, 5).astype(np.float32)
    w0 = rng.randn(5, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        w = tf.Variable(w0)
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
        grad = tf.gradients(loss, [w])[0]
        step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        expected = w0.copy()
        for _ in range(3):
            gv = 2 * xv.T @ (xv @ expected)
            sess.run(step, {x: xv})
            expected = expected - 0.01 * gv
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-5)
        # a gradient that is also fetched has two consumers: the update must not scale it in place
        fetched, _ = sess.run([grad, step], {x: xv})
        np.testing.assert_allclose(fetched, 2 * xv.T @ (xv @ expected), rtol=1e-4)


# -- values handed between the CPU devices of one process -----------------------------------------

def _cpus(n):
    return tf.ConfigProto(device_count={"CPU": n})


def _mixed_signs():
    rng = np.random.RandomState(1)
    xv = rng.randn(4, 6).astype(np.float32)
    wv = rng.randn(6, 5).astype(np.float32)
    ref = xv @ wv
    assert (ref < 0).any() and (ref > 0).any()
    return xv, wv, ref


def _recvs(sess, fetch, feed):
    return {it.node.attrs["_src"]: it for ex in sess.plan_for(fetch, feed).executors for it in ex.items
            if it.op == "_Recv"}


def test_a_received_array_the_sender_no_longer_holds_is_overwritten_in_place():
    xv, wv, ref = _mixed_signs()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6], name="x")
        with tf.device("/cpu:0"):
            mm = tf.matmul(x, tf.constant(wv), name="mm")
        with tf.device("/cpu:1"):
            out = tf.nn.relu(mm, name="relu")
    with tf.Session(graph=g, config=_cpus(2)) as sess:
        feed = {x: xv}
        assert _recvs(sess, out, feed)["mm"].node.attrs.get("_sole_reference") is True
        assert items_of(sess, out, feed)["relu"].forwardable == frozenset({0})
        for _ in range(3):
            np.testing.assert_allclose(sess.run(out, feed), np.maximum(ref, 0), rtol=1e-5)


def test_a_sent_array_with_other_readers_is_never_overwritten():
    xv, wv, ref = _mixed_signs()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6], name="x")
        with tf.device("/cpu:0"):
            mm = tf.matmul(x, tf.constant(wv), name="mm")
            kept = tf.matmul(x, tf.constant(wv), name="kept")   # sent once, also read on its own device
            later = tf.multiply(kept, 3.0, name="later")
        with tf.device("/cpu:1"):
            relu = tf.nn.relu(mm, name="relu")
            relu_kept = tf.nn.relu(kept, name="relu_kept")
        with tf.device("/cpu:2"):
            doubled = tf.multiply(mm, 2.0, name="doubled")       # mm goes to two devices
    with tf.Session(graph=g, config=_cpus(3)) as sess:
        feed = {x: xv}
        fetches = [mm, relu, doubled, later, relu_kept]
        recvs = _recvs(sess, fetches, feed)
        assert not any(recvs[src].node.attrs.get("_sole_reference") for src in ("mm", "kept"))
        assert recvs["relu"].node.attrs.get("_sole_reference") is True   # fetched from cpu:1, read once
        for _ in range(3):
            mv, rv, dv, lv, rk = sess.run(fetches, feed)
            np.testing.assert_allclose(mv, ref, rtol=1e-5)
            np.testing.assert_allclose(rv, np.maximum(ref, 0), rtol=1e-5)
            np.testing.assert_allclose(dv, 2 * ref, rtol=1e-5)
            np.testing.assert_allclose(lv, 3 * ref, rtol=1e-5)
            np.testing.assert_allclose(rk, np.maximum(ref, 0), rtol=1e-5)


@pytest.mark.parametrize("sent_first", [True, False])
def test_a_handed_over_array_keeps_its_one_reader_through_common_subexpressions(sent_first):
    # 'dup' computes what 'mm' does: sharing one array between the _Send of 'mm'
    # and 'dup's reader would let the receiver's in-place Relu change 'tripled'.
    # (Nothing comes back to cpu:0, so its partition is one compiled schedule, which shares nodes.)
    xv, wv, ref = _mixed_signs()
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 6], name="x")
        with tf.device("/cpu:0"):
            w = tf.constant(wv, name="w")
            if sent_first:  # the schedule keeps the first of the two and reads it for both
                mm = tf.matmul(x, w, name="mm")
                dup = tf.matmul(x, w, name="dup")
            else:
                dup = tf.matmul(x, w, name="dup")
                mm = tf.matmul(x, w, name="mm")
            # reads dup after mm's _Send (gated by mm) and 50 ms for the receiver to run
            with tf.control_dependencies([mm]):
                gate = tf.identity(x)
            late = tf.py_func(lambda a, _: (time.sleep(0.05), a.copy())[1], [dup, gate], tf.float32,
                              stateful=False)
            tripled = tf.multiply(late, 3.0, name="tripled")
        with tf.device("/cpu:1"):
            relu = tf.nn.relu(mm, name="relu")
            kept = tf.Variable(np.zeros((4, 5), np.float32), name="kept")
            keep = tf.assign(kept, relu)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g, config=_cpus(2)) as sess:
        sess.run(init)
        feed = {x: xv}
        assert _recvs(sess, [tripled, keep.op], feed)["mm"].node.attrs.get("_sole_reference") is True
        for _ in range(6):  # the first runs are profiled and share no nodes
            tv, _ = sess.run([tripled, keep.op], feed)
            np.testing.assert_allclose(tv, 3 * ref, rtol=1e-5)
            np.testing.assert_allclose(sess.run(kept), np.maximum(ref, 0), rtol=1e-5)


def test_only_arrays_that_cross_by_reference_are_marked():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        with tf.device("/cpu:0"):
            ident = tf.identity(x, name="ident")                 # not a fresh array: it is the feed
            mm = tf.matmul(x, x, name="mm")
        with tf.device("/device:SIM:0"):
            on_sim = tf.nn.relu(mm, name="on_sim")               # a copy to another memory
        with tf.device("/cpu:1"):
            out = tf.nn.relu(ident, name="out")
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2, "SIM": 1})) as sess:
        feed = {x: np.eye(2, dtype=np.float32)}
        recvs = _recvs(sess, [out, on_sim], feed)
        assert not any(recvs[src].node.attrs.get("_sole_reference") for src in ("ident", "mm"))
        a, b = sess.run([out, on_sim], feed)
        np.testing.assert_array_equal(a, np.eye(2))
        np.testing.assert_array_equal(b, np.eye(2))

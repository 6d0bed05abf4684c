"""Control flow split over two worker processes: a while loop whose body runs
on task 1 while task 0 owns the loop, conds with a branch on each task, and a
cond inside a loop. Iterations use frame:iter rendezvous keys and dead
branches cross as dead tensors, over ZeroMQ. Values match numpy's (computed
independently below) and a one-process run."""
import numpy as np
import pytest

import graphrt as tf

XV = np.array([0.5, -1.0, 2.0], np.float32)
LOCAL = {0: "/cpu:0", 1: "/cpu:1"}
REMOTE = {0: "/job:worker/task:0", 1: "/job:worker/task:1"}


def split_loop(dev):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        with tf.device(dev[0]):
            def body(i, a):
                with tf.device(dev[1]):
                    a = a * 1.5 + x
                return i + 1, a
            _, acc = tf.while_loop(lambda i, a: i < n, body, [0, tf.zeros([3])])
            grad = tf.gradients(tf.reduce_sum(acc), x)[0]
    return g, [acc, grad], lambda: {x: XV, n: 4}


def split_cond(dev, taken):
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device(dev[0]):
            def true_fn():
                with tf.device(dev[1]):
                    return x * 2.0
            c = tf.cond(p, true_fn, lambda: tf.exp(x))
            grad = tf.gradients(tf.reduce_sum(c), x)[0]
    return g, [c, grad], lambda: {p: taken, x: XV}


def cond_in_loop(dev):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device(dev[0]):
            def body(i, a):
                def t():
                    with tf.device(dev[1]):
                        return a * x + 1.0
                return i + 1, tf.cond(tf.equal(i % 3, 0), t, lambda: tf.sin(a) - x)
            _, y = tf.while_loop(lambda i, a: i < 7, body, [0, tf.ones([3])])
    return g, [y], lambda: {x: XV}


def expected_split_loop():
    a = np.zeros(3, np.float32)
    for _ in range(4):
        a = a * 1.5 + XV
    return [a, np.full(3, 1 + 1.5 + 1.5 ** 2 + 1.5 ** 3, np.float32)]  # d(sum a_4)/dx


def expected_cond_in_loop():
    a = np.ones(3, np.float32)
    for i in range(7):
        a = a * XV + 1.0 if i % 3 == 0 else np.sin(a) - XV
    return [a]


EXPECTED = {"split_loop": expected_split_loop, "cond_true": lambda: [XV * 2.0, np.full(3, 2.0, np.float32)],
            "cond_false": lambda: [np.exp(XV), np.exp(XV)], "cond_in_loop": expected_cond_in_loop}

CASES = {"split_loop": split_loop, "cond_true": lambda d: split_cond(d, True),
         "cond_false": lambda d: split_cond(d, False), "cond_in_loop": cond_in_loop}


def run(target, dev, build, config=None):
    g, fetches, feeds = build(dev)
    with tf.Session(target, graph=g, config=config) as sess:
        return [sess.run(fetches, feeds(), options=tf.RunOptions(timeout_in_ms=20000)) for _ in range(2)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_control_flow_across_worker_processes(case, cluster2):
    local = run("", LOCAL, CASES[case], tf.ConfigProto(device_count={"CPU": 2}))
    remote = run(cluster2.target(0), REMOTE, CASES[case])
    expected = EXPECTED[case]()
    assert len(local) == len(remote) == 2
    for want, got in zip(local, remote):
        assert len(got) == len(want) == len(expected)
        for e, w, v in zip(expected, want, got):
            np.testing.assert_allclose(v, e, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(v, w, rtol=1e-6)

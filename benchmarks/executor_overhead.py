"""Executor overhead: microseconds per op for a 1000-op chain and a 1000-op
wide graph of scalar adds, and the fixed cost of one `run` of a one-op graph.

Prints one JSON object. The adds themselves cost ~0.15 us on numpy
scalars; the rest is the executor's per-node work and the session's per-run
work. `floor` is plain Python calling the same numpy operations (what no
runtime can beat), and `cpu_us_per_run` the process CPU time of a run (the
steadier figure when other work keeps the machine busy).
`benchmarks/vs_tensorflow.py` has the same graphs beside TensorFlow.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402
from _util import emit, time_calls  # noqa: E402

N = 1000
CPU = {}


def chain():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.0)
        y = x
        for _ in range(N):
            y = y + one
    sess = tf.Session(graph=g)
    feed = {x: np.float32(0)}
    assert sess.run(y, feed) == N
    per_run = time_calls(lambda: sess.run(y, feed))
    CPU["chain"] = cpu_per_call(lambda: sess.run(y, feed))
    nodes = len(sess.plan_for(y, feed).executors[0].items)
    sess.close()
    return per_run, nodes


def wide():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        one = tf.constant(1.0)
        outs = [x + one for _ in range(N)]
        done = tf.group(*outs)
    sess = tf.Session(graph=g)
    feed = {x: np.float32(0)}
    per_run = time_calls(lambda: sess.run(done, feed))
    CPU["wide"] = cpu_per_call(lambda: sess.run(done, feed))
    nodes = len(sess.plan_for(done, feed).executors[0].items)
    sess.close()
    return per_run, nodes


def one_op():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
        x = tf.placeholder(tf.float32, [])
        y = tf.identity(x)
    sess = tf.Session(graph=g)
    fetch_const = time_calls(lambda: sess.run(c), min_time=1.0)
    feed = {x: np.float32(1)}
    feed_fetch = time_calls(lambda: sess.run(y, feed), min_time=1.0)
    sess.close()
    return fetch_const, feed_fetch


def cpu_per_call(fn, calls=50):
    fn()
    c0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - c0) / calls


def floors():
    """Plain Python doing the graphs' arithmetic with the same numpy values."""
    x, one = np.float32(0), np.asarray(np.float32(1.0))[()]

    def chain_floor():
        y = x
        for _ in range(N):
            y = y + one
        return y

    def wide_floor():
        return [x + one for _ in range(N)]
    return time_calls(chain_floor, min_time=0.5), time_calls(wide_floor, min_time=0.5)


def main():
    chain_s, chain_nodes = chain()
    wide_s, wide_nodes = wide()
    chain_floor, wide_floor = floors()
    const_s, feed_s = one_op()
    emit("executor_overhead", {
        "chain_1000_adds": {"us_per_run": round(chain_s * 1e6, 1), "nodes": chain_nodes,
                            "us_per_node": round(chain_s * 1e6 / chain_nodes, 3)},
        "wide_1000_adds": {"us_per_run": round(wide_s * 1e6, 1), "nodes": wide_nodes,
                           "us_per_node": round(wide_s * 1e6 / wide_nodes, 3)},
        "one_op_run_us": {"fetch_const": round(const_s * 1e6, 1), "feed_identity_fetch": round(feed_s * 1e6, 1)},
        "floor_us_per_run": {"chain": round(chain_floor * 1e6, 1), "wide": round(wide_floor * 1e6, 1)},
        "cpu_us_per_run": {"chain": round(CPU["chain"] * 1e6, 1), "wide": round(CPU["wide"] * 1e6, 1)},
        "load_average_1min": round(os.getloadavg()[0], 1),
        "reference": {"tensorflow_run_us": 160, "target_run_us": 80},
    })


if __name__ == "__main__":
    main()

"""While loop: the cost per iteration of a 10,000-iteration scalar loop run
on the device in one `sess.run`, next to the cost of one `sess.run` of a tiny
graph (what each iteration would cost if the loop were driven from Python).

Prints one JSON object. One iteration of `i < n; i + 1, a * 0.999 + 1`
is 18 nodes (2 Merge, Less, LoopCond, 2 Switch, 2 Identity, 3 Const, AddV2,
Mul, AddV2, 2 NextIteration, and the loop invariant `n` delivered to the
iteration): TF1's loop structure, node for node. The compiled loop
(runtime/compiled_loop.py) runs 4 kernels of them per iteration (Less,
AddV2, Mul, AddV2); the rest become register moves or are hoisted.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402
from _util import emit  # noqa: E402

N = 10_000


def loop_graph(parallel_iterations):
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.999 + 1.0),
                             [tf.constant(0), tf.constant(0.0)], parallel_iterations=parallel_iterations)
    return g, n, i, a


def _loop_session(parallel_iterations):
    g, n, i, a = loop_graph(parallel_iterations)
    sess = tf.Session(graph=g)
    feed = {n: np.int32(N)}
    count, value = sess.run([i, a], feed)
    assert count == N and abs(value - (1 - 0.999 ** N) / 0.001) < 1e-2 * value
    executor = sess.plan_for([i, a], feed).executors[0]
    nodes = (len(executor.items), len(executor.static_frames["while/while_context"].items))
    return sess, (lambda: sess.run([i, a], feed)), nodes


def _tiny_session():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = x * 0.999 + 1.0
    sess = tf.Session(graph=g)
    feed = {x: np.float32(1)}
    return sess, (lambda: sess.run(y, feed))


def _interleaved(fns, rounds=7, tiny_calls=200):
    """Seconds per call of each fn, measured in alternating rounds (so a busy
    machine slows them alike); returns (min, median) per fn."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for k, (fn, calls) in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[k].append((time.perf_counter() - t0) / calls)
    return [(min(s), sorted(s)[len(s) // 2]) for s in samples]


def main():
    sess10, loop10, nodes = _loop_session(10)
    sess1, loop1, _ = _loop_session(1)
    tiny_sess, tiny = _tiny_session()
    for fn in (loop10, loop1, tiny, tiny):
        fn()
    (l10, l10_med), (l1, l1_med), (t, t_med) = _interleaved([(loop10, 1), (loop1, 1), (tiny, 200)])
    for s in (sess10, sess1, tiny_sess):
        s.close()
    emit("while_loop", {
        "iterations": N,
        "graph_nodes": nodes[0],
        "loop_frame_nodes": nodes[1],
        "us_per_iteration": round(l10 * 1e6 / N, 2),
        "us_per_iteration_median": round(l10_med * 1e6 / N, 2),
        "us_per_iteration_parallel_iterations_1": round(l1 * 1e6 / N, 2),
        "tiny_graph_run_us": round(t * 1e6, 1),
        "tiny_graph_run_us_median": round(t_med * 1e6, 1),
        "iteration_cost_vs_tiny_run": round((l10 / N) / t, 2),
        "note": "min over 7 interleaved rounds (median alongside): the loop of 10,000 iterations is one "
                "sess.run; a tiny run is what each iteration would cost if Python drove the loop",
    })


if __name__ == "__main__":
    main()

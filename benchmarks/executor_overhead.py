"""Executor overhead: graphs of cheap scalar kernels, where the runtime's own
work is what is measured, beside plain Python doing the same arithmetic and,
with `--tf-python PYTHON` (an interpreter that has TensorFlow; see
vs_tensorflow.py), beside TensorFlow's compat.v1 graph mode.

Prints one JSON object. Cases (the graphs of vs_tensorflow.py):
`chain` 1,000 dependent scalar adds (`chain_two_devices` the same on one of
two CPU devices, of a value received from the other); `wide` 1,000 independent adds of
`x + one` and an add_n of them (the adds are alike: common subexpression
elimination, TF's and graphrt's, computes one); `wide_distinct` the same
with 1,000 different constants (every add runs); `while_loop` per iteration
of a 10,000-iteration scalar loop; and the fixed cost of one `run` of a
one-op graph. `floor` is plain Python calling the same numpy operations on
the same numpy scalars (what no runtime running these kernels can beat);
`cpu` the process CPU time (the steadier figure when other work keeps the
machine busy); `nodes` the (largest) partition's nodes, `kernels_run` those
an untimed run calls.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402
import vs_tensorflow  # noqa: E402
from _util import emit, time_calls  # noqa: E402

N = vs_tensorflow.N
LOOP = vs_tensorflow.LOOP
CASES = ("chain", "chain_two_devices", "wide", "wide_distinct", "while_loop")


def node_counts(name):
    """(nodes, kernels an untimed run calls) of the case's compiled partition."""
    sess, fn, _ = vs_tensorflow.CASES[name][0](tf)
    for _ in range(5):  # past the profiled runs
        fn()
    executors = [e for e in sess._plans.values()][0].executors
    sess.close()
    ex = max(executors, key=lambda e: len(e.items))  # the partition with the adds
    if ex.schedule is not None:
        return len(ex.schedule.entries), len(ex.schedule.fast)
    if ex.segments is not None:
        return len(ex.items), sum(len(seg.flat) for seg in ex.segments.segments)
    return len(ex.items), None


def floors():
    """Seconds per run (per iteration for the loop) of the graphs' arithmetic in plain Python."""
    x, one, n = np.float32(0), np.float32(1.0), np.int32(LOOP)
    consts = [np.float32(k) for k in range(N)]

    def chain():
        y = x
        for _ in range(N):
            y = y + one
        return y

    def chain_two_devices():
        y = x * np.float32(2.0)
        for k in range(N):
            y = y + consts[k % 5]
        return y

    def wide():
        terms = [x + one for _ in range(N)]
        return np.add.accumulate(np.fromiter(terms, np.float32, N))[-1]

    def wide_distinct():
        terms = [x + c for c in consts]
        return np.add.accumulate(np.fromiter(terms, np.float32, N))[-1]

    def while_loop():
        i, a = np.int32(0), np.float32(0.0)
        c1, c2, step = np.float32(0.999), np.float32(1.0), np.int32(1)
        while i < n:
            i, a = i + step, a * c1 + c2
        return a
    out = {name: time_calls(fn, min_time=0.5) for name, fn in
           (("chain", chain), ("chain_two_devices", chain_two_devices), ("wide", wide),
            ("wide_distinct", wide_distinct))}
    out["while_loop"] = time_calls(while_loop, min_time=0.5) / LOOP
    return out


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


def main():
    proc = vs_tensorflow.start_tensorflow(sys.argv)
    try:
        timed = vs_tensorflow.compare(CASES, proc)
        if proc is not None:
            timed["tiny"] = vs_tensorflow.compare(["tiny"], proc)["tiny"]
    finally:
        vs_tensorflow.stop_tensorflow(proc)
    floor = floors()
    figures = {}
    for name in CASES:
        case = dict(timed[name])
        unit = "us_per_iteration" if name == "while_loop" else "us_per_run"
        case[f"floor_{unit}"] = round(floor[name] * 1e6, 3)
        case["graphrt_over_floor"] = round(case[f"graphrt_wall_{unit}"] / case[f"floor_{unit}"], 2)
        if name != "while_loop":
            nodes, run = node_counts(name)
            case["nodes"] = nodes
            case["kernels_run"] = run
            case["graphrt_us_per_node"] = round(case["graphrt_wall_us_per_run"] / nodes, 3)
        figures[name] = case
    const_s, feed_s = one_op()
    figures["one_op_run_us"] = {"fetch_const": round(const_s * 1e6, 1), "feed_identity_fetch": round(feed_s * 1e6, 1)}
    if "tiny" in timed:
        figures["one_op_run_us"]["tensorflow_feed_identity_fetch"] = timed["tiny"]["tensorflow_wall_us_per_run"]
    emit("executor_overhead", figures, tensorflow=proc is not None, load_average_1min=round(os.getloadavg()[0], 1),
         note="medians of 7 alternating rounds (TensorFlow in its own process); ratio = graphrt / TensorFlow")


if __name__ == "__main__":
    main()

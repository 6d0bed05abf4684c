"""What an executor learns from its profiled runs (runtime/graph_executor.py):
a kernel's steady cost, which decides whether running it is worth handing the
loops waiting on its thread to other threads."""
import numpy as np

import graphrt as tf
from graphrt.runtime import graph_executor
from graphrt.runtime.graph_executor import EXPENSIVE_NS, PROFILED_RUNS, NodeItem, note_cost


def test_the_least_time_of_the_profiled_runs_is_kept():
    it = NodeItem()
    it.cost_ns = 0  # not measured yet
    for cost in (5_000_000, 20_000, 30_000):
        note_cost(it, cost)
    assert it.cost_ns == 20_000
    it.cost_ns = 0
    note_cost(it, 0)
    assert it.cost_ns == 1  # measured, if below the clock's resolution


def test_a_kernel_slow_only_in_its_first_run_is_not_worth_a_hand_off(monkeypatch):
    # A first run does one-time work (caches, lazy set-up): counted, it made small kernels look
    # expensive for good, and every step after handed work to other threads before them.
    clock = {"now": 0, "tick": 10 * EXPENSIVE_NS}

    def now_ns():
        clock["now"] += clock["tick"]
        return clock["now"]
    monkeypatch.setattr(graph_executor, "_now_ns", now_ns)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4])
        with tf.device("/cpu:1"):
            y = tf.nn.relu(x) * 2.0
        with tf.device("/cpu:0"):
            z = y + 1.0
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            feed = {x: np.array([-1.0, 0.0, 1.0, 2.0], np.float32)}
            for _ in range(PROFILED_RUNS):
                np.testing.assert_array_equal(sess.run(z, feed), [1.0, 1.0, 3.0, 5.0])
                clock["tick"] = 1_000
            items = [it for ex in sess.plan_for(z, feed).executors for it in ex.items]
    relu = next(it for it in items if it.op == "Relu")
    assert relu.cost_ns == 1_000 and not relu.expensive

"""Training steps sunk into one Session.run (tf.train.repeat) against one run per step.

A small model trains K=100 steps two ways: a host loop of K
`sess.run(train, feed)` calls, and one `sess.run(tf.train.repeat(step, K,
[xs, ys]))` whose while loop reads step i's batch from [K, 32, ...] inputs
fed once. Two models: "mlp" (4 -> 32 -> 1, batch 32, momentum SGD, about
45 kernels a step) and "linear" (4 -> 1, the same optimizer, about 15).
Prints, per model and device (CPU:0, SIM:0), the median time per step of
each way, their ratio, the sunk loop's time per step on the frame
executor (the compiled loop turned off), the cost of one `sess.run` of a graph with no
kernels fed the same batch (what sinking can save per step), and the
largest difference of the trained parameters (the two must agree).

Sinking saves the per-run cost and nothing of a step's kernels, so the
ratio is at best kernels / (kernels + run cost): small where a step's
kernels cost little next to a `sess.run`.

    python benchmarks/sink.py [--steps 100]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402
from graphrt.runtime import compiled_loop  # noqa: E402

from _util import emit  # noqa: E402

BATCH = 32
REPEATS = 5


def loss_of(x, y, model="mlp"):
    h = x
    if model == "mlp":
        h = tf.layers.dense(x, 32, tf.nn.relu, name="fc", kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    out = tf.layers.dense(h, 1, name="out", kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    return tf.reduce_mean(tf.square(out - y))


def run_cost(device, repeats=200):
    """Seconds of one sess.run that feeds a batch and runs no kernel on `device` (an Identity of the feed)."""
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x = tf.placeholder(tf.float32, [BATCH, 4])
        y = tf.identity(x)
    feed = {x: np.ones([BATCH, 4], np.float32)}
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(y.op, feed)
        t0 = time.perf_counter()
        for _ in range(repeats):
            sess.run(y.op, feed)
        return (time.perf_counter() - t0) / repeats


def measure(steps, device, sunk, model):
    rng = np.random.RandomState(0)
    xs = rng.randn(steps, BATCH, 4).astype(np.float32)
    ys = xs.sum(axis=2, keepdims=True)
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        opt = tf.train.MomentumOptimizer(0.01, 0.9)
        if sunk:
            xs_t = tf.placeholder(tf.float32, xs.shape)
            ys_t = tf.placeholder(tf.float32, ys.shape)

            def step(x, y):
                loss = loss_of(x, y, model)
                return opt.minimize(loss), loss
            losses = tf.train.repeat(step, steps, [xs_t, ys_t])
        else:
            x = tf.placeholder(tf.float32, [BATCH, 4])
            y = tf.placeholder(tf.float32, [BATCH, 1])
            loss = loss_of(x, y, model)
            train = opt.minimize(loss)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        init = tf.variables_initializer(tf.global_variables())
        times = []
        for _ in range(REPEATS + 1):  # the first builds the plans
            sess.run(init)
            t0 = time.perf_counter()
            if sunk:
                sess.run(losses, {xs_t: xs, ys_t: ys})
            else:
                for i in range(steps):
                    sess.run(train, {x: xs[i], y: ys[i]})
            times.append(time.perf_counter() - t0)
        params = sess.run(tf.trainable_variables())
    return float(np.median(times[1:])) / steps, params


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    rows = []
    for model in ("mlp", "linear"):
        for device in ("/device:CPU:0", "/device:SIM:0"):
            host_s, host_params = measure(args.steps, device, False, model)
            sunk_s, sunk_params = measure(args.steps, device, True, model)
            compiled_loop.ENABLED = False  # the same sunk loop on the frame executor, for comparison
            try:
                frame_s, _ = measure(args.steps, device, True, model)
            finally:
                compiled_loop.ENABLED = True
            rows.append({"model": model, "device": device, "host_loop_ms_per_step": round(host_s * 1e3, 3),
                         "sunk_ms_per_step": round(sunk_s * 1e3, 3), "sunk_over_host": round(sunk_s / host_s, 2),
                         "sunk_on_frame_executor_ms_per_step": round(frame_s * 1e3, 3),
                         "run_cost_ms": round(run_cost(device) * 1e3, 3),
                         "max_param_difference": max(float(np.max(np.abs(a - b)))
                                                     for a, b in zip(host_params, sunk_params))})
    emit("sink", {"runs": rows}, steps=args.steps, batch=BATCH)


if __name__ == "__main__":
    main()

"""Activation recomputation on a deep MLP on a SIM device.

For an n-layer MLP (relu(h @ w + b), batch 256, width 32) on SIM:0 this
prints the peak bytes the gradient step allocated above the variables
(from the BFC allocator: deterministic), the median step time, and their
ratios, for the plain gradients and for `tf.gradients(..., checkpoints=
"sqrt")`, next to the textbook figures: plain keeps about n activations,
sqrt about 2*sqrt(n) (checkpoints plus one recomputed segment), at the
cost of one more forward pass (about 4/3 of the step's kernels).

    python benchmarks/recompute.py [--layers 64 16 256]
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402

from _util import emit, time_calls  # noqa: E402

BATCH, WIDTH = 256, 32
SIM0 = "/job:localhost/replica:0/task:0/device:SIM:0"


def measure(layers, checkpoints):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default(), tf.device("/device:SIM:0"):
        x = tf.placeholder(tf.float32, [BATCH, WIDTH])
        h, params = x, []
        for i in range(layers):
            w = tf.Variable((rng.randn(WIDTH, WIDTH) / math.sqrt(WIDTH)).astype(np.float32), name=f"w{i}")
            b = tf.Variable(np.zeros(WIDTH, np.float32), name=f"b{i}")
            params += [w, b]
            h = tf.nn.relu(tf.matmul(h, w) + b)
        loss = tf.reduce_mean(tf.square(h))
        grads = tf.gradients(loss, params, checkpoints=checkpoints)
    feed = {x: rng.randn(BATCH, WIDTH).astype(np.float32)}
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(tf.variables_initializer(params))
        sess.run(grads, feed)
        allocator = sess.device(SIM0).executor.allocator
        before = allocator.stats().bytes_in_use
        allocator.clear_stats()
        values = sess.run(grads, feed)
        peak = allocator.stats().peak_bytes_in_use - before
        seconds = time_calls(lambda: sess.run(grads, feed), min_time=1.0)
        kernels = sum(1 for op in g.get_operations() if op.type in ("MatMul", "Relu", "ReluGrad"))
    return values, peak, seconds, kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[16, 64])
    args = parser.parse_args()
    activation = BATCH * WIDTH * 4
    rows = []
    for n in args.layers:
        plain, plain_peak, plain_s, plain_k = measure(n, None)
        sqrt, sqrt_peak, sqrt_s, sqrt_k = measure(n, "sqrt")
        max_err = max(float(np.max(np.abs(a - b))) for a, b in zip(plain, sqrt))
        rows.append({
            "layers": n,
            "plain_peak_bytes": plain_peak, "sqrt_peak_bytes": sqrt_peak,
            "plain_peak_activations": round(plain_peak / activation, 1),
            "sqrt_peak_activations": round(sqrt_peak / activation, 1),
            "textbook_sqrt_activations": round(2 * math.sqrt(3 * n), 1),
            "memory_ratio": round(plain_peak / sqrt_peak, 2),
            "plain_step_ms": round(plain_s * 1e3, 2), "sqrt_step_ms": round(sqrt_s * 1e3, 2),
            "time_ratio": round(sqrt_s / plain_s, 2),
            "kernel_ratio": round(sqrt_k / plain_k, 2),
            "max_abs_grad_difference": max_err,
        })
    emit("recompute", {"runs": rows}, batch=BATCH, width=WIDTH, activation_bytes=activation)


if __name__ == "__main__":
    main()

"""Activation recomputation: peak device memory of a deep MLP with and without.

Builds a 64-layer MLP on a SIM device and computes its gradients three
ways: plainly (every activation kept for the backward pass), with
`tf.gradients(..., checkpoints="sqrt")` (about sqrt(n) checkpoints kept, the
segments between them recomputed), and with every 8 layers wrapped in
`tf.recompute_grad`. Prints, for each, the peak bytes the step allocated
above the variables (from the device's BFC allocator, read with
tf.contrib.memory_stats), and checks that the gradients agree.

    python samples/recompute.py [--layers 64] [--batch 256] [--width 32]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402


def build(mode, layers, batch, width):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default(), tf.device("/device:SIM:0"):
        x = tf.constant(rng.randn(batch, width).astype(np.float32))
        weights = [tf.Variable((rng.randn(width, width) / np.sqrt(width)).astype(np.float32), name=f"w{i}")
                   for i in range(layers)]

        def block(h, first):
            for w in weights[first:first + 8]:
                h = tf.nn.relu(tf.matmul(h, w))
            return h
        h = x
        if mode == "recompute_grad":
            for first in range(0, layers, 8):
                h = tf.recompute_grad(lambda t, first=first: block(t, first))(h)
        else:
            for first in range(0, layers, 8):
                h = block(h, first)
        loss = tf.reduce_mean(tf.square(h))
        grads = tf.gradients(loss, weights, checkpoints="sqrt" if mode == "sqrt" else None)
        in_use, peak = tf.contrib.memory_stats.BytesInUse(), tf.contrib.memory_stats.MaxBytesInUse()
    return g, weights, grads, in_use, peak


def measure(mode, layers, batch, width):
    g, weights, grads, in_use, peak = build(mode, layers, batch, width)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(tf.variables_initializer(weights))
        sess.run(grads)
        before = sess.run(in_use)
        sess.device("/job:localhost/replica:0/task:0/device:SIM:0").executor.allocator.clear_stats()
        values = sess.run(grads)
        return values, int(sess.run(peak)) - int(before)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=64)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=32)
    args = parser.parse_args()
    activation = args.batch * args.width * 4
    plain, plain_peak = measure("plain", args.layers, args.batch, args.width)
    print(f"{args.layers} layers, activation {activation} B")
    print(f"  plain:           peak {plain_peak:>9} B = {plain_peak / activation:5.1f} activations")
    for mode in ("sqrt", "recompute_grad"):
        values, peak = measure(mode, args.layers, args.batch, args.width)
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(plain, values))
        print(f"  {mode + ':':16} peak {peak:>9} B = {peak / activation:5.1f} activations, "
              f"{plain_peak / peak:.1f}x less; largest gradient difference {worst:.1e}")


if __name__ == "__main__":
    main()

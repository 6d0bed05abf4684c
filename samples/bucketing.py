"""Bucketing (MXNet's BucketingModule): one unrolled graph per sequence length,
all sharing one set of variables, the bucket picked per batch.

The task: read a sequence of numbers and output their sum (a tanh RNN,
unrolled, hidden 32). Sequences have lengths 4..64. With buckets
(16, 32, 48, 64) each batch is drawn from one bucket and padded only to the
bucket's length, and runs the graph unrolled that far; the baseline pads
every batch to 64 and runs the longest graph. Both train the same
variables from the same start. Prints per-epoch loss and time for both and
the share of padded (wasted) time steps.

    python samples/bucketing.py [--epochs 3] [--buckets 16 32 48 64]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402

BATCH, HIDDEN, MAX_LEN = 32, 32, 64


def unrolled_loss(length):
    """The loss of a batch padded to `length`, built on the shared variables."""
    x = tf.placeholder(tf.float32, [BATCH, length], name=f"x{length}")
    mask = tf.placeholder(tf.float32, [BATCH, length], name=f"mask{length}")
    target = tf.placeholder(tf.float32, [BATCH], name=f"target{length}")
    with tf.variable_scope("rnn", reuse=tf.AUTO_REUSE):
        w_in = tf.get_variable("w_in", [1, HIDDEN], initializer=tf.glorot_uniform_initializer(seed=1))
        w_h = tf.get_variable("w_h", [HIDDEN, HIDDEN], initializer=tf.orthogonal_initializer(seed=2)
                              if hasattr(tf, "orthogonal_initializer") else tf.glorot_uniform_initializer(seed=2))
        b = tf.get_variable("b", [HIDDEN], initializer=tf.zeros_initializer())
        w_out = tf.get_variable("w_out", [HIDDEN, 1], initializer=tf.glorot_uniform_initializer(seed=3))
    h = tf.zeros([BATCH, HIDDEN])
    for t in range(length):
        new = tf.tanh(tf.matmul(x[:, t:t + 1], w_in) + tf.matmul(h, w_h) + b)
        m = mask[:, t:t + 1]
        h = m * new + (1.0 - m) * h  # padding steps leave the state as it was
    pred = tf.squeeze(tf.matmul(h, w_out), 1)
    loss = tf.reduce_mean(tf.square(pred - target))
    return (x, mask, target), loss


def data(n, seed):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(4, MAX_LEN + 1, size=n)
    seqs = [rng.uniform(-0.2, 0.2, size=length).astype(np.float32) for length in lengths]
    return seqs, np.array([s.sum() for s in seqs], np.float32)


def batches(seqs, targets, buckets, rng):
    """(bucket length, x, mask, target) batches; each batch from one bucket."""
    by_bucket = {b: [] for b in buckets}
    for i, s in enumerate(seqs):
        by_bucket[min(b for b in buckets if b >= len(s))].append(i)
    out = []
    for b, idx in by_bucket.items():
        idx = rng.permutation(idx)
        for j in range(0, len(idx) - BATCH + 1, BATCH):
            chosen = idx[j:j + BATCH]
            x = np.zeros([BATCH, b], np.float32)
            mask = np.zeros([BATCH, b], np.float32)
            for row, i in enumerate(chosen):
                x[row, :len(seqs[i])] = seqs[i]
                mask[row, :len(seqs[i])] = 1.0
            out.append((b, x, mask, targets[chosen]))
    rng.shuffle(out)
    return out


def train(buckets, epochs, seqs, targets):
    g = tf.Graph()
    with g.as_default():
        opt = tf.train.AdamOptimizer(0.01)
        graphs = {}
        for b in buckets:
            feeds, loss = unrolled_loss(b)
            graphs[b] = (feeds, loss, opt.minimize(loss))
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            assert len(tf.trainable_variables()) == 4  # one set of variables for every bucket
            for (xp, mp, tp), loss, step in graphs.values():  # plan each graph now: epochs time steps only
                sess.plan_for([step, loss], {xp: 0, mp: 0, tp: 0})
            rng = np.random.RandomState(0)
            history = []
            for epoch in range(epochs):
                start, losses, steps, padded = time.perf_counter(), [], 0, 0
                for b, x, mask, target in batches(seqs, targets, buckets, rng):
                    (xp, mp, tp), loss, step = graphs[b]
                    losses.append(sess.run([step, loss], {xp: x, mp: mask, tp: target})[1])
                    steps += mask.size
                    padded += mask.size - int(mask.sum())
                history.append((float(np.mean(losses)), time.perf_counter() - start, padded / steps))
            return history


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--buckets", type=int, nargs="+", default=[16, 32, 48, 64])
    parser.add_argument("--examples", type=int, default=1024)
    args = parser.parse_args()
    seqs, targets = data(args.examples, seed=0)
    results = {"bucketed": train(sorted(set(args.buckets) | {MAX_LEN}), args.epochs, seqs, targets),
               "padded to 64": train([MAX_LEN], args.epochs, seqs, targets)}
    for name, history in results.items():
        for epoch, (loss, seconds, waste) in enumerate(history):
            print(f"{name:13} epoch {epoch + 1} loss {loss:.4f} time {seconds:.2f}s padding {waste:.0%}")
    speedup = sum(h[1] for h in results["padded to 64"]) / sum(h[1] for h in results["bucketed"])
    print(f"bucketed epochs are {speedup:.1f}x faster than padding every batch to {MAX_LEN}")


if __name__ == "__main__":
    main()

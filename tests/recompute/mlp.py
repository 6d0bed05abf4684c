"""The deep MLP the recompute tests and benchmark measure, and how they measure it."""
import numpy as np

import graphrt as tf

SIM = "/job:localhost/replica:0/task:0/device:SIM:0"


def mlp(x, layers, width, seed=0, dropout=None):
    """relu(h @ w + b) `layers` times; returns (output, [w0, b0, w1, b1, ...])."""
    rng = np.random.RandomState(seed)
    h, params = x, []
    for i in range(layers):
        w = tf.Variable((rng.randn(width, width) / np.sqrt(width)).astype(np.float32), name=f"w{i}")
        b = tf.Variable((rng.randn(width) * 0.1).astype(np.float32), name=f"b{i}")
        params += [w, b]
        h = tf.nn.relu(tf.matmul(h, w) + b)
        if dropout is not None and i == layers // 2:
            h = tf.nn.dropout(h, keep_prob=dropout, seed=7)
    return h, params


def sim_gradients(checkpoints, layers=64, batch=256, width=32):
    """Gradients of a `layers`-deep MLP on SIM:0 and the peak bytes the step
    allocated above what was in use before it (variables), from the BFC allocator."""
    g = tf.Graph()
    with g.as_default(), tf.device("/device:SIM:0"):
        x = tf.placeholder(tf.float32, [batch, width])
        h, params = mlp(x, layers, width)
        loss = tf.reduce_mean(tf.square(h))
        grads = tf.gradients(loss, params, checkpoints=checkpoints)
    feed = {x: np.random.RandomState(1).randn(batch, width).astype(np.float32)}
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(tf.variables_initializer(params))
        sess.run(grads, feed)  # the first run uploads constants; measure the second
        allocator = sess.device(SIM).executor.allocator
        before = allocator.stats().bytes_in_use
        allocator.clear_stats()
        values = sess.run(grads, feed)
        return values, allocator.stats().peak_bytes_in_use - before

"""BLAS threads: a 3-device MLP step (784-256-256-10, batch 64, SGD, one
layer per CPU device) with graphrt's BLAS thread policy (a per-kernel choice
between one share of the cores per host device and every core, from what
each took; ops/blas.ThreadChooser) against OpenBLAS using every core
(`intra_op_parallelism_threads` = cores), measured in interleaved rounds so
machine load hits both alike.

Prints one JSON object: ms per step, median and min over the rounds, and
the load average when it ran (the policy matters most on a busy machine).
Pass --hog to run a CPU-bound process beside it for the whole measurement.
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402
from _util import emit  # noqa: E402
from graphrt.ops import blas  # noqa: E402

SIZES = [784, 256, 256, 10]
BATCH = 64
DEVICES = 3


def build(intra_op_threads):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = x
        for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
            with tf.device(f"/cpu:{i % DEVICES}"):
                w = tf.Variable((rng.randn(a, b) * np.sqrt(2.0 / a)).astype(np.float32))
                h = tf.matmul(h, w)
                if i < len(SIZES) - 2:
                    h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, colocate_gradients_with_ops=True)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"CPU": DEVICES}, intra_op_parallelism_threads=intra_op_threads)
    sess = tf.Session(graph=g, config=config)
    sess.run(init)
    feed = {x: rng.rand(BATCH, SIZES[0]).astype(np.float32), y: rng.randint(0, 10, BATCH).astype(np.int64)}
    return sess, (lambda: sess.run(train, feed))


def main():
    hog = None
    if "--hog" in sys.argv:
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        cores = os.cpu_count() or 1
        policy_sess, policy_step = build(0)
        policy_threads = blas.blas_threads()
        chooser = blas.thread_chooser()
        all_sess, all_step = build(cores)
        samples = {"policy": [], "all_threads": []}
        for _ in range(9):
            for name, sess_threads, step in (("policy", policy_threads, policy_step), ("all_threads", cores, all_step)):
                # the policy is process-wide: each side installs its own
                blas.set_blas_threads(sess_threads)
                blas.use_thread_chooser(chooser if name == "policy" else None)
                step()
                t0 = time.perf_counter()
                for _ in range(20):
                    step()
                samples[name].append((time.perf_counter() - t0) / 20)
        policy_sess.close()
        all_sess.close()
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    figures = {name: {"ms_per_step_median": round(float(np.median(s)) * 1e3, 2),
                      "ms_per_step_min": round(min(s) * 1e3, 2)} for name, s in samples.items()}
    emit("blas_threads", {"devices": DEVICES, "cores": cores, "policy_blas_threads": policy_threads,
                          "load_average_1min": round(os.getloadavg()[0], 1), "concurrent_hog": hog is not None,
                          **figures}, model="784-256-256-10", batch=BATCH)


if __name__ == "__main__":
    main()

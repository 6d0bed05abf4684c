"""BLAS threads: a 3-device MLP step (784-256-256-10, batch 64, SGD, one
layer per CPU device) with graphrt's BLAS thread policy (a per-kernel choice
between one share of the cores per host device and every core, from what
each took; ops/blas.ThreadChooser) against OpenBLAS using every core
(`intra_op_parallelism_threads` = cores), measured in interleaved rounds so
machine load hits both alike.

Prints one JSON object: ms per step, median and min over the rounds, and
the load average when it ran (the policy matters most on a busy machine).
With --hog the same rounds run twice, idle and then beside a CPU-bound
process, and `hog_vs_idle` is the ratio of the medians (the target is the
policy's <= 2). `steady` is the policy alone, 500 steps back to back.

Each round is preceded by a pause: OpenBLAS's idle threads spin for about
0.1 s after their last call, so a round that follows the other side's would
share the cores with them (with a hog as well, the policy's step measured
2-3x slower than when it ran alone).
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


ROUNDS = 7
STEPS_PER_ROUND = 50
WARMUP_STEPS = 5  # after the pause: the first steps find caches and BLAS threads cold
SETTLE_S = 0.2
STEADY_CHUNKS = 50  # of 10 steps


def measure(sides, chooser):
    samples = {name: [] for name, _, _ in sides}
    for _ in range(ROUNDS):
        for name, threads, step in sides:
            # the policy is process-wide: each side installs its own
            blas.set_blas_threads(threads)
            blas.use_thread_chooser(chooser if name == "policy" else None)
            time.sleep(SETTLE_S)
            for _ in range(WARMUP_STEPS):
                step()
            t0 = time.perf_counter()
            for _ in range(STEPS_PER_ROUND):
                step()
            samples[name].append((time.perf_counter() - t0) / STEPS_PER_ROUND)
    figures = {name: {"ms_per_step_median": round(float(np.median(s)) * 1e3, 2),
                      "ms_per_step_min": round(min(s) * 1e3, 2)} for name, s in samples.items()}
    # The policy alone, as a training loop runs it: steps back to back, nothing else in between.
    name, threads, step = sides[0]
    blas.set_blas_threads(threads)
    blas.use_thread_chooser(chooser)
    time.sleep(SETTLE_S)
    chunks = []
    for _ in range(STEADY_CHUNKS):
        t0 = time.perf_counter()
        for _ in range(10):
            step()
        chunks.append((time.perf_counter() - t0) / 10)
    figures[name]["steady_ms_per_step_median"] = round(float(np.median(chunks)) * 1e3, 2)
    return figures


def main():
    with_hog = "--hog" in sys.argv
    cores = os.cpu_count() or 1
    policy_sess, policy_step = build(0)
    policy_threads = blas.blas_threads()
    chooser = blas.thread_chooser()
    all_sess, all_step = build(cores)
    sides = (("policy", policy_threads, policy_step), ("all_threads", cores, all_step))
    figures = measure(sides, chooser)
    if with_hog:
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            load = os.getloadavg()[0]
            hogged = measure(sides, chooser)
        finally:
            hog.kill()
            hog.wait()
        ratios = {name: round(hogged[name]["ms_per_step_median"] / figures[name]["ms_per_step_median"], 2)
                  for name in figures}
        ratios["policy_steady"] = round(hogged["policy"]["steady_ms_per_step_median"] /
                                        figures["policy"]["steady_ms_per_step_median"], 2)
        figures = {"idle": figures, "under_hog": hogged, "hog_vs_idle": ratios}
    else:
        load = os.getloadavg()[0]
    policy_sess.close()
    all_sess.close()
    emit("blas_threads", {"devices": DEVICES, "cores": cores, "policy_blas_threads": policy_threads,
                          "load_average_1min": round(load, 1), "concurrent_hog": with_hog,
                          "target": {"policy hog_vs_idle": "<= 2"} if with_hog else {}, **figures},
         model="784-256-256-10", batch=BATCH)


if __name__ == "__main__":
    main()

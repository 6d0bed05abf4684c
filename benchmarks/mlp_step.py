"""MLP training step: 784-1024-1024-10, batch 256, SGD, on one CPU device and
with the layers split over two (gradients colocated with their ops).

Prints one JSON object with ms per step and GFLOP/s next to two floors:
numpy doing the step's five large matmuls alone, and the whole step written as
plain numpy (`numpy_step`: the same kernels graphrt runs, the weight
gradients fused into their updates as one gemm, the small kernels in place),
which is what a runtime adds its overhead to. The four are timed in
alternating rounds, with a pause before each (OpenBLAS's idle threads spin for
~0.1 s after a call), so the machine's phase hits them alike; the ratios to
the numpy step are medians of the per-round ratios. Before timing, one step of
graphrt and one of the numpy step from the same weights must give the same
weights, so the floor computes what graphrt computes. Each session's
`python_calls_per_step` (Python-level function calls a step makes, counted as
`step_calls.py` counts them) is the figure of graphrt's own overhead that does
not move with the machine's phase.

    python benchmarks/mlp_step.py [--rounds N]
"""
import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import graphrt as tf  # noqa: E402
from graphrt.ops import blas  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _util import emit  # noqa: E402
from step_calls import CallCounter  # noqa: E402

SIZES = [784, 1024, 1024, 10]
BATCH = 256
LEARNING_RATE = 0.01
STEPS_PER_ROUND = 15
WARMUP_STEPS = 3
PAUSE_S = 0.15


def flops_per_step():
    fwd = sum(2 * BATCH * a * b for a, b in zip(SIZES[:-1], SIZES[1:]))
    bwd_w = fwd                       # dW for every layer
    bwd_x = fwd - 2 * BATCH * SIZES[0] * SIZES[1]  # dX except into the input
    return fwd + bwd_w + bwd_x


def build(devices):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = x
        for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
            with tf.device(devices[i * len(devices) // (len(SIZES) - 1)]), tf.name_scope(f"layer{i}"):
                w = tf.Variable((rng.randn(a, b) * np.sqrt(2.0 / a)).astype(np.float32), name="w")
                bias = tf.Variable(np.zeros(b, np.float32), name="b")
                h = tf.matmul(h, w) + bias
                if i < len(SIZES) - 2:
                    h = tf.nn.relu(h)
        with tf.device(devices[-1]):
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss, colocate_gradients_with_ops=True)
        variables = tf.trainable_variables()  # layer by layer: w, b
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_count={"CPU": len(devices)})
    sess = tf.Session(graph=g, config=config)
    sess.run(init)
    feed = {x: rng.rand(BATCH, SIZES[0]).astype(np.float32), y: rng.randint(0, 10, BATCH).astype(np.int64)}
    return sess, train, variables, feed


def numpy_matmuls():
    rng = np.random.RandomState(0)
    ws = [rng.rand(a, b).astype(np.float32) for a, b in zip(SIZES[:-1], SIZES[1:])]
    xs = [rng.rand(BATCH, a).astype(np.float32) for a in SIZES[:-1]]
    gs = [rng.rand(BATCH, b).astype(np.float32) for b in SIZES[1:]]

    def step():
        for x, w in zip(xs, ws):
            x @ w
        for i, (x, w, g) in enumerate(zip(xs, ws, gs)):
            x.T @ g
            if i:
                g @ w.T
    return step


def numpy_step(params, x, labels):
    """One SGD step of the same MLP in plain numpy, updating `params` ([w0, b0, w1, b1, w2, b2]) in place."""
    w0, b0, w1, b1, w2, b2 = params
    rows = np.arange(len(x))  # the batch fed, not BATCH: vs_tensorflow.py's session brings its own
    scale = np.float32(1.0 / len(x))

    def update(weight, a, grad_out):  # weight -= lr * a.T @ grad_out, as one gemm where BLAS takes it
        with blas.BLAS_LOCK:
            if blas.gemm_update(-LEARNING_RATE, a, True, grad_out, False, weight):
                return
        weight -= np.float32(LEARNING_RATE) * (a.T @ grad_out)

    def axpy(grad, var):
        if not blas.axpy(-LEARNING_RATE, grad, var):
            var -= np.float32(LEARNING_RATE) * grad

    def step():
        h1 = x @ w0
        h1 += b0
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w1
        h2 += b1
        np.maximum(h2, 0, out=h2)
        logits = h2 @ w2
        logits += b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        sum_e = e.sum(axis=1, keepdims=True)
        (np.log(sum_e[:, 0]) - shifted[rows, labels]).mean()  # the loss, computed as the step does
        e /= sum_e
        e[rows, labels] -= 1
        d_logits = e * scale
        d_b2, d_w2 = d_logits.sum(0), h2.T @ d_logits
        d_h2 = d_logits @ w2.T
        np.multiply(d_h2, h2 > 0, out=d_h2)
        d_b1 = d_h2.sum(0)
        d_h1 = d_h2 @ w1.T  # before w1's update, as the graph orders it
        update(w1, h1, d_h2)
        np.multiply(d_h1, h1 > 0, out=d_h1)
        d_b0 = d_h1.sum(0)
        update(w0, x, d_h1)
        axpy(d_w2, w2)
        axpy(d_b2, b2)
        axpy(d_b1, b1)
        axpy(d_b0, b0)
    return step


def checked_numpy_step(sess, train, variables, feed):
    """The numpy step on a copy of the session's weights, after checking that one step of each from
    those weights gives the same weights."""
    x, labels = feed.values()
    params = [np.array(v) for v in sess.run(variables)]
    step = numpy_step(params, x, labels)
    sess.run(train, feed)
    step()
    for var, mine, theirs in zip(variables, params, sess.run(variables)):
        if not np.allclose(mine, theirs, rtol=1e-4, atol=1e-6):
            raise AssertionError(f"the numpy step's {var.name} differs from graphrt's after one step "
                                 f"(max difference {np.abs(mine - theirs).max()})")
    return step


def calls_per_step(step, steps=5):
    """Python-level function calls per call of `step` (after its warm-up)."""
    counter = CallCounter()
    counter.install()
    counter.on = True
    try:
        for _ in range(steps):
            step()
    finally:
        counter.on = False
        sys.setprofile(None)
        threading.setprofile(None)
    return round(sum(counter.counts.values()) / steps, 1)


def time_round(step):
    """Median seconds per step over one round, after a pause and a few untimed steps."""
    time.sleep(PAUSE_S)
    for _ in range(WARMUP_STEPS):
        step()
    times = []
    for _ in range(STEPS_PER_ROUND):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    flops = flops_per_step()
    # The BLAS thread policy is process-wide and set by the session made last: the 2-device one's
    # (a ThreadChooser) is kept aside, and each round installs its side's own, as blas_threads.py does.
    sessions = {"two_devices": build(["/cpu:0", "/cpu:1"])}
    chooser = blas.thread_chooser()
    sessions["one_device"] = build(["/cpu:0"])
    every_core = blas.current_threads()
    partitions = len(sessions["two_devices"][0].plan_for(sessions["two_devices"][1],
                                                          sessions["two_devices"][3]).executors)
    steps = {name: (lambda s=sessions[name]: s[0].run(s[1], s[3])) for name in ("one_device", "two_devices")}
    steps["numpy_step"] = checked_numpy_step(*sessions["one_device"])
    steps["numpy_matmuls_only"] = numpy_matmuls()

    def install_policy(name):
        blas.set_blas_threads(every_core)
        blas.use_thread_chooser(chooser if name == "two_devices" else None)
    for name, step in steps.items():  # graphrt's first steps profile, and its BLAS team size is chosen by trial
        install_policy(name)
        for _ in range(30):
            step()
    calls = {}
    for name in sessions:
        install_policy(name)
        calls[name] = calls_per_step(steps[name])
    rounds = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, step in steps.items():
            install_policy(name)
            rounds[name].append(time_round(step))
    for sess, *_ in sessions.values():
        sess.close()
    figures = {}
    for name, times in rounds.items():
        per_step = float(np.median(times))
        figures[name] = {"ms_per_step": round(per_step * 1e3, 2), "gflops": round(flops / per_step / 1e9, 1)}
    figures["two_devices"]["partitions"] = partitions
    for name, n in calls.items():
        figures[name]["python_calls_per_step"] = n
    floor = np.array(rounds["numpy_step"])
    figures["graphrt_over_numpy_step"] = {
        name: round(float(np.median(np.array(rounds[name]) / floor)), 3) for name in sessions}
    emit("mlp_step", figures, flop_per_step=flops, model="784-1024-1024-10", batch=BATCH, optimizer="sgd",
         rounds=args.rounds, reference={"tensorflow_ms_per_step": 15.0, "tensorflow_gflops": 159})


if __name__ == "__main__":
    main()

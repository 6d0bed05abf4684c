"""Training steps sunk into one Session.run (tf.train.repeat) against one run per step.

A small model trains K=100 steps four ways:

* host loop: K `sess.run([train, loss], feed)` calls, one batch fed per
  call (the loss fetched each step, as the sunk loops record it);
* sunk: one `sess.run(tf.train.repeat(step, K, [xs, ys]))` whose while loop
  reads step i's batch from [K, 32, ...] inputs fed once (one copy each);
* sunk_infeed: the same loop dequeuing each step's batch from the device's
  infeed, the K batches put by an op of the same run before the loop
  (`repeat(..., infeed=True)`: fed once per call, through the infeed);
* sunk_infeed_thread: the loop dequeuing from the infeed
  (`repeat(..., infeed_queue=q)`) while an InfeedThread runs the enqueue op
  once per batch on another host thread (as TPUEstimator's infeed thread
  does); the time runs from the thread's start to the end of both. In one
  Python process the two threads take turns (the GIL): this costs the loop
  plus an enqueue run per step, and overlaps nothing.

Two models: "mlp" (4 -> 32 -> 1, batch 32, momentum SGD, about 45 kernels a
step) and "linear" (4 -> 1, the same optimizer, about 15). Three devices:

* CPU:0 and SIM:0 as they are (the plain figures). graphrt's per-run cost
  is small (`run_cost_ms`: one sess.run feeding a batch to an Identity), so
  sinking saves little on CPU: a step is mostly its numpy kernels, which a
  sunk loop runs too, less the few it hoists (the pure kernels of loop
  invariants, run once: expect sunk_over_host about 0.7-0.8). On SIM the
  host loop's kernels are launched one by one onto the device's stream,
  while a sunk loop is one launch running its kernels inline there, reusing
  the buffers each iteration frees for the next instead of going through
  the allocator (executor/reuse_pool.py): about 0.15-0.2 (0.14-0.21
  measured on 2 shared cores; the host loop 0.6-0.8 ms a step for
  "linear", 0.8-1.1 for "mlp", the sunk loop about 0.11 and 0.18).
* SIM:0 with a modelled PCIe link (`SimOptions(copy_latency=15e-6)`, the
  fixed cost of a small host<->device copy over PCIe is about 10-20 us):
  every copy the host loop makes per step (two feeds, the loss fetched)
  pays it, the sunk loop pays it once per call. This is what sinking saves on a real
  accelerator. The stream thread sleeps for the latency, and a sleep of
  15 us lasts longer on Linux (timer slack, about 50 us more): the row's
  `run_cost_ms` shows what a run with one feed actually costs under the
  model. Kernels have no modelled launch latency (a sunk loop on graphrt
  still launches every kernel, so it would pay that too). The latency
  lowers the ratio a little (about 0.12-0.18): next to graphrt's Python kernels
  on SIM (several us each), two or three copies of 15 us are small.

Per row: the time per step of each way (the best of 7 runs of K steps, the
ways taking turns: on a shared machine the median moves with the other
processes' load), the
ratios to the host loop, the sunk loop on the frame executor (compiled
loops turned off), the run cost, and the largest difference of the
trained parameters against the host loop (all must agree).

    python benchmarks/sink.py [--steps 100]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402
from graphrt.infeed import InfeedQueue, InfeedThread  # noqa: E402
from graphrt.runtime import compiled_loop, graph_executor  # noqa: E402

from _util import emit  # noqa: E402

BATCH = 32
REPEATS = 7
# Runs before the timed ones: the first builds the plans, and an executor's first runs time each kernel
# (graph_executor.PROFILED_RUNS): a sunk loop, one run per repeat, would be timed in that slower mode.
WARMUP = graph_executor.PROFILED_RUNS + 1
PCIE_COPY_LATENCY_S = 15e-6
WAYS = ("host", "sunk", "infeed", "thread", "frame")
DEVICES = [("/device:CPU:0", None), ("/device:SIM:0", None),
           ("/device:SIM:0", {"copy_latency": PCIE_COPY_LATENCY_S})]


def loss_of(x, y, model="mlp"):
    h = x
    if model == "mlp":
        h = tf.layers.dense(x, 32, tf.nn.relu, name="fc", kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    out = tf.layers.dense(h, 1, name="out", kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    return tf.reduce_mean(tf.square(out - y))


def _config(sim):
    return tf.ConfigProto(device_count={"SIM": 1}, sim_options=sim or {})


def run_cost(device, sim=None, repeats=200):
    """Seconds of one sess.run that feeds a batch and runs no kernel on `device` (an Identity of the feed)."""
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x = tf.placeholder(tf.float32, [BATCH, 4])
        y = tf.identity(x)
    feed = {x: np.ones([BATCH, 4], np.float32)}
    with tf.Session(graph=g, config=_config(sim)) as sess:
        sess.run(y.op, feed)
        t0 = time.perf_counter()
        for _ in range(repeats):
            sess.run(y.op, feed)
        return (time.perf_counter() - t0) / repeats


def _prepare(steps, device, way, model, sim):
    """A session training `model` the `way` ("host", "sunk", "infeed", "thread" or "frame": the
    sunk loop on the frame executor), `init()` and `run()`, which trains K steps."""
    rng = np.random.RandomState(0)
    xs = rng.randn(steps, BATCH, 4).astype(np.float32)
    ys = xs.sum(axis=2, keepdims=True)
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        opt = tf.train.MomentumOptimizer(0.01, 0.9)

        def step(x, y):
            loss = loss_of(x, y, model)
            return opt.minimize(loss), loss
        x = tf.placeholder(tf.float32, [BATCH, 4])
        y = tf.placeholder(tf.float32, [BATCH, 1])
        if way in ("sunk", "infeed", "frame"):
            xs_t = tf.placeholder(tf.float32, xs.shape)
            ys_t = tf.placeholder(tf.float32, ys.shape)
            losses = tf.train.repeat(step, steps, [xs_t, ys_t], infeed=way == "infeed")
        elif way == "thread":
            q = InfeedQueue(tuple_types=[tf.float32, tf.float32], tuple_shapes=[x.shape, y.shape])
            enqueue, = q.generate_enqueue_ops([[x, y]])
            losses = tf.train.repeat(step, steps, infeed_queue=q)
        else:
            train_and_loss = list(step(x, y))
        init = tf.variables_initializer(tf.global_variables())
        params = tf.trainable_variables()
    options = tf.RunOptions(timeout_in_ms=600000)  # a feeding bug fails instead of hanging
    sess = tf.Session(graph=g, config=_config(sim))

    def run():
        if way in ("sunk", "infeed", "frame"):
            sess.run(losses, {xs_t: xs, ys_t: ys}, options=options)
        elif way == "thread":
            feeder = InfeedThread(sess, enqueue, ({x: xs[i], y: ys[i]} for i in range(steps)), options).start()
            sess.run(losses, options=options)
            feeder.join(60)
        else:
            for i in range(steps):
                sess.run(train_and_loss, {x: xs[i], y: ys[i]})
    return sess, lambda: sess.run(init), run, params


def measure(steps, device, model, sim=None, ways=WAYS):
    """{way: (seconds per step, trained parameters)}: the best of REPEATS runs of K steps, the
    ways taking turns (so each sees the same load from other processes)."""
    prepared = {}
    try:
        for way in ways:
            compiled_loop.ENABLED = way != "frame"  # (read when a run first builds the executors)
            try:
                prepared[way] = _prepare(steps, device, way, model, sim)
                for _ in range(WARMUP):
                    prepared[way][1]()
                    prepared[way][2]()
            finally:
                compiled_loop.ENABLED = True
        best = {way: float("inf") for way in ways}
        for _ in range(REPEATS):
            for way, (_, init, run, _) in prepared.items():
                init()
                t0 = time.perf_counter()
                run()
                best[way] = min(best[way], time.perf_counter() - t0)
        return {way: (best[way] / steps, sess.run(params)) for way, (sess, _, _, params) in prepared.items()}
    finally:
        for sess, _, _, _ in prepared.values():
            sess.close()


def _max_difference(a, b):
    return max(float(np.max(np.abs(p - q))) for p, q in zip(a, b))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    rows = []
    for model in ("mlp", "linear"):
        for device, sim in DEVICES:
            got = measure(args.steps, device, model, sim)
            (host_s, host_params), (sunk_s, sunk_params) = got["host"], got["sunk"]
            (infeed_s, infeed_params), (thread_s, thread_params) = got["infeed"], got["thread"]
            frame_s = got["frame"][0]
            rows.append({
                "model": model, "device": device,
                "modelled_copy_latency_us": round((sim or {}).get("copy_latency", 0.0) * 1e6, 1),
                "host_loop_ms_per_step": round(host_s * 1e3, 3),
                "sunk_ms_per_step": round(sunk_s * 1e3, 3),
                "sunk_infeed_ms_per_step": round(infeed_s * 1e3, 3),
                "sunk_infeed_thread_ms_per_step": round(thread_s * 1e3, 3),
                "sunk_over_host": round(sunk_s / host_s, 2),
                "sunk_infeed_over_host": round(infeed_s / host_s, 2),
                "sunk_infeed_thread_over_host": round(thread_s / host_s, 2),
                "sunk_on_frame_executor_ms_per_step": round(frame_s * 1e3, 3),
                "run_cost_ms": round(run_cost(device, sim) * 1e3, 3),
                "max_param_difference": max(_max_difference(host_params, p)
                                            for p in (sunk_params, infeed_params, thread_params))})
    emit("sink", {"runs": rows}, steps=args.steps, batch=BATCH)


if __name__ == "__main__":
    main()

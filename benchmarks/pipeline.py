"""Pipeline parallelism on 4 SIM devices: measured bubble against GPipe's (K-1)/(M+K-1).

K=4 equal stages (dense layers of an MLP; the loss counts as a layer) on SIM:0..3, whose
kernels cost modelled time proportional to the bytes they read
(SimOptions.kernel_bandwidth, plus a small launch latency) and whose
device-to-device copies have a modelled latency. For M = 1, 4, 8, 16
micro-batches of a fixed batch and both schedules, this traces steps and
prints the idle fraction of the devices measured from the step stats
(`tf.distribute.bubble_fraction`), the textbook GPipe figure, the median
step time, and stage 0's peak allocator bytes.

A second table measures memory alone (no modelled costs): micro-batches of a
fixed size, M = 1, 4, 8, 16, and stage 0's peak bytes in units of what one
micro-batch keeps there for its backward (its input piece and its layers'
activations: the growth of GPipe's peak per micro-batch). GPipe holds all M;
1F1B holds K, plus the next input piece (prefetched) and the working set of
one backward (`working_set_micro_batches`, the part of GPipe's peak that does
not grow with M).

    python benchmarks/pipeline.py [--trace pipeline_trace.json] [--micro-batches 1 4 8 16]
"""
import argparse
import gc
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402
from graphrt.client.timeline import Timeline  # noqa: E402

from _util import emit  # noqa: E402

K = 4
BATCH, WIDTH, LAYERS_PER_STAGE = 2048, 16, 3
# Modelled costs dominate the real ones (small arrays, cheap kernels), so the figures hold on a busy
# machine: reading a full-batch activation (128 KiB) takes 64 ms, a weight (1 KiB) 0.5 ms, every
# kernel costs 20 us more, a copy 50 us, and a d2d copy moves 1 GB/s. The host's own work between a
# stage's output and the next stage's kernel (the copy's event, the Recv, the launch) is real time,
# about 0.3 ms and more on a loaded machine, which GPipe's lock-step forwards expose at every
# micro-batch: kernels of ~4 ms at M=16 keep that a small share (at ~2 ms a busy machine added 0.03).
SIM_OPTIONS = {"kernel_bandwidth": 2e6, "kernel_launch_latency": 2e-5, "copy_latency": 5e-5, "d2d_bandwidth": 1e9}
REPEATS = 3


def stage_fn(k):
    # The last stage has one layer fewer: the loss takes its place. The loss is the mean of a
    # SquaredDifference because, in this cost model (kernels cost the bytes they read), it costs what a
    # dense layer does: 3 activation reads forward (SquaredDifference 2, Mean 1) and 6 backward (Mean's
    # RealDiv 1, x - y 2, 2 * d 1, grad * 2d 2) against the layer's MatMul+BiasAdd+Relu (3) and
    # ReluGrad 2, BiasAddGrad 1, the two MatMuls 3. Written as square(out - lab) it costs 4 and 4,
    # and GPipe, whose forwards all wait for the slowest stage's forward and backwards for the slowest
    # backward, would then idle for the difference on every micro-batch: unequal stages, not a bubble.
    # (Stage 0 takes no gradient for the batch, so its backward is one matmul shorter than the others',
    # about 5%: what a real pipeline's first stage saves too.)
    def fn(h):
        for j in range(LAYERS_PER_STAGE - (k == K - 1)):
            h = tf.layers.dense(h, WIDTH, tf.nn.relu, name=f"stage{k}_fc{j}",
                                kernel_initializer=tf.glorot_uniform_initializer(seed=10 * k + j))
        return h
    return fn


def run(micro_batches, schedule, trace_path=None):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default():
        x = tf.placeholder(tf.float32, [BATCH, WIDTH])
        y = tf.placeholder(tf.float32, [BATCH, WIDTH])
        devices = [f"/device:SIM:{k}" for k in range(K)]
        pipe = tf.distribute.pipeline([stage_fn(k) for k in range(K)], devices, inputs=x, labels=y,
                                      loss_fn=lambda out, lab: tf.reduce_mean(tf.squared_difference(out, lab)),
                                      micro_batches=micro_batches, schedule=schedule)
        train = pipe.minimize(tf.train.GradientDescentOptimizer(0.01))
    feed = {x: rng.randn(BATCH, WIDTH).astype(np.float32), y: rng.randn(BATCH, WIDTH).astype(np.float32)}
    config = tf.ConfigProto(device_count={"SIM": K}, sim_options=SIM_OPTIONS)
    with tf.Session(graph=g, config=config) as sess:
        sess.run(tf.variables_initializer(tf.global_variables()))
        sess.run(train, feed)
        allocator = sess.device("/job:localhost/replica:0/task:0/device:SIM:0").executor.allocator
        # As timeit does: no garbage collection inside the measured steps. A full collection stops every
        # stream thread at once for 10-40 ms (it holds the GIL), which the step stats would show as idle
        # devices.
        gc.collect()
        gc.disable()
        try:
            measured = [_traced_step(sess, train, feed, allocator, devices) for _ in range(REPEATS)]
        finally:
            gc.enable()
    bubbles, times, peaks, mds = zip(*measured)
    if trace_path:
        with open(trace_path, "w") as f:
            f.write(Timeline(mds[-1].step_stats).generate_chrome_trace_format())
    return {"micro_batches": micro_batches, "schedule": schedule,
            "measured_bubble": round(statistics.median(bubbles), 3),
            "textbook_bubble": round(tf.distribute.textbook_bubble(K, micro_batches), 3),
            "step_ms": round(statistics.median(times), 1),
            "stage0_peak_bytes": max(peaks)}


MEMORY_ROWS = 256  # rows of one micro-batch in the memory table: activations dwarf the weights


def stage0_peak(micro_batches, schedule):
    """Stage 0's peak bytes over a step (the least of REPEATS: frees that lag only add)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.ones([MEMORY_ROWS * micro_batches, WIDTH], np.float32))
        pipe = tf.distribute.pipeline([stage_fn(k) for k in range(K)], [f"/device:SIM:{k}" for k in range(K)],
                                      inputs=x, labels=x,
                                      loss_fn=lambda out, lab: tf.reduce_mean(tf.squared_difference(out, lab)),
                                      micro_batches=micro_batches, schedule=schedule)
        grads = [gr for gr, _ in pipe.grads_and_vars]
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": K})) as sess:
        sess.run(tf.variables_initializer(tf.global_variables()))
        sess.run(grads)
        allocator = sess.device("/job:localhost/replica:0/task:0/device:SIM:0").executor.allocator
        peaks = []
        for _ in range(REPEATS):
            before = allocator.stats().bytes_in_use
            allocator.clear_stats()
            sess.run(grads)
            peaks.append(allocator.stats().peak_bytes_in_use - before)
        return min(peaks)


def memory_table(micro_batches):
    peaks = {(s, m): stage0_peak(m, s) for s in ("gpipe", "1f1b") for m in sorted(set(micro_batches) | {8, 16})}
    per_micro_batch = (peaks["gpipe", 16] - peaks["gpipe", 8]) / 8
    working = peaks["gpipe", 16] / per_micro_batch - 16
    rows = [{"schedule": s, "micro_batches": m, "stage0_peak_bytes": peaks[s, m],
             "stage0_peak_micro_batches": round(peaks[s, m] / per_micro_batch, 1)}
            for s in ("gpipe", "1f1b") for m in micro_batches]
    return {"micro_batch_rows": MEMORY_ROWS, "bytes_kept_per_micro_batch": round(per_micro_batch),
            "working_set_micro_batches": round(working, 1), "runs": rows}


def _traced_step(sess, train, feed, allocator, devices):
    """(bubble, step ms, stage 0's peak bytes above what it held before, RunMetadata) of one traced step."""
    before = allocator.stats().bytes_in_use
    allocator.clear_stats()
    md = tf.RunMetadata()
    sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    starts = [ns.all_start_micros for d in md.step_stats.dev_stats for ns in d.node_stats]
    ends = [ns.all_start_micros + ns.all_end_rel_micros for d in md.step_stats.dev_stats for ns in d.node_stats]
    return (tf.distribute.bubble_fraction(md.step_stats, devices), (max(ends) - min(starts)) / 1e3,
            allocator.stats().peak_bytes_in_use - before, md)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-batches", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--trace", default=None, help="write the Chrome trace of the M=8 GPipe step here")
    args = parser.parse_args()
    rows = []
    for schedule in ("gpipe", "1f1b"):
        for m in args.micro_batches:
            trace = args.trace if schedule == "gpipe" and m == 8 else None
            rows.append(run(m, schedule, trace))
    emit("pipeline", {"runs": rows, "memory": memory_table(args.micro_batches)}, stages=K, batch=BATCH, width=WIDTH, layers_per_stage=LAYERS_PER_STAGE,
         sim_options=SIM_OPTIONS)


if __name__ == "__main__":
    main()

"""Data parallelism measured against the textbook.

Prints one JSON object with four sections, every figure read from a traced
step's RunMetadata (transfers, step stats, allocator memory):

  bytes:     bytes each device sent in one all-reduce of S bytes, per
             algorithm and N, next to the textbook volume: 2(N-1)/N x S per
             device for the ring and halving-doubling (N a power of two),
             2(N-1) x S in all for a binomial tree.
  time:      ring all-reduce on SIM devices with a modelled copy bandwidth B
             and latency L: the step time against 2(N-1)/N x S/B + 2(N-1) x L.
  buckets:   a 16-variable model over 4 SIM devices at L = 200 us: messages
             and step time with one all-reduce per variable and with buckets;
             the time each device's copy stream was busy next to the
             textbook's (messages x L + bytes / B), and the latencies
             bucketing saves, (V - buckets) x 2(N-1) x L, next to the step
             time saved and the saving in the latencies' share of the step
             (step time at L minus step time at L = 0).
  memory:    Adam over N SIM devices with gradient buffers: each device's
             model-state bytes (what stays allocated after a step: params,
             gradients, slots) per parameter, against 16, 8 + 8/N and 4 + 12/N.

    python benchmarks/data_parallel.py [--quick]
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402
from benchmarks._util import emit  # noqa: E402

TRACE = dict(trace_level=3, output_partition_graphs=True)


def _sim_config(n, **sim):
    sim.setdefault("memory_bytes", 128 << 20)
    return tf.ConfigProto(device_count={"CPU": 1, "SIM": n}, sim_options=sim)


def _variables_on(n, elements):
    values = []
    for i in range(n):
        with tf.device(f"/device:SIM:{i}"):
            values.append(tf.Variable(tf.ones([elements]), name=f"v{i}"))
    return values


def measure_bytes(sizes_n=(2, 3, 4, 8), nbytes=96 << 10):
    rows = []
    for n in sizes_n:
        for algorithm in ("ring", "halving_doubling", "tree"):
            g = tf.Graph()
            with g.as_default():
                outs = tf.distribute.all_reduce(_variables_on(n, nbytes // 4), algorithm=algorithm)
                with tf.Session(config=_sim_config(n)) as sess:
                    sess.run(tf.global_variables_initializer())
                    md = tf.RunMetadata()
                    sess.run(tf.group(outs), options=tf.RunOptions(**TRACE), run_metadata=md)
            sent = sorted(tf.distribute.bytes_sent(md).values())
            row = {"algorithm": algorithm, "devices": n, "tensor_bytes": nbytes, "sent_per_device": sent,
                   "sent_total": sum(sent)}
            if algorithm == "tree":
                row["textbook_total"] = 2 * (n - 1) * nbytes
                row["measured_over_textbook"] = round(sum(sent) / row["textbook_total"], 4)
            else:
                row["textbook_per_device"] = 2 * (n - 1) * nbytes / n
                row["measured_over_textbook"] = round(max(sent) / row["textbook_per_device"], 4)
                if algorithm == "halving_doubling" and n & (n - 1):
                    row["note"] = "N not a power of two: N-P devices fold into partners (S more each way)"
            rows.append(row)
    return rows


def measure_time(configs, repeats):
    rows = []
    for n, nbytes, bandwidth, latency in configs:
        g = tf.Graph()
        with g.as_default():
            op = tf.group(tf.distribute.all_reduce(_variables_on(n, nbytes // 4), algorithm="ring"))
            with tf.Session(config=_sim_config(n, d2d_bandwidth=bandwidth, copy_latency=latency)) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(op)
                times = []
                for _ in range(repeats):
                    md = tf.RunMetadata()
                    sess.run(op, options=tf.RunOptions(trace_level=3), run_metadata=md)
                    times.append(tf.distribute.step_time_micros(md) / 1e6)
        model = 2 * (n - 1) / n * nbytes / bandwidth + 2 * (n - 1) * latency
        rows.append({"devices": n, "tensor_bytes": nbytes, "bandwidth_Bps": bandwidth, "latency_s": latency,
                     "step_s_best": round(min(times), 5), "step_s_median": round(float(np.median(times)), 5),
                     "textbook_s": round(model, 5), "best_over_textbook": round(min(times) / model, 3)})
    return rows


def _deep_linear(layers, width):
    def loss_fn(x):
        for k in range(layers):
            x = tf.matmul(x, tf.get_variable(f"w{k}", [width, width],
                                             initializer=tf.random_normal_initializer(0.0, 0.05, seed=k)))
        return tf.reduce_mean(tf.square(x))
    return loss_fn


def _train_step(n, layers, width, sim, repeats, **dp_args):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [n, width])
        dp = tf.distribute.DataParallel([f"/device:SIM:{i}" for i in range(n)], **dp_args)
        train_op = dp.minimize(tf.train.AdamOptimizer(1e-3), _deep_linear(layers, width), x)
        feed = {x: np.ones((n, width), np.float32)}
        with tf.Session(config=_sim_config(n, **sim)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, feed)
            runs = []
            for _ in range(repeats):
                md = tf.RunMetadata()
                sess.run(train_op, feed, options=tf.RunOptions(**TRACE), run_metadata=md)
                runs.append(md)
    return dp, runs


def _copy_seconds_per_device(md):
    """Mean over devices of the time each device's d2d stream spent copying (from the step stats)."""
    busy = {}
    for dev in md.step_stats.dev_stats:
        for ns in dev.node_stats:
            if ns.op == "MEMCPYDtoD":
                busy[dev.device] = busy.get(dev.device, 0) + ns.all_end_rel_micros / 1e6
    return sum(busy.values()) / max(1, len(busy))


def measure_buckets(repeats, n=4, layers=16, width=32, latency=200e-6, bandwidth=1e9):
    """Step time, and the time each device's copy stream was busy (what the alpha-beta model
    describes; the step time adds graphrt's per-op overhead, which bucketing also cuts since
    every all-reduce is 2(N-1) x N ops)."""
    rows = []
    params = layers * width * width
    for bucket_bytes in (0, 16 << 10, 1 << 20):
        dp, runs = _train_step(n, layers, width, dict(copy_latency=latency, d2d_bandwidth=bandwidth), repeats,
                               bucket_bytes=bucket_bytes)
        _, unmodelled = _train_step(n, layers, width, dict(d2d_bandwidth=bandwidth), repeats, bucket_bytes=bucket_bytes)
        step_at_0 = min(tf.distribute.step_time_micros(md) / 1e6 for md in unmodelled)
        ring = [t for t in tf.distribute.transfers(runs[0]) if "/ring/" in t.recv_node]
        per_device = len(ring) // n
        ring_bytes = sum(t.nbytes for t in ring) / n
        rows.append({"bucket_bytes": bucket_bytes, "variables": layers, "gradient_bytes": 4 * params,
                     "all_reduces": len(dp.buckets),
                     "expected_all_reduces": layers if bucket_bytes == 0 else math.ceil(4 * params / bucket_bytes),
                     "ring_messages_per_device": per_device,
                     "step_s_best": round(min(tf.distribute.step_time_micros(md) / 1e6 for md in runs), 5),
                     "step_s_best_at_zero_latency": round(step_at_0, 5),
                     "copy_s_per_device": round(min(_copy_seconds_per_device(md) for md in runs), 5),
                     "copy_s_textbook": round(per_device * latency + ring_bytes / bandwidth, 5)})
    base = rows[0]
    for row in rows[1:]:
        row["latency_saved_textbook_s"] = round((base["all_reduces"] - row["all_reduces"]) * 2 * (n - 1) * latency, 5)
        row["copy_s_saved"] = round(base["copy_s_per_device"] - row["copy_s_per_device"], 5)
        row["step_s_saved"] = round(base["step_s_best"] - row["step_s_best"], 5)
        row["latency_share_saved_s"] = round((base["step_s_best"] - base["step_s_best_at_zero_latency"])
                                             - (row["step_s_best"] - row["step_s_best_at_zero_latency"]), 5)
    return {"devices": n, "latency_s": latency, "bandwidth_Bps": bandwidth, "rows": rows}


def measure_memory(n=4, layers=8, width=256):
    params = layers * width * width
    textbook = {0: 16, 1: 8 + 8 / n, 2: 4 + 12 / n}
    rows = []
    for stage in (0, 1, 2):
        _, (md,) = _train_step(n, layers, width, {}, 1, zero_stage=stage, bucket_bytes=0, gradient_buffers=True)
        memory = tf.distribute.device_memory(md)
        live = [m.live_bytes / params for m in memory.values()]
        rows.append({"zero_stage": stage, "devices": n, "parameters": params,
                     "model_state_bytes_per_param": [round(v, 3) for v in live],
                     "textbook_bytes_per_param": textbook[stage],
                     "worst_over_textbook": round(max(abs(v / textbook[stage] - 1) for v in live) + 1, 4),
                     "allocator_in_use_bytes_per_param": [round(m.bytes_in_use / params, 3) for m in memory.values()],
                     "peak_bytes_per_param": [round(m.peak_bytes / params, 3) for m in memory.values()]})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats (a smoke run)")
    args = ap.parse_args(argv)
    # A modelled copy is a sleep on its stream's thread; waking up needs the GIL, which a busy
    # thread only offers every switch interval (5 ms by default): far above the latencies modelled.
    sys.setswitchinterval(5e-5)
    repeats = 2 if args.quick else 5
    time_configs = [(2, 1 << 20, 2e7, 1e-3), (4, 1 << 20, 2e7, 1e-3), (8, 1 << 20, 2e7, 1e-3),
                    (4, 4 << 20, 1e8, 5e-4)]
    if args.quick:
        time_configs = time_configs[:1]
    emit("data_parallel", {
        "bytes": measure_bytes((2, 4) if args.quick else (2, 3, 4, 8)),
        "time": measure_time(time_configs, repeats),
        "buckets": measure_buckets(repeats),
        "memory": measure_memory(),
    }, note="times are SIM devices' modelled copies plus graphrt's own per-op overhead on this machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())

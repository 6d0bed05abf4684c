"""Data parallelism: the digits MLP trained over 4 devices with ring all-reduce and ZeRO-1.

Every device holds a copy of the model (mirrored variables) and takes a
quarter of each batch; the gradients are fused into buckets and averaged
with a ring all-reduce built from ordinary ops, so each device sends its
right neighbour one chunk per ring step. With ZeRO stage 1 each device
keeps Adam's slots for only the variables it owns, updates those, and
broadcasts them. Prints progress and the bytes each device sent per step,
then writes:

    out/partitions.txt   the per-device partitions: see the ring's _Send/_Recv (allreduce .../ring/step<k>/dev<i>)
    out/trace.json       one traced step as a Chrome trace (open in ui.perfetto.dev): the ring's copies
                         between devices, step by step

    python samples/data_parallel.py [--devices 4] [--epochs 10] [--zero-stage 1] [--device-type SIM] [--out out]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphrt as tf  # noqa: E402
from datasets import digits  # noqa: E402
from graphrt.client.timeline import Timeline  # noqa: E402


def mlp(x, y, hidden=(128, 128)):
    h = x
    for i, width in enumerate(hidden):
        h = tf.layers.dense(h, width, activation=tf.nn.relu, name=f"layer{i + 1}")
    logits = tf.layers.dense(h, 10, name="logits")
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def sent_by_kind(run_metadata, devices):
    """{device: {kind: (bytes, messages)}}: gradients (the buckets' all-reduce), parameters (ZeRO's
    broadcasts), batch shards and other (losses, hyper-parameters, control edges), told apart by
    the name of what was sent."""
    wanted = {tf.distribute.replicas.canonical_device(d) for d in devices}
    out = {}
    for t in tf.distribute.transfers(run_metadata):
        if t.send_device.split("/replica:0/task:0")[-1] not in wanted or \
                t.recv_device.split("/replica:0/task:0")[-1] not in wanted:
            continue
        source = t.recv_node.rsplit("/_", 1)[0]  # a _Recv is named after the node it receives from
        kind = ("gradients" if "/bucket" in source else "parameters" if "/params_" in source
                else "batch shards" if "/split_input" in source else "other")
        nbytes, count = out.setdefault(t.send_device, {}).get(kind, (0, 0))
        out[t.send_device][kind] = (nbytes + t.nbytes, count + 1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--device-type", default="CPU", choices=["CPU", "SIM"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--zero-stage", type=int, default=1)
    ap.add_argument("--bucket-bytes", type=int, default=64 << 10)
    ap.add_argument("--out", default="out")
    args = ap.parse_args(argv)
    x_train, y_train, x_test, y_test = digits()
    n = args.devices
    devices = [f"/device:{args.device_type}:{i}" for i in range(n)]
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [args.batch, 64], name="x")
        y = tf.placeholder(tf.int64, [args.batch], name="y")
        step = tf.train.get_or_create_global_step()
        dp = tf.distribute.DataParallel(devices, algorithm="ring", bucket_bytes=args.bucket_bytes,
                                        zero_stage=args.zero_stage)
        train_op = dp.minimize(tf.train.AdamOptimizer(2e-3), mlp, [x, y], global_step=step)
        with tf.device(devices[0]):  # evaluation reuses replica 0's variables
            x_eval = tf.placeholder(tf.float32, [None, 64], name="x_eval")
            with tf.variable_scope("", reuse=True):
                h = x_eval
                for i in range(2):
                    h = tf.layers.dense(h, 128, activation=tf.nn.relu, name=f"layer{i + 1}")
                logits = tf.layers.dense(h, 10, name="logits")
        init = tf.global_variables_initializer()
    count = {"CPU": n} if args.device_type == "CPU" else {"CPU": 1, "SIM": n}
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.RandomState(1)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count=count)) as sess:
        print(f"{dp}: {len(dp.buckets)} gradient buckets; owners "
              f"{sorted((v.op.name, r) for v, r in dp.owners.items())}")
        sess.run(init)
        usable = len(x_train) // args.batch * args.batch
        for epoch in range(1, args.epochs + 1):
            order = rng.permutation(len(x_train))[:usable]
            t0 = time.perf_counter()
            losses = []
            for start in range(0, usable, args.batch):
                idx = order[start:start + args.batch]
                _, loss = sess.run([train_op, dp.loss], {x: x_train[idx], y: y_train[idx]})
                losses.append(loss)
            ms = (time.perf_counter() - t0) / len(losses) * 1e3
            accuracy = np.mean(np.argmax(sess.run(logits, {x_eval: x_test}), 1) == y_test)
            print(f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {accuracy:.3f}  {ms:.2f} ms/step")
        feed = {x: x_train[:args.batch], y: y_train[:args.batch]}
        traced = tf.RunMetadata()
        sess.run(train_op, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                      output_partition_graphs=True), run_metadata=traced)
        print("bytes each device sent in one step (to the other replicas):")
        for device, kinds in sorted(sent_by_kind(traced, devices).items()):
            print(f"  {device}: " + ", ".join(f"{kind} {nbytes} B in {count} messages"
                                              for kind, (nbytes, count) in sorted(kinds.items())))
        view = tf.partition.inspect(session=sess, fetches=train_op, feeds=feed, run_metadata=traced)
        paths = {name: os.path.join(args.out, name) for name in ("partitions.txt", "trace.json")}
        with open(paths["partitions.txt"], "w") as f:
            f.write(view.text())
        with open(paths["trace.json"], "w") as f:
            f.write(Timeline(traced.step_stats).generate_chrome_trace_format())
        for name, path in paths.items():
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

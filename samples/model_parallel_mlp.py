"""Model parallelism: an MLP whose layers live on different CPU devices.

Trains a 64-256-256-10 MLP on the UCI handwritten digits (shipped in
samples/data) with each layer, its variables and (colocated) gradients on
its own device, so every step moves activations forward and gradients
backward through _Send/_Recv pairs. Prints progress, then writes:

    out/partitions.txt   the per-device partitions and their transfers
    out/partitions.dot   the same as Graphviz DOT (dot -Tsvg out/partitions.dot)
    out/trace.json       one traced step as a Chrome trace (open in ui.perfetto.dev)
    out/graph.pbtxt      the GraphDef, TF text format (try: graphrt inspect out/graph.pbtxt --devices CPU:3)
    out/train/           a TensorBoard logdir: loss and accuracy per epoch, weight histograms, the graph
                         and the traced step's run metadata (tensorboard --logdir out/)

    python samples/model_parallel_mlp.py [--devices 3] [--epochs 15] [--out out]
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


def build(num_devices, hidden=(256, 256), learning_rate=0.05, seed=0):
    sizes = [64, *hidden, 10]
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [None, sizes[0]], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = x
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            device = f"/cpu:{i * num_devices // (len(sizes) - 1)}"
            with tf.device(device), tf.name_scope(f"layer{i + 1}"):
                w = tf.Variable(tf.truncated_normal([n_in, n_out], stddev=np.sqrt(2.0 / n_in)), name="w")
                b = tf.Variable(tf.zeros([n_out]), name="b")
                h = tf.matmul(h, w) + b
                if i < len(sizes) - 2:
                    h = tf.nn.relu(h)
                tf.summary.histogram("weights", w)
        with tf.device(f"/cpu:{num_devices - 1}"), tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
            accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(h, 1), y), tf.float32))
        tf.summary.scalar("test_loss", loss)
        tf.summary.scalar("test_accuracy", accuracy)
        summaries = tf.summary.merge_all()
        step = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, colocate_gradients_with_ops=True)
        init = tf.global_variables_initializer()
    return g, dict(x=x, y=y, loss=loss, accuracy=accuracy, step=step, init=init, summaries=summaries)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--out", default="out")
    args = ap.parse_args(argv)
    x_train, y_train, x_test, y_test = digits()
    g, m = build(args.devices)
    config = tf.ConfigProto(device_count={"CPU": args.devices})
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.RandomState(1)
    with tf.Session(graph=g, config=config) as sess, \
            tf.summary.FileWriter(os.path.join(args.out, "train"), sess.graph) as writer:
        print(f"devices: {', '.join(d.name for d in sess.list_devices())}")
        sess.run(m["init"])
        for epoch in range(1, args.epochs + 1):
            order = rng.permutation(len(x_train))
            t0 = time.perf_counter()
            losses = []
            for start in range(0, len(order), args.batch):
                idx = order[start:start + args.batch]
                _, loss = sess.run([m["step"], m["loss"]], {m["x"]: x_train[idx], m["y"]: y_train[idx]})
                losses.append(loss)
            steps = len(losses)
            ms = (time.perf_counter() - t0) / steps * 1e3
            acc, summary = sess.run([m["accuracy"], m["summaries"]], {m["x"]: x_test, m["y"]: y_test})
            writer.add_summary(summary, global_step=epoch)
            print(f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {acc:.3f}  {ms:.2f} ms/step")
        feed = {m["x"]: x_train[:args.batch], m["y"]: y_train[:args.batch]}
        traced = tf.RunMetadata()
        sess.run(m["step"], feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                       output_partition_graphs=True), run_metadata=traced)
        writer.add_run_metadata(traced, "traced_step", global_step=args.epochs)
        view = tf.partition.inspect(session=sess, fetches=m["step"], feeds=feed, run_metadata=traced)
        paths = {name: os.path.join(args.out, name) for name in
                 ("partitions.txt", "partitions.dot", "trace.json", "graph.pbtxt")}
        with open(paths["partitions.txt"], "w") as f:
            f.write(view.text())
        with open(paths["partitions.dot"], "w") as f:
            f.write(view.dot())
        with open(paths["trace.json"], "w") as f:
            f.write(Timeline(traced.step_stats).generate_chrome_trace_format())
        tf.train.write_graph(g, args.out, "graph.pbtxt")
        sends = [sum(n.op == "_Send" for n in pg.node) for pg in traced.partition_graphs]
        print(f"{len(traced.partition_graphs)} partitions, {sum(sends)} _Send/_Recv pairs per step")
        for name, path in paths.items():
            print(f"wrote {path}")
        print(f"wrote {writer.get_logdir()} (tensorboard --logdir {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""TensorFlow-format interop costs: GraphDef protobuf serialize/parse and import,
V2 checkpoint save/restore bandwidth, crc32c, and summary event writing.

Prints one JSON object:
  graph_def_*       a frozen LeNet (TensorFlow's fixture, 250 KB, 41 nodes): SerializeToString,
                    ParseFromString, and import_graph_def into a fresh graph, in ms
  checkpoint_*      Saver.save / Saver.restore of 8 float32 variables of 4 MiB (32 MiB), in MB/s,
                    including the session run that fetches or assigns them
  crc32c_MBps       the masked-CRC checksum every checkpoint tensor gets
  summary_*         one merged scalar+histogram summary run and FileWriter.add_summary, in us

    python benchmarks/interop.py
"""
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import graphrt as tf  # noqa: E402
from benchmarks._util import emit, time_calls  # noqa: E402
from graphrt.framework import graph_proto  # noqa: E402
from graphrt.framework.graph_def import GraphDef  # noqa: E402
from graphrt.util import crc32c  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENET = os.path.join(ROOT, "tests", "interop", "fixtures", "lenet.pb")
MiB = 1 << 20


def graph_def_figures():
    data = open(LENET, "rb").read()
    gd = graph_proto.read_graph_def(LENET)

    def do_import():
        with tf.Graph().as_default():
            tf.import_graph_def(gd, name="")

    return {"graph_def_bytes": len(data), "graph_def_nodes": len(gd.node),
            "graph_def_serialize_ms": time_calls(gd.SerializeToString) * 1e3,
            "graph_def_parse_ms": time_calls(lambda: GraphDef().ParseFromString(data)) * 1e3,
            "graph_def_import_ms": time_calls(do_import) * 1e3}


def checkpoint_figures(directory):
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(0)
        for i in range(8):
            tf.Variable(rng.rand(MiB).astype(np.float32), name=f"v{i}")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = os.path.join(directory, "model")
            save = time_calls(lambda: saver.save(sess, prefix, write_meta_graph=False), min_time=2.0)
            restore = time_calls(lambda: saver.restore(sess, prefix), min_time=2.0)
    total = 8 * 4 * MiB / 1e6
    return {"checkpoint_MB": total, "checkpoint_save_MBps": total / save, "checkpoint_restore_MBps": total / restore}


def crc_figures():
    data = np.random.RandomState(1).bytes(32 * MiB)
    t0 = time.perf_counter()
    crc32c.masked_crc32c(data)
    return {"crc32c_MBps": 32 * MiB / 1e6 / (time.perf_counter() - t0)}


def summary_figures(directory):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1000])
        tf.summary.scalar("mean", tf.reduce_mean(x))
        tf.summary.histogram("values", x)
        merged = tf.summary.merge_all()
        feed = {x: np.random.RandomState(2).randn(1000).astype(np.float32)}
        with tf.Session() as sess, tf.summary.FileWriter(directory) as writer:
            run = time_calls(lambda: sess.run(merged, feed))
            summary = sess.run(merged, feed)
            add = time_calls(lambda: writer.add_summary(summary, 1))
    return {"summary_run_us": run * 1e6, "summary_add_us": add * 1e6}


def main():
    figures = {}
    figures.update(graph_def_figures())
    with tempfile.TemporaryDirectory() as d:
        figures.update(checkpoint_figures(d))
        figures.update(summary_figures(d))
    figures.update(crc_figures())
    emit("interop", {k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()})


if __name__ == "__main__":
    main()

"""A real TensorBoard server, started on a free port, serves a graphrt logdir's scalars,
graph and run metadata through its HTTP data API (and is stopped by the test)."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import graphrt as tf


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port, path, timeout=5):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return r.read()


def _write_logdir(logdir):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None], name="x")
            doubled = tf.multiply(x, 2.0, name="doubled")
        with tf.device("/cpu:1"):
            total = tf.reduce_sum(doubled, name="total")
        summary = tf.summary.scalar("loss", total)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            writer = tf.summary.FileWriter(os.path.join(logdir, "run1"), sess.graph)
            for step in range(4):
                writer.add_summary(sess.run(summary, {x: [step, 1.0]}), step)
            md = tf.RunMetadata()
            sess.run(total, {x: [1.0]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            writer.add_run_metadata(md, "traced", 4)
            writer.close()


def test_tensorboard_serves_graphrt_scalars_graph_and_run_metadata(tmp_path):
    pytest.importorskip("werkzeug")
    _write_logdir(str(tmp_path))
    port = _free_port()
    log = open(tmp_path / "tensorboard.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path), "--host",
                               "127.0.0.1", "--port", str(port), "--load_fast=false", "--reload_interval", "1"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        scalars = None
        while scalars is None and time.monotonic() < deadline:  # until the first reload has read the logdir
            if server.poll() is not None:
                pytest.fail(f"tensorboard exited: {(tmp_path / 'tensorboard.log').read_text()}")
            try:
                if "run1" in json.loads(_get(port, "/data/runs")):
                    scalars = json.loads(_get(port, "/data/plugin/scalars/scalars?run=run1&tag=loss"))
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.3)
        assert scalars is not None, (tmp_path / "tensorboard.log").read_text()
        assert [s[1] for s in scalars] == [0, 1, 2, 3]
        np.testing.assert_allclose([s[2] for s in scalars], [2.0, 4.0, 6.0, 8.0])
        graph = _get(port, "/data/plugin/graphs/graph?run=run1").decode()
        assert 'name: "doubled"' in graph and 'op: "Mul"' in graph and "CPU:1" in graph
        tags = json.loads(_get(port, "/data/plugin/graphs/info"))
        assert tags["run1"]["tags"]["traced"]["profile"] is True
        run_metadata = _get(port, "/data/plugin/graphs/run_metadata?run=run1&tag=traced").decode()
        assert run_metadata.count("dev_stats {") == 2 and 'node_name: "total"' in run_metadata
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)
        log.close()

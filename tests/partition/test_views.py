import shutil
import subprocess
import sys

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def split_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [4, 4], name="x")
            a = tf.matmul(x, x, name="a")
        with tf.device("/cpu:1"):
            b = tf.nn.relu(a, name="b")
        with tf.device("/cpu:0"):
            out = tf.add(b, 1.0, name="out")
    return g, x, out


def test_text_view_has_a_table_per_device_and_the_transfers_with_keys():
    g, x, out = split_graph()
    text = tf.partition.inspect(g, devices="CPU:2").text()
    assert "== /job:localhost/replica:0/task:0/device:CPU:0" in text
    assert "== /job:localhost/replica:0/task:0/device:CPU:1" in text
    assert "== transfers (2)" in text
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip().startswith("edge_")}
    a_edge = next(line for name, line in lines.items() if name.endswith("_a"))
    assert "a:0 float32" in a_edge and "CPU:0 -> CPU:1" in a_edge
    assert ";/job:localhost/replica:0/task:0/device:CPU:1;edge_" in a_edge and a_edge.rstrip().endswith(";0:0")
    assert "requested /device:CPU:1" in text


def test_byte_sizes_appear_once_a_traced_run_measured_them():
    g, x, out = split_graph()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        feed = {x: np.ones((4, 4), np.float32)}
        md = tf.RunMetadata()
        sess.run(out, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        before = tf.partition.inspect(session=sess, fetches=out, feeds=feed)
        after = tf.partition.inspect(session=sess, fetches=out, feeds=feed, run_metadata=md)
    assert "64 B" not in before.text() and "  ?  " in before.text()
    assert after.text().count("64 B") == 2  # a -> cpu:1 and b -> cpu:0, 4x4 float32 each
    assert '\\n64 B' in after.dot()


def test_dot_has_one_cluster_per_device_and_dashed_transfers():
    g, x, out = split_graph()
    dot = tf.partition.inspect(g, devices="CPU:2", format="dot")
    assert dot.startswith("digraph partitions {") and dot.rstrip().endswith("}")
    assert dot.count("subgraph cluster_") == 2
    assert dot.count("style=dashed") == 2
    assert "requested /device:CPU:1" in dot
    if shutil.which("dot"):
        result = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True)
        assert result.returncode == 0, result.stderr


def test_svg_without_graphviz_says_how_to_get_it(monkeypatch):
    g, _, _ = split_graph()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz"):
        tf.partition.inspect(g, devices="CPU:2").svg()


def test_inspect_of_a_graph_def_with_a_missing_device_is_a_clear_error():
    g, _, _ = split_graph()
    with pytest.raises(errors.InvalidArgumentError, match="'b'.*CPU:1.*available devices"):
        tf.partition.inspect(g, devices="CPU:1")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "graphrt.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_inspect_text_dot_and_output_file(tmp_path):
    g, _, _ = split_graph()
    path = tf.train.write_graph(g, str(tmp_path), "graph.pbtxt")
    text = run_cli("inspect", path, "--devices", "CPU:2")
    assert text.returncode == 0, text.stderr
    assert "== transfers (2)" in text.stdout
    out = tmp_path / "p.dot"
    dot = run_cli("inspect", path, "--devices", "CPU:2", "--format", "dot", "-o", str(out))
    assert dot.returncode == 0 and out.read_text().startswith("digraph")
    assert "2 partitions, 2 transfers" in dot.stderr


def test_cli_reports_bad_input_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = run_cli("inspect", str(bad))
    assert result.returncode == 2
    assert "not valid JSON" in result.stderr and "Traceback" not in result.stderr
    g, _, _ = split_graph()
    path = tf.train.write_graph(g, str(tmp_path), "graph.pb", as_text=False)
    result = run_cli("inspect", path, "--devices", "CPU:1")
    assert result.returncode == 2 and "available devices" in result.stderr


def test_written_graph_round_trips_through_pbtxt(tmp_path):
    from google.protobuf import text_format
    g, _, _ = split_graph()
    path = tf.train.write_graph(g, str(tmp_path), "graph.pbtxt")
    with open(path) as f:
        data = text_format.Parse(f.read(), tf.GraphDef())
    assert [n.name for n in data.node] == [op.name for op in g.get_operations()]

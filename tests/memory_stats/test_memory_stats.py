"""Device memory measured: tf.contrib.memory_stats ops, per-step and per-kernel
allocator bytes in RunMetadata.step_stats, the Chrome trace's memory track."""
import json

import numpy as np
import pytest

import graphrt as tf
from graphrt.client.timeline import Timeline

SIM = "/job:localhost/replica:0/task:0/device:SIM:0"
ARENA = 1 << 20
TILED = 64 * 4096  # the 256 KiB temporary


def _graph():
    with tf.device("/device:SIM:0"):
        v = tf.Variable(tf.zeros([1024]), name="v")  # 4 KiB, held across steps
        big = tf.reduce_sum(tf.tile(tf.expand_dims(v, 0), [64, 1]), name="big")
    return v, big


def _session():
    return tf.Session(config=tf.ConfigProto(device_count={"SIM": 1}, sim_options={"memory_bytes": ARENA}))


def test_memory_stats_ops_read_the_device_allocator(graph):
    v, big = _graph()
    with tf.device("/device:SIM:0"):
        peak = tf.contrib.memory_stats.MaxBytesInUse()
        in_use = tf.contrib.memory_stats.BytesInUse()
        limit = tf.contrib.memory_stats.BytesLimit()
    assert peak.dtype == tf.int64 and peak.shape.ndims == 0 and peak.op.type == "MaxBytesInUse"
    with _session() as sess:
        sess.run(v.initializer)
        peak0, in_use0, limit0 = sess.run([peak, in_use, limit])
        sess.run(big)
        peak1, in_use1 = sess.run([peak, in_use])
        stats = sess.device(SIM).allocator_stats()
    assert limit0 == ARENA
    assert 4096 <= in_use0 < TILED
    assert peak1 >= 4096 + TILED > peak0   # the temporary raised the high-water mark ...
    assert in_use1 < TILED                 # ... and is gone
    assert peak1 == stats.peak_bytes_in_use


def test_memory_stats_functions_place_the_op(graph):
    peak = tf.memory_stats.max_bytes_in_use("/device:SIM:0", name="peak")
    assert peak.op.name == "peak" and peak.op.device.endswith("SIM:0")
    with _session() as sess:
        assert sess.run(peak) >= 0


def test_memory_stats_on_a_cpu_device_fail_naming_node_and_device(graph):
    with tf.device("/cpu:0"):
        in_use = tf.memory_stats.bytes_in_use(name="cpu_bytes")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="BytesInUse 'cpu_bytes' on .*CPU:0: .*no "
                                                                    "memory counters"):
            sess.run(in_use)


def _traced(sess, fetch):
    md = tf.RunMetadata()
    sess.run(fetch, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    return md


def test_step_stats_have_per_step_and_per_kernel_allocator_bytes(graph):
    v, big = _graph()
    with _session() as sess:
        sess.run(v.initializer)
        md = _traced(sess, big)
    (dev,) = [d for d in md.step_stats.dev_stats if d.device == SIM]
    (used,) = dev.memory
    assert used.peak_bytes >= 4096 + TILED and used.allocator_bytes_in_use < TILED
    tile = [ns for ns in dev.node_stats if ns.op == "Tile" and ns.stream == "compute"]
    assert tile and tile[0].memory[0].allocator_bytes_in_use >= 4096 + TILED  # the tile's output is alive
    assert tile[0].memory[0].allocator_name == used.allocator_name


def test_chrome_trace_has_a_memory_counter_track(graph):
    v, big = _graph()
    with _session() as sess:
        sess.run(v.initializer)
        md = _traced(sess, big)
    plain = json.loads(Timeline(md.step_stats).generate_chrome_trace_format())
    assert not [e for e in plain["traceEvents"] if e.get("ph") == "C"]
    trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format(show_memory=True))
    counters = [e for e in trace["traceEvents"] if e.get("ph") == "C"]
    assert counters and {e["name"] for e in counters} == {"Memory sim:0"}
    values = [e["args"]["bytes_in_use"] for e in sorted(counters, key=lambda e: e["ts"])]
    assert max(values) >= 4096 + TILED and values[-1] < TILED
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    assert f"{SIM} Memory" in names
    assert np.all(np.diff([e["ts"] for e in sorted(counters, key=lambda e: e["ts"])]) >= 0)


def test_the_protobuf_run_metadata_carries_each_kernels_allocator_bytes(graph):
    from graphrt.client.run_metadata import to_proto
    v, big = _graph()
    with _session() as sess:
        sess.run(v.initializer)
        md = _traced(sess, big)
    (dev,) = [d for d in to_proto(md).step_stats.dev_stats if d.device == SIM]
    tile = [ns for ns in dev.node_stats if ns.node_name == "Tile" and
            any(m.allocator_name == "sim:0" for m in ns.memory)]
    assert tile
    (used,) = [m for m in tile[0].memory if m.allocator_name == "sim:0"]
    assert used.allocator_bytes_in_use >= 4096 + TILED

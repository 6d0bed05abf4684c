"""Summaries and FileWriter: event files graphrt writes are read back by TensorBoard's own
EventAccumulator (scalars per step, histograms, images, audio, text, the graph, and run
metadata with every device's step stats)."""
import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import graphrt as tf
from graphrt.summary import encode


def _load(logdir):
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "histograms": 0, "images": 0,
                                                       "audio": 0, "tensors": 0})
    acc.Reload()
    return acc


def _two_device_model():
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.full((3, 2), 0.5, np.float32), name="w")
        h = tf.matmul(x, w, name="h")
    with tf.device("/cpu:1"):
        loss = tf.reduce_mean(tf.square(h), name="loss")
    return x, w, loss


def test_scalars_histograms_graph_and_run_metadata_read_by_event_accumulator(graph, tmp_path):
    x, w, loss = _two_device_model()
    with tf.name_scope("train"):
        tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    merged = tf.summary.merge_all()
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        sess.run(tf.global_variables_initializer())
        losses = []
        for step in range(3):
            sess.run(w.assign_add(tf.ones_like(w)))
            summary, value = sess.run([merged, loss], feed)
            writer.add_summary(summary, global_step=step)
            losses.append(value)
        md = tf.RunMetadata()
        sess.run(loss, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                   output_partition_graphs=True), run_metadata=md)
        writer.add_run_metadata(md, "step3", global_step=3)
        writer.close()
    acc = _load(tmp_path)
    scalars = acc.Scalars("train/loss")
    assert [e.step for e in scalars] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in scalars], losses, rtol=1e-6)
    histo = acc.Histograms("weights")[-1].histogram_value
    assert histo.num == 6 and histo.min == histo.max == 3.5 and histo.sum == 21.0
    graph_def = acc.Graph()
    nodes = {n.name: n for n in graph_def.node}
    assert nodes["h"].op == "MatMul" and nodes["h"].device.endswith("CPU:0")
    assert nodes["loss"].device.endswith("CPU:1") and "_output_shapes" in nodes["h"].attr
    assert acc.Tags()["run_metadata"] == ["step3"]
    run_metadata = acc.RunMetadata("step3")
    devices = {d.device: d for d in run_metadata.step_stats.dev_stats}
    assert len(devices) == 2 and all(d.endswith(("CPU:0", "CPU:1")) for d in devices)
    ops_per_device = [{s.node_name for s in d.node_stats} for d in devices.values()]
    assert any("h" in ops for ops in ops_per_device)
    labels = [s.timeline_label for d in devices.values() for s in d.node_stats]
    assert any("= _Send(" in lbl for lbl in labels) and any("= _Recv(" in lbl for lbl in labels)
    stats = next(s for d in devices.values() for s in d.node_stats if s.node_name == "h")
    assert stats.output[0].tensor_description.allocation_description.requested_bytes == 2 * 2 * 4
    assert [d.size for d in stats.output[0].tensor_description.shape.dim] == [2, 2]
    assert len(run_metadata.partition_graphs) == 2
    assert sum(n.op == "_Send" for g in run_metadata.partition_graphs for n in g.node) >= 1


def test_images_audio_and_text(graph, tmp_path):
    pixels = tf.placeholder(tf.float32, [None, 4, 5, 3])
    tf.summary.image("pics", pixels, max_outputs=2)
    tf.summary.audio("tone", tf.sin(tf.range(800, dtype=tf.float32) * 0.1)[None, :], 8000.0)
    tf.summary.text("notes", tf.constant("**hello**"))
    with tf.Session() as sess:
        summary = sess.run(tf.summary.merge_all(), {pixels: np.random.RandomState(0).rand(3, 4, 5, 3)})
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(summary, 7)
    acc = _load(tmp_path)
    assert acc.Tags()["images"] == ["pics/image/0", "pics/image/1"]
    img = acc.Images("pics/image/1")[0]
    assert (img.width, img.height, img.step) == (5, 4, 7)
    assert img.encoded_image_string.startswith(b"\x89PNG")
    sound = acc.Audio("tone/audio")[0]
    assert sound.sample_rate == 8000 and sound.length_frames == 800 and sound.content_type == "audio/wav"
    text = acc.Tensors("notes")[0].tensor_proto
    assert text.string_val == [b"**hello**"]
    assert acc.SummaryMetadata("notes").plugin_data.plugin_name == "text"


def test_histogram_buckets_follow_tensorflow():
    proto = encode.histogram([0.0, 1.0, 1.0, -2.5])
    assert (proto.min, proto.max, proto.num, proto.sum, proto.sum_squares) == (-2.5, 1.0, 4, -0.5, 8.25)
    assert sum(proto.bucket) == 4
    assert len(proto.bucket) == len(proto.bucket_limit)
    # each value falls in the bucket whose limit is the first one above it
    filled = [(lim, c) for lim, c in zip(proto.bucket_limit, proto.bucket) if c]
    assert filled[0][1] == 1 and -2.5 < filled[0][0] < -2.5 * 1.0 / 1.1 + 1e-9
    assert [c for _, c in filled] == [1, 1, 2]


def test_summary_errors_name_the_tag(graph):
    v = tf.placeholder(tf.float32, [2])
    h = tf.summary.histogram("h", v)
    a = tf.summary.scalar("dup", tf.constant(1.0))
    b = tf.summary.scalar("dup", tf.constant(2.0), collections=[])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"):
            sess.run(h, {v: [1.0, np.nan]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: h"):
            sess.run(h, {v: [np.inf, 1.0]})
        assert b.name == "dup_1:0"  # a second summary of one name gets a unique tag
        merged = sess.run(tf.summary.merge([a, b]))
        assert [v.tag for v in tf.summary.Summary.FromString(merged).value] == ["dup", "dup_1"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag dup found in summary inputs"):
            sess.run(tf.summary.merge([a, a]))
    assert tf.summary.merge_all(key="nothing_here") is None


def test_summary_iterator_reads_events_back_and_detects_damage(graph, tmp_path):
    import glob
    summary = tf.summary.scalar("x", tf.constant(4.0))
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
        for step in range(2):
            writer.add_summary(sess.run(summary), step)
    path, = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    events = list(tf.train.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    assert [(e.step, e.summary.value[0].tag, e.summary.value[0].simple_value) for e in events[1:]] == \
        [(0, "x", 4.0), (1, "x", 4.0)]
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 1
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match="Corrupted record at offset .* in .*events.out.tfevents"):
        list(tf.train.summary_iterator(path))
    open(path, "wb").write(bytes(data[:-3]))
    with pytest.raises(tf.errors.DataLossError, match="Truncated record at offset"):
        list(tf.train.summary_iterator(path))


def test_file_writer_with_a_session_is_said_to_be_unsupported(graph, tmp_path):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.UnimplementedError, match="FileWriter\\(session=...\\)"):
            tf.summary.FileWriter(str(tmp_path), session=sess)


def test_tensor_summary_keeps_the_tensor_and_its_metadata(graph):
    """Checked against TensorFlow 2.21's bytes for the same call (family doubles into the tag, as TF's)."""
    from tensorboard.compat.proto import summary_pb2
    s = tf.summary.tensor_summary("weights", tf.constant([[1.5, 2.0]]), summary_description="the w", display_name="W")
    s2 = tf.summary.tensor_summary("counts", tf.constant([3, 4], tf.int64), family="fam")
    with tf.Session() as sess:
        first, second = (summary_pb2.Summary.FromString(b) for b in sess.run([s, s2]))
    value = first.value[0]
    assert (value.tag, value.metadata.display_name, value.metadata.summary_description) == ("weights", "W", "the w")
    assert value.tensor.tensor_content == np.array([[1.5, 2.0]], np.float32).tobytes()
    assert second.value[0].tag == "fam/fam/counts" and s2.name == "fam/counts:0"

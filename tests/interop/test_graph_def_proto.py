"""TensorFlow's GraphDef protobuf: a frozen LeNet made by TensorFlow imports and gives
TensorFlow's outputs; GraphDefs graphrt writes are TF's messages with TF's names."""
import os
import subprocess
import sys

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import graphrt as tf
from graphrt.framework import graph_proto, tensor_util
from graphrt.framework.graph_def import GraphDef

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
LENET_PB = os.path.join(FIXTURES, "lenet.pb")
LENET_PBTXT = os.path.join(FIXTURES, "lenet.pbtxt")


def _run_lenet(graph_def, **import_kwargs):
    io = np.load(os.path.join(FIXTURES, "lenet_io.npz"))
    g = tf.Graph()
    with g.as_default():
        x, probs, logits = tf.import_graph_def(graph_def, return_elements=["x:0", "probs:0", "logits:0"],
                                               **import_kwargs)
        with tf.Session() as sess:
            got = sess.run([probs, logits], {x: io["x"]})
    return g, got, (io["probs"], io["logits"])


@pytest.mark.parametrize("path", [LENET_PB, LENET_PBTXT])
def test_frozen_lenet_from_tensorflow_gives_tensorflows_outputs(path):
    if path.endswith(".pb"):
        gd = tf.GraphDef()
        gd.ParseFromString(open(path, "rb").read())
    else:
        gd = text_format.Parse(open(path).read(), tf.GraphDef())
    g, (probs, logits), (tf_probs, tf_logits) = _run_lenet(gd, name="")
    np.testing.assert_allclose(logits, tf_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(probs, tf_probs, rtol=1e-5, atol=1e-6)
    conv = g.get_operation_by_name("conv1/Conv2D")
    assert conv.get_attr("padding") == "SAME" and conv.get_attr("data_format") == "NHWC"
    assert conv.get_attr("strides") == [1, 1, 1, 1] and conv.get_attr("T") == tf.float32
    assert g.get_operation_by_name("x").get_attr("dtype") == tf.float32
    assert "_output_shapes" not in g.get_operation_by_name("x").node_def.attrs


def test_lenet_imports_with_a_scope_and_an_input_map():
    io = np.load(os.path.join(FIXTURES, "lenet_io.npz"))
    g = tf.Graph()
    with g.as_default():
        images = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
        doubled = images * 1.0
        with tf.name_scope("outer"):
            probs, = tf.import_graph_def(graph_proto.read_graph_def(LENET_PB), input_map={"x": doubled},
                                         return_elements=["probs:0"], name="lenet")
        assert probs.name == "outer/lenet/probs:0"
        with tf.Session() as sess:
            got = sess.run(probs, {images: io["x"]})
    np.testing.assert_allclose(got, io["probs"], rtol=1e-5, atol=1e-6)


def test_round_trips_are_byte_stable():
    raw = open(LENET_PB, "rb").read()
    canonical = graph_pb2.GraphDef.FromString(raw).SerializeToString(deterministic=True)
    ours = graph_proto.read_graph_def(LENET_PB)
    assert ours.SerializeToString() == canonical  # TF's bytes, map entries in key order
    again = GraphDef().ParseFromString(ours.SerializeToString())
    assert again.SerializeToString() == canonical and again == ours
    text = open(LENET_PBTXT).read()
    assert graph_proto.to_text(graph_proto.read_graph_def(LENET_PBTXT)) == text


def test_graph_written_by_graphrt_is_a_tensorflow_graph_def(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        y = tf.nn.relu(tf.matmul(x, w, transpose_b=False), name="y")
        tf.nn.max_pool(tf.reshape(y, [-1, 1, 2, 1]), [1, 1, 2, 1], [1, 1, 1, 1], "SAME", name="pool")
    path = tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    proto = graph_pb2.GraphDef.FromString(open(path, "rb").read())
    nodes = {n.name: n for n in proto.node}
    assert nodes["x"].op == "Placeholder" and nodes["x"].attr["dtype"].type == 1  # DT_FLOAT
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 3]
    assert nodes["w"].op == "VariableV2" and nodes["w"].attr["dtype"].type == 1
    assert nodes["w/Assign"].input == ["w", "w/initial_value"]
    assert nodes["MatMul"].op == "MatMul" and nodes["MatMul"].attr["transpose_a"].b is False
    assert nodes["MatMul"].attr["T"].type == 1 and list(nodes["MatMul"].input) == ["x", "w/read"]
    assert nodes["pool"].attr["padding"].s == b"SAME" and list(nodes["pool"].attr["ksize"].list.i) == [1, 1, 2, 1]
    value = tensor_util.MakeNdarray(nodes["w/initial_value"].attr["value"].tensor)
    np.testing.assert_array_equal(value, np.ones((3, 2), np.float32))
    text_path = tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    assert text_format.Parse(open(text_path).read(), graph_pb2.GraphDef()) == proto


def test_missing_ops_are_all_listed_in_one_not_found_error():
    gd = tf.GraphDef()
    text_format.Parse('node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }'
                      'node { name: "b" op: "FancyOp" input: "a" }'
                      'node { name: "c" op: "OtherOp" input: "b" }'
                      'node { name: "d" op: "FancyOp" input: "c" }', gd)
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError) as info:
            tf.import_graph_def(gd)
    message = str(info.value)
    assert "'FancyOp' (used by b, d)" in message and "'OtherOp' (used by c)" in message
    assert "2 op type(s)" in message


def test_corrupt_binary_graph_def_is_invalid_argument(tmp_path):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(open(LENET_PB, "rb").read()[:1000])
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad.pb is not a valid binary GraphDef"):
        graph_proto.read_graph_def(str(bad))


@pytest.mark.parametrize("value, dtype", [
    (np.arange(6, dtype=np.float32).reshape(2, 3), tf.float32), (np.array(3, np.int64), tf.int64),
    (np.array([1.5, -2], np.float16), tf.float16), (np.array([True, False]), tf.bool),
    (np.array([1 + 2j, 3 - 4j], np.complex64), tf.complex64), (np.array([[b"a", b""]], dtype=object), tf.string),
    (np.array([7], np.uint8), tf.uint8), (np.zeros((2, 0), np.float64), tf.float64),
])
def test_tensor_protos_round_trip(value, dtype):
    proto = tf.make_tensor_proto(value, dtype=dtype)
    back = tf.make_ndarray(tensor_util.TensorProto.FromString(proto.SerializeToString()))
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)


def test_tensor_proto_layout_follows_tensorflow():
    assert tf.make_tensor_proto(np.ones((2, 2), np.float32)).tensor_content == np.ones(4, np.float32).tobytes()
    scalar = tf.make_tensor_proto(2.5)
    assert list(scalar.float_val) == [2.5] and not scalar.tensor_content and scalar.dtype == 1
    filled = tf.make_tensor_proto(7, dtype=tf.int32, shape=[2, 3])
    assert list(filled.int_val) == [7]
    np.testing.assert_array_equal(tf.make_ndarray(filled), np.full((2, 3), 7, np.int32))
    padded = tensor_util.TensorProto(dtype=1, float_val=[1.0, 2.0])  # TF repeats the last value
    padded.tensor_shape.dim.add(size=4)
    np.testing.assert_array_equal(tf.make_ndarray(padded), [1, 2, 2, 2])


def test_cli_inspect_reads_pb_and_pbtxt(tmp_path):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            a = tf.placeholder(tf.float32, [2], name="a")
        with tf.device("/cpu:1"):
            tf.identity(a * 2.0, name="b")
    for name, as_text in (("g.pb", False), ("g.pbtxt", True)):
        path = tf.train.write_graph(g, str(tmp_path), name, as_text=as_text)
        result = subprocess.run([sys.executable, "-m", "graphrt.cli", "inspect", path, "--devices", "CPU:2"],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "== transfers (1)" in result.stdout


def test_tensorflow_ran_a_graph_def_graphrt_wrote_and_got_graphrts_outputs():
    # graphrt_frozen.pb: a frozen CNN with batch norm and a while loop that graphrt wrote
    # (make_graphrt_fixtures.py); TensorFlow imported and ran it (make_fixtures.py).
    path = os.path.join(FIXTURES, "graphrt_frozen.pb")
    proto = graph_pb2.GraphDef.FromString(open(path, "rb").read())
    assert {"Conv2D", "MaxPool", "Enter", "NextIteration", "Softmax"} <= {n.op for n in proto.node}
    x = np.load(os.path.join(FIXTURES, "graphrt_frozen_io.npz"))["x"]
    tf_out = np.load(os.path.join(FIXTURES, "graphrt_frozen_tf_out.npz"))
    with tf.Graph().as_default():
        probs, out = tf.import_graph_def(proto, return_elements=["probs:0", "out:0"], name="")
        with tf.Session() as sess:
            got_probs, got_out = sess.run([probs, out], {"x:0": x})
    np.testing.assert_allclose(got_probs, tf_out["probs"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got_out, tf_out["out"], rtol=1e-5, atol=1e-7)


def test_a_tensorflow_graph_of_many_common_ops_gives_tensorflows_outputs():
    # tf_ops.pb: fused batch norm (inference and training), depthwise conv, relu6, strided slice,
    # pack, pad, l2_normalize, leaky relu, elu, argmax, log_softmax ... frozen by TensorFlow 2.21.
    gd = graph_proto.read_graph_def(os.path.join(FIXTURES, "tf_ops.pb"))
    io = np.load(os.path.join(FIXTURES, "tf_ops_io.npz"))
    assert {"FusedBatchNormV3", "DepthwiseConv2dNative", "StridedSlice", "Pack"} <= {n.op for n in gd.node}
    names = ["out", "bn_y", "bn_mean", "bn_var"]
    with tf.Graph().as_default():
        fetches = tf.import_graph_def(gd, return_elements=[f"{n}:0" for n in names], name="")
        with tf.Session() as sess:
            got = dict(zip(names, sess.run(fetches, {"x:0": io["x"]})))
    for n in names:
        np.testing.assert_allclose(got[n], io[n], rtol=1e-5, atol=1e-6, err_msg=n)


def test_the_tf1_frozen_graph_loading_idiom_with_gfile(tmp_path):
    with tf.gfile.GFile(LENET_PB, "rb") as f:
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(f.read())
    assert tf.io.gfile.exists(LENET_PB) and len(graph_def.node) == 41
    path = tf.io.write_graph(graph_def, str(tmp_path / "copy"), "lenet.pbtxt")
    assert tf.gfile.ListDirectory(str(tmp_path / "copy")) == ["lenet.pbtxt"]
    assert text_format.Parse(tf.gfile.GFile(path).read(), tf.GraphDef()) == graph_def
    with pytest.raises(tf.errors.NotFoundError, match="No such file"):
        tf.gfile.GFile(str(tmp_path / "absent.pb"), "rb")
    with pytest.raises(tf.errors.UnimplementedError, match="scheme 'gs' not implemented"):
        tf.gfile.Exists("gs://bucket/model.pb")

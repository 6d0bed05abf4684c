"""GraphDef as JSON: exact export/import round trips, import_graph_def with prefixes and
input maps, malformed input, and no pickle anywhere."""
import json

import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.graph_def import GraphDef, NodeDef, decode_attr, encode_attr


def _build_everything(graph):
    """A graph with every attr kind: tensors of several dtypes, shapes, lists, ints,
    bools, strings, control inputs, devices, colocation and multi-output ops."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    unknown = tf.placeholder(tf.int32, None, name="unknown")
    with tf.device("/job:localhost/task:0/cpu:0"):
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    y = tf.matmul(x, w, transpose_b=False, name="y")
    parts = tf.split(y, 2, axis=1, name="s")
    sq = tf.squeeze(parts[1], axis=[1], name="sq")
    with tf.control_dependencies([w.initializer]):
        z = tf.identity(sq, name="z")
    tf.constant(["a", "bc", ""], name="strs")
    tf.constant(np.arange(4, dtype=np.int64), name="i64")
    tf.constant([True, False], name="b")
    tf.constant(np.array([[1.5, -2.0]], dtype=np.float64), name="f64")
    tf.constant(np.zeros((0, 2), np.float16), name="empty")
    tf.strided_slice(x, [0, 1], [2, 3], [1, 1], begin_mask=1, shrink_axis_mask=2, name="ss")
    tf.group(z, unknown, name="all")
    return x, z


def test_export_json_import_export_is_identical(graph):
    _build_everything(graph)
    text = graph.as_graph_def().to_json()
    parsed = GraphDef.from_json(text)
    assert parsed == graph.as_graph_def()
    assert parsed.to_json() == text
    g2 = tf.Graph()
    with g2.as_default():
        assert tf.import_graph_def(parsed, name="") is None
    assert g2.as_graph_def().to_json() == text
    assert str(g2) == str(graph)


def test_json_contents_are_plain_tagged_values(graph):
    _build_everything(graph)
    doc = json.loads(graph.as_graph_def().to_json())
    nodes = {n["name"]: n for n in doc["node"]}
    assert doc["format"] == "graphrt.GraphDef/1"
    assert nodes["x"]["attr"]["shape"] == {"shape": [None, 3]}
    assert nodes["unknown"]["attr"]["shape"] == {"shape": None}
    assert nodes["y"]["input"] == ["x", "w/read"]
    assert nodes["s"]["attr"]["num_split"] == {"i": 2}
    assert nodes["sq"]["input"] == ["s:1"]
    assert nodes["sq"]["attr"]["squeeze_dims"] == {"list": [{"i": 1}]}
    assert nodes["z"]["input"] == ["sq", "^w/Assign"]
    assert nodes["w"]["device"] == "/job:localhost/task:0/device:CPU:0"
    assert nodes["w/Assign"]["attr"]["_class"] == {"list": [{"s": "loc:@w"}]}
    assert nodes["y"]["attr"]["transpose_b"] == {"b": False}
    assert nodes["x"]["attr"]["dtype"] == {"type": "float32"}
    tensor = nodes["i64"]["attr"]["value"]["tensor"]
    assert tensor["dtype"] == "int64" and tensor["shape"] == [4]
    assert "device" not in nodes["x"]  # empty fields are left out


def test_tensor_attrs_round_trip_bit_exactly(graph):
    values = {
        "f32": np.array([[1.5, -0.0], [np.inf, np.nan]], np.float32),
        "f16": np.array([0.1, 65504], np.float16),
        "u8": np.array([0, 255], np.uint8),
        "i64": np.array([-(2 ** 62), 2 ** 62], np.int64),
        "c128": np.array([1 + 2j], np.complex128),
        "scalar": np.float64(3.25),
        "empty": np.zeros((2, 0, 3), np.int32),
    }
    for name, v in values.items():
        tf.constant(v, name=name)
    round_tripped = GraphDef.from_json(graph.as_graph_def().to_json()).node_by_name()
    for name, v in values.items():
        got = round_tripped[name].attrs["value"]
        assert got.dtype == np.asarray(v).dtype and got.shape == np.shape(v)
        assert got.tobytes() == np.asarray(v).tobytes()
        assert not got.flags.writeable


def test_string_tensors_round_trip(graph):
    tf.constant([["a", "héllo"], ["", "x"]], name="s")
    node = GraphDef.from_json(graph.as_graph_def().to_json()).node_by_name()["s"]
    assert node.attrs["value"].tolist() == [[b"a", "héllo".encode()], [b"", b"x"]]


@pytest.mark.parametrize("value", [
    True, 0, -7, 2.5, "text", b"\x00\xff", tf.float64, tf.TensorShape([None, 2]), tf.TensorShape(None),
    [1, 2], ["a", "b"], [tf.int32, tf.bool], [], None,
])
def test_attr_encoding_round_trips(value):
    encoded = encode_attr(value)
    json.dumps(encoded)  # plain JSON
    decoded = decode_attr(json.loads(json.dumps(encoded)))
    assert decoded == (list(value) if isinstance(value, tuple) else value)
    assert type(decoded) is type(value) or isinstance(value, (list, tuple))


def test_unencodable_attr_is_a_type_error():
    with pytest.raises(TypeError, match="cannot encode attr value of type object"):
        encode_attr(object())


def test_serialize_and_parse_from_string(graph):
    _build_everything(graph)
    data = graph.as_graph_def().SerializeToString()
    assert isinstance(data, bytes)
    parsed = GraphDef()
    assert parsed.ParseFromString(data) is parsed
    assert parsed == graph.as_graph_def()
    proto = tf.GraphDef()  # TensorFlow's message reads the same bytes
    assert proto.ParseFromString(data) == len(data)
    assert proto == graph.as_graph_def().to_proto()


def test_import_with_prefix_and_return_elements(graph):
    _build_everything(graph)
    gd = graph.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        z, init = tf.import_graph_def(gd, return_elements=["z:0", "w/Assign"], name="pre")
        again = tf.import_graph_def(gd, return_elements=["z"], name="pre")[0]
        default = tf.import_graph_def(gd, return_elements=["y:0"])[0]
    assert z.name == "pre/z:0" and z.shape.as_list() == [None]
    assert init.name == "pre/w/Assign" and init.type == "Assign"
    assert again.name == "pre_1/z"  # the scope is made unique
    assert default.name == "import/y:0"
    assert z.op.control_inputs == [init]
    assert g2.get_operation_by_name("pre/w/read").get_attr("_class") == ["loc:@pre/w"]
    assert g2.get_operation_by_name("pre/w").device == "/job:localhost/task:0/device:CPU:0"


def test_imported_graph_runs(graph):
    x, z = _build_everything(graph)
    gd = graph.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        x2, z2, init = tf.import_graph_def(gd, return_elements=["x:0", "z:0", "w/Assign"], name="m")
    with tf.Session(graph=g2) as sess:
        got = sess.run(z2, {x2: np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(got, [9.0, 9.0])  # ones(3) . w[:, 1] = 1 + 3 + 5
    assert got.dtype == np.float32


def test_import_with_input_map(graph):
    x, z = _build_everything(graph)
    gd = graph.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        feed = tf.placeholder(tf.float32, [None, 3], name="feed")
        z2, = tf.import_graph_def(gd, input_map={"x:0": feed}, return_elements=["z:0"], name="m")
        # "x" means "x:0", as in TF
        z3, = tf.import_graph_def(gd, input_map={"x": feed * 2.0}, return_elements=["z:0"], name="n")
    y2 = g2.get_operation_by_name("m/y")
    assert y2.inputs[0] is feed
    assert g2.get_operation_by_name("n/y").inputs[0].op.name == "mul"
    with tf.Session(graph=g2) as sess:
        sess.run([g2.get_operation_by_name("m/w/Assign"), g2.get_operation_by_name("n/w/Assign")])
        a, b = sess.run([z2, z3], {feed: np.ones((1, 3), np.float32)})
    np.testing.assert_allclose(b, 2 * a)


def test_input_map_control_input(graph):
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        tf.constant(2.0, name="b")
    g2 = tf.Graph()
    with g2.as_default():
        gate = tf.no_op(name="gate")
        b, = tf.import_graph_def(graph.as_graph_def(), input_map={"^a": gate}, return_elements=["b"])
    assert b.control_inputs == [gate]


def test_input_map_errors(graph):
    _build_everything(graph)
    gd = graph.as_graph_def()
    with tf.Graph().as_default():
        ints = tf.constant(np.ones((1, 3), np.int32))
        with pytest.raises(ValueError, match=r"Attempted to map inputs that were not found in graph_def: \[nope:0\]"):
            tf.import_graph_def(gd, input_map={"nope:0": ints})
        with pytest.raises(ValueError, match=r"not found in graph_def: \[x:5\]"):
            tf.import_graph_def(gd, input_map={"x:5": ints})
        with pytest.raises(ValueError, match="Input 0 of node .*y was passed int32 .* incompatible with expected "
                                             "float32"):
            tf.import_graph_def(gd, input_map={"x:0": ints})
        with pytest.raises(ValueError, match="Requested return_element 'nope:0' not found"):
            tf.import_graph_def(gd, return_elements=["nope:0"])
        with pytest.raises(ValueError, match="Requested return_element 'nope' not found"):
            tf.import_graph_def(gd, return_elements=["nope"])
        with pytest.raises(ValueError, match="Requested return_element 'z:3' not found"):
            tf.import_graph_def(gd, return_elements=["z:3"])


def test_import_out_of_order_nodes(graph):
    """A GraphDef need not be topologically sorted; import orders it, keeping GraphDef order
    among nodes whose inputs are ready."""
    nodes = [
        NodeDef("c", "AddV2", ["a", "b"], attrs={"T": tf.float32}),
        NodeDef("b", "Const", [], attrs={"dtype": tf.float32, "value": np.array(2.0, np.float32)}),
        NodeDef("a", "Const", [], attrs={"dtype": tf.float32, "value": np.array(1.0, np.float32)}),
        NodeDef("d", "NoOp", ["^c"]),
    ]
    g = tf.Graph()
    with g.as_default():
        c, = tf.import_graph_def(GraphDef(nodes), return_elements=["c:0"], name="")
    assert [op.name for op in g.get_operations()] == ["b", "a", "c", "d"]
    with tf.Session(graph=g) as sess:
        assert sess.run(c) == 3.0


def test_import_cycle_is_rejected():
    nodes = [NodeDef("a", "Identity", ["b"], attrs={"T": tf.float32}),
             NodeDef("b", "Identity", ["a"], attrs={"T": tf.float32})]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="cycle"):
            tf.import_graph_def(GraphDef(nodes))


@pytest.mark.parametrize("text, error, message", [
    ("{", tf.errors.InvalidArgumentError, "not valid JSON"),
    ("[]", tf.errors.InvalidArgumentError, "JSON object with a 'node' list"),
    ('{"node": 3}', tf.errors.InvalidArgumentError, "JSON object with a 'node' list"),
    ('{"node": [{"op": "Const"}]}', tf.errors.InvalidArgumentError, "Malformed NodeDef"),
    ('{"node": [{"name": "a", "op": "Const", "attr": {"value": {"zz": 1}}}]}', tf.errors.InvalidArgumentError,
     "unknown attr kind 'zz'"),
    ('{"node": [{"name": "a", "op": "Const", "attr": {"value": {"tensor": {"dtype": "float32", "shape": [2], '
     '"b64": "AAAA"}}}}]}', tf.errors.InvalidArgumentError, "tensor data has 3 bytes"),
    ('{"format": "other/9", "node": []}', tf.errors.InvalidArgumentError, "Unsupported GraphDef format"),
    ('{"node": [{"name": "a", "op": "NoSuchOp"}]}', tf.errors.NotFoundError, "Op type not registered 'NoSuchOp'"),
    ('{"node": [{"name": "a", "op": "Identity", "input": ["b"]}]}', ValueError, "input 'b' is not in the GraphDef"),
    ('{"node": [{"name": "a", "op": "NoOp"}, {"name": "a", "op": "NoOp"}]}', ValueError, "duplicate node names"),
])
def test_malformed_graph_defs(text, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            tf.import_graph_def(text)
    if error is tf.errors.InvalidArgumentError:
        with pytest.raises(error, match=message):
            GraphDef.from_json(text)


def test_add_shapes_records_output_shapes(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.split(x, 3, axis=1, name="s")
    nodes = graph.as_graph_def(add_shapes=True).node_by_name()
    assert nodes["s"].attrs["_output_shapes"] == [tf.TensorShape([None, 1])] * 3
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(graph.as_graph_def(add_shapes=True), name="")
    assert "_output_shapes" not in g2.get_operation_by_name("s").attrs


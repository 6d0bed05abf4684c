"""Graph, Operation and Tensor: structure, printing, networkx view, control dependencies,
collections, default graphs, misuse of symbolic tensors."""
import threading

import networkx as nx
import numpy as np
import pytest

import graphrt as tf


def _mlp(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        w = tf.constant(np.ones((3, 2), np.float32), name="w")
    y = tf.matmul(x, w, name="y")
    with tf.control_dependencies([w]):
        z = tf.identity(y, name="z")
    return x, w, y, z


def test_operations_in_creation_order_with_inputs_and_outputs(graph):
    x, w, y, z = _mlp(graph)
    ops = graph.get_operations()
    assert [op.name for op in ops] == ["x", "w", "y", "z"]
    assert y.op.inputs == (x, w)
    assert y.op.type == "MatMul"
    assert y.op.outputs == [y]
    assert z.op.control_inputs == [w.op]
    assert x.consumers() == [y.op]
    assert y.op.get_attr("transpose_a") is False
    with pytest.raises(ValueError, match="no attr named 'nope'"):
        y.op.get_attr("nope")
    assert x.graph is graph and y.op.graph is graph



def test_float_attrs_are_32_bit_as_tensorflow_holds_them(graph):
    # TensorFlow 2.21 gave these: AttrValue's `f` is a float, so the attr and the float64
    # kernel both see 0.2 rounded to float32.
    x = tf.constant([-1.0, 2.0], tf.float64)
    leaky = tf.nn.leaky_relu(x, 0.2)
    lrn = tf.nn.lrn(tf.ones([1, 2, 2, 3]), alpha=0.1, beta=0.3, bias=1.1)
    box = tf.image.sample_distorted_bounding_box(
        [2, 2, 3], tf.zeros([1, 1, 4]), area_range=[0.5, 1], min_object_covered=0.1)
    assert leaky.op.get_attr("alpha") == 0.20000000298023224
    assert lrn.op.get_attr("alpha") == 0.10000000149011612
    assert lrn.op.get_attr("beta") == 0.30000001192092896
    assert lrn.op.get_attr("bias") == 1.100000023841858
    assert list(box[0].op.get_attr("area_range")) == [0.5, 1.0]
    assert all(type(v) is float for v in box[0].op.get_attr("area_range"))
    with tf.Session(graph=graph) as sess:
        np.testing.assert_array_equal(sess.run(leaky), [-0.20000000298023224, 2.0])

def test_str_graph_is_one_readable_line_per_op(graph):
    _mlp(graph)
    lines = str(graph).splitlines()
    assert len(lines) == len(graph.get_operations()) == 4
    assert lines[0] == "%x : float32[?,3] = Placeholder() {dtype=float32, shape=[?,3]}"
    assert lines[1] == "%w : float32[3,2] @/device:CPU:0 = Const() {dtype=float32}"
    assert lines[2] == "%y : float32[?,2] = MatMul(%x:0, %w:0) {transpose_a=False, transpose_b=False}"
    assert lines[3] == "%z : float32[?,2] = Identity(%y:0, ^w)"
    assert str(graph.get_operation_by_name("y")) == lines[2]


def test_str_of_multi_output_and_no_output_ops(graph):
    a, b = tf.split(tf.constant([1.0, 2.0], name="c"), 2, name="s")
    group = tf.group(a, b, name="g")
    assert str(a.op) == "%s : float32[1], float32[1] = Split(%s/split_dim:0, %c:0) {num_split=2}"
    assert str(group) == "%g : () = NoOp(^s)"


def test_reprs(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    assert repr(x) == "<tf.Tensor 'x:0' shape=(None, 3) dtype=float32>"
    assert repr(x.op) == "<tf.Operation 'x' type=Placeholder>"
    assert repr(graph) == "<tf.Graph with 1 ops>"


def test_to_networkx_has_data_and_control_edges(graph):
    x, w, y, z = _mlp(graph)
    a, b = tf.split(y, 2, axis=1, name="s")
    nxg = graph.to_networkx()
    assert isinstance(nxg, nx.MultiDiGraph)
    assert set(nxg.nodes) == {"x", "w", "y", "z", "s", "s/split_dim"}
    assert nxg.nodes["w"]["device"] == "/device:CPU:0"
    assert nxg.nodes["y"]["op"] == "MatMul"
    edges = sorted((u, v, d["kind"], d["tensor"]) for u, v, d in nxg.edges(data=True))
    assert edges == sorted([
        ("x", "y", "data", "x:0"), ("w", "y", "data", "w:0"),
        ("y", "z", "data", "y:0"), ("w", "z", "control", None),
        ("s/split_dim", "s", "data", "s/split_dim:0"), ("y", "s", "data", "y:0"),
    ])
    assert nx.is_directed_acyclic_graph(nxg)


def test_to_networkx_keeps_parallel_edges(graph):
    x = tf.constant(2.0, name="x")
    y = tf.multiply(x, x, name="sq")
    nxg = graph.to_networkx()
    assert nxg.number_of_edges("x", "sq") == 2
    assert sorted(d["dst_input"] for d in nxg.get_edge_data("x", "sq").values()) == [0, 1]
    assert y.op.inputs == (x, x)


# -- control dependencies -----------------------------------------------------------

def test_control_dependencies_apply_to_ops_created_inside(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a, b.op]):
        c = tf.constant(3.0, name="c")
        d = c + 1.0
    e = tf.constant(4.0, name="e")
    assert c.op.control_inputs == [a.op, b.op]
    # d's input c already runs after a and b: no redundant control edges
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []


def test_control_dependencies_skip_direct_inputs_and_nest(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        with tf.control_dependencies([b]):
            s = tf.identity(a, name="s")  # a is a data input: only b is added
            t = tf.constant(0.0, name="t")
        with tf.control_dependencies(None):
            u = tf.constant(0.0, name="u")
    assert s.op.control_inputs == [b.op]
    assert t.op.control_inputs == [a.op, b.op]
    assert u.op.control_inputs == []
    with tf.control_dependencies([a]):
        # the constant for 1.0 is created inside the block, so it already depends on a
        w = tf.add(b, 1.0, name="w")
    assert w.op.control_inputs == []
    assert w.op.inputs[1].op.control_inputs == [a.op]


def test_control_dependencies_accept_variables_and_reject_others(graph):
    v = tf.Variable(1.0, name="v")
    with tf.control_dependencies([v.initializer, v]):
        c = tf.constant(0.0, name="c")
    assert c.op.control_inputs == [v.initializer, v.op]
    with pytest.raises(TypeError, match="Control input must be Operation or Tensor"):
        with tf.control_dependencies([3]):
            pass
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="not an element of this graph"):
        with tf.control_dependencies([foreign]):
            pass


# -- graph membership, finalize, collections, defaults -----------------------------------

def test_mixing_graphs_is_a_value_error(graph):
    x = tf.constant(1.0)
    other = tf.Graph()
    with other.as_default():
        y = tf.constant(1.0)
    with pytest.raises(ValueError, match="must be from the same graph"):
        tf.add(x, y)
    with pytest.raises(ValueError, match="not an element of this graph"):
        other.as_graph_element(x)


def test_ops_follow_their_inputs_graph_not_the_default():
    g1 = tf.Graph()
    with g1.as_default():
        x = tf.constant(1.0, name="x")
        x * 2.0  # takes the names mul, mul/y in g1
    g2 = tf.Graph()
    with g2.as_default():
        y = x * 2.0
        z = 3.0 / x
        n = tf.identity(x)
        less = x < 2.0
    assert g2.get_operations() == []
    assert all(t.graph is g1 for t in (y, z, n, less))
    assert y.op.name == "mul_1"  # unique in g1, where it lives
    assert z.op.inputs[0].op.name == "truediv/x"


def test_finalized_graph_refuses_new_ops(graph):
    tf.constant(1.0)
    graph.finalize()
    assert graph.finalized
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        tf.constant(2.0)
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        graph.add_to_collection("x", 1)
    assert len(graph.get_operations()) == 1


def test_version_grows_with_each_op(graph):
    v0 = graph.version
    tf.constant(1.0)
    assert graph.version > v0


def test_collections(graph):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(1.0, name="w", trainable=False)
    with tf.name_scope("scope"):
        s = tf.Variable(1.0, name="s")
    assert tf.global_variables() == [v, w, s]
    assert tf.trainable_variables() == [v, s]
    assert tf.global_variables(scope="scope") == [s]
    tf.add_to_collection("mine", 1)
    tf.add_to_collections(["mine", "yours"], 2)
    assert tf.get_collection("mine") == [1, 2]
    assert tf.get_collection("yours") == [2]
    ref = tf.get_collection_ref("mine")
    ref.append(3)
    assert tf.get_collection("mine") == [1, 2, 3]
    copy = tf.get_collection("mine")
    copy.append(4)
    assert tf.get_collection("mine") == [1, 2, 3]
    assert tf.get_collection("missing") == []


def test_default_graph_stack_and_reset():
    g = tf.Graph()
    outer = tf.get_default_graph()
    with g.as_default() as entered:
        assert entered is g
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError, match="nested graphs"):
            tf.reset_default_graph()
    assert tf.get_default_graph() is outer


def test_default_graph_is_thread_local():
    g = tf.Graph()
    seen = []
    with g.as_default():
        t = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        t.start()
        t.join()
    assert seen and seen[0] is not g


# -- symbolic tensors refuse Python use -------------------------------------------------

def test_tensor_misuse_is_a_type_error(graph):
    x = tf.constant([1.0, 2.0])
    # TF's class for these two is a TypeError too
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="as a Python `bool` is not allowed"):
        bool(x)
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="only iterable when eager execution"):
        iter(x)
    with pytest.raises(TypeError, match="len is not well defined"):
        len(x)
    with pytest.raises(NotImplementedError, match="Cannot convert a symbolic Tensor"):
        np.asarray(x)


def test_tensor_identity_semantics(graph):
    x = tf.constant(1.0)
    y = tf.constant(1.0)
    assert x != y and x == x
    assert len({x, y, x}) == 2


def test_set_shape_narrows_and_rejects_incompatible(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    x.set_shape([4, None])
    assert x.shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="not compatible"):
        x.set_shape([5, 3])


def test_graph_element_lookup_through_variables(graph):
    v = tf.Variable(1.0, name="v")
    assert graph.as_graph_element(v) is v.op.outputs[0]
    with pytest.raises(TypeError, match="Can not convert a int into a Tensor or Operation"):
        graph.as_graph_element(3)
    with pytest.raises(TypeError, match="into a Operation"):
        graph.as_graph_element(v.value(), allow_tensor=False)

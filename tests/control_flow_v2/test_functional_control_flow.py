"""TF 2's functional control flow in graphs TensorFlow 2.21 wrote (fixtures/): a GRU dynamic_rnn with
sequence lengths, a while_loop, a cond and a map_fn run as StatelessWhile/StatelessIf over their
functions and TensorLists, and give TensorFlow's outputs; the ops' own checks."""
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.op_builder import apply_op

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def test_a_tensorflow_2_graph_with_functional_control_flow_gives_tensorflows_outputs():
    io = np.load(os.path.join(FIXTURES, "tf2_control_flow_io.npz"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "tf2_control_flow", "model.meta"))
        kinds = {op.type for op in g.get_operations()}
        assert {"StatelessWhile", "StatelessIf", "TensorListReserve", "TensorListStack"} <= kinds
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "tf2_control_flow", "model"))
            names = ["outputs", "state", "acc", "branch", "mapped"]
            got = sess.run([n + ":0" for n in names], {"x:0": io["x"], "lengths:0": io["lengths"]})
            flipped = sess.run("branch:0", {"x:0": -np.abs(io["x"]), "lengths:0": io["lengths"]})
    for name, value in zip(names, got):
        np.testing.assert_allclose(value, io[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert flipped <= 0  # the other branch: the smallest output


def test_a_tensorflow_2_rnn_training_graph_trains_as_tensorflow():
    """Its gradient is a StatelessWhile whose functions pop, set and add TensorLists (AddN and ZerosLike
    of variants): three SGD steps give TensorFlow's variables."""
    io = np.load(os.path.join(FIXTURES, "tf2_rnn_train_io.npz"))
    feeds = {"x:0": io["x"], "y:0": io["y"]}
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "tf2_rnn_train", "model.meta"))
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "tf2_rnn_train", "model"))
            for _ in range(3):
                sess.run("train", feeds)
            np.testing.assert_allclose(sess.run("loss:0", feeds), io["loss_after"], rtol=1e-5)
            values = sess.run({v.op.name: v for v in tf.global_variables()})
    for key in (k for k in io.files if k.startswith("var__")):
        name = key[len("var__"):].replace("__", "/")
        np.testing.assert_allclose(values[name], io[key], rtol=1e-5, atol=1e-6, err_msg=name)


def test_tensor_list_ops_read_write_stack_and_pop(graph):
    shape = tf.constant([2], tf.int32)
    reserved = apply_op("TensorListReserve", [shape, tf.constant(3)], element_dtype=tf.float32).outputs[0]
    written = apply_op("TensorListSetItem", [reserved, tf.constant(1), tf.constant([1.0, 2.0])],
                       element_dtype=tf.float32).outputs[0]
    stacked = apply_op("TensorListStack", [written, shape], element_dtype=tf.float32).outputs[0]
    pushed = apply_op("TensorListPushBack", [written, tf.constant([5.0, 6.0])], element_dtype=tf.float32).outputs[0]
    popped, last = apply_op("TensorListPopBack", [pushed, shape], element_dtype=tf.float32).outputs
    length = apply_op("TensorListLength", [popped]).outputs[0]
    out_of_range = apply_op("TensorListGetItem", [written, tf.constant(7), shape], element_dtype=tf.float32).outputs[0]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(stacked), [[0, 0], [1, 2], [0, 0]])  # unset elements are zeros
        np.testing.assert_array_equal(sess.run(last), [5, 6])
        assert sess.run(length) == 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to access element 7 in a list with 3 "
                                                                 "elements"):
            sess.run(out_of_range)


def test_condition_truth_follows_tensorflow():
    from graphrt.control_flow_v2.functional_ops import _truth
    assert _truth(np.float32(0.5), "n") and not _truth(np.int32(0), "n")
    assert _truth(np.zeros(3), "n") and not _truth(np.zeros(0), "n")  # a tensor: true when non-empty


def test_tensor_lists_add_element_by_element_and_have_zeros_like(graph):
    from graphrt.control_flow_v2.tensor_list import TensorList
    a = TensorList([np.ones(2, np.float32), None], tf.float32, tf.TensorShape([2]))
    b = TensorList([None, np.full(2, 3.0, np.float32)], tf.float32, tf.TensorShape([2]))
    total = (a + b).items
    np.testing.assert_array_equal(total[0], [1, 1])
    np.testing.assert_array_equal(total[1], [3, 3])
    assert a.zeros_like().items == [None, None]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to add two lists of differing lengths: 2 vs. 1"):
        a + TensorList([None], tf.float32, tf.TensorShape([2]))

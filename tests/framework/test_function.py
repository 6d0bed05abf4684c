"""Graph functions: FuncGraph captures, FunctionDefs in attrs (JSON round trip), call ops
run by the runtime on the op's device, errors from inside a body, Defun gradients."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.function import Defun, FuncGraph, FunctionDef


def test_func_graph_captures_outer_tensors_as_extra_arguments():
    g = tf.Graph()
    with g.as_default():
        outer = tf.constant(2.0, name="outer")
        body = FuncGraph("scale", g)
        with body.as_default():
            x = body.add_input(tf.float32, [3])
            y = x * outer + outer
        fdef = body.to_function_def([y])
    assert [t.name for t, _ in body.captures] == ["outer:0"]  # captured once, used twice
    assert fdef.input_types == [tf.float32, tf.float32] and fdef.num_captures == 1
    assert fdef.output_shapes[0].as_list() == [3]
    ops = [n.op for n in fdef.node]
    assert ops.count("_Arg") == 2 and ops.count("_Retval") == 1 and "Placeholder" not in ops
    again = FunctionDef.from_dict(fdef.to_dict())
    assert again == fdef and str(again).startswith("<FunctionDef scale(float32, float32) -> (float32)")


def test_body_error_names_the_node_inside_the_function():
    g = tf.Graph()
    with g.as_default():
        @Defun(tf.int32)
        def pick(i):
            return tf.gather(tf.constant([1, 2, 3]), i, name="pick_one")
        y = pick(tf.constant(7))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(y)
    assert "pick_one" in str(e.value)


def test_call_runs_on_its_device_with_inputs_from_another():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [2])

        @Defun(tf.float32)
        def cube(v):
            return v * v * v
        with tf.device("/cpu:1"):
            y = cube(x)
        dy = tf.gradients(tf.reduce_sum(y), x)[0]
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        yv, dyv = sess.run([y, dy], {x: [1.0, -2.0]}, options=tf.RunOptions(output_partition_graphs=True),
                           run_metadata=md)
    np.testing.assert_allclose(yv, [1.0, -8.0])
    np.testing.assert_allclose(dyv, [3.0, 12.0])
    devices = {n.name: n.device for pg in md.partition_graphs for n in pg.node}
    assert devices["cube"].endswith("CPU:1")


def test_defun_in_a_while_loop():
    g = tf.Graph()
    with g.as_default():
        @Defun(tf.float32, shape_func=lambda op: [op.inputs[0].shape])  # (call outputs have unknown shapes)
        def halve(v):
            return v / 2.0
        _, r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, halve(v)), [0, tf.constant(40.0)])
        with tf.Session() as sess:
            assert sess.run(r) == 5.0


def test_defun_arity_is_checked():
    with tf.Graph().as_default():
        @Defun(tf.float32, tf.float32)
        def add(a, b):
            return a + b
        with pytest.raises(ValueError, match="takes 2 argument"):
            add(tf.constant(1.0))

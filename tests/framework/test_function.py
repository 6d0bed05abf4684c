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


def test_functions_go_to_the_protobuf_library_and_come_back(tmp_path):
    """A GraphDef with functions as TF writes it: func attrs name functions of
    `library`; parsing it back gives the same FunctionDefs, and the imported graph
    runs; Saver (meta graph) and FileWriter (graph event) accept such graphs."""
    from graphrt.framework import graph_proto
    g = tf.Graph()
    with g.as_default():
        k = tf.placeholder(tf.int64, [], name="k")
        ds = tf.data.Dataset.range(6).map(lambda i: (i * k, tf.cast(i, tf.float32)))
        ds = ds.filter(lambda a, b: b > 1.0).flat_map(lambda a, b: tf.data.Dataset.from_tensors(a).repeat(2))
        it = ds.batch(3).make_initializable_iterator()
        x = it.get_next()

        @Defun(tf.float32)
        def sq(v):
            return v * v
        y = sq(tf.constant(3.0))
    gd = g.as_graph_def()
    proto = graph_proto.to_proto(gd)
    functions = {f.signature.name: f for f in proto.library.function}
    map_def = gd.node_by_name()["MapDataset"].attrs["f"]
    assert set(functions) == {n.attrs[a].name for n in gd.node for a in ("f", "predicate") if a in n.attrs}
    assert [a.name for a in functions[map_def.name].signature.input_arg] == ["arg", "capture"]
    assert sorted(functions[map_def.name].ret.values()) == ["Cast:y:0", "mul:z:0"]  # TF's node:output_arg:index
    back = graph_proto.from_proto(proto)
    assert back.node_by_name()["MapDataset"].attrs["f"] == map_def
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(proto.SerializeToString(), name="")
        with tf.Session() as sess:
            sess.run(it.initializer.name, {"k:0": 10})
            assert sess.run(x.name).tolist() == [20, 20, 30]
            assert sess.run(y.name) == 9.0
    with g.as_default():
        v = tf.Variable(1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver().save(sess, str(tmp_path / "model"))
            tf.summary.FileWriter(str(tmp_path), sess.graph).close()
    assert (tmp_path / "model.meta").exists()


def test_a_call_waiting_on_a_queue_ends_with_the_step():
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(2, tf.float32, shapes=[[]])

        @Defun(tf.float32)
        def add_next(v):
            return v + q.dequeue()
        y = add_next(tf.constant(1.0))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(y, options=tf.RunOptions(timeout_in_ms=200))
            sess.run(q.enqueue(2.0))
            assert sess.run(y) == 3.0

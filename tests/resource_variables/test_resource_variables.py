"""Resource variables (VarHandleOp), as TensorFlow 2's compat.v1 graphs make them: a SavedModel
and a training graph TensorFlow 2.21 wrote (fixtures/) load, restore, run and keep training with
TensorFlow's results; ResourceVariable's ops, reads, updates, gradients and errors."""
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.op_builder import apply_op
from graphrt.resource_variables import ResourceVariable

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def test_a_tensorflow_2_savedmodel_with_resource_variables_gives_tensorflows_outputs():
    io = np.load(os.path.join(FIXTURES, "tf2_saved_model_io.npz"))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.load(sess, ["serve"], os.path.join(FIXTURES, "tf2_saved_model"))
        sig = meta.signature_def["serving_default"]
        probs, logits = sess.run([sig.outputs["probs"].name, sig.outputs["logits"].name],
                                 {sig.inputs["x"].name: io["x"], sig.inputs["ids"].name: io["ids"]})
        variables = tf.global_variables()
        assert all(isinstance(v, ResourceVariable) for v in variables)
        assert [(v.op.name, v.shape.as_list()) for v in variables][:3] == [
            ("emb", [6, 4]), ("hidden/kernel", [4, 5]), ("hidden/bias", [5])]
        assert variables[0].op.type == "VarHandleOp" and variables[0].dtype == tf.float32
    np.testing.assert_allclose(probs, io["probs"], rtol=1e-5)
    np.testing.assert_allclose(logits, io["logits"], rtol=1e-5)


def _imported_training_graph():
    saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "tf2_train", "model.meta"))
    return saver, tf.get_default_graph().get_operation_by_name("train")


def test_a_tensorflow_2_training_graph_keeps_training_as_tensorflow(tmp_path):
    """Nine optimizers' Resource(Sparse)Apply ops and ResourceScatterAdd, three steps: TF's values."""
    io = np.load(os.path.join(FIXTURES, "tf2_train_io.npz"))
    feeds = {"x:0": io["x"], "ids:0": io["ids"]}
    with tf.Graph().as_default():
        saver, train = _imported_training_graph()
        kinds = {op.type for op in tf.get_default_graph().get_operations()}
        assert {"ResourceApplyAdam", "ResourceSparseApplyFtrl", "ResourceScatterAdd"} <= kinds
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "tf2_train", "model"))
            np.testing.assert_allclose(sess.run("loss:0", feeds), io["loss_before"], rtol=1e-5)
            for _ in range(3):
                sess.run(train, feeds)
            np.testing.assert_allclose(sess.run("loss:0", feeds), io["loss_after"], rtol=1e-4)
            values = sess.run({v.op.name: v for v in tf.global_variables()})
            # graphrt's own Saver over the imported resource variables: a round trip of the trained values
            ours = tf.train.Saver(tf.global_variables())
            prefix = ours.save(sess, str(tmp_path / "ours"), write_meta_graph=False)
            sess.run(tf.global_variables_initializer())
            ours.restore(sess, prefix)
            again = sess.run({v.op.name: v for v in tf.global_variables()})
    expected = {k[len("var__"):].replace("__", "/"): io[k] for k in io.files if k.startswith("var__")}
    assert sorted(values) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(values[name], value, rtol=1e-4, atol=1e-6, err_msg=name)
        np.testing.assert_array_equal(again[name], values[name])


def test_a_tensorflow_2_cnn_with_fused_batch_norm_trains_as_tensorflow():
    """Conv, fused batch norm in training mode (its gradient op, the moving averages'
    AssignSubVariableOp), pooling, Adam: three steps of TF's own training op give TF's values."""
    io = np.load(os.path.join(FIXTURES, "tf2_cnn_io.npz"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "tf2_cnn", "model.meta"))
        assert "FusedBatchNormGradV3" in {op.type for op in g.get_operations()}
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "tf2_cnn", "model"))
            for _ in range(3):
                sess.run("train", {"x:0": io["x"], "y:0": io["y"]})
            np.testing.assert_allclose(sess.run("loss:0", {"x:0": io["x"], "y:0": io["y"]}), io["loss_after"],
                                       rtol=1e-5)
            values = sess.run({v.op.name: v for v in tf.global_variables()})
    for key in (k for k in io.files if k.startswith("var__")):
        name = key[len("var__"):].replace("__", "/")
        np.testing.assert_allclose(values[name], io[key], rtol=1e-4, atol=1e-5, err_msg=name)


def test_graphrt_optimizers_refuse_imported_resource_variables():
    with tf.Graph().as_default():
        _imported_training_graph()
        loss = tf.get_default_graph().get_tensor_by_name("loss:0")
        with pytest.raises(NotImplementedError, match=r"GradientDescentOptimizer builds ref-variable updates; "
                                                      r"adadelta/table:0 is a resource variable"):
            tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def test_resource_variable_ops_reads_and_updates(graph):
    v = ResourceVariable(np.arange(6, dtype=np.float32).reshape(3, 2), name="v")
    assert [op.name for op in graph.get_operations()] == [
        "v/initial_value", "v", "v/IsInitialized/VarIsInitializedOp", "v/Assign", "v/Read/ReadVariableOp"]
    assert repr(v) == "<tf.Variable 'v:0' shape=(3, 2) dtype=float32>"
    assert v.handle.dtype == tf.resource and v.value().shape.as_list() == [3, 2]
    rows = v.sparse_read([2, 0])
    add = v.assign_add(np.ones((3, 2), np.float32))
    sub = v.assign_sub(np.full((3, 2), 2.0, np.float32), read_value=False)
    replace = v.assign(np.zeros((1, 2), np.float32))  # a resource variable may change shape
    shape = apply_op("VariableShape", [v.handle]).outputs[0]
    initialized = apply_op("VarIsInitializedOp", [v.handle]).outputs[0]
    with tf.Session() as sess:
        assert not sess.run(initialized)
        with pytest.raises(tf.errors.FailedPreconditionError, match="Could not find variable v. This could mean "
                                                                    "that the variable has been deleted. In TF1, it "
                                                                    "can also mean the variable is uninitialized"):
            sess.run(v)
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(rows), [[4, 5], [0, 1]])
        np.testing.assert_array_equal(sess.run(add), np.arange(6).reshape(3, 2) + 1)
        sess.run(sub)
        np.testing.assert_array_equal(sess.run(v.read_value()), np.arange(6).reshape(3, 2) - 1)
        np.testing.assert_array_equal(sess.run(replace), [[0, 0]])
        np.testing.assert_array_equal(sess.run(shape), [1, 2])


def test_update_errors_name_the_variable(graph):
    v = ResourceVariable(np.zeros(3, np.float32), name="w")
    wrong_type = apply_op("AssignVariableOp", [v.handle, tf.constant([1, 2, 3])], name="wrong_type")
    wrong_shape = v.assign_add(np.ones(2, np.float32))
    out_of_range = v.sparse_read([1, 3])
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to assign variable with wrong dtype. "
                                                                 "Expected float32 got int32") as info:
            sess.run(wrong_type)
        assert info.value.node == "wrong_type"
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot update variable with shape \[3\] using a "
                                                                 r"Tensor with shape \[2\], shapes must be equal"):
            sess.run(wrong_shape)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
            sess.run(out_of_range)


def test_gradients_flow_to_the_variable_dense_and_sparse(graph):
    v = ResourceVariable(np.arange(6, dtype=np.float32).reshape(3, 2), name="v")
    loss = tf.reduce_sum(v * v) + tf.reduce_sum(v.sparse_read([2, 0, 2]))
    dense, = tf.gradients(loss, [v])
    sparse_only, = tf.gradients(tf.reduce_sum(v.sparse_read([1])), [v])
    assert isinstance(sparse_only, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(dense)
        only = sess.run(sparse_only)
    expected = 2 * np.arange(6, dtype=np.float32).reshape(3, 2)
    expected[0] += 1
    expected[2] += 2
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(only.indices, [1])
    np.testing.assert_array_equal(only.values, [[1, 1]])


def test_resource_update_forms_compute_the_ref_forms_bits(graph):
    start = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    grad = np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(3, 2)
    ref = tf.Variable(start, name="ref")
    res = ResourceVariable(start, name="res")
    ref_step = apply_op("ApplyGradientDescent", [ref._ref(), np.float32(0.3), grad]).outputs[0]
    res_step = apply_op("ResourceApplyGradientDescent", [res.handle, np.float32(0.3), grad])
    scatter = apply_op("ResourceScatterAdd", [res.handle, tf.constant([0, 0, 2]), np.ones((3, 2), np.float32)])
    assert res_step.outputs == [] and scatter.get_attr("dtype") == tf.float32
    with tf.Session() as sess:
        sess.run([ref.initializer, res.initializer])
        sess.run([ref_step, res_step])
        np.testing.assert_array_equal(sess.run(res), sess.run(ref))
        before = sess.run(res)
        sess.run(scatter)
        np.testing.assert_allclose(sess.run(res), before + np.float32([[2, 2], [0, 0], [1, 1]]), rtol=1e-6)


def test_ref_and_resource_variables_of_one_name_are_two_variables():
    with tf.Graph().as_default() as g1:
        ref = tf.Variable(np.float32(1.0), name="same")
    with tf.Graph().as_default() as g2:
        res = ResourceVariable(np.float32(2.0), name="same")
    server = tf.train.Server.create_local_server()
    try:
        with tf.Session(server.target, graph=g1) as sess:
            sess.run(ref.initializer)
        with tf.Session(server.target, graph=g2) as sess:
            sess.run(res.initializer)
        with tf.Session(server.target, graph=g1) as sess:
            assert sess.run(ref) == 1.0
        with tf.Session(server.target, graph=g2) as sess:
            assert sess.run(res) == 2.0
    finally:
        server.stop()


def test_a_resource_variable_on_the_simulated_accelerator(graph):
    with tf.device("/device:SIM:0"):
        v = ResourceVariable(np.arange(4, dtype=np.float32), name="v")
        update = v.assign_add(np.full(4, 0.5, np.float32))
        doubled = v.value() * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(update), [0.5, 1.5, 2.5, 3.5])
        np.testing.assert_array_equal(sess.run(doubled), [1, 3, 5, 7])


def test_meta_graph_round_trip_keeps_resource_variables(tmp_path):
    with tf.Graph().as_default():
        v = ResourceVariable(np.ones(2, np.float32), name="v")
        assert v.to_proto().is_resource
        tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.meta"))
        (imported,) = tf.global_variables()
        assert isinstance(imported, ResourceVariable) and imported.shape.as_list() == [2]
        with tf.Session() as sess:
            sess.run(imported.initializer)
            np.testing.assert_array_equal(sess.run(imported), [1, 1])


def test_tensorflow_2_stateless_initializers_import_and_draw():
    """tf-keras's initializers draw with TF 2's StatelessRandomGetKeyCounter and StatelessRandomUniformV2:
    the graph imports and initializes (graphrt's own draws, the same in every run, within glorot's range)."""
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "tf2_stateless_init.meta"))
        assert "StatelessRandomUniformV2" in {op.type for op in g.get_operations()}
        kernel = [v for v in tf.global_variables() if v.op.name == "dense/kernel"][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(kernel)
            sess.run(tf.global_variables_initializer())
            second = sess.run(kernel)
    limit = np.sqrt(6.0 / (30 + 40))
    assert first.shape == (30, 40) and np.abs(first).max() <= limit and first.std() > limit / 3
    np.testing.assert_array_equal(first, second)

"""MetaGraphDefs (`.meta`) with collections, import_meta_graph + restore in a fresh graph,
and freezing with graph_util."""
import numpy as np
import pytest
from tensorboard.compat.proto import meta_graph_pb2

import graphrt as tf


def _train_and_save(tmp_path):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
    b = tf.Variable(0.5, name="b")
    y = tf.add(tf.matmul(x, w), b, name="y")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y), global_step=step)
    tf.add_to_collection("outputs", y)
    tf.add_to_collection("train_op", train)
    tf.add_to_collection("notes", "a string")
    tf.add_to_collection("sizes", 3)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: [[1, 1]]})
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=step)
        want = sess.run(y, {x: [[3, 4]]})
    return prefix, want


def test_import_meta_graph_restores_collections_and_variables(tmp_path):
    with tf.Graph().as_default():
        prefix, want = _train_and_save(tmp_path)
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(prefix + ".meta", "rb").read())
    assert not meta.HasField("saver_def")  # graphrt's Saver feeds values; it has no SaveV2 ops to name
    assert list(meta.collection_def["outputs"].node_list.value) == ["y:0"]
    assert {n.op for n in meta.graph_def.node} >= {"VariableV2", "MatMul", "ApplyGradientDescent"}
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        y, = tf.get_collection("outputs")
        assert tf.get_collection("notes") == [b"a string"] and tf.get_collection("sizes") == [3]
        assert [v.name for v in tf.global_variables()] == ["w:0", "b:0", "global_step:0"]
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0"]
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run(y, {"x:0": [[3, 4]]}), want)
            assert sess.run(tf.train.get_global_step()) == 1
            sess.run(tf.get_collection("train_op")[0], {"x:0": [[1, 1]]})  # training continues
            assert sess.run(g.get_tensor_by_name("global_step:0")) == 2


def test_export_meta_graph_text_and_scope(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        path = str(tmp_path / "g.meta")
        meta = tf.train.export_meta_graph(path, as_text=True)
    assert open(path).read().startswith("meta_info_def {\n  stripped_op_list {")
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path, import_scope="copy")
        v, = tf.global_variables()
        assert v.name == "copy/v:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(v) == 1.0
    assert len(meta.collection_def["variables"].bytes_list.value) == 1


def test_convert_variables_to_constants_freezes_what_the_outputs_need(tmp_path):
    with tf.Graph().as_default() as g:
        prefix, want = _train_and_save(tmp_path)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["y"])
            frozen_proto = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def().to_proto(), ["y"])
    assert isinstance(frozen_proto, tf.GraphDef) and frozen_proto == frozen.to_proto()
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == "Const" and ops["b"] == "Const"
    assert not any(op in ("VariableV2", "Assign", "ApplyGradientDescent") for op in ops.values())
    with tf.Graph().as_default():
        y, = tf.import_graph_def(frozen, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {"x:0": [[3, 4]]}), want)
    sub = tf.graph_util.extract_sub_graph(frozen, ["w/read"])
    assert [n.name for n in sub.node] == ["w", "w/read"]
    with pytest.raises(tf.errors.NotFoundError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(frozen, ["nope"])


def test_a_model_tensorflow_saved_reloads_from_its_meta_graph_and_keeps_training(tmp_path):
    import os
    import shutil
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    shutil.copytree(os.path.join(fixtures, "tf_meta"), tmp_path / "run")
    io = np.load(os.path.join(fixtures, "tf_meta_io.npz"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(str(tmp_path / "run" / "model-1.meta"))
        y, = tf.get_collection("outputs")
        train = tf.get_collection("train_op")[0]  # TF's minimize() adds it too
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0"]
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path / "run")))  # TF's save/RestoreV2
            np.testing.assert_allclose(sess.run(y, {"x:0": [[3, 4]]}), io["before"], rtol=1e-6)
            sess.run(train, {"x:0": [[1, 1]]})
            np.testing.assert_allclose(sess.run(y, {"x:0": [[3, 4]]}), io["after"], rtol=1e-6)
            prefix = saver.save(sess, str(tmp_path / "run" / "model"), global_step=tf.train.get_global_step())
    assert prefix.endswith("model-2") and tf.train.latest_checkpoint(str(tmp_path / "run")) == prefix
    assert tf.train.load_variable(prefix, "global_step") == 2
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(prefix + ".meta", "rb").read())
    assert meta.saver_def.restore_op_name == "save/restore_all"  # TF's own ops, so TF can load it again
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta", import_scope="again")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run("again/y:0", {"again/x:0": [[3, 4]]}), io["after"], rtol=1e-6)


def test_restore_v2_reports_a_damaged_tensor(tmp_path):
    import os
    import shutil
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    shutil.copytree(os.path.join(fixtures, "tf_meta"), tmp_path / "run")
    prefix = str(tmp_path / "run" / "model-1")
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[-1] ^= 0xFF
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError, match="Checksum does not match for tensor w"):
                saver.restore(sess, prefix)


def test_tensorflow_loaded_a_model_graphrt_saved_with_its_meta_graph(tmp_path):
    # graphrt_meta/: saved by graphrt's Saver (make_graphrt_fixtures.py); TensorFlow's
    # import_meta_graph + restore ran it (make_fixtures.py) and got graphrt_meta_tf_out.npz.
    import os
    import shutil
    from tests.interop.fixtures.make_graphrt_fixtures import meta_graph_model
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    tf_y = np.load(os.path.join(fixtures, "graphrt_meta_tf_out.npz"))["y"]
    _, ours = meta_graph_model(str(tmp_path))
    np.testing.assert_allclose(ours, tf_y, rtol=1e-6)
    meta = meta_graph_pb2.MetaGraphDef.FromString(open(str(tmp_path / "model-5.meta"), "rb").read())
    assert not meta.HasField("saver_def")  # so TensorFlow builds a Saver over the VariableDefs
    assert not meta.meta_info_def.tensorflow_version  # TensorFlow would parse it as its own version
    shutil.copytree(os.path.join(fixtures, "graphrt_meta"), tmp_path / "committed")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(str(tmp_path / "committed" / "model-5.meta"))
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path / "committed")))
            got = sess.run(tf.get_collection("outputs")[0], {"x:0": [[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]]})
    np.testing.assert_allclose(got, tf_y, rtol=1e-6)


def test_strip_default_attrs_drops_only_default_values():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        tf.matmul(x, x, transpose_b=True, name="mm")
        tf.matmul(x, x, name="plain")
        meta = tf.train.export_meta_graph(strip_default_attrs=True)
    nodes = {n.name: n for n in meta.graph_def.node}
    assert "transpose_a" not in nodes["plain"].attr and "transpose_b" not in nodes["plain"].attr
    assert nodes["mm"].attr["transpose_b"].b is True and "transpose_a" not in nodes["mm"].attr
    assert nodes["mm"].attr["T"].type == 1  # no default: kept
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        assert tf.get_default_graph().get_operation_by_name("plain").get_attr("transpose_b") is False


def test_meta_graph_lists_the_op_defs_it_uses():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        tf.split(tf.matmul(x, tf.Variable(np.eye(2, dtype=np.float32))), 2)
        meta = tf.train.export_meta_graph()
    ops = {op.name: op for op in meta.meta_info_def.stripped_op_list.op}
    assert sorted(ops) == sorted({n.op for n in meta.graph_def.node})
    matmul = ops["MatMul"]
    assert [a.name for a in matmul.input_arg] == ["a", "b"] and matmul.input_arg[0].type_attr == "T"
    attrs = {a.name: a for a in matmul.attr}
    assert attrs["T"].type == "type" and attrs["transpose_a"].type == "bool"
    assert attrs["transpose_a"].default_value.b is False
    assert ops["Split"].input_arg[0].type == 3  # split_dim: DT_INT32
    assert ops["Split"].output_arg[0].number_attr == "num_split"
    assert ops["VariableV2"].is_stateful and ops["VariableV2"].output_arg[0].is_ref

"""tf.saved_model: TensorFlow's SavedModels load here (fixtures/tf_model, written by
TensorFlow: make_fixtures.py) and graphrt's load in TensorFlow (run in a subprocess by the
Python of $GRAPHRT_TF_PYTHON, default a `tfvenv` beside the checkout, skipped where there is
none), with the same outputs; the builder's and loader's rules and errors."""
import os
import shutil
import subprocess

import numpy as np
import pytest
from tensorboard.compat.proto import meta_graph_pb2, types_pb2

import graphrt as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TF_PYTHON = os.environ.get("GRAPHRT_TF_PYTHON", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(FIXTURES))), os.pardir, "tfvenv", "bin", "python"))
sm = tf.saved_model


def _run_signature(sess, meta, key, feeds, import_scope=None):
    sig = meta.signature_def[key]
    scoped = (lambda n: f"{import_scope}/{n}") if import_scope else (lambda n: n)
    return sess.run({k: scoped(sig.outputs[k].name) for k in sig.outputs},
                    {scoped(sig.inputs[k].name): v for k, v in feeds.items()})


def test_a_savedmodel_tensorflow_wrote_loads_and_gives_tensorflows_outputs(tmp_path):
    io = np.load(os.path.join(FIXTURES, "tf_model_io.npz"))
    model = tmp_path / "tf_model"  # a copy, so nothing can write into the fixture
    shutil.copytree(os.path.join(FIXTURES, "tf_model"), model)
    with tf.Graph().as_default() as g, tf.Session() as sess:
        meta = sm.loader.load(sess, [sm.tag_constants.SERVING], str(model), import_scope="m")
        assert isinstance(meta, meta_graph_pb2.MetaGraphDef) and list(meta.meta_info_def.tags) == ["serve"]
        out = _run_signature(sess, meta, "serving_default", {"x": io["x"], "word": io["word"]}, "m")
        np.testing.assert_allclose(out["probs"], io["probs"], rtol=1e-6)
        np.testing.assert_allclose(out["logits"], io["logits"], rtol=1e-6)
        np.testing.assert_array_equal(out["word_id"], io["word_id"])  # the table its main op filled from assets/
        assert sm.is_valid_signature(meta.signature_def["classify"])
        probs = sm.utils.get_tensor_from_tensor_info(meta.signature_def["classify"].outputs["scores"],
                                                     import_scope="m")
        assert probs is g.get_tensor_by_name("m/probs:0") and probs.shape.as_list() == [None, 2]
        assert [v.op.name for v in tf.trainable_variables()] == ["m/dense/w", "m/dense/b", "m/logits/w",
                                                                 "m/logits/b"]
        # TF's sharded save ops (ShardedFilename, SaveV2, MergeV2Checkpoints) run here too
        prefix = tf.train.Saver(saver_def=_scoped_saver_def(meta.saver_def, "m")).save(
            sess, str(tmp_path / "again" / "ckpt"), write_meta_graph=False)
    assert sorted(os.listdir(tmp_path / "again")) == ["checkpoint", "ckpt.data-00000-of-00001", "ckpt.index"]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "logits/b"),
                                  tf.train.load_variable(str(model / "variables" / "variables"), "logits/b"))


def _scoped_saver_def(saver_def, scope):
    scoped = type(saver_def)()
    scoped.CopyFrom(saver_def)
    for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
        setattr(scoped, field, f"{scope}/{getattr(saver_def, field)}")
    return scoped


def test_the_savedmodel_message_keeps_tensorflows_bytes():
    data = open(os.path.join(FIXTURES, "tf_model", "saved_model.pb"), "rb").read()
    saved = sm.SavedModel.FromString(data)
    assert saved.saved_model_schema_version == 1 and len(saved.meta_graphs) == 1
    assert isinstance(saved.meta_graphs[0], meta_graph_pb2.MetaGraphDef)
    assert saved.SerializeToString(deterministic=True) == data


def _build_model(vocab):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), name="w")
    b = tf.Variable([0.25, -0.5], name="b")
    y = tf.nn.softmax(tf.nn.relu(tf.matmul(x, w) + b), name="y")
    word = tf.placeholder(tf.string, [None], name="word")
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    return x, word, y, tf.identity(table.lookup(word), name="ids"), w


FEEDS = {"x": np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], np.float32), "word": np.array([b"dog", b"emu"], object)}


def _simple_save(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("cat\ndog\n")
    export = tmp_path / "model"
    with tf.Graph().as_default(), tf.Session() as sess:
        x, word, y, ids, _ = _build_model(str(vocab))
        sess.run(tf.global_variables_initializer())
        sm.simple_save(sess, str(export), {"x": x, "word": word}, {"y": y, "ids": ids},
                       legacy_init_op=tf.tables_initializer())
        want = sess.run({"y": y}, {x: FEEDS["x"]})
    vocab.unlink()  # loaders must read the copy in assets/
    return export, want


_TF_LOADER = """
import os, sys, numpy as np
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
with tf.Graph().as_default(), tf.Session() as sess:
    meta = tf.saved_model.loader.load(sess, ["serve"], sys.argv[1])
    sig = meta.signature_def["serving_default"]
    feeds = np.load(sys.argv[2], allow_pickle=True)
    out = sess.run({k: sig.outputs[k].name for k in sig.outputs},
                   {sig.inputs[k].name: feeds[k] for k in sig.inputs})
    np.savez(sys.argv[3], **out)
"""


@pytest.mark.skipif(not os.path.exists(TF_PYTHON), reason="no Python with TensorFlow (GRAPHRT_TF_PYTHON)")
def test_a_savedmodel_graphrt_wrote_loads_in_tensorflow_with_the_same_outputs(tmp_path):
    export, want = _simple_save(tmp_path)
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    result = subprocess.run([TF_PYTHON, "-c", _TF_LOADER, str(export), str(tmp_path / "feeds.npz"),
                             str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    got = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6)
    np.testing.assert_array_equal(got["ids"], [1, -1])


def test_simple_save_round_trip_in_graphrt(tmp_path):
    export, want = _simple_save(tmp_path)
    assert sm.contains_saved_model(str(export)) and sm.loader.maybe_saved_model_directory(export)
    assert sorted(os.listdir(export)) == ["assets", "saved_model.pb", "variables"]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.load(sess, [sm.SERVING], str(export))
        assert sm.is_valid_signature(meta.signature_def[sm.DEFAULT_SERVING_SIGNATURE_DEF_KEY])
        out = _run_signature(sess, meta, "serving_default", FEEDS)
    np.testing.assert_allclose(out["y"], want["y"], rtol=1e-6)
    np.testing.assert_array_equal(out["ids"], [1, -1])
    assert not meta.HasField("saver_def")  # graphrt's Saver names no SaveV2/RestoreV2 ops
    assert list(meta.collection_def[sm.MAIN_OP_KEY].node_list.value) == ["init_all_tables"]
    asset = meta.collection_def[sm.ASSETS_KEY].any_list.value[0]
    assert asset.type_url == "type.googleapis.com/tensorflow.AssetFileDef"
    assert meta_graph_pb2.AssetFileDef.FromString(asset.value).filename == "vocab.txt"


def test_two_meta_graphs_share_the_variables_and_text_format(tmp_path):
    export = tmp_path / "model"
    builder = sm.builder.SavedModelBuilder(str(export))
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [2], name="x")
        v = tf.Variable([3.0, 4.0], name="v")
        y = tf.multiply(x, v, name="y")
        sess.run(tf.global_variables_initializer())
        sig = sm.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"predict": sig})
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        v = tf.Variable([0.0, 0.0], name="v")
        tf.add(x, v, name="y")
        builder.add_meta_graph(["train", "gpu"])
    path = builder.save(as_text=True)
    assert path == os.fsencode(str(export / "saved_model.pbtxt"))
    assert open(path, "rb").read().startswith(b"saved_model_schema_version: 1\nmeta_graphs {")
    with tf.Graph().as_default(), tf.Session() as sess:
        sm.load(sess, ["gpu", "train"], str(export))
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [1.0, 1.0]}), [4.0, 5.0])  # v restored, not zeros
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.load(sess, ["serve"], str(export))
        np.testing.assert_allclose(_run_signature(sess, meta, "predict", {"x": [1.0, 2.0]})["y"], [3.0, 8.0])
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):
            sm.load(sess, ["eval"], str(export))


def test_a_model_without_variables_and_its_main_op(tmp_path):
    export = tmp_path / "model"
    with tf.Graph().as_default(), tf.Session() as sess:
        counter = tf.get_local_variable("counter", initializer=tf.constant(41.0))
        tf.add(counter, 1.0, name="answer")
        builder = sm.Builder(str(export))
        builder.add_meta_graph_and_variables(sess, ["serve"], main_op=sm.main_op.main_op())
        builder.save()
    assert os.listdir(export / "variables") == []
    with tf.Graph().as_default(), tf.Session() as sess:
        sm.load(sess, ["serve"], str(export))
        assert sess.run("answer:0") == 42.0  # the main op initialized the local variable


def test_tensor_info_of_dense_and_sparse_tensors():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        sp = tf.SparseTensor(tf.constant([[0, 1]], tf.int64, name="i"), tf.constant([2.0], name="v"),
                             tf.constant([3, 3], tf.int64, name="s"))
        info = sm.build_tensor_info(x)
        assert (info.name, info.dtype) == ("x:0", types_pb2.DT_FLOAT)
        assert [d.size for d in info.tensor_shape.dim] == [-1, 4]
        sinfo = sm.utils.build_tensor_info(sp)
        assert sinfo.WhichOneof("encoding") == "coo_sparse"
        assert (sinfo.coo_sparse.indices_tensor_name, sinfo.coo_sparse.values_tensor_name,
                sinfo.coo_sparse.dense_shape_tensor_name) == ("i:0", "v:0", "s:0")
        back = sm.get_tensor_from_tensor_info(sinfo)
        assert isinstance(back, tf.SparseTensor) and back.values is g.get_tensor_by_name("v:0")
        with pytest.raises(ValueError, match="Invalid TensorInfo.encoding"):
            sm.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo(dtype=types_pb2.DT_FLOAT))
        with pytest.raises(KeyError):
            sm.get_tensor_from_tensor_info(meta_graph_pb2.TensorInfo(name="nope:0"))


def test_signature_helpers_check_as_tensorflow_does():
    with tf.Graph().as_default():
        ex = tf.placeholder(tf.string, [None], name="ex")
        scores = tf.placeholder(tf.float32, [None, 2], name="scores")
        classes = tf.placeholder(tf.string, [None, 2], name="classes")
        ints = tf.placeholder(tf.int32, [None], name="ints")
        reg = sm.regression_signature_def(ex, scores)
        assert reg.method_name == sm.REGRESS_METHOD_NAME and sm.is_valid_signature(reg)
        cls = sm.classification_signature_def(ex, classes, scores)
        assert sorted(cls.outputs) == ["classes", "scores"] and sm.is_valid_signature(cls)
        assert not sm.is_valid_signature(sm.build_signature_def({"inputs": sm.build_tensor_info(ex)}, {},
                                                                sm.PREDICT_METHOD_NAME))
        assert not sm.is_valid_signature(None)
        with pytest.raises(ValueError, match="must be of type string"):
            sm.regression_signature_def(ints, scores)
        with pytest.raises(ValueError, match="output tensors must be of type float"):
            sm.regression_signature_def(ex, ints)
        with pytest.raises(ValueError, match="cannot both be None"):
            sm.classification_signature_def(ex, None, None)
        with pytest.raises(ValueError, match="classes must be of type string"):
            sm.classification_signature_def(ex, ints, None)
        with pytest.raises(ValueError, match="cannot be None or empty"):
            sm.predict_signature_def({}, {"s": scores})
        sig = sm.build_signature_def(defaults={"k": tf.constant(2.5)})
        assert tf.make_ndarray(sig.defaults["k"]) == 2.5
        with pytest.raises(ValueError, match="Unable to convert"):
            sm.build_signature_def(defaults={"k": scores})


def test_builder_errors(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        sm.Builder(str(tmp_path / "full"))
    builder = sm.Builder(str(tmp_path / "m"))
    with pytest.raises(AssertionError, match="has not been saved yet"):
        builder.add_meta_graph(["serve"])
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, name="x")
        with pytest.raises(KeyError, match="reserved"):
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                sm.constants.INIT_OP_SIGNATURE_KEY: sm.predict_signature_def({"x": x}, {"x": x})})
        with pytest.raises(AssertionError, match="must have the dtype field set"):
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"s": sm.build_signature_def(
                {"x": meta_graph_pb2.TensorInfo(name="x:0")})})
        with pytest.raises(TypeError, match="to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], main_op="init")
        with pytest.raises(TypeError, match="must be of type constant"):
            builder.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[x])


def test_loader_errors(tmp_path):
    assert not sm.maybe_saved_model_directory(str(tmp_path))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(OSError, match="SavedModel file does not exist"):
            sm.load(sess, ["serve"], str(tmp_path))
    (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff\xff")
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(OSError, match="Cannot parse file"):
            sm.load(sess, ["serve"], str(tmp_path))

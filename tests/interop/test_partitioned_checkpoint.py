"""Checkpoints of partitioned variables, as TensorFlow writes them: each part a slice of the
whole under the whole's name (tf_partitioned_ckpt/, written by TensorFlow 2.21: one file, and a
sharded save over two CPUs). graphrt reads them, restores them into the same or another
partitioning, writes TensorFlow's bytes for the same variables, and runs TensorFlow's own
SaveV2/RestoreV2 ops with slices from an imported MetaGraphDef; damage and bad slice specs are
errors naming the tensor and the slice."""
import os
import shutil

import numpy as np
import pytest

import graphrt as tf
from graphrt.framework.op_builder import apply_op
from graphrt.train import checkpoint_bundle, sstable
from graphrt.train.checkpoint_protos import BundleEntryProto
from graphrt.train.tensor_slice import TensorSlice, parse_shape_and_slice, slice_key

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TF_DIR = os.path.join(FIXTURES, "tf_partitioned_ckpt")
X = np.array([[1, 2, 3, 4]], np.float32)


def _tf_values():
    with np.load(os.path.join(FIXTURES, "tf_partitioned_values.npz")) as f:
        return {k.replace("__", "/"): f[k] for k in f.files}


def _model():
    """The fixture's graph: the same variables, partitioners and devices as TensorFlow's."""
    parts = {}
    with tf.device("/cpu:0"):
        parts["dense/w"] = tf.get_variable("dense/w", [4, 5], partitioner=tf.fixed_size_partitioner(2))
        parts["long"] = tf.get_variable("long", [20000], tf.int8, partitioner=tf.fixed_size_partitioner(2))
    with tf.device("/cpu:1"):
        parts["emb"] = tf.get_variable("emb", [200, 2], partitioner=tf.fixed_size_partitioner(3))
        parts["ids"] = tf.get_variable("ids", [2, 6], tf.int32, partitioner=tf.fixed_size_partitioner(4, axis=1))
        parts["words"] = tf.get_variable("words", [5], tf.string, partitioner=tf.fixed_size_partitioner(2))
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    rows = tf.nn.embedding_lookup(parts["emb"], [3, 150, 67])
    y = tf.identity(tf.matmul(x, parts["dense/w"]) + tf.reduce_sum(rows), name="y")
    tf.train.AdagradOptimizer(0.5).minimize(tf.reduce_sum(y * y))
    return parts, x, y


def _two_cpus():
    return tf.ConfigProto(device_count={"CPU": 2})


@pytest.mark.parametrize("prefix", ["model", "sharded"])
def test_reader_assembles_tensorflows_slices_into_whole_tensors(prefix):
    path = os.path.join(TF_DIR, prefix)
    values = _tf_values()
    # the slices' own entries are not listed: a partitioned variable is one tensor
    assert tf.train.list_variables(path) == [("dense/w", [4, 5]), ("dense/w/Adagrad", [4, 5]), ("emb", [200, 2]),
                                             ("emb/Adagrad", [200, 2]), ("ids", [2, 6]), ("long", [20000]),
                                             ("words", [5])]
    for name in ("dense/w", "emb", "ids", "long"):
        np.testing.assert_array_equal(tf.train.load_variable(path, name), values[name])
    np.testing.assert_array_equal(tf.train.load_variable(path, "long")[9998:10002], [92, 93, 94, 95])
    assert list(tf.train.load_variable(path, "words")) == [b"a", b"", b"ccc", b"\xffd", b"ee"]
    reader = checkpoint_bundle.BundleReader(path)
    assert [str(s) for s in reader.slices("emb")] == ["0,67:0,2", "67,67:0,2", "134,66:0,2"]
    # a region across two stored slices, and one inside a single slice
    np.testing.assert_array_equal(reader.read_slice("emb", TensorSlice.parse("60,20:1,1")), values["emb"][60:80, 1:2])
    np.testing.assert_array_equal(reader.read_slice("ids", TensorSlice.parse("-:3,2")), values["ids"][:, 3:5])


@pytest.mark.parametrize("sharded", [False, True])
def test_restores_tensorflows_parts_and_writes_tensorflows_bytes(tmp_path, sharded):
    name = "sharded" if sharded else "model"
    with tf.Graph().as_default():
        parts, x, y = _model()
        with tf.Session(config=_two_cpus()) as sess:
            tf.train.Saver().restore(sess, os.path.join(TF_DIR, name))
            np.testing.assert_allclose(sess.run(y, {x: X}), _tf_values()["y"], rtol=1e-6)
            tf.train.Saver(sharded=sharded).save(sess, str(tmp_path / name), write_meta_graph=False)
    written = sorted(f for f in os.listdir(tmp_path) if f != "checkpoint")
    expected = [f"{name}.data-0000{i}-of-0000{2 if sharded else 1}" for i in range(2 if sharded else 1)]
    assert written == expected + [f"{name}.index"]
    for f in written:  # the bytes TensorFlow wrote for the same parts, slots and devices
        assert (tmp_path / f).read_bytes() == open(os.path.join(TF_DIR, f), "rb").read(), f


def test_restores_into_another_partitioning_and_into_a_whole_variable():
    values = _tf_values()
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [200, 2], partitioner=tf.fixed_size_partitioner(7))
        ids = tf.get_variable("ids", [2, 6], tf.int32, partitioner=tf.fixed_size_partitioner(2))  # axis 0 now
        w = tf.get_variable("dense/w", [4, 5])
        saver = tf.train.Saver([emb, ids, w])
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(TF_DIR, "sharded"))
            got = sess.run([tf.convert_to_tensor(emb), tf.convert_to_tensor(ids), w])
    for value, name in zip(got, ("emb", "ids", "dense/w")):
        np.testing.assert_array_equal(value, values[name])


def test_a_partitioned_variable_restores_from_a_whole_tensor_and_saves_slices(tmp_path):
    whole = np.arange(30, dtype=np.float32).reshape(10, 3)
    with tf.Graph().as_default():
        v = tf.Variable(whole, name="table")
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver([v]).save(sess, str(tmp_path / "whole"), write_meta_graph=False)
    with tf.Graph().as_default():
        table = tf.get_variable("table", [10, 3], partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            saver = tf.train.Saver()
            saver.restore(sess, str(tmp_path / "whole"))
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(table)), whole)
            saver.save(sess, str(tmp_path / "parts"), write_meta_graph=False)
    reader = checkpoint_bundle.BundleReader(str(tmp_path / "parts"))
    assert [str(s) for s in reader.slices("table")] == ["0,4:0,3", "4,3:0,3", "7,3:0,3"]
    np.testing.assert_array_equal(reader.read("table"), whole)


def test_tensorflows_meta_graph_saves_and_restores_slices_with_its_own_ops(tmp_path):
    """TF's SaverDef names SaveV2/RestoreV2 ops whose shape_and_slices are the parts' specs."""
    shutil.copytree(TF_DIR, tmp_path / "run")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(str(tmp_path / "run" / "model.meta"))
        specs = tf.get_default_graph().get_operation_by_name("save/SaveV2").inputs[2]
        with tf.Session(config=_two_cpus()) as sess:
            assert b"200 2 67,67:0,2" in list(sess.run(specs))
            saver.restore(sess, str(tmp_path / "run" / "model"))
            np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), _tf_values()["y"], rtol=1e-6)
            saver.save(sess, str(tmp_path / "again"), write_meta_graph=False)
    for ext in (".index", ".data-00000-of-00001"):  # TF's own ops, run by graphrt: TF's bytes
        assert (tmp_path / f"again{ext}").read_bytes() == open(os.path.join(TF_DIR, "model" + ext), "rb").read()


def test_slice_keys_and_specs():
    assert slice_key("w", TensorSlice.parse("4,3:0,4")) == b"\x00w\x00\x01\x01\x02\x84\x83\x80\x84"
    # a whole dimension ("-") is start 0, length -1; a 0 or 0xff in the name is escaped
    assert slice_key("a\x00b", TensorSlice.parse("-")) == b"\x00a\x00\xffb\x00\x01\x01\x01\x80\x7f"
    # starts and lengths of 64 and more take more bytes, a run of 1 bits saying how many
    assert slice_key("e", TensorSlice.parse("10000,64:0,1")).endswith(b"\xe0\x27\x10\xc0\x40\x80\x81")
    assert TensorSlice.parse("0,3:-").to_proto().extent[1].WhichOneof("has_length") is None
    assert parse_shape_and_slice("10 4 4,3:0,4", "w") == ([10, 4], TensorSlice([4, 0], [3, 4]))
    assert parse_shape_and_slice("", "w") == (None, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Slice 8,3:0,4 of v reaches 11 in a dimension of 10"):
        parse_shape_and_slice("10 4 8,3:0,4", "v")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Malformed slice '0,0' of v: expected a non-negative "
                                                             r"start and a positive length"):
        parse_shape_and_slice("10 0,0", "v")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"has 1 dimensions; the tensor has shape \[10, 4\]"):
        parse_shape_and_slice("10 4 0,3", "v")


def _write_parts(prefix, parts, full_shape=(4, 2)):
    checkpoint_bundle.write_bundle(str(prefix), {"t": checkpoint_bundle.Slices(full_shape, parts)})


def test_slices_that_do_not_cover_or_overlap_are_errors_naming_the_tensor(tmp_path):
    rows = np.ones((2, 2), np.float32)
    _write_parts(tmp_path / "gap", [(TensorSlice.parse("0,2:-"), rows)])
    reader = tf.train.NewCheckpointReader(str(tmp_path / "gap"))
    np.testing.assert_array_equal(reader.get_slice("t", TensorSlice.parse("0,2:-")), rows)
    with pytest.raises(tf.errors.NotFoundError, match=r"slices of tensor t saved in checkpoint .*gap do not cover "
                                                      r"its slice -:-"):
        reader.get_tensor("t")
    _write_parts(tmp_path / "overlap", [(TensorSlice.parse("0,3:-"), np.ones((3, 2), np.float32)),
                                        (TensorSlice.parse("2,2:-"), rows)])
    with pytest.raises(tf.errors.DataLossError, match=r"Slices of tensor t in checkpoint .*overlap \(at slice 2,2:-\)"):
        tf.train.load_variable(str(tmp_path / "overlap"), "t")
    with pytest.raises(ValueError, match=r"t \(slice 0,2:-\) has shape \[3, 2\]; the slice is \[2, 2\]"):
        _write_parts(tmp_path / "bad", [(TensorSlice.parse("0,2:-"), np.ones((3, 2), np.float32))])


def test_a_damaged_slice_is_data_loss_naming_tensor_and_slice(tmp_path):
    shutil.copytree(TF_DIR, tmp_path / "run")
    prefix = str(tmp_path / "run" / "model")
    table = dict(sstable.read_table(prefix + ".index").items())
    entry = BundleEntryProto.FromString(table[slice_key("emb", TensorSlice.parse("67,67:0,2"))])
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[entry.offset + 3] ^= 0x10
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "dense/w"), _tf_values()["dense/w"])
    with pytest.raises(tf.errors.DataLossError, match=r"Checksum does not match for tensor emb \(slice 67,67:0,2\)"):
        tf.train.load_variable(prefix, "emb")
    # an index listing a slice whose entry is gone
    del table[slice_key("words", TensorSlice.parse("3,2"))]
    open(prefix + ".index", "wb").write(sstable.write_table(sorted(table.items())))
    with pytest.raises(tf.errors.DataLossError, match=r"lists slice 3,2 of tensor words but has no values for it"):
        tf.train.load_variable(prefix, "words")


def _save_op(prefix, names, specs, tensors):
    # as an imported GraphDef holds it (apply_op builds no list-of-types inputs)
    inputs = [tf.constant(prefix), tf.constant(names), tf.constant(specs)] + list(tensors)
    return tf.get_default_graph().create_op("SaveV2", inputs, {"dtypes": [t.dtype for t in tensors]}, name="SaveV2")


def _restore_op(prefix, names, specs, dtypes):
    return apply_op("RestoreV2", [tf.constant(prefix), tf.constant(names), tf.constant(specs)],
                    dtypes=dtypes).outputs


def test_save_and_restore_ops_with_slices_check_their_specs(tmp_path):
    prefix = str(tmp_path / "ops")
    with tf.Graph().as_default():
        save = _save_op(prefix, ["t", "t", "u"], ["4 2 0,1:-", "4 2 1,3:-", ""],
                        [tf.zeros((1, 2)), tf.ones((3, 2)), tf.constant(np.int64(5))])
        restore = _restore_op(prefix, ["t", "t"], ["4 2 -:1,1", "4 2 0,2:-"], [tf.float32, tf.float32])
        wrong_shape = _restore_op(prefix, ["t"], ["5 2 0,2:-"], [tf.float32])
        malformed = _restore_op(prefix, ["t"], ["4 2 0:1"], [tf.float32])
        twice = _save_op(str(tmp_path / "twice"), ["t", "t"], ["", "4 2 0,1:-"], [tf.zeros((4, 2)), tf.zeros((1, 2))])
        with tf.Session() as sess:
            sess.run(save)
            column, top = sess.run(restore)
            np.testing.assert_array_equal(column, [[0], [1], [1], [1]])
            np.testing.assert_array_equal(top, [[0, 0], [1, 1]])
            assert tf.train.load_variable(prefix, "u") == 5
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Tensor t in checkpoint .* has shape \[4, 2\]; "
                                                                     r"the slice 0,2:- asked for expects \[5, 2\]"):
                sess.run(wrong_shape)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Malformed slice '0:1' of tensor t in "
                                                                     r"RestoreV2"):
                sess.run(malformed)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"tensor t is given whole and in slices"):
                sess.run(twice)

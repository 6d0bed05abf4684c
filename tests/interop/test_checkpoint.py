"""TensorFlow's V2 checkpoints: one written by TensorFlow 2.21 restores into graphrt;
one graphrt writes has TF's layout and bytes (TensorFlow read and restored the
committed graphrt_ckpt/ fixture); damaged files are DataLossErrors naming the file
and the tensor."""
import os
import shutil

import numpy as np
import pytest

import graphrt as tf
from graphrt.train import checkpoint_bundle, sstable
from graphrt.util import crc32c

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TF_CKPT = os.path.join(FIXTURES, "tf_ckpt")
DATA = ".data-00000-of-00001"


def _tf_values():
    with np.load(os.path.join(FIXTURES, "tf_ckpt_values.npz")) as f:
        return {k.replace("__", "/"): f[k] for k in f.files}


def test_tensorflow_checkpoint_restores_into_graphrt(graph):
    values = _tf_values()
    variables = {name: tf.Variable(np.zeros_like(v), name=name) for name, v in values.items()}
    saver = tf.train.Saver(list(variables.values()))
    prefix = tf.train.latest_checkpoint(TF_CKPT)
    assert prefix == os.path.join(TF_CKPT, "model-7")
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        got = sess.run(variables)
    for name, want in values.items():
        assert got[name].dtype == want.dtype, name
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_reader_lists_and_loads_tensorflows_tensors_including_strings():
    listed = dict(tf.train.list_variables(TF_CKPT))
    assert listed["dense/kernel"] == [3, 4] and listed["global_step"] == [] and listed["names"] == [3]
    assert len(listed) == 47
    reader = tf.train.NewCheckpointReader(os.path.join(TF_CKPT, "model-7"))
    assert reader.get_tensor("names").tolist() == [b"alpha", b"", b"\xffgamma"]
    assert reader.get_variable_to_dtype_map()["names"] == tf.string
    assert reader.has_tensor("many/v39") and not reader.has_tensor("many/v40")
    np.testing.assert_array_equal(tf.train.load_variable(TF_CKPT, "emb:0"), _tf_values()["emb"])
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")


def test_graphrt_writes_tensorflows_bytes_for_tensorflows_tensors(tmp_path):
    reader = checkpoint_bundle.BundleReader(os.path.join(TF_CKPT, "model-7"))
    checkpoint_bundle.write_bundle(str(tmp_path / "copy"), {name: reader.read(name) for name in reader.entries})
    for ext in (".index", DATA):
        with open(os.path.join(TF_CKPT, "model-7" + ext), "rb") as theirs:
            assert (tmp_path / ("copy" + ext)).read_bytes() == theirs.read(), ext


def test_graphrt_checkpoint_has_tensorflows_layout_and_bytes(tmp_path):
    from tests.interop.fixtures.make_graphrt_fixtures import write
    prefix = write(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-42" + DATA, "model-42.index"]
    state = (tmp_path / "checkpoint").read_text()
    assert state.startswith('model_checkpoint_path: "model-42"\nall_model_checkpoint_paths: "model-42"\n')
    committed = os.path.join(FIXTURES, "graphrt_ckpt", "model-42")
    for ext in (".index", DATA):  # the bytes TensorFlow read and restored when the fixture was made
        with open(committed + ext, "rb") as f:
            assert open(prefix + ext, "rb").read() == f.read(), ext
    with np.load(os.path.join(FIXTURES, "graphrt_ckpt_tf_read.npz")) as tf_read:
        for key in tf_read.files:
            ours = tf.train.load_variable(prefix, key.replace("__", "/"))
            assert ours.dtype == tf_read[key].dtype
            np.testing.assert_array_equal(ours, tf_read[key])
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == prefix and list(state.all_model_checkpoint_paths) == [prefix]


def test_sstable_round_trips_many_blocks():
    entries = [(f"key{i:06d}".encode(), os.urandom(i % 300)) for i in range(3000)]
    data = sstable.write_table(entries)
    table = sstable.Table(data, "mem")
    assert table.items() == entries and len(table) == 3000
    with pytest.raises(ValueError, match="strictly increasing"):
        sstable.write_table([(b"b", b""), (b"a", b"")])


def test_crc32c_matches_known_values():
    assert crc32c.crc32c(b"123456789") == 0xE3069283
    big = np.random.RandomState(0).bytes(300_000)  # the lane-parallel path
    assert crc32c.crc32c(big) == crc32c._update_py(0xFFFFFFFF, big) ^ 0xFFFFFFFF
    assert crc32c.unmask(crc32c.mask(0x12345678)) == 0x12345678


def _copy_tf_checkpoint(tmp_path):
    shutil.copytree(TF_CKPT, tmp_path / "ck")
    return str(tmp_path / "ck" / "model-7")


def _restore_all(prefix):
    with tf.Graph().as_default():
        values = _tf_values()
        saver = tf.train.Saver([tf.Variable(np.zeros_like(v), name=k) for k, v in values.items()])
        with tf.Session() as sess:
            saver.restore(sess, prefix)


def test_a_flipped_data_byte_is_a_checksum_data_loss_naming_tensor_and_file(tmp_path):
    prefix = _copy_tf_checkpoint(tmp_path)
    entry = checkpoint_bundle.BundleReader(prefix).entries["dense/kernel"]
    data = bytearray(open(prefix + DATA, "rb").read())
    data[entry.offset + 5] ^= 0x40
    open(prefix + DATA, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=r"Checksum does not match for tensor dense/kernel in .*"
                                                       r"model-7.data-00000-of-00001"):
        _restore_all(prefix)


def test_truncated_data_and_index_are_data_loss(tmp_path):
    prefix = _copy_tf_checkpoint(tmp_path)
    data = open(prefix + DATA, "rb").read()
    open(prefix + DATA, "wb").write(data[:100])
    with pytest.raises(tf.errors.DataLossError, match="past the end of .*model-7.data-00000-of-00001"):
        _restore_all(prefix)
    index = open(prefix + ".index", "rb").read()
    open(prefix + ".index", "wb").write(index[:-10])
    with pytest.raises(tf.errors.DataLossError, match=r"Checkpoint index .*model-7.index is corrupt"):
        _restore_all(prefix)
    bad = bytearray(index)
    bad[30] ^= 1  # inside the data block: its crc no longer matches
    open(prefix + ".index", "wb").write(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match="checksum mismatch in data block"):
        tf.train.NewCheckpointReader(prefix)


def test_missing_data_file_and_mismatched_dtype(tmp_path):
    prefix = _copy_tf_checkpoint(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((3, 4), np.float64), name="dense/kernel")
        saver = tf.train.Saver([v])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = dense/kernel; expected dtype "
                                                                     "float64 does not equal original dtype float32"):
                saver.restore(sess, prefix)
            os.unlink(prefix + DATA)
            with pytest.raises(tf.errors.DataLossError, match="data file .*model-7.data-00000-of-00001 is missing"):
                saver.restore(sess, prefix)


def test_missing_checkpoint_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for .*absent"):
        tf.train.NewCheckpointReader(str(tmp_path / "absent"))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path))


def _sharded_model():
    with tf.device("/cpu:0"):
        a = tf.Variable(np.zeros((2, 3), np.float32), name="a")
        step = tf.Variable(np.int64(0), name="step")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.zeros(2), name="b")
        c = tf.Variable(np.zeros((1, 2), np.int32), name="c")
    return a, step, b, c


def test_sharded_checkpoints_one_data_file_per_device_as_tensorflow(graph, tmp_path):
    tf_prefix = os.path.join(FIXTURES, "tf_sharded_ckpt", "model")
    variables = _sharded_model()
    saver = tf.train.Saver(sharded=True)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        saver.restore(sess, tf_prefix)
        a, step, b, c = sess.run(variables)
        np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(b, [1.5, -2.5])
        np.testing.assert_array_equal(c, [[7, 8]])
        assert step == 5 and c.dtype == np.int32
        prefix = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    written = sorted(os.listdir(tmp_path))
    assert written == ["checkpoint", "model.data-00000-of-00002", "model.data-00001-of-00002", "model.index"]
    for name in written[1:]:  # the bytes TensorFlow's sharded Saver wrote for these variables
        with open(os.path.join(FIXTURES, "tf_sharded_ckpt", name), "rb") as theirs:
            assert open(os.path.join(prefix[:-len("model")], name), "rb").read() == theirs.read(), name

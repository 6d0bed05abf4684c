"""Checkpoint faults: a corrupted checkpoint is DataLossError, a dtype or
shape that does not match the variable is InvalidArgumentError; both name the checkpoint
(and the variable). (The checks live in graphrt/train/; these tests pin the behaviour from the
reliability side.)"""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def _saved(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.arange(4, dtype=np.float32), name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model"))
    return prefix


def _restore(prefix, dtype=tf.float32, shape=(4,)):
    g = tf.Graph()
    with g.as_default():
        tf.Variable(np.zeros(shape, dtype.as_numpy_dtype), name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_corrupted_checkpoint_is_data_loss(tmp_path, damage):
    prefix = _saved(tmp_path)
    import glob
    files = sorted(glob.glob(prefix + ".data-*")) or [prefix + ".npz"]
    with open(files[0], "r+b") as f:
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(data[: len(data) // 2] if damage == "truncate" else bytes(255 - b for b in data))
    with pytest.raises(errors.DataLossError) as raised:
        _restore(prefix)
    assert "model" in raised.value.message


def test_a_dtype_or_shape_mismatch_is_invalid_argument_naming_the_variable(tmp_path):
    prefix = _saved(tmp_path)
    with pytest.raises(errors.InvalidArgumentError) as raised:
        _restore(prefix, dtype=tf.float64)
    assert "v" in raised.value.message and "float" in raised.value.message
    with pytest.raises(errors.InvalidArgumentError) as raised:
        _restore(prefix, shape=(5,))
    assert "v" in raised.value.message

"""Fake quantization beyond the TensorFlow golden case (tests/tf1_programs/cases/fake_quant.py):
the nudge puts 0.0 on a level, errors name the node, per-channel ranges are checked."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.quantization.fake_quant import nudge


def test_the_nudged_range_has_zero_on_a_level():
    low, high, scale, _ = nudge(-0.3, 2.7, 0, 15)
    np.testing.assert_allclose([low, high, scale], [-0.4, 2.6, 0.2], rtol=1e-6)
    assert np.isclose(-low / scale, round(-low / scale))


def test_values_land_on_levels_and_zero_stays_zero(graph):
    x = tf.constant(np.linspace(-3, 3, 61, dtype=np.float32))
    y = tf.quantization.fake_quant_with_min_max_args(x, min=-1.0, max=2.0, num_bits=4)
    with tf.Session() as sess:
        got = sess.run(y)
    levels = (got - got.min()) / (3.0 / 15)
    np.testing.assert_allclose(levels, np.round(levels), atol=1e-4)
    assert got[30] == 0.0 and len(np.unique(got)) <= 16


def test_errors_name_the_node(graph):
    x = tf.constant([0.5])
    backwards = tf.quantization.fake_quant_with_min_max_args(x, min=1.0, max=0.0, name="backwards")
    one_bit = tf.quantization.fake_quant_with_min_max_vars(x, -1.0, 1.0, num_bits=1, name="one_bit")
    wrong_channels = tf.quantization.fake_quant_with_min_max_vars_per_channel(tf.zeros([2, 3]), [0.0, 0.0],
                                                                              [1.0, 1.0], name="channels")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="min has to be smaller than max, was: 1 >= 0") as e:
            sess.run(backwards)
        assert e.value.node == "backwards"
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits must be between 2 and 16, inclusive"):
            sess.run(one_bit)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"min and max must be vectors of the last "
                                                                 r"dimension of inputs \(3\)"):
            sess.run(wrong_channels)

"""Errors, messages and edge cases of the long-tail names that the golden case cannot show."""
import os
import warnings

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as s:
        yield s


def test_dynamic_partition_matches_numpy_and_reports_the_bad_entry(sess):
    rng = np.random.RandomState(0)
    data = rng.randn(4, 3, 2).astype(np.float32)
    parts = rng.randint(0, 3, size=(4, 3)).astype(np.int32)
    got = sess.run(tf.dynamic_partition(data, parts, 3))
    for i in range(3):
        np.testing.assert_array_equal(got[i], data[parts == i])
    p = tf.placeholder(tf.int32)
    op = tf.dynamic_partition([[1.0, 2.0], [3.0, 4.0]], p, 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"partitions\[1,0\] = 5 is not in \[0, 2\)"):
        sess.run(op, {p: [[0, 1], [5, 0]]})
    with pytest.raises(errors.InvalidArgumentError, match="data.shape must start with partitions.shape"):
        sess.run(op, {p: [0, 1, 1]})
    with pytest.raises(ValueError, match="less than minimum 1"):
        tf.dynamic_partition([1.0], [0], 0)


def test_dynamic_stitch_last_repeat_wins_and_errors(sess):
    st = tf.dynamic_stitch([[0, 1, 2], [2, 0]], [[1.0, 2.0, 3.0], [30.0, 10.0]])
    np.testing.assert_array_equal(sess.run(st), [10.0, 2.0, 30.0])
    assert st.shape.as_list() == [3]
    i = tf.placeholder(tf.int32)
    st2 = tf.dynamic_stitch([i], [[1.0, 2.0]])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] is out of range"):
        sess.run(st2, {i: [0, -3]})
    with pytest.raises(errors.InvalidArgumentError, match=r"data\[0\].shape = \[2\] does not start with"):
        sess.run(st2, {i: [[0, 1]]})
    with pytest.raises(TypeError):
        tf.dynamic_stitch([tf.constant([0], tf.int64)], [[1.0]])
    with pytest.raises(TypeError):
        tf.dynamic_stitch([[0], [1]], [tf.constant([1.0]), tf.constant([1])])
    empty = tf.dynamic_stitch([tf.zeros([0], tf.int32)], [tf.zeros([0, 2])])
    assert sess.run(empty).shape == (0, 2)


def test_parallel_dynamic_stitch_and_its_gradient_through_partition(sess):
    from graphrt.partition_stitch import parallel_dynamic_stitch
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    merged = parallel_dynamic_stitch([[2], [0, 1]], [x[:1], x[1:]])
    assert merged.op.type == "ParallelDynamicStitch"
    np.testing.assert_array_equal(sess.run(merged), [[3.0, 4.0], [5.0, 6.0], [1.0, 2.0]])
    a, b = tf.dynamic_partition(x, [1, 1, 0], 2)
    g = tf.gradients(tf.reduce_sum(b) * 3.0, x)[0]  # partition 0 unused: its rows get zeros
    np.testing.assert_array_equal(sess.run(g), [[3.0, 3.0], [3.0, 3.0], [0.0, 0.0]])


def test_invert_permutation_checks(sess):
    p = tf.placeholder(tf.int64)
    inv = tf.invert_permutation(p)
    np.testing.assert_array_equal(sess.run(inv, {p: [2, 0, 1]}), [1, 2, 0])
    with pytest.raises(errors.InvalidArgumentError, match="1 is duplicated in the input."):
        sess.run(inv, {p: [1, 1, 7]})  # the repeat comes before the out-of-range entry
    with pytest.raises(errors.InvalidArgumentError, match="7 is not between 0 and 3"):
        sess.run(inv, {p: [1, 7, 1]})
    with pytest.raises(TypeError):
        tf.invert_permutation(tf.constant([0.0, 1.0]))


def test_broadcast_shapes():
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1]), tf.TensorShape([5, 1, 1])).as_list() == [5, None, 1]
    assert tf.broadcast_static_shape(tf.TensorShape(None), tf.TensorShape([2])).ndims is None
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    with tf.Graph().as_default(), tf.Session() as s:
        np.testing.assert_array_equal(s.run(tf.broadcast_dynamic_shape(tf.constant([3, 1], tf.int64), [1, 4])),
                                      [3, 4])


def test_asserts_static_and_dynamic(sess):
    with pytest.raises(ValueError, match="must have rank in"):
        tf.assert_rank_in(tf.zeros([2]), [0, 2])
    with pytest.raises(TypeError, match='Expected "x" to be integer type'):
        tf.assert_integer(tf.constant(1.0), message="ints")
    with pytest.raises(ValueError, match="Expected scalar shape for"):
        tf.assert_scalar([1.0, 2.0])
    with pytest.raises(ValueError, match="must be of the same type"):
        tf.assert_same_float_dtype([tf.constant(1.0)], tf.float64)
    x = tf.placeholder(tf.float32)
    with tf.control_dependencies([tf.assert_near(x, 1.0, atol=0.5, message="not near")]):
        y = tf.identity(x)
    assert sess.run(y, {x: 1.2}) == pytest.approx(1.2)
    with pytest.raises(errors.InvalidArgumentError, match="not near"):
        sess.run(y, {x: 2.0})
    r = tf.placeholder(tf.int32)
    check = tf.assert_rank_in(tf.zeros([2, 2]), [r])
    sess.run(check, {r: 2})
    with pytest.raises(errors.InvalidArgumentError):
        sess.run(check, {r: 3})


def test_numerics_and_gradient_options(sess):
    x = tf.placeholder(tf.float32)
    v = tf.verify_tensor_all_finite(x, "inputs must be finite")
    with pytest.raises(errors.InvalidArgumentError, match="inputs must be finite : Tensor had NaN values"):
        sess.run(v, {x: [np.nan]})
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tf.gradients(x * 2.0, x, unconnected_gradients="ones")
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool)
        tf.cond(pred, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
        with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
            tf.add_check_numerics_ops()


def test_nest_flatten_up_to_and_keys():
    assert tf.nest.flatten_up_to([0, (1, 2)], [[1, 2], ("a", {"b": 3})]) == [[1, 2], "a", {"b": 3}]
    with pytest.raises(TypeError):
        tf.nest.flatten_up_to([0, 1], 0)
    packed = tf.nest.pack_sequence_as({"z": 1, "a": [2]}, [10, 20])
    assert list(packed) == ["z", "a"] and packed == {"z": 20, "a": [10]}
    with pytest.raises(ValueError, match="Only valid keyword arguments"):
        tf.nest.map_structure(lambda a: a, [1], bogus=True)


def test_error_codes_and_stat(tmp_path):
    assert tf.errors.error_code_from_exception_type(tf.errors.OutOfRangeError) == tf.errors.OUT_OF_RANGE
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert tf.errors.error_code_from_exception_type(ValueError) == tf.errors.UNKNOWN
    path = tmp_path / "f.bin"
    path.write_bytes(b"12345")
    st = tf.gfile.Stat(str(path))
    assert (st.length, st.is_directory) == (5, False) and st.mtime_nsec == os.stat(path).st_mtime_ns
    assert tf.io.gfile.stat(str(tmp_path)).is_directory
    with pytest.raises(errors.NotFoundError):
        tf.gfile.Stat(str(tmp_path / "missing"))


def test_io_aliases_and_timestamp(sess):
    assert tf.io.decode_png is tf.image.decode_png and tf.io.read_file is tf.read_file
    assert tf.io.RandomShuffleQueue is tf.RandomShuffleQueue
    t0, t1 = sess.run(tf.timestamp()), sess.run(tf.timestamp())
    assert t0.dtype == np.float64 and t1 >= t0


def test_nn_compositions_against_numpy(sess):
    rng = np.random.RandomState(1)
    t = rng.randn(5, 3).astype(np.float32)
    m, v, beta, gamma = (rng.rand(3).astype(np.float32) for _ in range(4))
    got = sess.run(tf.nn.batch_norm_with_global_normalization(t, m, v, beta, gamma, 1e-3, True))
    np.testing.assert_allclose(got, (t - m) / np.sqrt(v + 1e-3) * gamma + beta, rtol=1e-5)
    np.testing.assert_allclose(sess.run(tf.math.erfcinv([0.3, 1.0, 1.9])),
                               [0.7328690780, 0.0, -1.1630871537], rtol=1e-5)
    loss = sess.run(tf.nn.compute_average_loss([[1.0], [3.0]], sample_weight=[2.0, 1.0]))
    assert loss == pytest.approx(2.5)
    with pytest.raises(ValueError, match="must be 3, 4 or 5"):
        tf.nn.avg_pool_v2(tf.zeros([2, 2, 2, 2, 2, 2]), 2, 2, "SAME")
    with pytest.raises(ValueError, match="length 3, 4 or 5"):
        tf.nn.conv_transpose(tf.zeros([1, 2, 2]), tf.zeros([1, 2, 2]), [1, 2], 1)


def test_vectorized_map_and_space_to_batch_paddings(sess):
    out = tf.vectorized_map(lambda row: {"sum": tf.reduce_sum(row), "first": row[0]},
                            tf.constant([[1.0, 2.0], [3.0, 5.0]]))
    got = sess.run(out)
    np.testing.assert_array_equal(got["sum"], [3.0, 8.0])
    np.testing.assert_array_equal(got["first"], [1.0, 3.0])
    pads, crops = tf.required_space_to_batch_paddings([4, 5], [2, 2])
    np.testing.assert_array_equal(sess.run(pads), [[0, 0], [0, 1]])
    np.testing.assert_array_equal(sess.run(crops), [[0, 0], [0, 1]])
    empty_p, _ = tf.required_space_to_batch_paddings(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32))
    assert empty_p.shape.as_list() == [0, 2]

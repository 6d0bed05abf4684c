"""graphrt/array_extras and gather(batch_dims)/N-D boolean_mask: values against numpy,
gradients against finite differences, run-time errors (class, node, message) and
build-time errors."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors

from ..ops.gradcheck import check_gradients


def _run(fetches, feed=None, graph=None):
    with tf.Session(graph=graph or tf.get_default_graph()) as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# -- values against numpy ----------------------------------------------------------------------

def test_searchsorted_matches_numpy_per_row():
    rng = np.random.RandomState(0)
    seq = np.sort(rng.randint(0, 20, size=(3, 2, 15)), axis=-1).astype(np.float32)
    vals = rng.randint(-2, 22, size=(3, 2, 7)).astype(np.float32)
    left, right = _run([tf.searchsorted(seq, vals), tf.searchsorted(seq, vals, side="right", out_type=tf.int64)])
    for side, got in (("left", left), ("right", right)):
        want = np.array([[np.searchsorted(s, v, side=side) for s, v in zip(sr, vr)] for sr, vr in zip(seq, vals)])
        np.testing.assert_array_equal(got, want)
    assert right.dtype == np.int64


def test_histogram_fixed_width_matches_numpy_inside_the_range_and_clamps_outside():
    rng = np.random.RandomState(1)
    values = rng.uniform(0.0, 10.0, 1000)
    got = _run(tf.histogram_fixed_width(values, [0.0, 10.0], nbins=7))
    np.testing.assert_array_equal(got, np.histogram(values, bins=7, range=(0.0, 10.0))[0])
    outside = _run(tf.histogram_fixed_width([-5.0, 0.0, 10.0, 99.0], [0.0, 10.0], nbins=4))
    np.testing.assert_array_equal(outside, [2, 0, 0, 2])


def test_bitcast_is_numpy_view_both_ways():
    x = np.array([[1.5, -2.0], [3.25, 0.0]], np.float64)
    down = _run(tf.bitcast(x, tf.int16))
    assert down.shape == (2, 2, 4)
    np.testing.assert_array_equal(down.reshape(2, 8), x.view(np.int16))
    np.testing.assert_array_equal(_run(tf.bitcast(down, tf.float64)), x)


def test_tensor_scatter_nd_add_sums_repeated_indices_and_update_keeps_input():
    base = np.zeros((2, 3), np.float32)
    t = tf.constant(base)
    added = tf.tensor_scatter_nd_add(t, [[0, 1], [0, 1], [1, 2]], [1.0, 2.0, 5.0])
    np.testing.assert_array_equal(_run(added), [[0, 3, 0], [0, 0, 5]])
    whole = tf.tensor_scatter_nd_update(t, tf.zeros([1, 0], tf.int32), [np.ones((2, 3), np.float32)])
    np.testing.assert_array_equal(_run(whole), np.ones((2, 3)))
    np.testing.assert_array_equal(_run(t), base)


def test_gather_batch_dims_matches_take_along_axis():
    rng = np.random.RandomState(2)
    params = rng.randn(2, 3, 5, 4).astype(np.float32)
    idx = rng.randint(0, 5, size=(2, 3, 6))
    got = _run(tf.gather(params, idx, batch_dims=2))
    np.testing.assert_array_equal(got, np.take_along_axis(params, idx[..., None], axis=2))
    idx4 = np.minimum(idx[:, 0], 3)
    got_axis = _run(tf.gather(params, idx4, axis=3, batch_dims=1))
    want = np.stack([np.take(params[b], idx4[b], axis=2) for b in range(2)])
    np.testing.assert_array_equal(got_axis, want)


def test_boolean_mask_nd_matches_numpy():
    rng = np.random.RandomState(3)
    x = rng.randn(3, 4, 5).astype(np.float32)
    mask = rng.rand(4, 5) > 0.5
    got = _run(tf.boolean_mask(x, mask, axis=1))
    np.testing.assert_array_equal(got, x[:, mask])
    mask_ph = tf.placeholder(tf.bool, [None, None])
    out = tf.boolean_mask(x, mask_ph)
    assert out.shape.as_list() == [None, 5]
    np.testing.assert_array_equal(_run(out, {mask_ph: mask[:3, :4]}), x[mask[:3, :4]])


def test_unsorted_segment_prod_empty_segment_is_one_and_negative_ids_dropped():
    got = _run(tf.unsorted_segment_prod([2.0, 3.0, 4.0, 5.0], [0, -1, 0, 2], 4))
    np.testing.assert_array_equal(got, [8.0, 1.0, 5.0, 1.0])
    np.testing.assert_array_equal(_run(tf.segment_prod([2, 3, 4], [0, 2, 2])), [2, 1, 12])


def test_unique_with_counts_keeps_first_appearance_order():
    y, idx, count = _run(tf.unique_with_counts([3, 1, 3, 3, 2, 1]))
    np.testing.assert_array_equal(y, [3, 1, 2])
    np.testing.assert_array_equal(idx, [0, 1, 0, 0, 2, 1])
    np.testing.assert_array_equal(count, [3, 2, 1])


def test_saturate_cast_clamps_float_to_int_limits():
    got = _run(tf.saturate_cast([-1e20, 1e20, 7.9], tf.int16))
    np.testing.assert_array_equal(got, [-32768, 32767, 7])


# -- gradients -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_add, tf.tensor_scatter_nd_sub,
                                tf.tensor_scatter_nd_min, tf.tensor_scatter_nd_max])
def test_tensor_scatter_gradients(fn):
    rng = np.random.RandomState(4)
    check_gradients(lambda t, u: fn(t, [[0, 1], [2, 0]], u), rng.randn(3, 2), rng.randn(2))


def test_segment_prod_gradients_with_and_without_zeros():
    data = np.array([[1.5, 2.0], [0.0, 3.0], [2.0, 0.5], [0.7, 1.2]])
    check_gradients(lambda d: tf.segment_prod(d, [0, 0, 1, 1]), data)
    check_gradients(lambda d: tf.unsorted_segment_prod(d, [1, 0, 1, -1], 2), data)


def test_gather_batch_dims_gradient():
    rng = np.random.RandomState(5)
    check_gradients(lambda p: tf.gather(p, [[1, 1, 0], [2, 0, 0]], axis=2, batch_dims=1), rng.randn(2, 2, 3))


# -- errors --------------------------------------------------------------------------------------

def test_ensure_shape_error_names_the_node():
    x = tf.placeholder(tf.float32, [None])
    y = tf.ensure_shape(x, [3], name="checked")
    assert y.shape.as_list() == [3]
    with pytest.raises(errors.InvalidArgumentError) as info:
        _run(y, {x: np.zeros(4, np.float32)})
    assert "checked" in str(info.value) and "[4]" in str(info.value) and "[3]" in str(info.value)


def test_ensure_shape_incompatible_static_shape_is_a_value_error():
    with pytest.raises(ValueError):
        tf.ensure_shape(tf.zeros([2, 3]), [2, 4])


def test_tensor_scatter_out_of_range_index_is_invalid_argument():
    idx = tf.placeholder(tf.int32, [None, 1])
    with pytest.raises(errors.InvalidArgumentError, match="does not index into"):
        _run(tf.tensor_scatter_nd_add(tf.zeros([3]), idx, [1.0]), {idx: [[3]]})


def test_variable_scatter_nd_out_of_range_and_uninitialized():
    v = tf.Variable([1.0, 2.0])
    bad = tf.scatter_nd_update(v, [[2]], [5.0])
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(bad)
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(bad)
        np.testing.assert_array_equal(sess.run(tf.scatter_nd_add(v, [[1]], [5.0])), [1.0, 7.0])


def test_build_time_errors():
    with pytest.raises(ValueError, match="side"):
        tf.searchsorted([1.0], [1.0], side="middle")
    with pytest.raises(ValueError, match="due to shape"):
        tf.bitcast(tf.zeros([2, 3], tf.uint8), tf.int32)
    with pytest.raises(ValueError):
        tf.tensor_scatter_nd_update(tf.zeros([3, 2]), [[0]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="batch_dims"):
        tf.gather(tf.zeros([2, 3]), tf.zeros([2, 2, 2], tf.int32), batch_dims=2)
    with pytest.raises(ValueError, match="scalar"):
        tf.boolean_mask(tf.zeros([2]), True)
    with pytest.raises(TypeError):
        tf.gather(tf.zeros([2, 3]), [[0]], batch_dims=1.0)


def test_histogram_and_unravel_run_time_errors():
    nbins = tf.placeholder(tf.int32, [])
    with pytest.raises(errors.InvalidArgumentError, match="nbins"):
        _run(tf.histogram_fixed_width([1.0], [0.0, 2.0], nbins), {nbins: 0})
    with pytest.raises(errors.InvalidArgumentError):
        _run(tf.unravel_index(tf.placeholder_with_default([6], [None]), [2, 3]))

"""0-d values take Python operators instead of ufuncs in the elementwise and
AddN kernels (ops/math_kernels.py): the values and dtypes must be exactly
what the ufuncs give."""
import numpy as np
import pytest

import graphrt as tf


def _run(fetches, feed=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_binary_scalars_keep_dtype_and_value(dtype):
    with tf.Graph().as_default():
        a = tf.placeholder(dtype, [])
        b = tf.placeholder(dtype, [])
        c = tf.constant(dtype(3))
        outs = [a + b, a - b, a * b, a < b, a <= b, a > b, a >= b, tf.equal(a, b), tf.not_equal(a, b),
                -a, (a + c) * c]
        x, y = dtype(7), dtype(2)
        got = _run(outs, {a: x, b: y})
    want = [np.add(x, y), np.subtract(x, y), np.multiply(x, y), np.less(x, y), np.less_equal(x, y),
            np.greater(x, y), np.greater_equal(x, y), np.equal(x, y), np.not_equal(x, y), np.negative(x),
            np.multiply(np.add(x, dtype(3)), dtype(3))]
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert g == w


def test_float32_scalar_rounding_matches_ufunc():
    x, y = np.float32(16777216.0), np.float32(1.0)  # 2**24 + 1 is not a float32
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [])
        b = tf.placeholder(tf.float32, [])
        s = a + b
        got = _run(s, {a: x, b: y})
    assert np.asarray(got).dtype == np.float32 and got == np.float32(16777216.0)


def test_int32_scalar_overflow_wraps_like_ufunc():
    big = np.int32(2 ** 31 - 1)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.int32, [])
        got = _run([a + 1, a * 2], {a: big})
    assert np.asarray(got[0]).dtype == np.int32 and got[0] == np.int32(-2 ** 31)
    assert got[1] == np.int32(-2)


def test_add_n_of_scalars_sums_in_order_in_float32():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(300).astype(np.float32) * np.float32(1e4)
    with tf.Graph().as_default():
        ps = [tf.placeholder(tf.float32, []) for _ in values]
        total = tf.add_n(ps)
        got = _run(total, dict(zip(ps, values)))
    want = values[0]
    for v in values[1:]:
        want = np.add(want, v, dtype=np.float32)
    assert np.asarray(got).dtype == np.float32
    assert got == want  # sequential float32 sums, not numpy's pairwise reduction


def test_add_n_of_arrays_unchanged():
    with tf.Graph().as_default():
        xs = [tf.constant(np.full([2, 3], k, np.float32)) for k in range(4)]
        got = _run(tf.add_n(xs))
    np.testing.assert_array_equal(got, np.full([2, 3], 6, np.float32))
    assert got.dtype == np.float32

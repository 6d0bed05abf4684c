"""The elementwise math beyond the basic ops against numpy and finite differences: the
trigonometric and hyperbolic functions and their inverses, erfc, rint, truncatemod, floor_div,
xlogy/xdivy/xlog1py, multiply_no_nan, nextafter and tf.bitwise (TensorFlow's values for the
same programs: tests/tf1_programs/cases/elementwise_extra.py)."""
import math

import numpy as np
import pytest

import graphrt as tf
from tests.helpers import run
from tests.ops.gradcheck import check_gradients

RNG = np.random.RandomState(7)

UNARY = [("tan", np.tan, (-1.2, 1.2)), ("asin", np.arcsin, (-0.9, 0.9)), ("acos", np.arccos, (-0.9, 0.9)),
         ("atan", np.arctan, (-3, 3)), ("sinh", np.sinh, (-3, 3)), ("cosh", np.cosh, (-3, 3)),
         ("asinh", np.arcsinh, (-3, 3)), ("acosh", np.arccosh, (1.1, 4)), ("atanh", np.arctanh, (-0.9, 0.9)),
         ("erfc", np.vectorize(math.erfc), (-3, 3))]


@pytest.mark.parametrize("name, ref, domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values_and_gradients(graph, name, ref, domain):
    x = RNG.uniform(*domain, size=(3, 4))
    for dt in (np.float32, np.float64):
        got = run(getattr(tf, name)(tf.constant(x.astype(dt))))
        assert got.dtype == dt
        np.testing.assert_allclose(got, ref(x.astype(dt)), rtol=2e-6 if dt == np.float32 else 1e-12)
    check_gradients(getattr(tf, name), x, rtol=1e-4)


def test_domain_edges(graph):
    one = tf.constant([-1.0, 1.0, 2.0])
    asin, acos, acosh, atanh = run([tf.asin(one), tf.acos(one), tf.acosh(one), tf.atanh(one)])
    np.testing.assert_allclose(asin[:2], [-np.pi / 2, np.pi / 2])
    np.testing.assert_allclose(acos[:2], [np.pi, 0], atol=1e-7)
    assert np.isnan(asin[2]) and np.isnan(acos[2]) and np.isnan(acosh[0]) and acosh[1] == 0
    assert list(atanh[:2]) == [-np.inf, np.inf] and np.isnan(atanh[2])


def test_rint_rounds_half_to_even(graph):
    np.testing.assert_array_equal(run(tf.rint([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])), [-2, -2, -0, 0, 2, 2])


@pytest.mark.parametrize("name", ["atan2", "xlogy", "xdivy", "xlog1py", "multiply_no_nan", "nextafter"])
def test_broadcasting_binary_gradients(graph, name):
    fn = getattr(tf.math, name)
    m = RNG.uniform(0.5, 2.0, size=(2, 3))
    v = RNG.uniform(0.5, 2.0, size=(3,))
    check_gradients(fn, m, v, rtol=1e-4)
    check_gradients(fn, v, m, rtol=1e-4)


def test_zero_guards(graph):
    nan, inf = np.nan, np.inf
    x = tf.constant([0.0, 0.0, 0.0, 1.0, 2.0])
    y = tf.constant([0.0, nan, -1.0, 0.0, -1.0])
    xlogy, xdivy, xlog1py = run([tf.math.xlogy(x, y), tf.math.xdivy(x, y), tf.math.xlog1py(x, y)])
    np.testing.assert_array_equal(xlogy, [0, 0, 0, -inf, nan])
    np.testing.assert_array_equal(xdivy, [0, 0, 0, inf, -2])
    np.testing.assert_array_equal(xlog1py, [0, 0, 0, 0, -inf])
    mnn = run(tf.math.multiply_no_nan([nan, inf, 0.0, 0.0, 2.0], [0.0, 0.0, inf, nan, inf]))
    np.testing.assert_array_equal(mnn, [0, 0, nan, nan, inf])
    np.testing.assert_array_equal(run(tf.math.reciprocal_no_nan([2.0, 0.0, -4.0])), [0.5, 0.0, -0.25])


def test_scalars_take_the_same_kernels(graph):
    # 0-d inputs (numpy scalars in the executor) give 0-d results of the same dtype
    vals = run([tf.tan(np.float32(0.5)), tf.atan2(np.float64(1.0), np.float64(-1.0)),
                tf.math.xlogy(np.float32(0.0), np.float32(0.0)), tf.bitwise.left_shift(np.int32(3), np.int32(2)),
                tf.math.nextafter(np.float32(1.0), np.float32(2.0)), tf.truncatemod(np.int32(-7), np.int32(3))])
    assert [np.asarray(v).dtype for v in vals] == [np.float32, np.float64, np.float32, np.int32, np.float32,
                                                   np.int32]
    assert [np.ndim(v) for v in vals] == [0] * 6
    assert vals[2] == 0 and vals[3] == 12 and vals[4] == np.nextafter(np.float32(1), np.float32(2))
    assert vals[5] == -1


def test_truncatemod_and_floor_div(graph):
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([3, 3, -3, -3], np.int32)
    tm, fd = run([tf.truncatemod(a, b), tf.floor_div(a, b)])
    np.testing.assert_array_equal(tm, np.fmod(a, b))
    np.testing.assert_array_equal(fd, np.floor_divide(a, b))
    # TF's FloorDiv of floats is floor(x / y)
    np.testing.assert_array_equal(run(tf.floor_div([1.0, -2.0, np.inf], [0.1, np.inf, -2.0])), [10.0, -0.0, -np.inf])
    with pytest.raises(tf.errors.InternalError):
        run(tf.truncatemod([1, 2], [1, 0]))
    with pytest.raises(LookupError, match="TruncateMod"):
        x = tf.constant([1.0])
        tf.gradients(tf.truncatemod(x, x), x)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitwise(graph, dt):
    info = np.iinfo(dt)
    x = RNG.randint(info.min, int(info.max) + 1, size=20, dtype=dt)
    y = RNG.randint(info.min, int(info.max) + 1, size=20, dtype=dt)
    bits = np.iinfo(dt).bits
    s = (np.arange(20) % bits).astype(dt)
    got = run([tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y), tf.bitwise.bitwise_xor(x, y),
               tf.bitwise.invert(x), tf.bitwise.left_shift(x, s), tf.bitwise.right_shift(x, s)])
    want = [x & y, x | y, x ^ y, ~x, np.left_shift(x, s), np.right_shift(x, s)]
    for g, w in zip(got, want):
        assert g.dtype == dt
        np.testing.assert_array_equal(g, w)


def test_shift_amounts_out_of_range_are_clamped_as_tf_does(graph):
    # TF clamps the amount to [0, bits - 1]; such shifts never crash
    left = tf.bitwise.left_shift(tf.constant([1, 1, 1, 5], tf.int8), tf.constant([8, -1, 100, -128], tf.int8))
    right = tf.bitwise.right_shift(tf.constant([-128, 64, -5, 64], tf.int8), tf.constant([8, 9, 100, -1], tf.int8))
    big = tf.bitwise.right_shift(tf.constant([2**62], tf.int64), tf.constant([2**40], tf.int64))
    l, r, b = run([left, right, big])
    np.testing.assert_array_equal(l, [-128, 1, -128, 5])
    np.testing.assert_array_equal(r, [-1, 0, -1, 64])
    np.testing.assert_array_equal(b, [0])


def test_types_rejected_at_build(graph):
    i = tf.constant([1, 2])
    for fn in (tf.tan, tf.asin, tf.erfc, tf.rint, tf.log_sigmoid, tf.math.reciprocal_no_nan):
        with pytest.raises(TypeError):
            fn(i)
    for fn in (tf.atan2, tf.math.xlogy, tf.math.multiply_no_nan, tf.math.nextafter):
        with pytest.raises(TypeError):
            fn(i, i)
    with pytest.raises(TypeError):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([1.0]))
    with pytest.raises(ValueError, match="0-D"):
        tf.scalar_mul([1.0, 2.0], tf.constant([1.0, 2.0]))


def test_scalar_mul_of_indexed_slices(graph):
    params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    g = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0])), params)[0]
    scaled = tf.scalar_mul(3.0, g)
    assert isinstance(scaled, tf.IndexedSlices)
    np.testing.assert_array_equal(run(tf.convert_to_tensor(scaled)), [[3, 3], [0, 0], [3, 3]])


def test_complex_parts(graph):
    z = np.array([1 + 2j, -3 - 4j], np.complex64)
    re, im, ang, cj = run([tf.real(z), tf.imag(z), tf.angle(z), tf.conj(z)])
    assert re.dtype == im.dtype == ang.dtype == np.float32 and cj.dtype == np.complex64
    np.testing.assert_allclose(ang, np.angle(z), rtol=1e-6)
    np.testing.assert_array_equal(cj, np.conj(z))
    x = tf.constant([-1.0, 0.0, 2.0])
    assert tf.real(x) is x and tf.conj(x) is x
    np.testing.assert_array_equal(run(tf.angle(x)), np.float32([np.pi, 0, 0]))

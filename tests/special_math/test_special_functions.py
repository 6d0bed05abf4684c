"""The special functions (graphrt/special_math) against references we can trust:
Python's math module, closed forms, recurrences, reflection formulas, inverses,
and integrals that the trapezoid rule computes to machine precision; through the
graph, dtypes, broadcasting and gradients (finite differences)."""
import math

import numpy as np
import pytest

import graphrt as tf
from graphrt.special_math import functions as F

from ..ops.gradcheck import check_gradients

EULER = 0.5772156649015329


def _run(t, feed=None):
    with tf.Session(graph=t.graph) as sess:
        return sess.run(t, feed)


def _off_integers(x, gap=1e-3):
    return x[np.abs(x - np.round(x)) > gap]


# -- lgamma, digamma, polygamma, zeta -------------------------------------------------------

def test_lgamma_matches_math_lgamma_on_random_points():
    rng = np.random.RandomState(1)
    x = _off_integers(np.concatenate([rng.uniform(-50, 50, 2000), np.exp(rng.uniform(-20, 60, 500))]))
    want = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(F.lgamma(x), want, rtol=1e-15, atol=0)


def test_lgamma_poles_and_infinities_are_inf():
    assert np.all(F.lgamma(np.array([0.0, -0.0, -1.0, -7.0, np.inf, -np.inf])) == np.inf)
    assert np.isnan(F.lgamma(np.array([np.nan])))[0]


def test_digamma_recurrence_and_reflection():
    rng = np.random.RandomState(2)
    x = _off_integers(rng.uniform(-40, 40, 5000))
    psi = F.digamma(x)
    scale = np.maximum(1.0, np.abs(psi))
    assert np.max(np.abs(F.digamma(x + 1) - psi - 1 / x) / scale) < 1e-13
    cot = np.pi / np.tan(np.pi * (x - np.round(x)))  # pi cot(pi x), reduced exactly
    refl = F.digamma(1 - x) - psi - cot
    assert np.max(np.abs(refl) / np.maximum(scale, np.abs(cot))) < 1e-13


def test_digamma_known_values_and_poles():
    got = F.digamma(np.array([1.0, 0.5, 2.0, 1e-8, 1e12]))
    want = [-EULER, -EULER - 2 * math.log(2), 1 - EULER, -1e8 - EULER, math.log(1e12) - 0.5e-12]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert np.all(np.isnan(F.digamma(np.array([0.0, -1.0, -5.0, -np.inf, np.nan]))))
    assert F.digamma(np.array([np.inf]))[0] == np.inf


def test_digamma_is_the_derivative_of_lgamma():
    rng = np.random.RandomState(3)
    x = _off_integers(rng.uniform(-10, 30, 300), 0.05)
    h = 1e-5
    num = (F.lgamma(x + h) - F.lgamma(x - h)) / (2 * h)  # of log|Gamma|: also right for negative x
    np.testing.assert_allclose(F.digamma(x), num, rtol=1e-6, atol=1e-6)


def test_zeta_closed_forms_and_recurrence():
    rng = np.random.RandomState(4)
    assert F.zeta(2.0, 1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert F.zeta(4.0, 1.0) == pytest.approx(math.pi ** 4 / 90, rel=1e-15)
    assert F.zeta(2.0, 0.5) == pytest.approx(math.pi ** 2 / 2, rel=1e-15)  # (2^s - 1) zeta(s)
    assert F.zeta(3.0, 1.0) == pytest.approx(1.2020569031595942, rel=1e-15)
    x = rng.uniform(1.05, 30, 3000)
    q = np.exp(rng.uniform(-5, 8, 3000))
    z = F.zeta(x, q)
    assert np.all(np.abs(z - F.zeta(x, q + 1) - q ** -x) <= 1e-14 * z)  # the difference cancels: relative to z
    # direct sum for large q against the computed value (tail by the integral)
    assert F.zeta(2.0, 1e6) == pytest.approx(1 / 1e6 + 0.5 / 1e12, rel=1e-12)


def test_zeta_domain():
    got = F.zeta(np.array([1.0, 0.5, 2.0, 2.0, 3.0, 2.5, 2.0]), np.array([1.0, 1.0, 0.0, -1.0, -2.0, -1.5, np.inf]))
    np.testing.assert_array_equal(got, [np.inf, np.nan, np.inf, np.inf, np.nan, np.nan, 0.0])


def test_zeta_and_polygamma_edges_as_tensorflow_gives_them():
    # TensorFlow 2.21's values: x < 1 is NaN before the poles of q <= 0; inf and orders past 2**53
    # count as even integers, and n! * zeta(n + 1, x) overflows to inf with a positive sign.
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, 0.0, 0.5, 0.5, -3.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, inf, inf, inf])
    q = np.array([0.0, 0.0, -1.0, -2.0, 1.0, 2.0, nan, -1.0, -2.0, -1.0, -2.5, -3.0, 1.0, 2.0, 0.5])
    np.testing.assert_allclose(F.zeta(x, q), [nan, nan, nan, nan, nan, nan, inf, inf, inf, inf, 9.539246644989124,
                                              nan, 1.0, 0.0, inf], rtol=1e-15)
    n = np.array([inf, inf, inf, inf, inf, 1e30, 1e30, 3e30, 2.0, 3.0, 1.0, -1.0, inf, 5.0])
    x = np.array([0.0, 1.0, 0.5, 1.5, -0.5, 1.0, -0.5, 2.0, -2.5, 0.0, -3.0, 1.0, nan, inf])
    np.testing.assert_allclose(F.polygamma(n, x), [inf, inf, inf, nan, inf, inf, inf, nan, -0.1082040516417282,
                                                   inf, inf, nan, nan, 0.0], rtol=1e-14)


def test_polygamma_relations():
    rng = np.random.RandomState(5)
    x = rng.uniform(0.05, 50, 2000)
    np.testing.assert_allclose(F.polygamma(np.zeros_like(x), x), F.digamma(x), rtol=0, atol=0)
    for n in (1.0, 2.0, 3.0, 5.0):
        # psi_n(x) - psi_n(x + 1) = (-1)^(n+1) n! / x^(n+1)
        want = (-1) ** (n + 1) * math.factorial(int(n)) / x ** (n + 1)
        np.testing.assert_allclose(F.polygamma(n, x) - F.polygamma(n, x + 1), want, rtol=1e-11)
    assert F.polygamma(1.0, 1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert F.polygamma(1.0, 0.5) == pytest.approx(math.pi ** 2 / 2, rel=1e-15)
    h = 1e-5
    xs = rng.uniform(0.5, 10, 200)
    np.testing.assert_allclose(F.polygamma(1.0, xs), (F.digamma(xs + h) - F.digamma(xs - h)) / (2 * h), rtol=1e-7)
    assert np.all(np.isnan(F.polygamma(np.array([1.5, -1.0, np.nan]), np.array([1.0, 1.0, 1.0]))))


# -- incomplete gamma and beta -----------------------------------------------------------------

def test_igamma_closed_forms():
    rng = np.random.RandomState(6)
    x = np.exp(rng.uniform(-8, 5, 2000))
    np.testing.assert_allclose(F.igamma(1.0, x), -np.expm1(-x), rtol=1e-13)
    np.testing.assert_allclose(F.igamma(0.5, x), [math.erf(math.sqrt(v)) for v in x], rtol=1e-13)
    np.testing.assert_allclose(F.igammac(0.5, x), [math.erfc(math.sqrt(v)) for v in x], rtol=1e-12, atol=1e-300)
    for n in (2, 5, 11):
        want = np.exp(-x) * sum(x ** k / math.factorial(k) for k in range(n))  # Q(n, x)
        np.testing.assert_allclose(F.igammac(float(n), x), want, rtol=1e-12, atol=1e-300)


def test_igamma_recurrence_and_complement():
    rng = np.random.RandomState(7)
    a = np.exp(rng.uniform(-4, 5, 3000))
    x = np.exp(rng.uniform(-6, 5.5, 3000))
    p = F.igamma(a, x)
    np.testing.assert_allclose(p + F.igammac(a, x), 1.0, rtol=0, atol=2e-15)
    step = np.exp(a * np.log(x) - x - F.lgamma(a + 1))
    np.testing.assert_allclose(F.igamma(a + 1, x), p - step, rtol=1e-11, atol=1e-14)


def test_igamma_edges():
    a = np.array([0.0, -1.0, 1.0, 1.0, 1.0, np.inf, 2.0])
    x = np.array([1.0, 1.0, -1.0, 0.0, np.inf, 1.0, 0.0])
    np.testing.assert_array_equal(F.igamma(a, x), [np.nan, np.nan, np.nan, 0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(F.igammac(a, x), [np.nan, np.nan, np.nan, 1.0, 0.0, 1.0, 1.0])


def test_igamma_grad_a_matches_finite_differences():
    rng = np.random.RandomState(8)
    a = np.exp(rng.uniform(-2, 4, 1000))
    x = np.exp(rng.uniform(-4, 4.5, 1000))
    h = 1e-5 * a
    num = (F.igamma(a + h, x) - F.igamma(a - h, x)) / (2 * h)
    np.testing.assert_allclose(F.igamma_grad_a(a, x), num, rtol=1e-5, atol=1e-9)


def test_betainc_closed_forms_and_symmetry():
    rng = np.random.RandomState(9)
    a = np.exp(rng.uniform(-3, 4, 2000))
    b = np.exp(rng.uniform(-3, 4, 2000))
    x = rng.uniform(0, 1, 2000)
    np.testing.assert_allclose(F.betainc(a, 1.0, x), x ** a, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(F.betainc(1.0, b, x), -np.expm1(b * np.log1p(-x)), rtol=1e-12)
    np.testing.assert_allclose(F.betainc(a, b, x) + F.betainc(b, a, 1 - x), 1.0, atol=1e-14)
    for m, n in ((2, 3), (5, 5), (7, 2)):
        total = m + n - 1
        want = sum(math.comb(total, j) * x ** j * (1 - x) ** (total - j) for j in range(m, total + 1))
        np.testing.assert_allclose(F.betainc(float(m), float(n), x), want, rtol=1e-11, atol=1e-15)
    got = F.betainc(np.array([0.0, 1.0, 1.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0, 2.0]),
                    np.array([0.5, 0.0, 1.0, 1.5, np.nan]))
    np.testing.assert_array_equal(got, [np.nan, 0.0, 1.0, np.nan, np.nan])


# -- erfinv, ndtri -------------------------------------------------------------------------------

def test_erfinv_inverts_erf():
    rng = np.random.RandomState(10)
    y = np.concatenate([rng.uniform(-1, 1, 20000), 1 - 10.0 ** -rng.uniform(1, 15.9, 500)])
    x = F.erfinv(y)
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=0, atol=2.3e-16)
    tail = y > 0.5  # there the inverse is exact up to the rounding of erfc
    np.testing.assert_allclose([math.erfc(v) for v in x[tail]], 1 - y[tail], rtol=1e-13)
    np.testing.assert_allclose(F.erfinv(-y), -x, rtol=0, atol=0)
    assert F.erfinv(np.array([1e-300]))[0] == pytest.approx(math.sqrt(math.pi) / 2 * 1e-300, rel=1e-15)
    np.testing.assert_array_equal(F.erfinv(np.array([1.0, -1.0, 1.5, -2.0, np.nan])),
                                  [np.inf, -np.inf, np.nan, np.nan, np.nan])


def test_ndtri_inverts_the_normal_cdf():
    rng = np.random.RandomState(11)
    p = np.concatenate([10.0 ** -rng.uniform(0.3, 300, 2000), rng.uniform(0, 1, 2000)])
    z = F.ndtri(p)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in z])
    np.testing.assert_allclose(cdf, p, rtol=1e-12)
    q = rng.uniform(0.5, 1 - 1e-15, 2000)
    np.testing.assert_allclose(F.ndtri(q), -F.ndtri(1 - q), rtol=1e-9)  # 1 - q rounds
    np.testing.assert_array_equal(F.ndtri(np.array([0.0, 1.0, 0.5, -0.1, 1.1])), [-np.inf, np.inf, 0.0, np.nan, np.nan])


# -- Bessel ----------------------------------------------------------------------------------------

def _bessel_integral(x, nu, n=4096):
    """exp(-|x|) I_nu(|x|) = (1/pi) int_0^pi exp(|x| (cos t - 1)) cos(nu t) dt (trapezoid: spectral)."""
    t = np.linspace(0, np.pi, n + 1)
    w = np.full(n + 1, np.pi / n)
    w[[0, -1]] /= 2
    ax = np.abs(x)[:, None]
    return (np.exp(ax * (np.cos(t) - 1)) * np.cos(nu * t)) @ w / np.pi


@pytest.mark.parametrize("nu", [0, 1])
def test_bessel_ie_match_their_integrals(nu):
    rng = np.random.RandomState(12)
    x = np.concatenate([rng.uniform(-60, 60, 1500), np.linspace(19.5, 20.5, 101), [0.0, 1e-5, 300.0]])
    got = F.bessel_i0e(x) if nu == 0 else F.bessel_i1e(x)
    want = _bessel_integral(x, nu) * (np.sign(x) if nu == 1 else 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)  # the integral of I1 cancels near 0


def test_bessel_ie_edges_and_large_arguments():
    big = np.array([1e3, 1e6, 1e12])
    np.testing.assert_allclose(F.bessel_i0e(big), 1 / np.sqrt(2 * np.pi * big) * (1 + 1 / (8 * big)), rtol=1e-6)
    np.testing.assert_array_equal(F.bessel_i0e(np.array([0.0, np.inf, -np.inf])), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(F.bessel_i1e(np.array([0.0, np.inf, -np.inf])), [0.0, 0.0, 0.0])
    assert np.isnan(F.bessel_i0e(np.array([np.nan])))[0]


# -- through the graph ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_ops_keep_the_dtype_and_shape(dtype):
    x = tf.placeholder(dtype, [None, 3])
    outs = [tf.lgamma(x), tf.digamma(x), tf.math.erfinv(x * 0.1), tf.math.ndtri(x * 0.1),
            tf.math.bessel_i0e(x), tf.math.bessel_i1e(x), tf.igamma(x, x), tf.igammac(x, 2.0)]
    for o in outs:
        assert o.dtype == dtype and o.shape.as_list() == [None, 3]
    with tf.Session(graph=x.graph) as sess:
        vals = sess.run(outs, {x: np.array([[1.0, 2.0, 5.0]] * 2)})
    assert all(v.dtype == dtype.as_numpy_dtype and v.shape == (2, 3) for v in vals)
    np.testing.assert_allclose(vals[0][0].astype(np.float64), [0.0, 0.0, math.log(24)], atol=2e-3)


def test_float_double_only_ops_reject_half_and_ints():
    h = tf.constant([1.0], dtype=tf.float16)
    for fn in (lambda: tf.polygamma(h, h), lambda: tf.zeta(h, h), lambda: tf.math.betainc(h, h, h),
               lambda: tf.lgamma(tf.constant([1, 2]))):
        with pytest.raises(TypeError):
            fn()


def test_betainc_shapes_and_broadcast_of_binary_ops():
    with tf.Graph().as_default():
        assert tf.math.betainc(1.0, tf.ones([2, 3]), 0.5).shape.as_list() == [2, 3]
        with pytest.raises(ValueError):
            tf.math.betainc(tf.ones([2]), tf.ones([3]), 0.5)
        z = tf.igamma(tf.ones([4, 1]), tf.ones([3]))
        assert z.shape.as_list() == [4, 3]


def test_exports():
    for name in ("lgamma", "digamma", "polygamma", "zeta", "igamma", "igammac", "lbeta", "betainc"):
        assert getattr(tf, name) is getattr(tf.math, name)
    for name in ("erfinv", "ndtri", "bessel_i0e", "bessel_i1e", "bessel_i0", "bessel_i1"):
        assert callable(getattr(tf.math, name))
        assert not hasattr(tf, name)


def test_lbeta_and_bessel_compositions():
    with tf.Graph().as_default():
        x = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])
        want = [sum(math.lgamma(v) for v in row) - math.lgamma(sum(row)) for row in x]
        np.testing.assert_allclose(_run(tf.lbeta(tf.constant(x))), want, rtol=1e-14)
        assert np.all(_run(tf.lbeta(tf.zeros([2, 0], tf.float64))) == -np.inf)
        v = np.array([-3.0, 0.5, 10.0])
        np.testing.assert_allclose(_run(tf.math.bessel_i0(tf.constant(v))), _bessel_integral(v, 0) * np.exp(np.abs(v)),
                                   rtol=1e-13)


@pytest.mark.parametrize("fn, arrays, wrt", [
    (tf.lgamma, [np.array([-2.5, 0.3, 1.7, 9.0])], None),
    (tf.digamma, [np.array([-2.5, 0.3, 1.7, 9.0])], None),
    (lambda x: tf.polygamma(tf.constant(2.0, tf.float64), x), [np.array([0.4, 1.7, 9.0])], None),
    (lambda q: tf.zeta(tf.constant([2.0, 3.5, 5.0], tf.float64), q), [np.array([0.4, 1.7, 9.0])], None),
    (tf.igamma, [np.array([0.5, 2.0, 7.0, 3.0]), np.array([0.3, 4.0, 5.0, 0.1])], None),
    (tf.igammac, [np.array([[0.5], [2.0]]), np.array([0.3, 4.0, 5.0])], None),
    (lambda x: tf.math.betainc(tf.constant([0.5, 2.0, 3.0], tf.float64),
                               tf.constant([1.5, 1.0, 4.0], tf.float64), x), [np.array([0.2, 0.5, 0.9])], None),
    (tf.math.erfinv, [np.array([-0.95, -0.3, 0.1, 0.8])], None),
    (tf.math.ndtri, [np.array([0.01, 0.3, 0.6, 0.99])], None),
    (tf.math.bessel_i0e, [np.array([-3.0, -0.4, 0.7, 25.0])], None),
    (tf.math.bessel_i1e, [np.array([-3.0, -0.4, 0.7, 25.0])], None),
    (tf.math.bessel_i0, [np.array([-3.0, -0.4, 0.7, 5.0])], None),
    (tf.math.bessel_i1, [np.array([-3.0, -0.4, 0.7, 5.0])], None),
    (tf.lbeta, [np.array([[0.5, 2.0, 3.0], [1.5, 4.0, 0.2]])], None),
])
def test_gradients_match_finite_differences(fn, arrays, wrt):
    check_gradients(fn, *arrays, wrt=wrt, rtol=1e-5, atol=1e-7)


def test_no_gradient_for_polygamma_order_zeta_x_and_betainc_ab_as_tf():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0], tf.float64)
        x = tf.constant([0.5, 1.5], tf.float64)
        assert tf.gradients(tf.polygamma(a, x), [a]) == [None]
        assert tf.gradients(tf.zeta(a + 1.0, x), [a]) == [None]
        assert tf.gradients(tf.math.betainc(a, a, x * 0.5), [a]) == [None]
        da, = tf.gradients(tf.igamma(a, x), [a])
        np.testing.assert_allclose(_run(da), F.igamma_grad_a(np.array([1.0, 2.0]), np.array([0.5, 1.5])))

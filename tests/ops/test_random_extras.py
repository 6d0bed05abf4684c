"""Gamma/Poisson draws, the gamma gradient and the stateless random ops:
errors at build and run time, determinism, and the gradient against a finite
difference of the gamma quantile."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.special_math import functions


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_random_gamma_grad_matches_finite_difference_of_the_quantile():
    """d x / d alpha at fixed u = P(alpha, x): solve P(alpha + h, x') = u by bisection."""
    alpha, sample = np.array([0.3, 1.0, 4.0, 25.0]), np.array([0.05, 0.7, 3.1, 30.0])
    with tf.Graph().as_default():
        from graphrt.framework.op_builder import apply_op
        got = _run(apply_op("RandomGammaGrad", [tf.constant(alpha), tf.constant(sample)]).outputs[0])

    def quantile(a, u):
        lo, hi = 0.0, 200.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if functions.igamma(a, mid) < u else (lo, mid)
        return (lo + hi) / 2
    h = 1e-5
    for a, x, g in zip(alpha, sample, got):
        u = functions.igamma(a, x)
        fd = (quantile(a + h, u) - quantile(a - h, u)) / (2 * h)
        assert g == pytest.approx(fd, rel=1e-4)


def test_random_gamma_shapes_and_nan_for_nonpositive_alpha():
    with tf.Graph().as_default():
        alpha = tf.placeholder(tf.float32, [None])
        g = tf.random_gamma([3, 2], alpha, seed=1)
        assert g.shape.as_list() == [3, 2, None]
        out = _run(g, {alpha: [1.0, -1.0]})
    assert out.shape == (3, 2, 2)
    assert (out[..., 0] > 0).all() and np.isnan(out[..., 1]).all()


def test_seeded_random_gamma_replays_in_a_new_session():
    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            return _run(tf.random_gamma([5], 2.0))
    np.testing.assert_array_equal(draw(), draw())


def test_stateless_seed_checked_at_build_and_run_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.random.stateless_normal([2], seed=[[1, 2]])
        seed = tf.placeholder(tf.int32, [None])
        u = tf.random.stateless_uniform([2], seed)
        with pytest.raises(errors.InvalidArgumentError, match=r"seed must have shape \[2\]"):
            _run(u, {seed: [1, 2, 3]})
        a, b = _run([u, u], {seed: [4, 5]})
        np.testing.assert_array_equal(a, b)


def test_stateless_uniform_int_needs_minval_below_maxval():
    with tf.Graph().as_default():
        hi = tf.placeholder(tf.int32, [])
        u = tf.random.stateless_uniform([3], [1, 2], minval=5, maxval=hi, dtype=tf.int32)
        with pytest.raises(errors.InvalidArgumentError, match="minval < maxval"):
            _run(u, {hi: 5})


def test_stateless_binomial_nan_for_bad_probs_in_float_output():
    with tf.Graph().as_default():
        b = tf.random.stateless_binomial([4], [1, 2], counts=5.0, probs=[0.5, 1.5, 0.0, 1.0],
                                         output_dtype=tf.float32)
        out = _run(b)
    assert np.isnan(out[1]) and out[2] == 0 and out[3] == 5


def test_random_poisson_dtypes_and_shape():
    with tf.Graph().as_default():
        p = tf.random.poisson([[1.0, 2.0]], [4], dtype=tf.int64, seed=2)
        assert p.shape.as_list() == [4, 1, 2] and p.dtype == tf.int64
        assert _run(p).min() >= 0


def test_fixed_unigram_never_draws_reserved_or_zero_weight_ids():
    with tf.Graph().as_default():
        s = tf.random.fixed_unigram_candidate_sampler([[1]], 1, 50, False, 4, unigrams=[5.0, 0.0, 1.0],
                                                      num_reserved_ids=1, seed=1)
        drawn = _run(s[0])
    assert set(drawn.tolist()) <= {1, 3}

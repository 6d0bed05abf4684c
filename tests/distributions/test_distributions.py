"""tf.distributions: values against numpy closed forms, name scopes, fallbacks,
the KL registry and errors (build-time classes and run-time validation)."""
import math

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors

tfd = tf.distributions


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_normal_log_prob_and_entropy_against_numpy():
    loc, scale, x = np.array([0.0, 2.0]), np.array([1.0, 0.5]), np.array([0.3, 1.0])
    with tf.Graph().as_default():
        d = tfd.Normal(loc, scale)
        lp, ent = _run([d.log_prob(x), d.entropy()])
    np.testing.assert_allclose(lp, -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi))
    np.testing.assert_allclose(ent, 0.5 * np.log(2 * np.pi * np.e * scale ** 2))


def test_normal_log_cdf_deep_in_the_tail_is_finite():
    with tf.Graph().as_default():
        out = _run(tfd.Normal(0.0, 1.0).log_cdf([-30.0, -5.0, 0.0, 10.0]))
    assert np.isfinite(out).all()
    assert out[0] == pytest.approx(-30.0 ** 2 / 2 - math.log(30.0) - 0.5 * math.log(2 * math.pi), rel=1e-3)
    assert out[2] == pytest.approx(math.log(0.5), rel=1e-6)


def test_categorical_entropy_and_kl_against_numpy():
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.3, 0.1])
    with tf.Graph().as_default():
        a, b = tfd.Categorical(probs=p), tfd.Categorical(logits=np.log(q))
        ent, kl = _run([a.entropy(), tfd.kl_divergence(a, b)])
    assert ent == pytest.approx(-(p * np.log(p)).sum(), rel=1e-6)
    assert kl == pytest.approx((p * np.log(p / q)).sum(), rel=1e-6)


def test_dirichlet_multinomial_probabilities_sum_to_one():
    counts = [[i, j, 4 - i - j] for i in range(5) for j in range(5 - i)]
    with tf.Graph().as_default():
        total = _run(tf.reduce_sum(tfd.DirichletMultinomial(4.0, [0.5, 2.0, 1.5]).prob(np.array(counts, np.float32))))
    assert total == pytest.approx(1.0, rel=1e-5)


def test_methods_open_the_distribution_scope_then_their_own():
    with tf.Graph().as_default():
        d = tfd.Gamma(2.0, 1.0, name="g")
        assert d.name == "g/"
        assert d.mean().op.name.startswith("g/mean/")
        assert d.log_prob(1.0).op.name.startswith("g/log_prob/")
        assert d.sample(2, seed=1).shape.as_list() == [2]


def test_missing_method_raises_not_implemented_and_fallbacks_work():
    with tf.Graph().as_default():
        d = tfd.Normal(0.0, 1.0)
        with pytest.raises(NotImplementedError, match="covariance is not implemented: Normal"):
            d.covariance()
        var = _run(tfd.Laplace(0.0, 2.0).variance())  # Laplace has only _stddev
    assert var == pytest.approx(8.0)


def test_kl_registry_follows_subclasses_and_refuses_duplicates():
    class MyNormal(tfd.Normal):
        pass

    with tf.Graph().as_default():
        kl = _run(tfd.kl_divergence(MyNormal(0.0, 1.0), tfd.Normal(1.0, 1.0)))
    assert kl == pytest.approx(0.5)
    with pytest.raises(ValueError, match="already been registered"):
        tfd.RegisterKL(tfd.Normal, tfd.Normal)(lambda a, b, name=None: None)
    with pytest.raises(TypeError):
        tfd.RegisterKL(MyNormal, MyNormal)(3)


def test_validate_args_fails_at_run_time_with_invalid_argument():
    with tf.Graph().as_default():
        probs = tf.placeholder(tf.float32, [None])
        d = tfd.Categorical(probs=probs, validate_args=True)
        ent = d.entropy()
        with pytest.raises(errors.InvalidArgumentError):
            _run(ent, {probs: [0.5, 0.7]})
        assert _run(ent, {probs: [0.5, 0.5]}) == pytest.approx(math.log(2))


def test_reparameterization_types_and_gradients_through_samples():
    assert tfd.Normal(0.0, 1.0).reparameterization_type is tfd.FULLY_REPARAMETERIZED
    with tf.Graph().as_default():
        assert tfd.Bernoulli(probs=0.5).reparameterization_type is tfd.NOT_REPARAMETERIZED
        conc = tf.constant(3.0)
        mean_grad = tf.gradients(tf.reduce_mean(tfd.Gamma(conc, 2.0).sample(20000, seed=4)), conc)[0]
        assert _run(mean_grad) == pytest.approx(0.5, abs=0.03)

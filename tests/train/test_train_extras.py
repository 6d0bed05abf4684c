"""The tf.train extras beyond what the train_extras golden shows: the update ops against
numpy versions of TF's rules (dense, sparse with repeated indices), their run-time and
build-time errors, ExponentialMovingAverage details, the noisy schedule's mean,
checkpoint following and init_from_checkpoint errors, and the initializers' checks."""
import os
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt.train import update_ops


def _run(build, steps=1):
    """Builds variables + an update with `build()` in a new graph; returns the variables' values after `steps`."""
    g = tf.Graph()
    with g.as_default():
        variables, update = build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(update)
            return sess.run(variables)


def numpy_ftrl(var, accum, linear, grad, lr, l1, l2, power, shrinkage=0.0):
    shrunk = grad + 2 * shrinkage * var
    new_accum = accum + grad * grad
    linear = linear + shrunk - (new_accum ** -power - accum ** -power) / lr * var
    y = new_accum ** -power / lr + 2 * l2
    var = np.where(np.abs(linear) > l1, (l1 * np.sign(linear) - linear) / y, 0.0)
    return var, new_accum, linear


@pytest.mark.parametrize("power,shrinkage", [(-0.5, 0.0), (-0.7, 0.0), (-0.5, 0.2), (0.0, 0.1)])
def test_ftrl_matches_numpy(power, shrinkage):
    var0 = np.array([0.5, -1.0, 2.0, 0.01], np.float64)
    grad = np.array([0.3, -0.2, 1.5, 0.001], np.float64)
    accum0, linear0 = np.full(4, 0.1), np.array([0.0, 0.2, -0.1, 0.0])

    def build():
        v, a, lin = (tf.Variable(x) for x in (var0, accum0, linear0))
        args = [tf.constant(x, tf.float64) for x in (0.2, 0.05, 0.1)]
        if shrinkage:
            up = update_ops.apply_ftrl_v2(v, a, lin, grad, *args, tf.constant(shrinkage, tf.float64),
                                          tf.constant(power, tf.float64))
        else:
            up = update_ops.apply_ftrl(v, a, lin, grad, *args, tf.constant(power, tf.float64))
        return [v, a, lin], up

    got = _run(build, steps=2)
    want = (var0, accum0, linear0)
    for _ in range(2):
        want = numpy_ftrl(*want, grad, 0.2, 0.05, 0.1, power, shrinkage)
    for g_, w_ in zip(got, want):
        np.testing.assert_allclose(g_, w_, rtol=1e-12)


def test_proximal_gradient_descent_soft_thresholds_to_zero():
    def build():
        v = tf.Variable(np.array([0.05, -0.05, 1.0], np.float32))
        return [v], update_ops.apply_proximal_gradient_descent(v, 0.5, 0.2, 0.0, np.zeros(3, np.float32))
    (got,) = _run(build)
    # |prox| - lr * l1 = |v| - 0.1: the small entries go to exactly 0, the large one shrinks by 0.1.
    np.testing.assert_array_equal(got, np.array([0.0, 0.0, 0.9], np.float32))


def test_adagrad_da_matches_numpy():
    grad = np.array([[0.5, -1.0], [0.02, 0.3]])

    def build():
        v, ga, gga = tf.Variable(np.zeros((2, 2))), tf.Variable(np.zeros((2, 2))), tf.Variable(np.full((2, 2), 0.1))
        up = update_ops.apply_adagrad_da(v, ga, gga, grad, np.float64(0.3), np.float64(0.05), np.float64(0.1),
                                         np.int64(4))
        return [v, ga, gga], up

    v, ga, gga = _run(build, steps=2)
    g_acc, gg_acc = 2 * grad, 0.1 + 2 * grad ** 2
    want = -0.3 * np.sign(g_acc) * np.maximum(np.abs(g_acc) - 4 * 0.05, 0) / (0.1 * 4 * 0.3 + np.sqrt(gg_acc))
    np.testing.assert_allclose(v, want, rtol=1e-12)
    np.testing.assert_allclose(gga, gg_acc, rtol=1e-12)


def test_sparse_adadelta_repeated_indices_apply_in_order():
    emb0 = np.arange(6, dtype=np.float64).reshape(3, 2)
    rows = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    indices = np.array([2, 0, 2])

    def build():
        v, a, au = tf.Variable(emb0), tf.Variable(np.zeros((3, 2))), tf.Variable(np.zeros((3, 2)))
        up = update_ops.sparse_apply_adadelta(v, a, au, np.float64(1.0), np.float64(0.9), np.float64(1e-6), rows,
                                              indices)
        return [v, a, au], up

    got = _run(build)
    var, accum, accum_update = emb0.copy(), np.zeros((3, 2)), np.zeros((3, 2))
    for i, g in zip(indices, rows):
        accum[i] = 0.9 * accum[i] + 0.1 * g * g
        update = np.sqrt(accum_update[i] + 1e-6) / np.sqrt(accum[i] + 1e-6) * g
        var[i] -= update
        accum_update[i] = 0.9 * accum_update[i] + 0.1 * update * update
    for g_, w_ in zip(got, (var, accum, accum_update)):
        np.testing.assert_allclose(g_, w_, rtol=1e-12)


def test_sparse_update_of_every_row_equals_dense():
    var0, grad = np.array([[1.0, -2.0], [0.3, 0.7]]), np.array([[0.2, 0.1], [-0.4, 0.9]])

    def build(sparse):
        def inner():
            v, a = tf.Variable(var0), tf.Variable(np.full((2, 2), 0.1))
            hyper = [np.float64(0.5), np.float64(0.01), np.float64(0.2)]
            if sparse:
                return [v, a], update_ops.sparse_apply_proximal_adagrad(v, a, *hyper, grad[::-1], np.array([1, 0]))
            return [v, a], update_ops.apply_proximal_adagrad(v, a, *hyper, grad)
        return inner

    for d, s in zip(_run(build(False), 3), _run(build(True), 3)):
        np.testing.assert_allclose(s, d, rtol=1e-12)


def test_update_op_errors():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.zeros(3, np.float32))
        a = tf.Variable(np.zeros(3, np.float32))
        short = tf.Variable(np.zeros(2, np.float32))
        with pytest.raises(ValueError):  # static shapes disagree: a build-time error
            update_ops.apply_adadelta(v, short, a, 1.0, 0.9, 1e-6, np.zeros(3, np.float32))
        unknown = tf.placeholder(tf.float32, [None])
        dense = update_ops.apply_proximal_adagrad(v, a, 0.1, 0.0, 0.0, unknown)
        sparse = update_ops.sparse_apply_ftrl(v, a, a, np.ones((1,), np.float32), np.array([5]), 0.1, 0.0, 0.0, -0.5)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError):  # slots not initialized yet
                sess.run(dense, {unknown: np.ones(3, np.float32)})
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="var and grad do not have the same shape"):
                sess.run(dense, {unknown: np.ones(2, np.float32)})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 5 is not in \[0, 3\)"):
                sess.run(sparse)


def test_optimizer_hyperparameters_follow_tf_casting():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.ones(2))  # float64
        # ProximalAdagrad does not cast its float32 learning rate (as TF): a TypeError at build time.
        with pytest.raises(TypeError):
            tf.train.ProximalAdagradOptimizer(0.1).minimize(tf.reduce_sum(v * v))
        tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step()).minimize(tf.reduce_sum(v * v))


def test_ema_reuses_shadow_and_zero_debias_values():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        t = x * 1.0
        w = tf.Variable(1.0, name="w")
        ema = tf.train.ExponentialMovingAverage(0.8, zero_debias=True)
        update = ema.apply([t, w])
        update2 = ema.apply([w])
        assert ema.average(w) is not None and len(tf.global_variables()) == 5  # w, 2 shadows, biased, local_step
        assert ema.average_name(tf.Variable(0.0, name="u")) == "u/ExponentialMovingAverage"
        with pytest.raises(TypeError, match="must be half, float, or double"):
            ema.apply([tf.Variable(1, name="i")])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            biased = 0.0
            for k, value in enumerate([3.0, 5.0, -1.0], start=1):
                sess.run([update, update2], {x: value})
                biased = biased * 0.8 + 0.2 * value
                np.testing.assert_allclose(sess.run(ema.average(t)), biased / (1 - 0.8 ** k), rtol=1e-5)
            # w never changed: its shadow stays 1 however often it is applied
            np.testing.assert_allclose(sess.run(ema.average(w)), 1.0)


def test_noisy_linear_cosine_decay_is_centered_on_linear_cosine():
    g = tf.Graph()
    with g.as_default():
        noisy = tf.train.noisy_linear_cosine_decay(1.0, 4, 20, initial_variance=0.5)
        clean = tf.train.linear_cosine_decay(1.0, 4, 20)
        with tf.Session() as sess:
            draws = np.array([sess.run(noisy) for _ in range(2000)])
            want = sess.run(clean)
    cosine = 0.5 * (1 + np.cos(np.pi * 4 / 20))
    std = np.sqrt(0.5 / 5 ** 0.55) * cosine
    assert abs(draws.mean() - want) < 4 * std / np.sqrt(len(draws))
    assert abs(draws.std() / std - 1) < 0.1


def test_checkpoints_iterator_timeout_fn_and_waiting(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver = tf.train.Saver()
            saver.save(sess, str(tmp_path / "m"), global_step=1)
            calls = []

            def timeout_fn():
                calls.append(1)
                if len(calls) == 1:  # a new checkpoint arrives while the iterator waits
                    saver.save(sess, str(tmp_path / "m"), global_step=2)
                return len(calls) > 2
            start = time.time()
            found = list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.05, timeout_fn=timeout_fn))
    assert [os.path.basename(p) for p in found] == ["m-1", "m-2"]
    assert time.time() - start < 5
    assert tf.train.get_checkpoint_mtimes([str(tmp_path / "nothing")]) == []


def test_init_from_checkpoint_errors(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.get_variable("a", initializer=np.array([1.0, 2.0], np.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    g = tf.Graph()
    with g.as_default():
        wrong = tf.get_variable("wrong", [2], dtype=tf.float64)
        with pytest.raises(ValueError, match="Tensor b is not found"):
            tf.train.init_from_checkpoint(path, {"b": wrong})
        with pytest.raises(ValueError, match="should map to scope only"):
            tf.train.init_from_checkpoint(path, {"a": "scope/"})
        tf.train.init_from_checkpoint(path, {"a": wrong})
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="expected dtype float64 does not equal original dtype float32"):
                sess.run(wrong.initializer)
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.init_from_checkpoint(str(tmp_path / "missing"), {})


def test_initializer_argument_checks():
    with pytest.raises(ValueError, match="expected to be floating point"):
        tf.orthogonal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.initializers.identity()([4])
    he = tf.initializers.he_uniform(seed=3)
    assert (he.scale, he.mode, he.distribution, he.seed) == (2.0, "fan_in", "uniform", 3)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        a = tf.orthogonal_initializer(seed=5)([5, 3])
        b = tf.orthogonal_initializer(seed=5)([5, 3])
        with tf.Session() as sess:
            a, b = sess.run([a, b])
    np.testing.assert_array_equal(a, b)  # seeded draws repeat

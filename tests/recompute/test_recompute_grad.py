"""tf.recompute_grad / tf.contrib.layers.recompute_grad: same values and
gradients as the plain function, fewer activations kept."""
import numpy as np
import pytest

import graphrt as tf

from .mlp import SIM


def _block(h, width=8, depth=3):
    with tf.variable_scope(None, default_name="block"):
        for _ in range(depth):
            h = tf.layers.dense(h, width, tf.nn.tanh, kernel_initializer=tf.glorot_uniform_initializer(seed=1),
                                bias_initializer=tf.constant_initializer(0.1))
        return h


def _model(wrap, blocks=3, device=None, batch=4, width=8, depth=3):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x = tf.constant(np.random.RandomState(0).randn(batch, width).astype(np.float32))
        h = x
        fn = wrap(lambda t: _block(t, width, depth))
        for _ in range(blocks):
            h = fn(h)
        loss = tf.reduce_sum(tf.square(h))
        params = tf.trainable_variables()
        grads = tf.gradients(loss, params + [x])
    return g, loss, params, grads


def _values(wrap):
    g, loss, params, grads = _model(wrap)
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(params))
        return sess.run([loss, grads]), [p.name for p in params]


@pytest.mark.parametrize("wrap", [tf.recompute_grad, tf.contrib.layers.recompute_grad])
def test_recompute_grad_gives_the_plain_values_and_gradients(wrap):
    (plain_loss, plain), names = _values(lambda f: f)
    (loss, grads), wrapped_names = _values(wrap)
    assert wrapped_names == names  # the variables are created once, under fn's own scopes
    assert len(names) == 3 * 3 * 2
    np.testing.assert_allclose(loss, plain_loss, rtol=1e-6)
    for a, b in zip(plain, grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_recompute_grad_trains_like_the_plain_function():
    def train(wrap):
        g, loss, params, _ = _model(wrap)
        with g.as_default():
            step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        with tf.Session(graph=g) as sess:
            sess.run(tf.variables_initializer(params))
            for _ in range(3):
                sess.run(step)
            return sess.run(params)
    for a, b in zip(train(lambda f: f), train(tf.recompute_grad)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_recompute_grad_with_several_inputs_and_outputs(graph):
    def fn(a, b):
        return tf.nn.relu(a * b), tf.sin(a) + b
    a = tf.constant([[0.5, -1.0], [2.0, 3.0]])
    b = tf.constant([[1.5, 2.0], [-0.5, 1.0]])
    outs = [tf.recompute_grad(fn)(a, b), fn(a, b)]
    losses = [tf.reduce_sum(u * v) for u, v in outs]
    grads = [tf.gradients(loss, [a, b]) for loss in losses]
    with tf.Session() as sess:
        wrapped, plain = sess.run(grads)
    for u, v in zip(wrapped, plain):
        np.testing.assert_allclose(u, v, rtol=1e-6)


def test_recompute_grad_keeps_fewer_activations_on_a_device():
    def peak(wrap):
        g, _, params, grads = _model(wrap, blocks=4, device="/device:SIM:0", batch=256, width=32, depth=6)
        with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
            sess.run(tf.variables_initializer(params))
            sess.run(grads)
            allocator = sess.device(SIM).executor.allocator
            before = allocator.stats().bytes_in_use
            allocator.clear_stats()
            values = sess.run(grads)
            return values, allocator.stats().peak_bytes_in_use - before
    plain, plain_peak = peak(lambda f: f)
    wrapped, wrapped_peak = peak(tf.recompute_grad)
    for a, b in zip(plain, wrapped):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert wrapped_peak < 0.6 * plain_peak  # 11 activations against 27: block inputs and one block


def test_a_lambda_can_be_recomputed(graph):
    x = tf.constant([1.0, 2.0])
    y = tf.recompute_grad(lambda t: t * t)(x)
    assert y.op.name == "lambda_recompute"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.gradients(tf.reduce_sum(y), x)[0]), [2.0, 4.0])

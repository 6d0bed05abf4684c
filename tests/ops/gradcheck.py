"""Gradient checking against central finite differences, through a Session.

`check_gradients(fn, *arrays)` builds a float64 graph: one placeholder per
array, `y = fn(*placeholders)` and `loss = reduce_sum(y * w)` for a fixed
random `w` (so every output element matters, with distinct weights). It then
compares `tf.gradients(loss, placeholders)` with
`(loss(x + delta e_i) - loss(x - delta e_i)) / (2 delta)` for every element
i of every input, and returns the analytic gradients.
"""
import numpy as np

import graphrt as tf


def numeric_gradient(loss_fn, value, delta):
    grad = np.zeros_like(value)
    flat = value.reshape(-1)
    out = grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + delta
        plus = loss_fn()
        flat[i] = old - delta
        minus = loss_fn()
        flat[i] = old
        out[i] = (plus - minus) / (2 * delta)
    return grad


def check_gradients(fn, *arrays, delta=1e-6, rtol=1e-5, atol=1e-6, wrt=None, seed=0):
    """Checks d sum(fn(*xs) * w) / d xs[i] for each i in `wrt` (default: all inputs).

    `arrays` are cast to float64 and fed through placeholders of their static
    shape; inputs that are not differentiated (labels, indices) are best closed
    over as constants in `fn`.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    wrt = range(len(arrays)) if wrt is None else wrt
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.float64, a.shape, name=f"x{i}") for i, a in enumerate(arrays)]
        y = fn(*phs)
        w = tf.placeholder(tf.float64, y.shape, name="w")
        loss = tf.reduce_sum(y * w)
        grads = [tf.convert_to_tensor(gr) for gr in tf.gradients(loss, [phs[i] for i in wrt])]  # IndexedSlices too
    with tf.Session(graph=g) as sess:
        feed = dict(zip(phs, arrays))
        y_val = sess.run(y, feed)
        feed[w] = np.random.RandomState(seed).uniform(0.5, 1.5, size=np.shape(y_val))
        analytic = sess.run(grads, feed)
        for k, i in enumerate(wrt):
            assert analytic[k] is not None, f"no gradient for input {i}"
            numeric = numeric_gradient(lambda: sess.run(loss, feed), arrays[i], delta)
            np.testing.assert_allclose(analytic[k], numeric, rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i} differs from finite differences")
    return analytic


def run(fetches, feed_dict=None):
    """Runs `fetches` of the default graph in a fresh Session."""
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def check_gradients_float32(fn, *arrays, delta=1e-6, rtol=2e-3, atol=1e-4, wrt=None, seed=0):
    """Checks the gradients of a float32 graph: `fn` is built twice, once on float32
    placeholders (whose `tf.gradients` are checked, and must come out float32) and once
    on float64 ones (whose finite differences are the reference), so the tolerances
    only have to cover float32 rounding in the analytic gradient. `fn` must therefore
    build its ops from its inputs' dtype (Python constants are fine). Returns the
    float32 gradients."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    wrt = list(range(len(arrays)) if wrt is None else wrt)

    def build(dtype):
        g = tf.Graph()
        with g.as_default():
            phs = [tf.placeholder(dtype, a.shape, name=f"x{i}") for i, a in enumerate(arrays)]
            y = fn(*phs)
            w = tf.placeholder(dtype, y.shape, name="w")
            loss = tf.reduce_sum(y * w)
        return g, phs, y, w, loss

    g32, phs32, y32, w32, loss32 = build(tf.float32)
    with g32.as_default():
        grads = [tf.convert_to_tensor(gr) for gr in tf.gradients(loss32, [phs32[i] for i in wrt])]
    with tf.Session(graph=g32) as sess:
        feed = {p: a.astype(np.float32) for p, a in zip(phs32, arrays)}
        weights = np.random.RandomState(seed).uniform(0.5, 1.5, size=np.shape(sess.run(y32, feed)))
        feed[w32] = weights.astype(np.float32)
        analytic = sess.run(grads, feed)
    g64, phs64, _, w64, loss64 = build(tf.float64)
    with tf.Session(graph=g64) as sess:
        feed = dict(zip(phs64, arrays))
        feed[w64] = weights
        for k, i in enumerate(wrt):
            assert analytic[k] is not None, f"no gradient for input {i}"
            assert analytic[k].dtype == np.float32, f"gradient of input {i} is {analytic[k].dtype}, not float32"
            numeric = numeric_gradient(lambda: sess.run(loss64, feed), arrays[i], delta)
            np.testing.assert_allclose(analytic[k], numeric, rtol=rtol, atol=atol,
                                       err_msg=f"float32 gradient of input {i} differs from finite differences")
    return analytic

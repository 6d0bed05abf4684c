"""graphrt/volumetric: values against numpy loops, gradients against finite differences,
run-time errors."""
import itertools

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.op_builder import apply_op


def _pads(size, k, s, padding):
    if padding == "VALID":
        return (size - k) // s + 1, 0
    out = -(-size // s)
    return out, max((out - 1) * s + k - size, 0) // 2


def _loop_windows(x, window, strides, rates, padding):
    """Yields (output index, [(input index or None, tap)]) by plain loops over every output."""
    spatial = x.shape[1:-1]
    geo = [_pads(n, (k - 1) * r + 1, s, padding) for n, k, s, r in zip(spatial, window, strides, rates)]
    for o in itertools.product(*(range(g[0]) for g in geo)):
        taps = []
        for t in itertools.product(*(range(k) for k in window)):
            pos = tuple(oi * s - g[1] + ti * r for oi, s, g, ti, r in zip(o, strides, geo, t, rates))
            inside = all(0 <= p < n for p, n in zip(pos, spatial))
            taps.append((pos if inside else None, t))
        yield o, taps, tuple(g[0] for g in geo)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def _numeric_grad(fn, x, eps):
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (fn(xp) - fn(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("strides,dilations,padding", [
    ([1, 1, 1, 1, 1], [1, 1, 1, 1, 1], "SAME"), ([1, 2, 1, 3, 1], [1, 1, 1, 1, 1], "VALID"),
    ([1, 1, 1, 1, 1], [1, 2, 1, 2, 1], "SAME"), ([1, 2, 2, 1, 1], [1, 1, 2, 1, 1], "VALID")])
def test_conv3d_matches_loops(strides, dilations, padding):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 5, 4, 6, 2)
    f = rng.randn(2, 2, 3, 2, 3)
    with tf.Graph().as_default():
        got = _run(tf.nn.conv3d(tf.constant(x), tf.constant(f), strides, padding, dilations=dilations))
    want = None
    for o, taps, out in _loop_windows(x, f.shape[:3], strides[1:4], dilations[1:4], padding):
        if want is None:
            want = np.zeros((2, *out, 3))
        for pos, t in taps:
            if pos is not None:
                want[(slice(None), *o)] += x[(slice(None), *pos)] @ f[t]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_conv3d_gradients_match_finite_differences():
    rng = np.random.RandomState(1)
    xv, fv = rng.randn(1, 4, 3, 4, 2), rng.randn(2, 2, 2, 2, 2)
    wv = None
    with tf.Graph().as_default():
        x, f = tf.placeholder(tf.float64, xv.shape), tf.placeholder(tf.float64, fv.shape)
        y = tf.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME", dilations=[1, 1, 2, 1, 1])
        wv = rng.randn(*y.shape.as_list())
        loss = tf.reduce_sum(y * wv)
        gx, gf = tf.gradients(loss, [x, f])
        # second order: d/dx of |d loss/d f|^2 runs the backprop ops' gradients
        gg = tf.gradients(tf.reduce_sum(gf * gf), x)[0]
        with tf.Session() as sess:
            got = sess.run([gx, gf, gg], {x: xv, f: fv})
            num_x = _numeric_grad(lambda v: sess.run(loss, {x: v, f: fv}), xv, 1e-6)
            num_f = _numeric_grad(lambda v: sess.run(loss, {x: xv, f: v}), fv, 1e-6)
            num_gg = _numeric_grad(lambda v: float((sess.run(gf, {x: v, f: fv}) ** 2).sum()), xv, 1e-6)
    for a, b in zip(got, (num_x, num_f, num_gg)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_conv3d_transpose_is_the_input_gradient():
    rng = np.random.RandomState(2)
    xv, fv, dv = rng.randn(1, 5, 4, 3, 2), rng.randn(3, 2, 2, 2, 4), rng.randn(1, 3, 2, 2, 4)
    with tf.Graph().as_default():
        x = tf.constant(xv)
        y = tf.nn.conv3d(x, tf.constant(fv), [1, 2, 2, 2, 1], "SAME")
        gx = tf.gradients(y, x, grad_ys=tf.constant(dv))[0]
        t = tf.nn.conv3d_transpose(tf.constant(dv), tf.constant(fv), [1, 5, 4, 3, 2], [1, 2, 2, 2, 1], "SAME")
        a, b = _run([gx, t])
    np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool3d_match_loops_and_max_grad_routes_to_near_ties(padding):
    rng = np.random.RandomState(3)
    x = rng.randn(2, 5, 4, 5, 2).astype(np.float32)
    with tf.Graph().as_default():
        mx, av = _run([tf.nn.max_pool3d(x, [2, 3, 2], [2, 1, 2], padding),
                       tf.nn.avg_pool3d(x, [2, 3, 2], [2, 1, 2], padding)])
    for o, taps, _ in _loop_windows(x, (2, 3, 2), (2, 1, 2), (1, 1, 1), padding):
        vals = np.stack([x[(slice(None), *pos)] for pos, _ in taps if pos is not None])
        np.testing.assert_allclose(mx[(slice(None), *o)], vals.max(0))
        np.testing.assert_allclose(av[(slice(None), *o)], vals.mean(0), rtol=1e-6)
    near = np.array([1, 1 + 5e-6, 0, 0, 0, 0, 0, 0], np.float32).reshape(1, 2, 2, 2, 1)
    with tf.Graph().as_default():
        t = tf.constant(near)
        g = _run(tf.gradients(tf.nn.max_pool3d(t, 2, 2, "VALID"), t)[0])
    np.testing.assert_array_equal(g.ravel(), [1, 1, 0, 0, 0, 0, 0, 0])  # TF's CPU: every input within 1e-5


def test_avg_pool3d_gradient_matches_finite_differences():
    rng = np.random.RandomState(4)
    xv = rng.randn(1, 3, 4, 3, 2).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, xv.shape)
        y = tf.nn.avg_pool3d(x, 2, [1, 2, 1, 2, 1], "SAME")
        loss = tf.reduce_sum(y * rng.randn(*y.shape.as_list()).astype(np.float32))
        gx = tf.gradients(loss, x)[0]
        with tf.Session() as sess:
            got = sess.run(gx, {x: xv})
            num = _numeric_grad(lambda v: float(sess.run(loss, {x: v})), xv.astype(np.float64), 1e-2)
    np.testing.assert_allclose(got, num, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax_index_convention_and_grad(include_batch):
    rng = np.random.RandomState(5)
    x = rng.randn(2, 5, 4, 3).astype(np.float32)
    x[0, 0, 0, 0] = x[0, 0, 1, 0] = 9  # a tie: the first in scan order wins
    with tf.Graph().as_default():
        t = tf.constant(x)
        y, arg = tf.nn.max_pool_with_argmax(t, [1, 3, 2, 1], [1, 2, 2, 1], "SAME",
                                            include_batch_in_index=include_batch)
        dy = rng.randn(*y.shape.as_list()).astype(np.float32)
        g = tf.gradients(y, t, grad_ys=tf.constant(dy))[0]
        yv, av, gv = _run([y, arg, g])
    n, h, w, c = x.shape
    want_g = np.zeros(x.size, np.float32)
    for o, taps, _ in _loop_windows(x[..., :1], (3, 2), (2, 2), (1, 1), "SAME"):
        for b, ch in itertools.product(range(n), range(c)):
            best = None
            for pos, _ in taps:
                if pos is not None and (best is None or x[(b, *pos, ch)] > x[(b, *best, ch)]):
                    best = pos
            index = (best[0] * w + best[1]) * c + ch + (b * h * w * c if include_batch else 0)
            assert yv[(b, *o, ch)] == x[(b, *best, ch)]
            assert av[(b, *o, ch)] == index
            want_g[index + (0 if include_batch else b * h * w * c)] += dy[(b, *o, ch)]
    np.testing.assert_allclose(gv.ravel(), want_g, rtol=1e-6)


def test_dilation2d_and_erosion2d_match_loops_and_finite_differences():
    rng = np.random.RandomState(6)
    xv, kv = rng.randn(1, 5, 4, 2), rng.randn(2, 3, 2)
    with tf.Graph().as_default():
        x, k = tf.placeholder(tf.float64, xv.shape), tf.placeholder(tf.float64, kv.shape)
        d = tf.nn.dilation2d(x, k, [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
        e = tf.nn.erosion2d(x, k, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        loss = tf.reduce_sum(d * rng.randn(*d.shape.as_list()))
        gx, gk = tf.gradients(loss, [x, k])
        with tf.Session() as sess:
            dv, ev, gxv, gkv = sess.run([d, e, gx, gk], {x: xv, k: kv})
            num_x = _numeric_grad(lambda v: sess.run(loss, {x: v, k: kv}), xv, 1e-6)
            num_k = _numeric_grad(lambda v: sess.run(loss, {x: xv, k: v}), kv, 1e-6)
    for o, taps, _ in _loop_windows(xv, (2, 3), (2, 1), (1, 2), "SAME"):
        want = np.max([xv[(0, *pos)] + kv[t] for pos, t in taps if pos is not None], axis=0)
        np.testing.assert_allclose(dv[(0, *o)], want)
    # erosion: min over taps of x[y - i, x - j] - k[i, j] (reflected window, as TF's duality)
    for o, taps, _ in _loop_windows(xv, (2, 3), (1, 1), (1, 1), "SAME"):
        vals = [-(-xv[(0, *pos)] + kv[::-1, ::-1][t]) for pos, t in taps if pos is not None]
        np.testing.assert_allclose(ev[(0, *o)], np.min(vals, axis=0))
    np.testing.assert_allclose(gxv, num_x, atol=1e-6)
    np.testing.assert_allclose(gkv, num_k, atol=1e-6)


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([1, 1, 1, 2, 2]), [2, 1, 1, 1, 1], "VALID"),
     errors.UnimplementedError, "strides in the batch and depth"),
    (lambda: tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([1, 1, 1, 1, 2]), [1, 1, 1, 1, 1], "VALID"),
     errors.InvalidArgumentError, "input and filter must have the same depth: 2 vs 1"),
    (lambda: tf.nn.max_pool3d(tf.ones([1, 3, 3, 3, 2]), [1, 1, 1, 1, 2], 1, "VALID"),
     errors.UnimplementedError, "depth dimension"),
    (lambda: tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 2]), [2, 2, 2, 1], [1, 2, 2, 1], "VALID")[0],
     errors.UnimplementedError, "batch dimension"),
    (lambda: tf.nn.dilation2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 2]), [1, 1, 1, 1], [1, 1, 1, 2], "SAME"),
     errors.UnimplementedError, "Rate is only supported across spatial dimensions."),
])
def test_run_time_errors(build, error, message):
    with tf.Graph().as_default():
        y = build()
        with pytest.raises(error, match=message):
            _run(y)


def test_bad_argmax_index_is_an_error():
    # TF's CPU kernel aborts the process on an index outside the input; graphrt raises
    with tf.Graph().as_default():
        g = apply_op("MaxPoolGradWithArgmax", [tf.ones([1, 2, 2, 1]), tf.ones([1, 1, 1, 1]),
                                               tf.constant([[[[7]]]], tf.int64)],
                     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID").outputs[0]
        with pytest.raises(errors.InvalidArgumentError, match="Invalid argmax index"):
            _run(g)


def test_layers_build_tf_variables():
    with tf.Graph().as_default():
        x = tf.ones([2, 4, 4, 4, 3])
        y = tf.layers.conv3d(x, 5, 3, padding="same", name="c3")
        z = tf.layers.conv3d_transpose(y, 2, 2, strides=2)
        p = tf.layers.max_pooling3d(z, 2, 2)
        assert [v.name for v in tf.trainable_variables()] == [
            "c3/kernel:0", "c3/bias:0", "conv3d_transpose/kernel:0", "conv3d_transpose/bias:0"]
        assert tf.trainable_variables()[2].shape.as_list() == [2, 2, 2, 2, 5]
        assert z.shape.as_list() == [2, 8, 8, 8, 2] and p.shape.as_list() == [2, 4, 4, 4, 2]

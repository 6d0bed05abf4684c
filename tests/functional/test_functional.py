"""tf.map_fn, tf.scan, tf.foldl, tf.foldr beyond what the TF1 program
(tests/tf1_programs/cases/functional_ops.py) shows: build-time errors, empty
elements at run time, a map over two devices, gradients against finite
differences and values against numpy."""
import numpy as np
import pytest

import graphrt as tf
from tests.ops.gradcheck import check_gradients


def run(fetches, feeds=None, config=None):
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feeds)


# -- build-time errors -----------------------------------------------------------------------

@pytest.mark.parametrize("api", ["map_fn", "scan", "foldl", "foldr"])
def test_elems_with_different_first_dimensions_fail_at_build_time(api):
    with tf.Graph().as_default():
        a, b = tf.zeros([3, 2]), tf.zeros([4])
        with pytest.raises(ValueError, match=rf"{api}: all elems must have the same size along their first "
                                             r"dimension.* has 3 and .* has 4"):
            getattr(tf, api)(lambda *args: args[-1], (a, b))


@pytest.mark.parametrize("api", ["map_fn", "scan", "foldl", "foldr"])
def test_scalar_elems_and_elems_without_tensors_are_rejected(api):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=rf"{api}: elements in elems must be 1\+ dimensional.*scalar"):
            getattr(tf, api)(lambda *args: args[-1], tf.constant(1.0))
        with pytest.raises(ValueError, match=rf"{api}: elems must be a Tensor.*does not contain any Tensors"):
            getattr(tf, api)(lambda *args: args[-1], [])


@pytest.mark.parametrize("api", ["map_fn", "scan", "foldl", "foldr"])
def test_fn_must_be_callable(api):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=rf"{api}: fn must be callable, got 3"):
            getattr(tf, api)(3, tf.zeros([2]))


def test_map_fn_result_of_another_structure_needs_dtype():
    with tf.Graph().as_default():
        x = tf.zeros([4, 2])
        with pytest.raises(ValueError, match="map_fn: fn must return the same nested structure as elems "
                                             r"\(pass dtype="):
            tf.map_fn(lambda r: (r, r), x)
        with pytest.raises(ValueError, match="map_fn: fn must return the same nested structure as dtype"):
            tf.map_fn(lambda r: r, x, dtype=(tf.float32, tf.float32))
        with pytest.raises(ValueError, match="TensorArray dtype is int32 but Op is trying to write dtype float32"):
            tf.map_fn(lambda r: r, x, dtype=tf.int32)
        with pytest.raises(TypeError, match="map_fn: dtype must be a dtype"):
            tf.map_fn(lambda r: r, x, dtype=object())


def test_scan_fn_must_return_the_initializer_structure():
    with tf.Graph().as_default():
        x = tf.zeros([4, 2])
        with pytest.raises(ValueError, match="scan: fn must return the same nested structure as initializer"):
            tf.scan(lambda a, r: a[0] + r, x, initializer=(tf.zeros([2]), tf.zeros([2])))


def test_names_are_scoped_as_tensorflow_names_them():
    with tf.Graph().as_default():
        x = tf.zeros([4, 2])
        assert tf.map_fn(lambda r: r, x).name.startswith("map/")
        assert tf.scan(lambda a, r: a + r, x).name.startswith("scan/")
        assert tf.foldl(lambda a, r: a + r, x).name.startswith("foldl/")
        assert tf.foldr(lambda a, r: a + r, x).name.startswith("foldr/")
        assert tf.map_fn(lambda r: r, x, name="squares").name.startswith("squares/")
        assert tf.map_fn(lambda r: r, x).name.startswith("map_1/")


# -- empty elements at run time --------------------------------------------------------------

def test_empty_elems_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        mapped = tf.map_fn(lambda r: r * 2.0, x)
        pair = tf.map_fn(lambda r: (tf.reduce_sum(r), tf.cast(r[0], tf.int32)), x, dtype=(tf.float32, tf.int32))
        scanned = tf.scan(lambda a, r: a + r, x, initializer=tf.ones([3]))
        folded = tf.foldl(lambda a, r: a + r, x, initializer=tf.ones([3]))
        folded_r = tf.foldr(lambda a, r: a + r, x, initializer=tf.ones([3]))
        no_init = tf.foldl(lambda a, r: a + r, x)
        empty = np.zeros((0, 3), np.float32)
        with tf.Session() as sess:
            m, p, s, f, fr = sess.run([mapped, pair, scanned, folded, folded_r], {x: empty})
            with pytest.raises(tf.errors.OpError):  # nothing to start a fold without an initializer from
                sess.run(no_init, {x: empty})
    assert m.shape == (0, 3) and m.dtype == np.float32
    assert p[0].shape == (0,) and p[1].shape == (0,) and p[1].dtype == np.int32
    assert s.shape == (0, 3)
    np.testing.assert_array_equal(f, np.ones(3))
    np.testing.assert_array_equal(fr, np.ones(3))


# -- devices ---------------------------------------------------------------------------------

def test_map_fn_on_a_second_device_matches_numpy():
    rng = np.random.RandomState(0)
    xv, wv = rng.randn(6, 4).astype(np.float32), rng.randn(4, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        with tf.device("/cpu:0"):
            w = tf.Variable(wv)
        with tf.device("/cpu:1"):
            y = tf.map_fn(lambda r: tf.tanh(tf.matmul(tf.expand_dims(r, 0), w))[0], x)
            loss = tf.reduce_sum(y * y)
        grad_w, grad_x = tf.gradients(loss, [w, x])
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        yv, gw, gx = sess.run([y, grad_w, grad_x], {x: xv}, options=tf.RunOptions(output_partition_graphs=True),
                              run_metadata=md)
    want = np.tanh(xv @ wv)
    np.testing.assert_allclose(yv, want, rtol=1e-5, atol=1e-6)
    dpre = 2 * want * (1 - want ** 2)
    np.testing.assert_allclose(gw, xv.T @ dpre, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gx, dpre @ wv.T, rtol=1e-4, atol=1e-5)
    assert len(md.partition_graphs) == 2
    nodes = [n for pg in md.partition_graphs for n in pg.node]
    # fn's ops run on CPU:1 (where map_fn was built), the variable's read in the loop on CPU:0 (with the
    # variable): the loop crosses devices.
    body = {n.device for n in nodes if n.name in ("map/while/MatMul", "map/while/Tanh")}
    assert body == {"/job:localhost/replica:0/task:0/device:CPU:1"}, body
    assert any(n.op == "_Send" and "while" in n.name for n in nodes)


# -- values and gradients --------------------------------------------------------------------

def test_values_against_numpy():
    rng = np.random.RandomState(3)
    xv, yv = rng.randn(5, 3), rng.randn(5)
    with tf.Graph().as_default():
        x, y = tf.constant(xv), tf.constant(yv)
        nested = tf.map_fn(lambda d: {"p": d["x"] * d["y"][0], "q": (d["y"][0] + 1.0,)}, {"x": x, "y": (y,)},
                           dtype={"p": tf.float64, "q": (tf.float64,)})
        cumsum = tf.scan(lambda a, r: a + r, x)
        rcumprod = tf.scan(lambda a, v: a * v, y, reverse=True)
        run_max = tf.scan(lambda a, xy: (tf.maximum(a[0], xy[0]), a[1] + xy[1]), (x, y))
        horner = tf.foldr(lambda a, c: a * 2.0 + c, y, initializer=tf.constant(0.0, tf.float64))
        left = tf.foldl(lambda a, c: a * 2.0 + c, y)
        got = run([nested, cumsum, rcumprod, run_max, horner, left])
    np.testing.assert_allclose(got[0]["p"], xv * yv[:, None])
    np.testing.assert_allclose(got[0]["q"][0], yv + 1.0)
    np.testing.assert_allclose(got[1], np.cumsum(xv, axis=0))
    np.testing.assert_allclose(got[2], np.cumprod(yv[::-1])[::-1])
    np.testing.assert_allclose(got[3][0], np.maximum.accumulate(xv, axis=0))
    np.testing.assert_allclose(got[3][1], np.cumsum(yv))
    np.testing.assert_allclose(got[4], np.polyval(yv[::-1], 2.0))  # foldr from y[4]: y[4]*2^4 + ... + y[0]
    np.testing.assert_allclose(got[5], np.polyval(yv, 2.0))  # foldl from y[0]: y[0]*2^4 + ... + y[4]


def test_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.map_fn(lambda r: r[:2], x).shape.as_list() == [None, 2]
        assert tf.map_fn(lambda r: r[:2], tf.zeros([4, 3])).shape.as_list() == [4, 2]
        assert tf.map_fn(lambda r: r, x, infer_shape=False).shape.ndims is None
        assert tf.scan(lambda a, r: a + tf.reduce_sum(r), x, initializer=0.0).shape.as_list() == [None]
        assert tf.foldl(lambda a, r: a + r, tf.zeros([4, 3])).shape.as_list() == [3]


def test_gradients_through_scan_and_map_fn_match_finite_differences():
    check_gradients(lambda x: tf.scan(lambda a, r: tf.sin(a) * r + r, x), np.random.RandomState(1).randn(4, 3))
    check_gradients(lambda x, h: tf.scan(lambda a, r: tf.tanh(a * r), x, initializer=h, reverse=True),
                    np.random.RandomState(2).randn(4, 3), np.random.RandomState(3).randn(3))
    check_gradients(lambda x: tf.map_fn(lambda r: r * tf.reduce_sum(r * r), x), np.random.RandomState(4).randn(3, 2))
    check_gradients(lambda x: tf.foldr(lambda a, r: a * r + 1.0, x), np.random.RandomState(5).randn(4, 2))


def test_get_variable_inside_fn_is_shared_across_iterations():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))

        def fn(r):
            v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
            return r * v

        y = tf.map_fn(fn, x)
        assert [v.name for v in tf.global_variables()] == ["v:0"]
        assert tf.get_variable_scope().caching_device is None  # restored after the build
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y), np.arange(6).reshape(3, 2))

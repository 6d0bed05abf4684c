"""Gradients of the math and array ops against central finite differences (float64),
plus the behaviour of tf.gradients itself: None for unconnected inputs, stop_gradient,
grad_ys, integer tensors, aggregation, name scopes, dtype preservation."""
import numpy as np
import pytest

import graphrt as tf
from tests.helpers import run
from tests.ops.gradcheck import check_gradients, check_gradients_float32

RNG = np.random.RandomState(42)


def _u(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def _pos(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


UNARY = [
    ("negative", tf.negative, _u(2, 3)),
    ("abs", tf.abs, _u(2, 3)),
    ("square", tf.square, _u(2, 3)),
    ("sqrt", tf.sqrt, _pos(2, 3)),
    ("rsqrt", tf.rsqrt, _pos(2, 3)),
    ("exp", tf.exp, _u(2, 3)),
    ("expm1", tf.expm1, _u(2, 3)),
    ("log", tf.log, _pos(2, 3)),
    ("log1p", tf.log1p, _pos(2, 3)),
    ("tanh", tf.tanh, _u(2, 3)),
    ("sigmoid", tf.sigmoid, _u(2, 3)),
    ("reciprocal", tf.reciprocal, _pos(2, 3)),
    ("sin", tf.sin, _u(2, 3)),
    ("cos", tf.cos, _u(2, 3)),
    ("erf", tf.erf, _u(2, 3)),
    ("identity", tf.identity, _u(2, 3)),
    ("cast_roundtrip", lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * 1.0, _u(3)),
]


@pytest.mark.parametrize("name, fn, x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradients(name, fn, x):
    kw = {"delta": 1e-2, "rtol": 1e-3, "atol": 1e-4} if name == "cast_roundtrip" else {}
    check_gradients(fn, x, **kw)


def test_second_order_gradients_of_tanh_and_sigmoid():
    def grad_of(f):
        def g(x):
            return tf.gradients(f(x), x)[0]
        return g
    check_gradients(grad_of(tf.tanh), _u(4))
    check_gradients(grad_of(tf.sigmoid), _u(4))
    check_gradients(grad_of(lambda x: x * x * x), _u(3))


BINARY = [
    ("add", tf.add), ("subtract", tf.subtract), ("multiply", tf.multiply), ("truediv", tf.truediv),
    ("realdiv", tf.realdiv), ("div", tf.div), ("maximum", tf.maximum), ("minimum", tf.minimum),
    ("squared_difference", tf.squared_difference), ("pow", tf.pow),
    ("op_add", lambda a, b: a + b), ("op_rsub", lambda a, b: 3.0 - a * b),
]
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((2, 3), ()),
               ((4, 1, 3), (2, 1))]


@pytest.mark.parametrize("sa, sb", SHAPE_PAIRS, ids=[f"{a}-{b}" for a, b in SHAPE_PAIRS])
@pytest.mark.parametrize("name, fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradients_with_broadcasting(name, fn, sa, sb):
    a = _pos(*sa) if name == "pow" else _u(*sa)
    b = _pos(*sb) if name in ("truediv", "realdiv", "div", "pow") else _u(*sb)
    if name in ("maximum", "minimum"):
        b = b + 0.37  # keep the two operands apart: the gradient is not defined at ties
    check_gradients(fn, a, b)


def test_broadcast_gradient_with_unknown_batch_dimension():
    def fn(x, b):
        p = tf.placeholder_with_default(x, [None, 3])
        return p * b + b
    check_gradients(fn, _u(4, 3), _u(3))


def test_floormod_gradient():
    check_gradients(tf.floormod, _pos(2, 3) * 3, _pos(2, 3))


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_gradients(ta, tb):
    a = _u(3, 2) if ta else _u(2, 3)
    b = _u(4, 3) if tb else _u(3, 4)
    check_gradients(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), a, b)


@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True)])
def test_batch_matmul_gradients_with_broadcast_batch(adj):
    ax, ay = adj
    a = _u(2, 1, 4, 3) if ax else _u(2, 1, 3, 4)
    b = _u(3, 2, 4) if ay else _u(3, 4, 2)
    check_gradients(lambda x, y: tf.matmul(x, y, adjoint_a=ax, adjoint_b=ay), a, b)


@pytest.mark.parametrize("reduce", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                                    "reduce_logsumexp"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ([0, 2], False), (-1, True)])
def test_reduction_gradients(reduce, axis, keepdims):
    x = RNG.permutation(24).reshape(2, 3, 4) / 7.0 + 0.5  # distinct values: max/min are unique
    check_gradients(lambda t: getattr(tf, reduce)(t, axis=axis, keepdims=keepdims), x)


def test_prod_gradient_with_zeros():
    check_gradients(lambda t: tf.reduce_prod(t, axis=1), np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5]]))


def test_mean_gradient_with_unknown_shape():
    check_gradients(lambda t: tf.reduce_mean(tf.placeholder_with_default(t, [None, None]), axis=0), _u(3, 2))


def test_cumulative_gradients():
    x = _pos(2, 4)
    for kw in ({}, {"exclusive": True}, {"reverse": True}, {"exclusive": True, "reverse": True}):
        check_gradients(lambda t: tf.cumsum(t, axis=1, **kw), x)
        check_gradients(lambda t: tf.cumprod(t, axis=1, **kw), x)


ARRAY_FNS = [
    ("reshape", lambda t: tf.reshape(t, [4, -1]), (2, 3, 2)),
    ("transpose", lambda t: tf.transpose(t, [2, 0, 1]), (2, 3, 2)),
    ("transpose_default", tf.transpose, (2, 3)),
    ("expand_dims", lambda t: tf.expand_dims(t, 1), (2, 3)),
    ("squeeze", lambda t: tf.squeeze(t, [1]), (2, 1, 3)),
    ("tile", lambda t: tf.tile(t, [2, 3]), (2, 2)),
    ("broadcast_to", lambda t: tf.broadcast_to(t, [2, 3, 3]), (3, 1)),
    ("concat", lambda t: tf.concat([t, t * 2.0, tf.ones([2, 1], tf.float64)], axis=1), (2, 3)),
    ("split", lambda t: tf.split(t, 3, axis=1)[1] * tf.split(t, 3, axis=1)[2], (2, 6)),
    ("split_sizes", lambda t: tf.split(t, [1, -1], axis=0)[1], (3, 2)),
    ("slice", lambda t: tf.slice(t, [1, 0], [2, -1]), (3, 4)),
    ("getitem", lambda t: t[::-1, 1:3] * t[0, 2], (3, 4)),
    ("getitem_newaxis", lambda t: t[:, None, -1], (3, 4)),
    ("strided_slice_stride", lambda t: t[::2, ::-2], (5, 4)),
    ("gather", lambda t: tf.gather(t, [2, 0, 2]), (3, 2)),
    ("gather_2d_indices", lambda t: tf.gather(t, [[1, 1], [0, 2]]), (3, 2)),
    ("gather_axis1", lambda t: tf.gather(t, [1, 1, 0], axis=1), (2, 3, 2)),
    ("stack", lambda t: tf.stack([t, t * t], axis=1), (2, 3)),
    ("unstack", lambda t: tf.unstack(t, axis=1)[0] * tf.unstack(t, axis=1)[2], (2, 3)),
    ("pad", lambda t: tf.pad(t, [[1, 0], [0, 2]]), (2, 3)),
    ("pad_value", lambda t: tf.pad(t, [[1, 1], [1, 1]], constant_values=3.0), (2, 2)),
    ("reverse", lambda t: tf.reverse(t, [1]) * t, (2, 3)),
    ("segment_sum", lambda t: tf.unsorted_segment_sum(t, [1, 0, 1, -1], 3), (4, 2)),
    ("where", lambda t: tf.where(tf.constant([True, False, True]), t, -t * 2.0), (3, 2)),
    ("where_v2", lambda t: tf.where_v2(tf.constant([True, False]), t, 1.0), (3, 2)),
    ("clip", lambda t: tf.clip_by_value(t, -0.5, 0.5), (3, 3)),
    ("add_n", lambda t: tf.add_n([t, t * t, t]), (2, 2)),
    ("placeholder_with_default", lambda t: tf.placeholder_with_default(t, [None, 2]) * 3.0, (2, 2)),
    ("boolean_mask", lambda t: tf.boolean_mask(t, [True, False, True]), (3, 2)),
]


@pytest.mark.parametrize("name, fn, shape", ARRAY_FNS, ids=[a[0] for a in ARRAY_FNS])
def test_array_op_gradients(name, fn, shape):
    x = _u(*shape)
    if name == "clip":
        x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, x + 0.2, x)  # away from the kinks
    check_gradients(fn, x)


def test_mlp_gradient_through_everything():
    def mlp(x, w1, w2):
        h = tf.tanh(tf.matmul(x, w1) + 0.1)
        logits = tf.matmul(h, w2)
        return tf.reduce_mean(tf.square(logits - 1.0), axis=1)
    check_gradients(mlp, _u(4, 3), _u(3, 5), _u(5, 2))


def test_float32_gradients_with_float32_tolerances():
    grads = check_gradients_float32(lambda x, w: tf.reduce_sum(tf.sigmoid(tf.matmul(x, w)), axis=1),
                                    _u(3, 4), _u(4, 2))
    assert all(g.dtype == np.float32 for g in grads)


# -- tf.gradients behaviour --------------------------------------------------------------------

def test_gradient_dtype_follows_the_input(graph):
    for dtype in (tf.float32, tf.float64):
        x = tf.constant([1.0, 2.0], dtype)
        g, = tf.gradients(tf.reduce_sum(x * x), x)
        assert g.dtype == dtype
        out = run(g)
        assert out.dtype == dtype.np
        np.testing.assert_array_equal(out, [2.0, 4.0])


def test_unconnected_and_integer_inputs_get_none(graph):
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0])
    i = tf.constant([1, 2])
    z = tf.reduce_sum(x * 2.0) + tf.cast(tf.reduce_sum(i), tf.float32)
    gx, gy, gi = tf.gradients(z, [x, y, i])
    assert gy is None and gi is None
    np.testing.assert_array_equal(run(gx), [2.0, 2.0])


def test_stop_gradient_and_stop_gradients_argument(graph):
    x = tf.constant([1.0, 2.0])
    y = tf.stop_gradient(x * x) + x
    np.testing.assert_array_equal(run(tf.gradients(y, x)[0]), [1.0, 1.0])
    a = x * 3.0
    b = a * x
    np.testing.assert_array_equal(run(tf.gradients(b, x, stop_gradients=[a])[0]), [3.0, 6.0])
    np.testing.assert_array_equal(run(tf.gradients(b, x)[0]), [6.0, 12.0])


def test_grad_ys_and_multiple_ys(graph):
    x = tf.constant([1.0, 2.0])
    y1 = x * x
    y2 = 3.0 * x
    g, = tf.gradients([y1, y2], x, grad_ys=[tf.constant([1.0, 0.5]), tf.constant([2.0, 2.0])])
    np.testing.assert_allclose(run(g), [2.0 * 1.0 * 1.0 + 6.0, 2.0 * 2.0 * 0.5 + 6.0])
    with pytest.raises(ValueError, match="Passed 1 grad_ys for 2 ys"):
        tf.gradients([y1, y2], x, grad_ys=[tf.constant([1.0, 1.0])])


def test_gradient_through_an_integer_tensor_is_none(graph):
    # TF: integer tensors carry no gradient, so x is unconnected; complex ys need grad_ys.
    x = tf.constant([1.0])
    assert tf.gradients(tf.cast(x, tf.int32), x) == [None]
    n = tf.constant(3)
    assert tf.gradients(n * 2, n) == [None]
    with pytest.raises(TypeError, match="Gradients of complex tensors"):
        tf.gradients(tf.complex(x, x), x)


def test_fan_out_gradients_are_summed(graph):
    x = tf.constant(3.0)
    y = x * x + x * 2.0 + tf.sin(x)
    np.testing.assert_allclose(run(tf.gradients(y, x)[0]), 2 * 3.0 + 2.0 + np.cos(3.0), rtol=1e-6)


def test_gradient_wrt_variable_and_intermediate(graph):
    v = tf.Variable([1.0, -2.0], name="v")
    h = v * 3.0
    loss = tf.reduce_sum(h * h)
    gv, gh = tf.gradients(loss, [v, h])
    with tf.Session() as sess:
        sess.run(v.initializer)
        a, b = sess.run([gv, gh])
    np.testing.assert_allclose(a, 18.0 * np.array([1.0, -2.0]))
    np.testing.assert_allclose(b, 2 * 3.0 * np.array([1.0, -2.0]))


def test_gradient_ops_live_under_the_gradients_scope(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.reduce_sum(tf.square(x, name="sq"), name="total")
    before = set(graph.get_operations())
    g, = tf.gradients(y, x)
    new_ops = [op for op in graph.get_operations() if op not in before]
    assert new_ops and all(op.name.startswith("gradients/") for op in new_ops)
    assert any(op.name.startswith("gradients/sq_grad/") for op in new_ops)
    assert any(op.name.startswith("gradients/total_grad/") for op in new_ops)
    g2, = tf.gradients(y, x)
    assert g2.op.name.startswith("gradients_1/")
    g3, = tf.gradients(y, x, name="mygrads")
    assert g3.op.name.startswith("mygrads/")


def test_missing_gradient_is_lookup_error(graph):
    x = tf.constant([1.0, 2.0])
    with graph.gradient_override_map({"Square": "NoSuchGradient"}):
        y = tf.square(x)
    with pytest.raises(LookupError, match="No gradient defined for operation"):
        tf.gradients(y, x)


def test_register_gradient_and_override_map(graph):
    @tf.RegisterGradient("TimesTenGrad_test_gradients")
    def _times_ten(op, grad):
        return [grad * 10.0]

    x = tf.constant([1.0, 2.0])
    with graph.gradient_override_map({"Identity": "TimesTenGrad_test_gradients"}):
        y = tf.identity(x)
    z = tf.identity(x)  # made outside the block: the normal gradient
    gy, gz = run([tf.gradients(y, x)[0], tf.gradients(z, x)[0]])
    np.testing.assert_array_equal(gy, [10.0, 10.0])
    np.testing.assert_array_equal(gz, [1.0, 1.0])
    with pytest.raises(KeyError, match="Registering two gradient with name"):
        tf.RegisterGradient("TimesTenGrad_test_gradients")(_times_ten)


def test_hessians(graph):
    x = tf.constant([1.0, 2.0], tf.float64)
    y = tf.reduce_sum(x * x * x) + x[0] * x[1]
    h, = tf.hessians(y, x)
    np.testing.assert_allclose(run(h), [[6.0, 1.0], [1.0, 12.0]])


def test_not_differentiable_ops_give_none(graph):
    x = tf.constant([1.5, -2.5])
    y = tf.reduce_sum(tf.floor(x) + tf.sign(x) + tf.round(x) * x)
    g, = tf.gradients(y, x)
    np.testing.assert_array_equal(run(g), [2.0, -2.0])  # only round(x) * x's x factor


def _dynamic(t):
    """`t` with every dimension unknown at graph-build time (the run-time shape paths)."""
    return tf.placeholder_with_default(t, [None] * t.shape.ndims)


DYNAMIC_FNS = [
    ("reduce_sum", lambda t: tf.reduce_sum(_dynamic(t), axis=1)),
    ("reduce_sum_keepdims", lambda t: tf.reduce_sum(_dynamic(t), axis=0, keepdims=True)),
    ("reduce_max", lambda t: tf.reduce_max(_dynamic(t), axis=1)),
    ("reduce_mean_all", lambda t: tf.reduce_mean(_dynamic(t))),
    ("broadcast_add", lambda t: _dynamic(t) + tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64),
                                                                         [None])),
    ("broadcast_mul_rows", lambda t: _dynamic(t) * _dynamic(t[:, :1])),
    ("tile", lambda t: tf.tile(_dynamic(t), [2, 1])),
    ("slice", lambda t: tf.slice(_dynamic(t), [0, 1], [2, 2])),
    ("concat", lambda t: tf.concat([_dynamic(t), _dynamic(t * 2.0)], 1)),
    ("gather", lambda t: tf.gather(_dynamic(t), [1, 1, 0])),
    ("reshape", lambda t: tf.reshape(_dynamic(t), [-1])),
    ("transpose", lambda t: tf.transpose(_dynamic(t))),
    ("strided_slice", lambda t: _dynamic(t)[1:, ::2]),
    ("squeeze_expand", lambda t: tf.squeeze(tf.expand_dims(_dynamic(t), 0), [0])),
    ("pad", lambda t: tf.pad(_dynamic(t), [[1, 0], [0, 1]])),
]


@pytest.mark.parametrize("name, fn", DYNAMIC_FNS, ids=[d[0] for d in DYNAMIC_FNS])
def test_gradients_with_unknown_static_shapes(name, fn):
    x = RNG.permutation(12).reshape(3, 4) / 5.0 - 1.0  # distinct values for max
    check_gradients(fn, x)


def test_negating_indexed_slices_negates_their_rows():
    """`-slices` (installed on the framework's IndexedSlices by the ops layer) keeps indices and shape."""
    with tf.Graph().as_default():
        params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        (grad,) = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 0, 2]) * 3.0), [params])
        assert isinstance(grad, tf.IndexedSlices)
        neg = -grad
        assert isinstance(neg, tf.IndexedSlices) and neg.indices is grad.indices
        assert neg.values.op.type == "Neg"
        with tf.Session() as sess:
            values, indices, shape = sess.run(neg)
            dense = sess.run(tf.convert_to_tensor(neg))
    np.testing.assert_array_equal(values, -3.0 * np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(indices, [2, 0, 2])
    np.testing.assert_array_equal(shape, [3, 2])
    np.testing.assert_array_equal(dense, [[-3.0, -3.0], [0.0, 0.0], [-6.0, -6.0]])

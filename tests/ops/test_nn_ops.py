"""tf.nn ops: values against independent numpy references, gradients against
finite differences, static shapes, op names and errors."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors

from .gradcheck import check_gradients


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


RNG = np.random.RandomState(42)


def randn(*shape, dtype=np.float32):
    return RNG.randn(*shape).astype(dtype)


def away_from_zero(*shape, margin=0.1):
    """Values with |x| >= margin, so finite differences never straddle a kink at 0."""
    x = RNG.uniform(margin, 2.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)
    return x


# -- numpy references ----------------------------------------------------------------

def ref_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2


def out_and_offset(size, k, s, padding):
    if padding == "SAME":
        return same_pads(size, k, s)
    return (size - k) // s + 1, 0


def ref_conv2d(x, f, strides, padding):
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    sh, sw = strides
    oh, top = out_and_offset(h, kh, sh, padding)
    ow, left = out_and_offset(w, kw, sw, padding)
    x64, f64 = x.astype(np.float64), f.astype(np.float64)
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, col = i * sh + a - top, j * sw + b - left
                    if 0 <= r < h and 0 <= col < w:
                        out[:, i, j, :] += x64[:, r, col, :] @ f64[a, b]
    return out


def ref_pool(x, k, s, padding, kind):
    n, h, w, c = x.shape
    oh, top = out_and_offset(h, k[0], s[0], padding)
    ow, left = out_and_offset(w, k[1], s[1], padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - top, j * s[1] - left
            win = x[:, max(r0, 0):min(r0 + k[0], h), max(c0, 0):min(c0 + k[1], w), :].astype(np.float64)
            out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


def ref_max_pool_grad(x, dy, k, s, padding):
    """Each output's gradient goes to the first max of its window in row-major order."""
    n, h, w, c = x.shape
    oh, top = out_and_offset(h, k[0], s[0], padding)
    ow, left = out_and_offset(w, k[1], s[1], padding)
    dx = np.zeros(x.shape)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    best, where = None, None
                    for a in range(k[0]):
                        for d in range(k[1]):
                            r, col = i * s[0] + a - top, j * s[1] + d - left
                            if 0 <= r < h and 0 <= col < w and (best is None or x[b, r, col, ch] > best):
                                best, where = x[b, r, col, ch], (r, col)
                    dx[b, where[0], where[1], ch] += dy[b, i, j, ch]
    return dx


# -- activations -----------------------------------------------------------------------

ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0), "Relu"),
    "relu6": (tf.nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6), "Relu6"),
    "elu": (tf.nn.elu, lambda x: np.where(x < 0, np.exp(x) - 1, x), "Elu"),
    "selu": (tf.nn.selu, lambda x: 1.0507009873554805 * np.where(x < 0, 1.6732632423543772 * (np.exp(x) - 1), x),
             "Selu"),
    "softplus": (tf.nn.softplus, lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0), "Softplus"),
    "softsign": (tf.nn.softsign, lambda x: x / (1 + np.abs(x)), "Softsign"),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), "LeakyRelu"),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_names(name):
    fn, ref, op_type = ACTIVATIONS[name]
    x = np.array([[-100.0, -7.0, -1.5, -0.25, 0.0], [0.25, 1.5, 5.9, 7.0, 100.0]], np.float32)
    y = fn(tf.constant(x))
    assert y.op.type == op_type
    assert y.op.name == op_type
    assert y.dtype == tf.float32 and y.shape.as_list() == [2, 5]
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients(name):
    fn = ACTIVATIONS[name][0]
    x = away_from_zero(3, 4)
    if name == "relu6":
        x[0, :2] = [6.5, 5.5]  # both sides of the upper kink
    check_gradients(fn, x)


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "softplus"])
def test_activation_second_derivatives(name):
    fn = ACTIVATIONS[name][0]

    def grad_of(x):
        y = fn(x)
        return tf.gradients(tf.reduce_sum(y * y), [x])[0]
    check_gradients(grad_of, away_from_zero(2, 3), rtol=1e-5, atol=1e-5)


def test_leaky_relu_alpha_and_int_input():
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    y = tf.nn.leaky_relu(x, alpha=0.1)
    assert y.op.get_attr("alpha") == pytest.approx(0.1)
    np.testing.assert_allclose(run(y), [-0.2, -0.05, 0.0, 3.0], rtol=1e-6)
    yi = tf.nn.leaky_relu(tf.constant([-2, 3]))
    assert yi.dtype == tf.float32
    np.testing.assert_allclose(run(yi), [-0.4, 3.0], rtol=1e-6)
    check_gradients(lambda t: tf.nn.leaky_relu(t, alpha=1.7), away_from_zero(5))


def test_relu_grad_routes_zero_to_nonpositive():
    x = tf.constant([-1.0, 0.0, 2.0])
    (g,) = tf.gradients(tf.reduce_sum(tf.nn.relu(x) * 3.0), [x])
    assert g.op.type == "ReluGrad"
    np.testing.assert_array_equal(run(g), [0.0, 0.0, 3.0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_large_relu_matches_numpy_bit_for_bit(dtype):
    """A large float Relu runs against blocks of zeros (ops/math_kernels.blockwise_with_scalar): across block
    boundaries, in place or not, on a transposed input, NaN and -0.0 come out as numpy's maximum
    gives them."""
    from graphrt.ops import math_kernels
    n = math_kernels._BLOCK + 1000
    value = RNG.randn(2, n).astype(dtype)
    value[0, ::997] = np.nan
    value[1, ::991] = -0.0
    x = tf.placeholder(dtype, [2, n])
    fresh = tf.nn.relu(x)               # x is fed: the kernel must not overwrite it
    in_place = tf.nn.relu(x * 1.0)      # its input is a sole consumer's fresh array
    transposed = tf.nn.relu(tf.transpose(x))
    want = np.maximum(value, 0)
    before = value.copy()
    got = run([fresh, in_place, transposed], {x: value})
    np.testing.assert_array_equal(value, before)
    for out in (got[0], got[1], got[2].T):
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(want))
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(value))


def test_large_relu6_matches_numpy_clip():
    value = RNG.uniform(-3, 9, size=(70_000,)).astype(np.float32)
    value[::101] = np.nan
    x = tf.placeholder(tf.float32, value.shape)
    got = run(tf.nn.relu6(x), {x: value})
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.clip(value, 0, 6))
    np.testing.assert_array_equal(run(tf.nn.relu6(tf.constant([-2, 3, 9]))), [0, 3, 6])


def test_relu_on_integers():
    np.testing.assert_array_equal(run(tf.nn.relu(tf.constant([-3, 0, 4]))), [0, 0, 4])


# -- softmax ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,ref,op_type", [(tf.nn.softmax, ref_softmax, "Softmax"),
                                            (tf.nn.log_softmax, ref_log_softmax, "LogSoftmax")])
def test_softmax_values(fn, ref, op_type):
    x = randn(4, 7) * 5
    y = fn(x)
    assert y.op.type == op_type and y.op.name == op_type
    np.testing.assert_allclose(run(y), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    big = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]], np.float32)  # overflows naive exp
    got = run(fn(big))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref(big.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn,ref", [(tf.nn.softmax, ref_softmax), (tf.nn.log_softmax, ref_log_softmax)])
def test_softmax_other_axes_and_ranks(fn, ref):
    x = randn(2, 3, 4)
    for axis in (0, 1, -2, 2, -1):
        y = fn(x, axis=axis)
        assert y.shape.as_list() == [2, 3, 4]
        np.testing.assert_allclose(run(y), ref(x.astype(np.float64), axis=axis), rtol=1e-5, atol=1e-6)
    v = randn(5)
    np.testing.assert_allclose(run(fn(v)), ref(v.astype(np.float64)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(fn(x, dim=0)), ref(x.astype(np.float64), axis=0), rtol=1e-5, atol=1e-6)


def test_softmax_bad_inputs():
    with pytest.raises(ValueError, match="rank 1"):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="range"):  # TF's class, at build time
        tf.nn.softmax(tf.constant(np.zeros((2, 3), np.float32)), axis=2)
    with pytest.raises(TypeError):
        tf.nn.softmax(tf.constant([1, 2]))


@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
def test_softmax_gradients(fn):
    check_gradients(fn, RNG.randn(3, 5))
    check_gradients(lambda x: fn(x, axis=0), RNG.randn(3, 2, 2))


def test_softmax_second_derivative():
    def grad_of(x):
        return tf.gradients(tf.reduce_sum(tf.nn.softmax(x) * tf.constant(RNG.randn(2, 4))), [x])[0]
    check_gradients(grad_of, RNG.randn(2, 4), rtol=1e-4, atol=1e-6)


# -- cross-entropies ------------------------------------------------------------------------------

def ref_xent(labels, logits, axis=-1):
    return -(labels * ref_log_softmax(logits, axis)).sum(axis=axis)


def test_softmax_xent_v2_values_and_name():
    logits = randn(5, 4) * 3
    labels = ref_softmax(randn(5, 4).astype(np.float64)).astype(np.float32)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    # as TF: the op is named after the scope; the loss is its output reshaped back (Reshape_2)
    assert loss.op.type == "Reshape" and loss.op.name == "softmax_cross_entropy_with_logits/Reshape_2"
    assert loss.graph.get_operation_by_name("softmax_cross_entropy_with_logits").type == \
        "SoftmaxCrossEntropyWithLogits"
    assert loss.shape.as_list() == [5] and loss.dtype == tf.float32
    np.testing.assert_allclose(run(loss), ref_xent(labels.astype(np.float64), logits.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


def test_softmax_xent_backprop_output():
    logits, labels = randn(3, 4), ref_softmax(randn(3, 4)).astype(np.float32)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    op = loss.graph.get_operation_by_name("softmax_cross_entropy_with_logits")
    loss, backprop = run(op.outputs)
    assert op.outputs[1].shape.as_list() == [3, 4]
    np.testing.assert_allclose(backprop, ref_softmax(logits.astype(np.float64)) - labels, rtol=1e-5, atol=1e-6)


def test_softmax_xent_higher_rank_and_axis():
    logits, labels = randn(2, 3, 4), ref_softmax(randn(2, 3, 4)).astype(np.float32)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3]
    np.testing.assert_allclose(run(loss), ref_xent(labels, logits.astype(np.float64)), rtol=1e-5, atol=1e-6)
    loss0 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=1)
    assert loss0.shape.as_list() == [2, 4]
    np.testing.assert_allclose(run(loss0), ref_xent(labels, logits.astype(np.float64), axis=1), rtol=1e-5,
                               atol=1e-6)
    ph = tf.placeholder(tf.float32, [None, None, 4])
    lossp = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=ph)
    assert lossp.shape.as_list() == [None, None]
    np.testing.assert_allclose(run(lossp, {ph: logits}), ref_xent(labels, logits.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)


def test_softmax_xent_gradients_v2_and_v1():
    labels = ref_softmax(RNG.randn(3, 4))
    check_gradients(lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=lg),
                    labels, RNG.randn(3, 4))
    labels_t = ref_softmax(RNG.randn(4, 3), axis=0)
    check_gradients(lambda lg: tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels_t, logits=lg, axis=0),
                    RNG.randn(4, 3))
    lab = tf.placeholder(tf.float64, [3, 4])
    lg = tf.placeholder(tf.float64, [3, 4])
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=lg)
    g_lab, g_lg = tf.gradients(loss, [lab, lg])
    assert g_lab is None  # v1 stops the gradient into labels
    assert g_lg is not None


def test_softmax_xent_second_derivative():
    labels = ref_softmax(RNG.randn(2, 3))

    def grad_of(lg):
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=lg)
        return tf.gradients(tf.reduce_sum(loss * tf.constant([1.0, 2.0], tf.float64)), [lg])[0]
    check_gradients(grad_of, RNG.randn(2, 3), rtol=1e-4, atol=1e-6)


def test_softmax_xent_v1_requires_named_args():
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits([1.0], [[1.0]])


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_values(label_dtype):
    logits = randn(6, 5) * 4
    labels = np.array([0, 4, 2, 2, 1, 3], label_dtype)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.op.type == "SparseSoftmaxCrossEntropyWithLogits"
    assert loss.op.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
    assert loss.shape.as_list() == [6]
    want = -ref_log_softmax(logits.astype(np.float64))[np.arange(6), labels]
    np.testing.assert_allclose(run(loss), want, rtol=1e-5, atol=1e-6)
    named = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="loss")
    assert named.op.name == "loss/loss"


def test_sparse_xent_higher_rank():
    logits = randn(2, 3, 5)
    labels = RNG.randint(0, 5, size=(2, 3))
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3]
    lsm = ref_log_softmax(logits.astype(np.float64))
    want = -np.take_along_axis(lsm, labels[..., None], axis=-1)[..., 0]
    np.testing.assert_allclose(run(loss), want, rtol=1e-5, atol=1e-6)


def test_sparse_xent_out_of_range_label():
    logits = tf.placeholder(tf.float32, [None, 4])
    labels = tf.placeholder(tf.int64, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with pytest.raises(errors.InvalidArgumentError) as info:
        run(loss, {logits: np.zeros((3, 4), np.float32), labels: np.array([1, 7, 0])})
    assert "Received a label value of 7 which is outside the valid range of [0, 4).  Label values: 1 7 0" in \
        str(info.value)
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        run(loss, {logits: np.zeros((2, 4), np.float32), labels: np.array([-1, 0])})


def test_sparse_xent_static_errors():
    with pytest.raises(ValueError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.zeros((2, 3), np.int32),
                                                       logits=np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="Shape mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.zeros((3,), np.int32),
                                                       logits=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.zeros((2,), np.float32),
                                                       logits=np.zeros((2, 3), np.float32))


def test_sparse_xent_gradient_and_second_derivative():
    labels = np.array([2, 0, 1])
    check_gradients(lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lg),
                    RNG.randn(3, 4))
    lg = tf.placeholder(tf.float64, [3, 4])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lg)
    (g,) = tf.gradients(loss, [lg])
    # TF 2 gives the second derivative (softmax's) where TF 1 refused it
    check_gradients(lambda x: tf.gradients(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=x), [x])[0], RNG.randn(3, 4))
    assert tf.gradients(tf.reduce_sum(g * g), [lg])[0] is not None


def test_sigmoid_xent():
    x = np.array([-200.0, -3.0, -0.5, 0.0, 0.5, 3.0, 200.0], np.float32)
    z = np.array([0.0, 1.0, 0.3, 1.0, 0.0, 0.7, 1.0], np.float32)
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    assert loss.op.name == "logistic_loss"
    x64, z64 = x.astype(np.float64), z.astype(np.float64)
    want = np.maximum(x64, 0) - x64 * z64 + np.log1p(np.exp(-np.abs(x64)))
    got = run(loss)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    check_gradients(lambda lab, lg: tf.nn.sigmoid_cross_entropy_with_logits(labels=lab, logits=lg),
                    RNG.uniform(0, 1, (2, 3)), away_from_zero(2, 3))
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=np.zeros(3, np.float32), logits=np.zeros(4, np.float32))


def test_weighted_cross_entropy():
    x, z = randn(4).astype(np.float64), RNG.uniform(0, 1, 4)
    loss = tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=3.0)
    sig = 1 / (1 + np.exp(-x))
    want = -(3.0 * z * np.log(sig) + (1 - z) * np.log(1 - sig))
    np.testing.assert_allclose(run(loss), want, rtol=1e-6)


# -- l2 loss, bias add, dense --------------------------------------------------------------------

def test_l2_loss():
    x = randn(3, 4)
    y = tf.nn.l2_loss(x)
    assert y.op.type == "L2Loss" and y.op.name == "L2Loss" and y.shape.as_list() == []
    got = run(y)
    assert got.shape == () and got.dtype == np.float32
    np.testing.assert_allclose(got, (x.astype(np.float64) ** 2).sum() / 2, rtol=1e-5)
    check_gradients(tf.nn.l2_loss, RNG.randn(2, 3))


def test_bias_add():
    x, b = randn(2, 3, 4), randn(4)
    y = tf.nn.bias_add(x, b)
    assert y.op.type == "BiasAdd" and y.op.name == "BiasAdd" and y.shape.as_list() == [2, 3, 4]
    np.testing.assert_allclose(run(y), x + b, rtol=1e-6)
    assert tf.nn.bias_add(x, b, data_format="NHWC").op.get_attr("data_format") == "NHWC"
    check_gradients(tf.nn.bias_add, RNG.randn(2, 3, 4), RNG.randn(4))


def test_bias_add_gradient_ops_and_second_order():
    x = tf.placeholder(tf.float64, [2, 3])
    b = tf.placeholder(tf.float64, [3])
    y = tf.nn.bias_add(x, b)
    gx, gb = tf.gradients(tf.reduce_sum(y * y), [x, b])
    assert gb.op.type == "BiasAddGrad" and gb.shape.as_list() == [3]
    xv, bv = RNG.randn(2, 3), RNG.randn(3)
    np.testing.assert_allclose(run(gb, {x: xv, b: bv}), (2 * (xv + bv)).sum(axis=0))

    def grad_b(xv, bv):
        return tf.gradients(tf.reduce_sum(tf.nn.bias_add(xv, bv) ** 2), [bv])[0]
    check_gradients(grad_b, RNG.randn(2, 3), RNG.randn(3), rtol=1e-5, atol=1e-5)


def test_bias_add_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.nn.bias_add(np.zeros(3, np.float32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.bias_add(np.zeros((2, 3, 4, 5), np.float32), np.zeros(3, np.float32), data_format="NCHW")
    x = tf.placeholder(tf.float32, [None, None])
    y = tf.nn.bias_add(x, np.zeros(4, np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
        run(y, {x: np.zeros((2, 3), np.float32)})


def test_xw_plus_b_and_relu_layer():
    x, w, b = randn(3, 4), randn(4, 5), randn(5)
    y = tf.nn.xw_plus_b(x, w, b)
    assert y.op.name == "xw_plus_b" and y.op.type == "BiasAdd"
    np.testing.assert_allclose(run(y), x @ w + b, rtol=1e-5, atol=1e-6)
    r = tf.nn.relu_layer(x, w, b)
    assert r.op.name == "relu_layer"
    np.testing.assert_allclose(run(r), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    check_gradients(tf.nn.xw_plus_b, RNG.randn(3, 4), RNG.randn(4, 2), RNG.randn(2))


# -- dropout, moments, normalization ----------------------------------------------------------

def test_dropout_statistics_and_scaling():
    x = np.ones((200, 100), np.float32)
    y = tf.nn.dropout(x, keep_prob=0.25, seed=3)
    assert y.shape.as_list() == [200, 100] and y.op.name == "dropout"
    got = run(y)
    assert set(np.unique(got)) <= {0.0, 4.0}  # kept values scaled by 1 / keep_prob
    assert abs((got > 0).mean() - 0.25) < 0.02
    again = run(y)
    np.testing.assert_array_equal(got, again)  # op seed: a new session replays the same mask


def test_dropout_rate_placeholder_and_noise_shape():
    x = np.ones((50, 40), np.float32)
    kp = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(x, keep_prob=kp)
    with tf.Session() as sess:
        full = sess.run(y, {kp: 1.0})
        half = sess.run(y, {kp: 0.5})
    np.testing.assert_array_equal(full, x)
    assert set(np.unique(half)) <= {0.0, 2.0} and 0.4 < (half > 0).mean() < 0.6
    r = run(tf.nn.dropout(x, rate=0.75))
    assert set(np.unique(r)) <= {0.0, 4.0}
    cols = run(tf.nn.dropout(x, keep_prob=0.5, noise_shape=[1, 40]))
    assert np.all(cols == cols[:1])  # one mask row broadcast over the batch
    xp = tf.placeholder(tf.float32, [None, 40])
    dyn = run(tf.nn.dropout(xp, 0.5), {xp: x})
    assert dyn.shape == (50, 40)


def test_dropout_keep_all_is_identity_and_errors():
    x = tf.constant(np.ones(3, np.float32))
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    assert tf.nn.dropout(x, rate=0.0) is x
    with pytest.raises(ValueError, match="rate"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError):
        tf.nn.dropout(x, keep_prob=1.5)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.constant([1, 2]), keep_prob=0.5)


def test_dropout_gradient_uses_the_same_mask():
    x = tf.placeholder(tf.float32, [30, 30])
    y = tf.nn.dropout(x, keep_prob=0.5, seed=1)
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    with tf.Session() as sess:
        yv, gv = sess.run([y, g], {x: np.ones((30, 30), np.float32)})
    np.testing.assert_array_equal(yv, gv)


def test_moments():
    x = randn(4, 3, 2)
    mean, var = tf.nn.moments(x, axes=[0, 1])
    assert mean.shape.as_list() == [2] and var.shape.as_list() == [2]
    m, v = run([mean, var])
    np.testing.assert_allclose(m, x.astype(np.float64).mean(axis=(0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, x.astype(np.float64).var(axis=(0, 1)), rtol=1e-5, atol=1e-6)
    mk, vk = tf.nn.moments(x, axes=[1], keep_dims=True)
    assert mk.shape.as_list() == [4, 1, 2] and vk.shape.as_list() == [4, 1, 2]
    check_gradients(lambda t: tf.nn.moments(t, axes=[0])[1], RNG.randn(5, 3))
    check_gradients(lambda t: tf.nn.moments(t, axes=[0, 1])[0], RNG.randn(2, 3))


def test_batch_normalization_and_l2_normalize():
    x, mean, var = randn(4, 3), randn(3), np.abs(randn(3)) + 0.5
    offset, scale = randn(3), randn(3)
    y = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    want = (x - mean) / np.sqrt(var + 1e-3) * scale + offset
    np.testing.assert_allclose(run(y), want, rtol=1e-5, atol=1e-5)
    n = tf.nn.l2_normalize(x, axis=1)
    np.testing.assert_allclose(run(n), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5)


def test_in_top_k():
    preds = np.array([[0.1, 0.9, 0.5], [0.3, 0.3, 0.2], [0.2, 0.1, 0.7]], np.float32)
    targets = np.array([2, 1, 0])
    np.testing.assert_array_equal(run(tf.nn.in_top_k(preds, targets, 1)), [False, True, False])
    np.testing.assert_array_equal(run(tf.nn.in_top_k(preds, targets, 2)), [True, True, True])


# -- convolution -----------------------------------------------------------------------------------

CONV_CASES = [
    # (input shape, filter shape, strides, padding)
    ((2, 5, 6, 3), (3, 3, 3, 4), (1, 1), "SAME"),
    ((2, 5, 6, 3), (3, 3, 3, 4), (1, 1), "VALID"),
    ((1, 7, 7, 2), (3, 2, 2, 3), (2, 2), "SAME"),
    ((1, 8, 7, 2), (2, 4, 2, 5), (2, 3), "VALID"),
    ((2, 6, 6, 4), (2, 2, 4, 2), (1, 1), "SAME"),  # even kernel: asymmetric SAME padding
    ((3, 5, 5, 1), (5, 5, 1, 6), (1, 1), "SAME"),  # single input channel
    ((2, 4, 5, 3), (1, 1, 3, 8), (1, 1), "VALID"),  # 1x1
    ((2, 5, 5, 3), (1, 1, 3, 2), (2, 2), "SAME"),  # strided 1x1
    ((1, 4, 4, 2), (3, 3, 2, 9), (1, 1), "SAME"),  # out channels > 4 x in channels: scatter backprop
    ((1, 2, 2, 1), (3, 3, 1, 1), (1, 1), "SAME"),  # kernel larger than input
]


@pytest.mark.parametrize("xs,fs,strides,padding", CONV_CASES)
def test_conv2d_matches_naive_loops(xs, fs, strides, padding):
    x, f = randn(*xs), randn(*fs)
    y = tf.nn.conv2d(x, f, strides=[1, strides[0], strides[1], 1], padding=padding)
    want = ref_conv2d(x, f, strides, padding)
    assert y.shape.as_list() == list(want.shape)
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,fs,strides,padding", CONV_CASES)
def test_conv2d_gradients(xs, fs, strides, padding):
    check_gradients(lambda x, f: tf.nn.conv2d(x, f, strides=[1, strides[0], strides[1], 1], padding=padding),
                    RNG.randn(*xs), RNG.randn(*fs), rtol=1e-5, atol=1e-6)


def test_conv2d_gradient_ops_and_unknown_batch():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    f = tf.constant(randn(3, 3, 2, 4))
    y = tf.nn.conv2d(x, f, strides=[1, 1, 1, 1], padding="SAME")
    assert y.shape.as_list() == [None, 6, 6, 4]
    gx, gf = tf.gradients(tf.reduce_sum(y * y), [x, f])
    assert gx.op.type == "Conv2DBackpropInput" and gf.op.type == "Conv2DBackpropFilter"
    assert gx.shape.as_list() == [None, 6, 6, 2] and gf.shape.as_list() == [3, 3, 2, 4]
    xv = randn(3, 6, 6, 2)
    gxv, gfv = run([gx, gf], {x: xv})
    assert gxv.shape == (3, 6, 6, 2) and gfv.shape == (3, 3, 2, 4)


def test_conv2d_second_order_gradients():
    f = RNG.randn(2, 2, 2, 3)

    def grad_x(x):
        y = tf.nn.conv2d(x, tf.constant(f), strides=[1, 1, 1, 1], padding="SAME")
        return tf.gradients(tf.reduce_sum(y * y), [x])[0]
    check_gradients(grad_x, RNG.randn(1, 3, 3, 2), rtol=1e-5, atol=1e-5)

    def grad_f(k):
        y = tf.nn.conv2d(tf.constant(RNG.randn(1, 4, 4, 2)), k, strides=[1, 2, 2, 1], padding="VALID")
        return tf.gradients(tf.reduce_sum(y * y), [k])[0]
    check_gradients(grad_f, f, rtol=1e-5, atol=1e-5)


def test_conv2d_api_forms():
    x, f = randn(1, 5, 5, 2), randn(3, 3, 2, 2)
    want = ref_conv2d(x, f, (2, 2), "SAME")
    for strides in (2, [2], [2, 2], [1, 2, 2, 1]):
        y = tf.nn.conv2d(x, filters=f, strides=strides, padding="SAME")
        assert y.op.get_attr("strides") == [1, 2, 2, 1]
        np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-4)
    y = tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", name="my_conv")
    assert y.op.name == "my_conv" and y.op.type == "Conv2D"
    assert tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID").op.name == "Conv2D_4"  # after Conv2D .. Conv2D_3


def test_conv2d_static_shape_errors():
    x = tf.placeholder(tf.float32, [1, 5, 5, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.nn.conv2d(x, np.zeros((3, 3, 2, 4), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1, 1], "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="dilations must be positive"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1, 1], "SAME", dilations=[1, 0, 2, 1])
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1, 1], "same")
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4 but was 3"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [5, 5, 3]), np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1, 1],
                     "SAME")
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 4 from 2"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [1, 2, 2, 3]), np.zeros((4, 4, 3, 1), np.float32), [1, 1, 1, 1],
                     "VALID")


def test_conv2d_runtime_errors():
    x = tf.placeholder(tf.float32, None)
    y = tf.nn.conv2d(x, np.zeros((3, 3, 2, 4), np.float32), [1, 1, 1, 1], "VALID")
    assert y.shape.ndims == 4
    with pytest.raises(errors.InvalidArgumentError, match="depth"):
        run(y, {x: np.zeros((1, 5, 5, 3), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        run(y, {x: np.zeros((5, 5, 2), np.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        run(y, {x: np.zeros((1, 1, 1, 2), np.float32)})


def test_conv2d_transpose_is_input_gradient():
    f = randn(3, 3, 2, 4)
    dy = randn(1, 3, 3, 4)
    y = tf.nn.conv2d_transpose(dy, f, output_shape=[1, 6, 6, 2], strides=[1, 2, 2, 1], padding="SAME")
    assert y.shape.as_list() == [1, 6, 6, 2]
    x = tf.placeholder(tf.float32, [1, 6, 6, 2])
    conv = tf.nn.conv2d(x, f, strides=[1, 2, 2, 1], padding="SAME")
    (gx,) = tf.gradients(conv, [x], grad_ys=[tf.constant(dy)])
    a, b = run([y, gx], {x: np.zeros((1, 6, 6, 2), np.float32)})
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_conv_float64_stays_float64():
    y = tf.nn.conv2d(RNG.randn(1, 4, 4, 2), RNG.randn(2, 2, 2, 1), [1, 1, 1, 1], "SAME")
    assert y.dtype == tf.float64 and run(y).dtype == np.float64


# -- pooling ----------------------------------------------------------------------------------------

POOL_CASES = [
    # (input shape, ksize, strides, padding)
    ((2, 4, 4, 3), (2, 2), (2, 2), "VALID"),
    ((2, 5, 5, 3), (2, 2), (2, 2), "SAME"),
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),  # overlapping windows
    ((1, 7, 6, 2), (3, 2), (2, 1), "VALID"),
    ((2, 4, 4, 1), (1, 1), (1, 1), "SAME"),
    ((1, 3, 3, 2), (3, 3), (1, 1), "SAME"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_pool_matches_naive_loops(kind, xs, k, s, padding):
    x = randn(*xs)
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    y = fn(x, ksize=[1, k[0], k[1], 1], strides=[1, s[0], s[1], 1], padding=padding)
    want = ref_pool(x, k, s, padding, kind)
    assert y.shape.as_list() == list(want.shape)
    assert y.op.type == ("MaxPool" if kind == "max" else "AvgPool")
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_pool_gradients(xs, k, s, padding):
    x = RNG.permutation(int(np.prod(xs))).reshape(xs) * 0.1  # distinct values: the max is unique
    kw = dict(ksize=[1, k[0], k[1], 1], strides=[1, s[0], s[1], 1], padding=padding)
    check_gradients(lambda t: tf.nn.max_pool(t, **kw), x, delta=1e-4)
    check_gradients(lambda t: tf.nn.avg_pool(t, **kw), RNG.randn(*xs))


@pytest.mark.parametrize("xs,k,s,padding", POOL_CASES)
def test_max_pool_grad_ties_go_to_first_max(xs, k, s, padding):
    x = RNG.randint(0, 2, size=xs).astype(np.float32)  # many ties
    dy_shape = ref_pool(x, k, s, padding, "max").shape
    dy = randn(*dy_shape)
    xt = tf.constant(x)
    y = tf.nn.max_pool(xt, [1, k[0], k[1], 1], [1, s[0], s[1], 1], padding)
    (g,) = tf.gradients(y, [xt], grad_ys=[tf.constant(dy)])
    assert g.op.type == "MaxPoolGrad"
    np.testing.assert_allclose(run(g), ref_max_pool_grad(x, dy, k, s, padding), rtol=1e-5, atol=1e-6)


def test_max_pool_second_order():
    x = RNG.permutation(32).reshape(1, 4, 4, 2) * 0.1

    def grad_of(t):
        y = tf.nn.max_pool(t, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        return tf.gradients(tf.reduce_sum(y * y), [t])[0]
    check_gradients(grad_of, x, delta=1e-4, atol=1e-5)


def test_avg_pool_second_order():
    def grad_of(t):
        y = tf.nn.avg_pool(t, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        return tf.gradients(tf.reduce_sum(y * y), [t])[0]
    check_gradients(grad_of, RNG.randn(1, 3, 3, 1), atol=1e-5)


def test_pool_names_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 28, 28, 32])
    m = tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    a = tf.nn.avg_pool(x, ksize=3, strides=2, padding="VALID", name="pool")
    assert m.op.name == "MaxPool" and a.op.name == "pool"
    assert m.shape.as_list() == [None, 14, 14, 32] and a.shape.as_list() == [None, 13, 13, 32]
    with pytest.raises(ValueError, match="batch dimension"):
        tf.nn.max_pool(x, [2, 2, 2, 1], [1, 2, 2, 1], "SAME")
    with pytest.raises(ValueError, match="depth"):
        tf.nn.max_pool(x, [1, 2, 2, 2], [1, 2, 2, 1], "SAME")
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "FULL")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.max_pool(tf.placeholder(tf.float32, [3, 3]), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")


def test_max_pool_on_integers_and_padding_never_wins():
    x = -np.arange(1, 10, dtype=np.int32).reshape(1, 3, 3, 1)  # all negative: zero padding would win
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    np.testing.assert_array_equal(run(y)[0, :, :, 0], [[-1, -3], [-7, -9]])
    xf = -np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    np.testing.assert_array_equal(run(tf.nn.max_pool(xf, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"))[0, :, :, 0],
                                  [[-1, -1, -2], [-1, -1, -2], [-4, -4, -5]])


def test_avg_pool_same_divides_by_valid_count():
    x = np.ones((1, 3, 3, 1), np.float32)
    x[0, :, :, 0] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    y = run(tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))[0, :, :, 0]
    np.testing.assert_allclose(y, [[3.0, 4.5], [7.5, 9.0]])


def test_lenet_block_end_to_end():
    """conv -> bias -> relu -> pool -> dense -> sparse xent: values and every gradient."""
    xv = RNG.randn(2, 6, 6, 1)
    labels = np.array([1, 0])

    def model(x, k, b, w):
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), b))
        p = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        logits = tf.matmul(tf.reshape(p, [-1, 3 * 3 * 2]), w)
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    check_gradients(model, xv, RNG.randn(3, 3, 1, 2), RNG.randn(2) + 0.5, RNG.randn(18, 2), rtol=1e-4,
                    atol=1e-5, delta=1e-5)


# -- top_k, conv1d, embedding_lookup, zero_fraction ------------------------------------------------

def test_top_k_values_ties_and_gradient():
    from graphrt.ops import nn_ops
    x = np.array([[1, 3, 3, 0, 5], [2, 2, 2, 2, 2]], np.float32)
    values, indices = nn_ops.top_k(x, 3)
    assert values.op.type == "TopKV2" and values.shape.as_list() == [2, 3] and indices.dtype == tf.int32
    v, i = run([values, indices])
    np.testing.assert_array_equal(v, [[5, 3, 3], [2, 2, 2]])
    np.testing.assert_array_equal(i, [[4, 1, 2], [0, 1, 2]])  # ties keep index order
    check_gradients(lambda t: nn_ops.top_k(t, 2)[0], RNG.permutation(12).reshape(3, 4) * 0.5, delta=1e-4)
    with pytest.raises(ValueError, match="k = 6"):
        nn_ops.top_k(x, 6)


def test_conv1d_matches_conv2d_reference():
    from graphrt.ops import nn_ops
    x, f = randn(2, 9, 3), randn(3, 3, 4)
    y = nn_ops.conv1d(x, f, stride=2, padding="SAME")
    assert y.op.name == "conv1d/Squeeze" and y.shape.as_list() == [2, 5, 4]
    want = ref_conv2d(x[:, None], f[None], (1, 2), "SAME")[:, 0]
    np.testing.assert_allclose(run(y), want, rtol=1e-4, atol=1e-4)


def test_embedding_lookup_and_zero_fraction():
    from graphrt.ops import nn_ops
    params = np.arange(12.0).reshape(4, 3)
    e = tf.nn.embedding_lookup(params, np.array([[3, 0], [1, 1]]))
    assert e.shape.as_list() == [2, 2, 3]
    np.testing.assert_array_equal(run(e), params[[[3, 0], [1, 1]]])
    check_gradients(lambda p: tf.nn.embedding_lookup(p, [2, 0, 2]), RNG.randn(3, 2))
    assert run(nn_ops.zero_fraction([0.0, 1.0, 0.0, 2.0])) == pytest.approx(0.5)

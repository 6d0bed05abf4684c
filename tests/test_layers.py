"""tf.layers against numpy: dense, conv2d, pooling, flatten, dropout and batch
normalization values; variable and op names, reuse, regularizers, UPDATE_OPS and the
moving averages, and the errors TF raises."""
import numpy as np
import pytest

import graphrt as tf

RNG = np.random.RandomState(0)


def run(fetches, feed_dict=None, init=True):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def conv2d_ref(x, k, stride, padding):
    n, h, w, c = x.shape
    kh, kw, _, f = k.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def pool_ref(x, size, stride, fn):
    n, h, w, c = x.shape
    oh, ow = (h - size) // stride + 1, (w - size) // stride + 1
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            out[:, i, j, :] = fn(x[:, i * stride:i * stride + size, j * stride:j * stride + size, :], axis=(1, 2))
    return out


def test_dense_values_names_and_variables(graph):
    k = RNG.randn(4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.layers.dense(x, 3, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(k),
                        bias_initializer=tf.constant_initializer(0.25))
    z = tf.layers.dense(y, 2, use_bias=False)
    assert y.name == "dense/Relu:0" and z.name == "dense_1/MatMul:0"
    assert y.shape.as_list() == [None, 3]
    assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0"]
    ops = [op.name for op in graph.get_operations()]
    assert {"dense/MatMul", "dense/BiasAdd", "dense/kernel/Initializer/Const", "dense/bias/Initializer/Const"} <= \
        set(ops)
    xv = RNG.randn(5, 4).astype(np.float32)
    np.testing.assert_allclose(run(y, {x: xv}), np.maximum(xv @ k + 0.25, 0), rtol=1e-5, atol=1e-6)


def test_dense_on_rank3_inputs_and_float64(graph):
    k = RNG.randn(4, 6)
    x = tf.placeholder(tf.float32, [None, 5, 4])
    y = tf.layers.dense(x, 6, kernel_initializer=tf.constant_initializer(k))
    x64 = tf.placeholder(tf.float64, [2, 4])
    y64 = tf.layers.dense(x64, 6, kernel_initializer=tf.constant_initializer(k))
    assert y.shape.as_list() == [None, 5, 6] and y.name.startswith("dense/BiasAdd")
    assert y64.dtype == tf.float64 and tf.global_variables()[2].dtype.base_dtype == tf.float64
    xv = RNG.randn(2, 5, 4).astype(np.float32)
    got, got64 = run([y, y64], {x: xv, x64: xv[:, 0].astype(np.float64)})
    np.testing.assert_allclose(got, xv @ k, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got64, xv[:, 0].astype(np.float64) @ k, rtol=1e-12)


def test_layer_objects_reuse_their_variables(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    layer = tf.layers.Dense(3, name="shared")
    a, b = layer(x), layer.apply(x * 2.0)
    assert (a.name, b.name) == ("shared/BiasAdd:0", "shared/BiasAdd_1:0")
    assert [v.name for v in layer.trainable_weights] == ["shared/kernel:0", "shared/bias:0"]
    assert layer.scope_name == "shared" and layer.built
    f1 = tf.layers.dense(x, 3, name="fc")
    f2 = tf.layers.dense(x, 3, name="fc", reuse=True)
    assert f2.name == "fc_1/BiasAdd:0"
    assert len(tf.trainable_variables()) == 4
    xv = RNG.randn(2, 4).astype(np.float32)
    av, bv, f1v, f2v, (k, bias), (fk, fb) = run([a, b, f1, f2, layer.trainable_weights, tf.trainable_variables()[2:]],
                                                {x: xv})
    # Both calls of the layer use its one kernel and bias; both fc layers use fc's.
    np.testing.assert_allclose(av, xv @ k + bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bv, (2.0 * xv) @ k + bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f1v, xv @ fk + fb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f2v, f1v, rtol=1e-6)
    assert np.abs(k).max() > 0  # glorot-initialized, so the checks above are not about zeros
    with pytest.raises(ValueError, match="Variable fc/kernel already exists"):
        tf.layers.dense(x, 3, name="fc")
    with pytest.raises(ValueError, match="Variable nothere/kernel does not exist"):
        tf.layers.dense(x, 3, name="nothere", reuse=True)


def test_layers_in_auto_reuse_scopes_share(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    outs = []
    for _ in range(2):
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            outs.append(tf.layers.dense(x, 2))
    assert [v.name for v in tf.global_variables()] == ["tower/dense/kernel:0", "tower/dense/bias:0"]
    assert outs[1].name == "tower_1/dense/BiasAdd:0"


def test_regularizers_and_trainable_false(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(0.5),
                    kernel_regularizer=lambda w: tf.reduce_sum(tf.abs(w)) * 0.1,
                    bias_regularizer=lambda b: tf.reduce_sum(b) + 1.0, name="regd")
    frozen = tf.layers.dense(x, 2, trainable=False, name="frozen")
    regs = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [r.name for r in regs] == ["regd/kernel/Regularizer/mul:0", "regd/bias/Regularizer/add:0"]
    assert [v.name for v in tf.trainable_variables()] == ["regd/kernel:0", "regd/bias:0"]
    assert "frozen/kernel:0" in [v.name for v in tf.global_variables()]
    assert run(tf.losses.get_regularization_loss()) == pytest.approx(0.4 + 1.0)
    assert frozen.shape.as_list() == [None, 2]


def test_conv_pool_flatten_match_numpy(graph):
    k = RNG.randn(3, 3, 2, 4).astype(np.float32)
    xv = RNG.randn(2, 7, 7, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 7, 2])
    same = tf.layers.conv2d(x, 4, 3, padding="same", kernel_initializer=tf.constant_initializer(k),
                            bias_initializer=tf.constant_initializer(0.1))
    valid = tf.layers.conv2d(x, 4, (3, 3), strides=2, kernel_initializer=tf.constant_initializer(k),
                             activation=tf.nn.relu, name="valid")
    mp = tf.layers.max_pooling2d(same, 2, 2)
    ap = tf.layers.average_pooling2d(same, pool_size=3, strides=2)
    flat = tf.layers.flatten(mp)
    assert [t.name for t in (same, valid, mp, ap, flat)] == [
        "conv2d/BiasAdd:0", "valid/Relu:0", "max_pooling2d/MaxPool:0", "average_pooling2d/AvgPool:0",
        "flatten/Reshape:0"]
    assert [t.shape.as_list() for t in (same, valid, mp, ap, flat)] == [
        [None, 7, 7, 4], [None, 3, 3, 4], [None, 3, 3, 4], [None, 3, 3, 4], [None, 36]]
    assert [v.name for v in tf.trainable_variables()] == ["conv2d/kernel:0", "conv2d/bias:0", "valid/kernel:0",
                                                          "valid/bias:0"]
    s, v, m, a, f = run([same, valid, mp, ap, flat], {x: xv})
    ref_same = conv2d_ref(xv, k, 1, "SAME") + 0.1
    np.testing.assert_allclose(s, ref_same, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(v, np.maximum(conv2d_ref(xv, k, 2, "VALID") + 0.0, 0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m, pool_ref(ref_same, 2, 2, np.max), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a, pool_ref(ref_same, 3, 2, np.mean), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f, m.reshape(2, -1))


def test_dropout_training_flag(graph):
    x = tf.ones([200, 50])
    off = tf.layers.dropout(x, rate=0.4)
    on = tf.layers.dropout(x, rate=0.4, training=True)
    flag = tf.placeholder(tf.bool, [])
    dyn = tf.layers.dropout(x, rate=0.4, training=flag)
    assert off.name == "dropout/Identity:0"
    offv, onv, dyn_off, dyn_on = run([off, on, dyn, dyn], {flag: False})[:3] + [run(dyn, {flag: True})]
    np.testing.assert_array_equal(offv, 1.0)
    np.testing.assert_array_equal(dyn_off, 1.0)
    for got in (onv, dyn_on):
        kept = got != 0
        assert abs(kept.mean() - 0.6) < 0.03
        np.testing.assert_allclose(got[kept], 1 / 0.6, rtol=1e-6)


def test_batch_normalization_training_updates_moving_averages(graph):
    xv = RNG.randn(8, 3).astype(np.float32) * 2 + 1
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, training=True, momentum=0.9)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [u.name for u in updates] == ["batch_normalization/AssignMovingAvg:0",
                                         "batch_normalization/AssignMovingAvg_1:0"]
    assert [v.name for v in tf.trainable_variables()] == ["batch_normalization/gamma:0",
                                                          "batch_normalization/beta:0"]
    mm, mv = [v for v in tf.global_variables() if "moving" in v.name]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv = sess.run(y, {x: xv})
        sess.run(updates, {x: xv})
        mmv, mvv = sess.run([mm, mv])
    mean, var = xv.mean(0), xv.var(0)
    np.testing.assert_allclose(yv, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mmv, 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mvv, 0.9 + 0.1 * var, rtol=1e-5)  # the biased batch variance


def test_batch_normalization_4d_uses_unbiased_variance_and_inference(graph):
    xv = RNG.randn(2, 3, 3, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    training = tf.placeholder_with_default(False, [])
    y = tf.layers.batch_normalization(x, training=training, momentum=0.5, epsilon=1e-6)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    mm, mv = [v for v in tf.global_variables() if "moving" in v.name]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        infer = sess.run(y, {x: xv})
        np.testing.assert_allclose(infer, xv / np.sqrt(1 + 1.001e-5), rtol=1e-5)  # epsilon clamped, as fused BN
        train = sess.run(y, {x: xv, training: True})
        sess.run(updates, {x: xv, training: True})
        mmv, mvv = sess.run([mm, mv])
        sess.run(updates, {x: xv})  # not training: the averages stay
        np.testing.assert_allclose(sess.run(mv), mvv)
    mean, var = xv.mean((0, 1, 2)), xv.var((0, 1, 2))
    np.testing.assert_allclose(train, (xv - mean) / np.sqrt(var + 1.001e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mmv, 0.5 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mvv, 0.5 + 0.5 * var * 18 / 17, rtol=1e-5)


def test_batch_normalization_inference_has_no_updates(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.batch_normalization(x, center=False, scale=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert [v.name for v in tf.global_variables()] == ["batch_normalization/moving_mean:0",
                                                       "batch_normalization/moving_variance:0"]


def test_layer_errors(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    with pytest.raises(ValueError, match="The last dimension of the inputs to a Dense layer should be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 3)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=2"):
        tf.layers.conv2d(x, 2, 3)
    with pytest.raises(ValueError, match="padding"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [1, 4, 4, 1]), 2, 3, padding="full")
    with pytest.raises(ValueError, match="expected min_ndim=2"):
        tf.layers.dense(tf.placeholder(tf.float32, [4]), 2)
    with pytest.raises(TypeError, match="non-floating point dtype"):
        tf.layers.dense(tf.placeholder(tf.int32, [None, 4]), 2)

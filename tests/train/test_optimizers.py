"""Optimizers against hand-written numpy versions of TF1's update rules, over several
steps; plus slots, global step, var_list, and the errors minimize raises."""
import numpy as np
import pytest

import graphrt as tf

W0 = np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]], np.float32)
B0 = np.array([0.1, -0.2], np.float32)
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0], [2.0, 0.0, 1.0], [-1.0, 1.0, 0.5]], np.float32)
T = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -0.5]], np.float32)


def build_loss(dtype=tf.float32):
    w = tf.Variable(W0.astype(dtype.np), name="w")
    b = tf.Variable(B0.astype(dtype.np), name="b")
    pred = tf.matmul(tf.constant(X.astype(dtype.np)), w) + b
    loss = tf.reduce_mean(tf.square(pred - T.astype(dtype.np)))
    return w, b, loss


def numpy_grads(w, b):
    """d/dw, d/db of mean((X w + b - T)^2), in float64."""
    err = X.astype(np.float64) @ w + b - T
    scale = 2.0 / err.size
    return X.T.astype(np.float64) @ err * scale, err.sum(0) * scale


def reference_gd(steps, lr):
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    out = []
    for _ in range(steps):
        gw, gb = numpy_grads(w, b)
        w, b = w - lr * gw, b - lr * gb
        out.append((w, b))
    return out


def reference_momentum(steps, lr, momentum, nesterov=False):
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    aw, ab = np.zeros_like(w), np.zeros_like(b)
    out = []
    for _ in range(steps):
        gw, gb = numpy_grads(w, b)
        aw, ab = aw * momentum + gw, ab * momentum + gb
        if nesterov:
            w, b = w - (lr * gw + lr * momentum * aw), b - (lr * gb + lr * momentum * ab)
        else:
            w, b = w - lr * aw, b - lr * ab
        out.append((w, b))
    return out


def reference_adam(steps, lr, beta1, beta2, eps):
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    # TF keeps beta^t in float32 variables (whatever the variables' dtype), starting at beta
    b1p, b2p = np.float32(beta1), np.float32(beta2)
    out = []
    for _ in range(steps):
        grads = numpy_grads(w, b)
        lr_t = lr * np.sqrt(1 - np.float64(b2p)) / (1 - np.float64(b1p))
        params = [w, b]
        for k, g in enumerate(grads):
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v[k] = beta2 * v[k] + (1 - beta2) * g * g
            params[k] = params[k] - lr_t * m[k] / (np.sqrt(v[k]) + eps)
        w, b = params
        b1p, b2p = b1p * np.float32(beta1), b2p * np.float32(beta2)
        out.append((w, b))
    return out


def run_steps(optimizer_fn, steps, dtype=tf.float32):
    g = tf.Graph()
    with g.as_default():
        w, b, loss = build_loss(dtype)
        train = optimizer_fn().minimize(loss)
        init = tf.global_variables_initializer()
    out = []
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(steps):
            assert sess.run(train) is None
            out.append(sess.run([w, b]))
    return out


def assert_trajectory(got, want, rtol, dtype=np.float32):
    assert len(got) == len(want)
    for step, ((gw, gb), (ww, wb)) in enumerate(zip(got, want)):
        assert gw.dtype == dtype and gb.dtype == dtype
        np.testing.assert_allclose(gw, ww, rtol=rtol, atol=rtol, err_msg=f"w after step {step + 1}")
        np.testing.assert_allclose(gb, wb, rtol=rtol, atol=rtol, err_msg=f"b after step {step + 1}")


def test_gradient_descent_matches_reference():
    assert_trajectory(run_steps(lambda: tf.train.GradientDescentOptimizer(0.05), 5), reference_gd(5, 0.05), 1e-5)


def test_gradient_descent_float64():
    got = run_steps(lambda: tf.train.GradientDescentOptimizer(0.05), 4, tf.float64)
    assert_trajectory(got, reference_gd(4, 0.05), 1e-6, np.float64)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_reference(nesterov):
    got = run_steps(lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov), 6)
    assert_trajectory(got, reference_momentum(6, 0.05, 0.9, nesterov), 1e-5)


@pytest.mark.parametrize("dtype, rtol", [(tf.float32, 2e-5), (tf.float64, 1e-9)])
def test_adam_matches_reference(dtype, rtol):
    got = run_steps(lambda: tf.train.AdamOptimizer(0.1, beta1=0.8, beta2=0.95, epsilon=1e-7), 6, dtype)
    assert_trajectory(got, reference_adam(6, 0.1, 0.8, 0.95, 1e-7), rtol, dtype.np)


def test_momentum_float64():
    got = run_steps(lambda: tf.train.MomentumOptimizer(0.05, 0.9), 4, tf.float64)
    assert_trajectory(got, reference_momentum(4, 0.05, 0.9), 1e-9, np.float64)


def test_adam_defaults_match_reference():
    got = run_steps(lambda: tf.train.AdamOptimizer(), 3)
    assert_trajectory(got, reference_adam(3, 0.001, 0.9, 0.999, 1e-8), 1e-5)


def test_learning_rate_from_a_placeholder(graph):
    w, b, loss = build_loss()
    lr = tf.placeholder(tf.float32, [], name="lr")
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {lr: 0.0})
        np.testing.assert_array_equal(sess.run(w), W0)
        sess.run(train, {lr: np.float32(0.05)})  # (a Python 0.05 is refused: see test_session xfail)
        np.testing.assert_allclose(sess.run(w), reference_gd(1, 0.05)[0][0], rtol=1e-5)


def test_minimize_decreases_the_loss(graph):
    w, b, loss = build_loss()
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run(loss)]
        for _ in range(30):
            sess.run(train)
            losses.append(sess.run(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_global_step_increments_after_updates(graph):
    w, b, loss = build_loss()
    step = tf.train.get_or_create_global_step()
    assert step.dtype.base_dtype == tf.int64 and step.op.name == "global_step"
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step  # the second call finds it
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
    assert train.name == "GradientDescent"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k in range(1, 4):
            sess.run(train)
            assert sess.run(step) == k
            assert tf.train.global_step(sess, step) == k
        np.testing.assert_allclose(sess.run(w), reference_gd(3, 0.05)[-1][0], rtol=1e-5)
    with pytest.raises(ValueError, match="'global_step' already exists"):
        tf.train.create_global_step()


def test_slots_and_optimizer_variables(graph):
    w, b, loss = build_loss()
    mom = tf.train.MomentumOptimizer(0.1, 0.9)
    mom.minimize(loss)
    assert mom.get_slot_names() == ["momentum"]
    slot = mom.get_slot(w, "momentum")
    assert slot.op.name == "w/Momentum" and slot.shape.as_list() == [3, 2] and not slot.trainable
    adam = tf.train.AdamOptimizer()
    adam.minimize(loss)
    assert adam.get_slot(w, "m").op.name == "w/Adam"
    assert adam.get_slot(w, "v").op.name == "w/Adam_1"
    assert sorted(v.op.name for v in adam.variables()) == sorted(
        ["beta1_power", "beta2_power", "w/Adam", "w/Adam_1", "b/Adam", "b/Adam_1"])
    assert tf.trainable_variables() == [w, b]
    assert adam.get_slot(w, "nope") is None


def test_var_list_limits_the_update(graph):
    w, b, loss = build_loss()
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, var_list=[b])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_array_equal(sess.run(w), W0)
        gw, gb = numpy_grads(W0.astype(np.float64), B0.astype(np.float64))
        np.testing.assert_allclose(sess.run(b), B0 - 0.05 * gb, rtol=1e-5)


def test_non_trainable_variables_are_not_updated(graph):
    frozen = tf.Variable(2.0, trainable=False, name="frozen")
    w = tf.Variable(1.0, name="w")
    loss = tf.square(w * frozen)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run(frozen) == 2.0
        np.testing.assert_allclose(sess.run(w), 1.0 - 0.1 * 8.0)


def test_compute_and_apply_gradients_separately(graph):
    w, b, loss = build_loss()
    unused = tf.Variable(1.0, name="unused")
    opt = tf.train.GradientDescentOptimizer(0.05)
    grads_and_vars = opt.compute_gradients(loss, var_list=[w, b, unused])
    assert [v for _, v in grads_and_vars] == [w, b, unused]
    assert grads_and_vars[2][0] is None
    clipped = [(tf.clip_by_value(g, -0.01, 0.01), v) for g, v in grads_and_vars if g is not None]
    train = opt.apply_gradients(clipped)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        gw, _ = numpy_grads(W0.astype(np.float64), B0.astype(np.float64))
        np.testing.assert_allclose(sess.run(w), W0 - 0.05 * np.clip(gw, -0.01, 0.01), rtol=1e-6)
        assert sess.run(unused) == 1.0


def test_minimize_errors(graph):
    w, b, loss = build_loss()
    unrelated = tf.Variable(1.0, name="unrelated")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(loss, var_list=[unrelated])
    with pytest.raises(ValueError, match="Invalid type int32"):
        opt.minimize(tf.constant(1), var_list=[w])
    with pytest.raises(ValueError, match="No variables to optimize"):
        with tf.Graph().as_default():
            opt.minimize(tf.constant(1.0))
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):  # TF's error for a Tensor
        opt.apply_gradients([(tf.constant(1.0), tf.constant(2.0))])
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.GradientDescentOptimizer(0.1, name="")


def test_update_ops_are_colocated_with_variables(graph):
    with tf.device("/cpu:0"):
        w = tf.Variable([1.0, 2.0], name="w")
    loss = tf.reduce_sum(w * w)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train = opt.minimize(loss)
    update = [op for op in graph.get_operations() if op.type == "ApplyMomentum"]
    assert len(update) == 1
    assert update[0].name.startswith("Momentum/update_w/")
    assert update[0].get_attr("_class") == ["loc:@w"]
    assert update[0].device == "/device:CPU:0"
    assert opt.get_slot(w, "momentum").device == "/device:CPU:0"
    assert train in tf.get_collection(tf.GraphKeys.TRAIN_OP)

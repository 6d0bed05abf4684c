"""tf.train.repeat: K training steps sunk into one Session.run equal K runs."""
import numpy as np
import pytest

import graphrt as tf

K, B = 6, 8


def _data():
    rng = np.random.RandomState(0)
    return rng.randn(K, B, 4).astype(np.float32), rng.randn(K, B, 1).astype(np.float32)


def _loss(x, y):
    h = tf.layers.dense(x, 8, tf.nn.tanh, name="fc", kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    out = tf.layers.dense(h, 1, name="out", kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    return tf.reduce_mean(tf.square(out - y))


def _optimizer(name):
    return {"sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
            "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
            "adam": lambda: tf.train.AdamOptimizer(0.01)}[name]()


def _separate_runs(opt_name, device=None):
    xs, ys = _data()
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x = tf.placeholder(tf.float32, [B, 4])
        y = tf.placeholder(tf.float32, [B, 1])
        loss = _loss(x, y)
        step = tf.train.get_or_create_global_step()
        train = _optimizer(opt_name).minimize(loss, global_step=step)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss], {x: xs[i], y: ys[i]})[1] for i in range(K)]
        return losses, sess.run(tf.trainable_variables()), sess.run(step)


def _sunk(opt_name, device=None):
    xs, ys = _data()
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        xs_t = tf.placeholder(tf.float32, [K, B, 4])
        ys_t = tf.placeholder(tf.float32, [K, B, 1])
        step = tf.train.get_or_create_global_step()
        opt = _optimizer(opt_name)

        def train_step(x, y):
            loss = _loss(x, y)
            return opt.minimize(loss, global_step=step), loss
        losses = tf.train.repeat(train_step, K, [xs_t, ys_t])
    assert losses.shape.as_list() == [K]
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(losses, {xs_t: xs, ys_t: ys})
        executors = sess.plan_for(losses, {xs_t: xs, ys_t: ys}).executors
        _sunk.fallback_reasons = [getattr(ex, "loop_fallback_reason", None) for ex in executors]
        _sunk.compiled = [getattr(ex, "loop_plan", None) is not None for ex in executors]
        return values, sess.run(tf.trainable_variables()), sess.run(step)


@pytest.mark.parametrize("opt_name", ["sgd", "momentum", "adam"])
def test_sunk_steps_equal_separate_runs(opt_name):
    want_losses, want_params, want_step = _separate_runs(opt_name)
    losses, params, step = _sunk(opt_name)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    assert step == want_step == K
    for got, want in zip(params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_sunk_steps_on_the_cpu_run_as_a_compiled_loop(opt_name):
    want_losses, want_params, _ = _separate_runs(opt_name, "/device:CPU:0")
    losses, params, _ = _sunk(opt_name, "/device:CPU:0")
    # the loop reads and updates variables living outside it: it still runs as a compiled loop
    assert _sunk.compiled == [True], _sunk.fallback_reasons
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_sunk_steps_on_a_sim_device_equal_separate_runs():
    want_losses, want_params, _ = _separate_runs("momentum", "/device:SIM:0")
    losses, params, _ = _sunk("momentum", "/device:SIM:0")
    # the SIM partition's loop runs as one launch on the device's compute stream (the CPU's only fetches)
    assert _sunk.compiled == [False, True], _sunk.fallback_reasons
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_iterations_can_be_a_tensor_and_nothing_recorded(graph):
    v = tf.Variable(0.0)
    n = tf.placeholder(tf.int32, [])
    run = tf.train.repeat(lambda: tf.assign_add(v, 2.0).op, n, dtypes=())
    assert isinstance(run, tf.Operation)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(run, {n: 7})
        assert sess.run(v) == 14.0


def test_bad_arguments_are_refused(graph):
    xs = tf.placeholder(tf.float32, [5, 2], name="xs")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input xs:0 of shape \(5, 2\) does not hold 4 steps"):
        tf.train.repeat(lambda x: tf.reduce_sum(x), 4, [xs])
    with pytest.raises(tf.errors.InvalidArgumentError, match="iterations must be >= 1"):
        tf.train.repeat(lambda x: tf.reduce_sum(x), 0, [xs])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"step_fn records \['repeat/loop/Sum:0', "
                                                             r"'repeat/loop/Max:0'\] of dtypes"):
        tf.train.repeat(lambda x: (tf.reduce_sum(x), tf.reduce_max(x)), 5, [xs])

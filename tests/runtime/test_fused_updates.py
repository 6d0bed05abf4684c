"""A weight gradient's MatMul fused into its ApplyGradientDescent or
ApplyMomentum as one gemm
(runtime/fused_updates.py): the same bits as the two kernels, on one device
and across two, fused only where the product has no other reader, errors
named as unfused, a variable value someone still holds left alone, and
traces that keep both nodes."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.ops import blas
from graphrt.runtime import fused_updates, graph_executor

STEPS = 8  # the first runs are profiled (every node, unfused); the rest are fused


@pytest.fixture
def fusion():
    yield
    fused_updates.ENABLED = True


def _sgd(batch, n_in, n_out, dtype=np.float32, devices=("/cpu:0",), lr=0.05, fetch_grad=False, optimizer=None):
    rng = np.random.RandomState(1)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(dtype, [None, n_in], name="x")
        t = tf.placeholder(dtype, [None, n_out], name="t")
        with tf.device(devices[0]):
            w = tf.Variable(rng.randn(n_in, n_out).astype(dtype), name="w")
            h = tf.nn.relu(tf.matmul(x, w))
        with tf.device(devices[-1]):
            w2 = tf.Variable(rng.randn(n_out, n_out).astype(dtype), name="w2")
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - t))
        opt = optimizer() if optimizer is not None else tf.train.GradientDescentOptimizer(lr)
        grads = opt.compute_gradients(loss, [w, w2], colocate_gradients_with_ops=True)
        train = opt.apply_gradients(grads)
        init = tf.global_variables_initializer()
    feed = {x: rng.randn(batch, n_in).astype(dtype), t: rng.randn(batch, n_out).astype(dtype)}
    config = tf.ConfigProto(device_count={"CPU": len(devices)})
    return g, init, train, [w, w2], grads[0][0] if fetch_grad else None, feed, config


def _train(fused, *args, **kwargs):
    fused_updates.ENABLED = fused
    g, init, train, variables, grad, feed, config = _sgd(*args, **kwargs)
    with tf.Session(graph=g, config=config) as sess:
        sess.run(init)
        grads = []
        for _ in range(STEPS):
            out = sess.run([train, grad] if grad is not None else train, feed)
            if grad is not None:
                grads.append(out[1])
        executors = sess.plan_for([train, grad] if grad is not None else train, feed).executors
        return sess.run(variables), grads, sum(len(ex.fused) for ex in executors)


@pytest.mark.parametrize("devices", [("/cpu:0",), ("/cpu:0", "/cpu:1")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sgd_gives_the_bits_of_the_two_kernels(fusion, devices, dtype):
    fused, _, n_fused = _train(True, 64, 48, 32, dtype=dtype, devices=devices)
    plain, _, n_plain = _train(False, 64, 48, 32, dtype=dtype, devices=devices)
    assert n_fused == 2 and n_plain == 0  # both weights' updates, on one device or two
    for a, b in zip(fused, plain):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("devices", [("/cpu:0",), ("/cpu:0", "/cpu:1")])
def test_fused_momentum_gives_the_bits_of_the_two_kernels(fusion, devices):
    def momentum():
        return tf.train.MomentumOptimizer(0.05, 0.9)
    fused, _, n_fused = _train(True, 64, 48, 32, devices=devices, optimizer=momentum)
    plain, _, n_plain = _train(False, 64, 48, 32, devices=devices, optimizer=momentum)
    assert n_fused == 2 and n_plain == 0
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_nesterov_momentum_keeps_the_two_kernels(fusion):
    def nesterov():
        return tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True)
    fused, _, n_fused = _train(True, 64, 48, 32, optimizer=nesterov)
    plain, _, _ = _train(False, 64, 48, 32, optimizer=nesterov)
    assert n_fused == 0  # its variable update reads the gradient itself
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_fused_momentum_matches_numpy():
    rng = np.random.RandomState(5)
    w0 = rng.randn(6, 4).astype(np.float32)
    xs = [rng.randn(8, 6).astype(np.float32) for _ in range(STEPS)]
    gs = [rng.randn(8, 4).astype(np.float32) for _ in range(STEPS)]
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(w0, name="w")
        x = tf.placeholder(tf.float32, [None, 6])
        dy = tf.placeholder(tf.float32, [None, 4])
        grad = tf.matmul(x, dy, transpose_a=True)
        update = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients([(grad, w)])
        init = tf.global_variables_initializer()
    want, accum = w0.copy(), np.zeros_like(w0)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for xv, gv in zip(xs, gs):
            sess.run(update, {x: xv, dy: gv})
            accum = accum * np.float32(0.9) + xv.T @ gv
            want = want - np.float32(0.1) * accum
        np.testing.assert_allclose(sess.run(w), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("momentum", [None, 0.9])
def test_a_batch_whose_gemm_rounds_otherwise_keeps_the_two_kernels_bits(fusion, momentum):
    # with a long inner dimension a gemm adds into C block by block; the first call compares and keeps
    # the two kernels for that shape wherever the bits differ
    def optimizer():
        return tf.train.MomentumOptimizer(0.05, momentum) if momentum else tf.train.GradientDescentOptimizer(0.05)
    fused, _, _ = _train(True, 1500, 40, 24, optimizer=optimizer)
    plain, _, _ = _train(False, 1500, 40, 24, optimizer=optimizer)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)


def test_a_fetched_gradient_is_not_fused_and_is_the_product(fusion):
    variables, grads, n_fused = _train(True, 32, 16, 8, fetch_grad=True)
    assert n_fused == 1  # w2's update; w's product is fetched
    plain, plain_grads, _ = _train(False, 32, 16, 8, fetch_grad=True)
    for a, b in zip(variables + grads, plain + plain_grads):
        np.testing.assert_array_equal(a, b)


def _update_graph(shape_w=(3, 4)):
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.ones(shape_w, np.float32), name="w")
        a = tf.placeholder(tf.float32, [None, None], name="a")  # rank 2: MatMul (unknown rank is BatchMatMulV2, as TF)
        b = tf.placeholder(tf.float32, [None, None], name="b")
        grad = tf.matmul(a, b, transpose_a=True, name="dw")
        update = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(grad, w)])
    return g, w, a, b, update


def _profiled_session(g, w, update, feed):
    """A session on `g` past its profiled runs of `update`: the next runs are fused."""
    sess = tf.Session(graph=g)
    sess.run(w.initializer)
    for _ in range(STEPS):
        sess.run(update, feed)
    assert [len(ex.fused) for ex in sess.plan_for(update, feed).executors] == [1]  # these tests see it fused
    return sess


def test_a_value_fetched_earlier_is_not_changed_by_the_fused_update(fusion):
    g, w, a, b, update = _update_graph()
    rng = np.random.RandomState(0)
    feed = {a: rng.randn(5, 3).astype(np.float32), b: rng.randn(5, 4).astype(np.float32)}
    with _profiled_session(g, w, update, feed) as sess:
        held = sess.run(w)
        copy = held.copy()
        sess.run(update, feed)
        np.testing.assert_array_equal(held, copy)
        np.testing.assert_array_equal(sess.run(w), copy - np.float32(0.5) * (feed[a].T @ feed[b]))


def test_a_shape_error_names_the_matmul_as_unfused(fusion):
    g, w, a, b, update = _update_graph()
    rng = np.random.RandomState(0)
    good = {a: rng.randn(5, 3).astype(np.float32), b: rng.randn(5, 4).astype(np.float32)}
    bad = {a: rng.randn(5, 3).astype(np.float32), b: rng.randn(6, 4).astype(np.float32)}
    with _profiled_session(g, w, update, good) as sess:
        before = sess.run(w)
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(update, bad)
        assert info.value.node == "dw"
        np.testing.assert_array_equal(sess.run(w), before)
        sess.run(update, good)  # the next step is unharmed


def test_an_uninitialized_variable_names_the_update(fusion):
    g, w, a, b, update = _update_graph()
    feed = {a: np.ones((5, 3), np.float32), b: np.ones((5, 4), np.float32)}
    with tf.Session(graph=g) as sess:
        for _ in range(STEPS):  # profiled runs fail too
            with pytest.raises(errors.FailedPreconditionError) as info:
                sess.run(update, feed)
            assert "ApplyGradientDescent" in info.value.node and "uninitialized" in str(info.value)


def test_traces_list_both_nodes(fusion):
    g, w, a, b, update = _update_graph()
    feed = {a: np.ones((5, 3), np.float32), b: np.ones((5, 4), np.float32)}
    with _profiled_session(g, w, update, feed) as sess:
        meta = tf.RunMetadata()
        sess.run(update, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert "dw" in names and any(n.endswith("ApplyGradientDescent") for n in names)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("order_a", ["C", "F"])
@pytest.mark.parametrize("order_b", ["C", "F"])
def test_gemm_update_matches_numpy_for_every_layout(ta, tb, order_a, order_b):
    rng = np.random.RandomState(3)
    m, k, n = 7, 5, 6
    a = rng.randn(*((k, m) if ta else (m, k))).astype(np.float32)
    b = rng.randn(*((n, k) if tb else (k, n))).astype(np.float32)
    a = np.asfortranarray(a) if order_a == "F" else a
    b = np.asfortranarray(b) if order_b == "F" else b
    c = rng.randn(m, n).astype(np.float32)
    want = c + np.float32(-0.25) * ((a.T if ta else a) @ (b.T if tb else b))
    with blas.BLAS_LOCK:
        done = blas.gemm_update(-0.25, a, ta, b, tb, c)
    if not done:
        pytest.skip("no BLAS gemm found in this numpy")
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


def test_gemm_update_refuses_what_it_cannot_take():
    c = np.zeros((4, 4), np.float32)
    strided = np.zeros((4, 8), np.float32)[:, ::2]
    with blas.BLAS_LOCK:
        assert not blas.gemm_update(1.0, strided, False, np.ones((4, 4), np.float32), False, c)  # a view
        assert not blas.gemm_update(1.0, np.ones((4, 3), np.float32), False, np.ones((4, 4), np.float32), False, c)
        assert not blas.gemm_update(1.0, np.ones((4, 4)), False, np.ones((4, 4)), False, c)  # float64 into float32
        assert not blas.gemm_update(1.0, np.ones((4, 4), np.float32), False, np.ones((4, 4), np.float32), False,
                                    np.zeros((4, 4), np.float32).T)  # C not C-ordered
    np.testing.assert_array_equal(c, 0)


def test_a_fused_update_counts_as_expensive_when_its_matmul_was(fusion):
    # with one BLAS thread a long matmul is worth handing other devices' loops off before it; the
    # fused kernel, which runs in the update's place, inherits that (graph_executor._note_run)
    g, init, train, _, _, feed, _ = _sgd(64, 48, 32, devices=("/cpu:0", "/cpu:1"))
    config = tf.ConfigProto(device_count={"CPU": 2}, intra_op_parallelism_threads=1)
    with tf.Session(graph=g, config=config) as sess:
        sess.run(init)
        sess.run(train, feed)
        executors = [ex for ex in sess.plan_for(train, feed).executors if ex.fused]
        assert sum(len(ex.fused) for ex in executors) == 2
        for ex in executors:
            # the costs the profiled runs would find for a batch of 20,000 into a 64x64 weight
            ex.runs_to_profile = 1
            for matmul, update in ex.fused:
                matmul.cost_ns, update.cost_ns = 10 * graph_executor.EXPENSIVE_NS, 1000
                matmul.expensive = update.expensive = True  # as before measuring
            ex._note_run()
            for matmul, update in ex.fused:
                assert matmul.expensive and update.expensive
        for _ in range(3):
            sess.run(train, feed)  # and the steps that follow run

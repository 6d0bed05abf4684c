"""tf.gradients(..., checkpoints=...): the same gradients from less memory."""
import math

import numpy as np
import pytest

import graphrt as tf
from graphrt.recompute import checkpoints as ckpt

from .mlp import mlp, sim_gradients


def _grads(checkpoints_fn, layers=8, batch=16, width=8, dropout=None):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.random.RandomState(3).randn(batch, width).astype(np.float32))
        h, params = mlp(x, layers, width, dropout=dropout)
        loss = tf.reduce_sum(tf.square(h))
        plain = tf.gradients(loss, params + [x])
        recomputed = tf.gradients(loss, params + [x], checkpoints=checkpoints_fn(g, h))
        with tf.Session(graph=g) as sess:
            sess.run(tf.variables_initializer(params))
            return sess.run([plain, recomputed])


def _assert_same(plain, recomputed):
    assert len(plain) == len(recomputed)
    for a, b in zip(plain, recomputed):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_sqrt_checkpoints_give_the_plain_gradients():
    _assert_same(*_grads(lambda g, h: "sqrt"))


def test_listed_checkpoints_give_the_plain_gradients():
    def every_third_relu(g, h):
        relus = [op.outputs[0] for op in g.get_operations() if op.type == "Relu"]
        return relus[::3]
    _assert_same(*_grads(every_third_relu))


def test_collection_checkpoints_give_the_plain_gradients():
    def collect(g, h):
        for op in g.get_operations():
            if op.type == "Relu" and op.name.endswith(("Relu_2", "Relu_5")):
                tf.add_to_collection("checkpoints", op.outputs[0])
        assert len(tf.get_collection("checkpoints")) == 2
        return "collection"
    _assert_same(*_grads(collect))


def test_a_random_op_is_not_redrawn_by_the_recomputation():
    _assert_same(*_grads(lambda g, h: "sqrt", dropout=0.5))


def test_gradient_of_an_intermediate_tensor_with_checkpoints(graph):
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    h, params = mlp(x, 6, 4)
    mid = [op.outputs[0] for op in graph.get_operations() if op.type == "Relu"][2]
    loss = tf.reduce_sum(h * h)
    plain = tf.gradients(loss, [mid] + params)
    recomputed = tf.gradients(loss, [mid] + params, checkpoints="sqrt")
    with tf.Session() as sess:
        sess.run(tf.variables_initializer(params))
        _assert_same(*sess.run([plain, recomputed]))


def test_sqrt_picks_about_sqrt_n_of_the_chain_tensors(graph):
    x = tf.placeholder(tf.float32, [2, 4])
    h, params = mlp(x, 16, 4)
    loss = tf.reduce_sum(h)
    fwd = ckpt.forward_ops([loss], [p.op.outputs[0] for p in params])
    recomputable = ckpt._recomputable(fwd, {p.op for p in params})
    cuts = ckpt.separators(fwd, recomputable, [loss])
    # MatMul, add and Relu of each of the 16 layers cut the chain, then Square (the loss op is no cut).
    assert [t.op.type for t in cuts[:3]] == ["MatMul", "AddV2", "Relu"] or \
        [t.op.type for t in cuts[:3]] == ["MatMul", "Add", "Relu"]
    chosen = ckpt.sqrt_checkpoints(fwd, recomputable, [loss])
    step = math.ceil(math.sqrt(len(cuts)))
    assert len(chosen) == len(cuts) // step
    assert chosen == cuts[step - 1::step]


def test_sqrt_checkpoints_cut_peak_memory_of_a_deep_mlp_threefold():
    # 100 layers (benchmarks/recompute.py prints 64: 3.2-3.4x): the peak depends a little on how
    # the device stream's frees interleave under load, and the margin here is wide (about 4x).
    plain, plain_peak = sim_gradients(None, layers=100)
    recomputed, recomputed_peak = sim_gradients("sqrt", layers=100)
    _assert_same(plain, recomputed)
    activation = 256 * 32 * 4
    assert plain_peak >= 95 * activation          # every layer's activation is kept
    assert recomputed_peak * 3 <= plain_peak      # about 2 sqrt(n) of them are
    assert recomputed_peak <= 4 * math.sqrt(100 * 3) * activation


def test_a_checkpoint_off_the_forward_path_is_refused(graph):
    x = tf.placeholder(tf.float32, [2, 4])
    h, params = mlp(x, 3, 4)
    stray = tf.matmul(x, tf.ones([4, 4]), name="stray")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Checkpoint stray:0 is not on the forward path"):
        tf.gradients(tf.reduce_sum(h), params, checkpoints=[stray])


def test_an_unknown_checkpoint_mode_is_refused(graph):
    x = tf.placeholder(tf.float32, [2, 4])
    h, params = mlp(x, 2, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'memory'"):
        tf.gradients(tf.reduce_sum(h), params, checkpoints="memory")


def test_ops_inside_a_loop_are_not_recomputed_silently(graph):
    x = tf.constant(np.ones([2, 2], np.float32))
    w = tf.Variable(np.eye(2, dtype=np.float32))
    _, y = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.matmul(h, w)), [tf.constant(0), x])
    loss = tf.reduce_sum(tf.nn.relu(y))
    with pytest.raises(tf.errors.InvalidArgumentError, match="inside a tf.cond or tf.while_loop"):
        tf.gradients(loss, [w], checkpoints=[y])

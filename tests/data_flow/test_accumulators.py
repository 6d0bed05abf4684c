"""tf.ConditionalAccumulator / tf.SparseConditionalAccumulator: means and sums vs numpy,
stale gradients dropped (local_step < global step), take_grad waiting for
num_required and ended by the step's deadline, set_global_step, shared names,
and bad input."""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def _dense(reduction_type="MEAN", shape=(2,), shared_name=None):
    acc = tf.ConditionalAccumulator(tf.float32, shape=list(shape), shared_name=shared_name,
                                    reduction_type=reduction_type)
    grad = tf.placeholder(tf.float32, list(shape))
    step = tf.placeholder(tf.int64, [])
    return acc, grad, step, acc.apply_grad(grad, local_step=step)


@pytest.mark.parametrize("reduction_type", ["MEAN", "SUM"])
def test_take_grad_reduces_and_resets(graph, reduction_type):
    acc, grad, step, apply = _dense(reduction_type)
    take = acc.take_grad(3)
    count = acc.num_accumulated()
    grads = np.array([[1.0, -2.0], [3.0, 4.5], [0.5, 8.0]], np.float32)
    with tf.Session() as sess:
        for g in grads:
            sess.run(apply, {grad: g, step: 0})
        assert sess.run(count) == 3
        expected = grads.mean(0) if reduction_type == "MEAN" else grads.sum(0)
        np.testing.assert_allclose(sess.run(take), expected, rtol=1e-6)
        assert sess.run(count) == 0
    assert take.shape.as_list() == [2]


def test_stale_gradients_are_dropped(graph):
    acc, grad, step, apply = _dense()
    take = acc.take_grad(1)
    count = acc.num_accumulated()
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 1.0], step: 0})
        np.testing.assert_allclose(sess.run(take), [1.0, 1.0])  # the take advances the global step to 1
        sess.run(apply, {grad: [100.0, 100.0], step: 0})       # computed from old parameters: dropped
        assert sess.run(count) == 0
        sess.run(apply, {grad: [2.0, 4.0], step: 1})
        sess.run(apply, {grad: [4.0, 8.0], step: 5})           # newer than the accumulator: kept
        assert sess.run(count) == 2
        np.testing.assert_allclose(sess.run(take), [3.0, 6.0])  # take_grad(1) still returns the mean of all in


def test_set_global_step(graph):
    acc, grad, step, apply = _dense()
    set_step = acc.set_global_step(10)
    count = acc.num_accumulated()
    with tf.Session() as sess:
        sess.run(set_step)
        sess.run(apply, {grad: [1.0, 1.0], step: 9})
        assert sess.run(count) == 0
        sess.run(apply, {grad: [1.0, 1.0], step: 10})
        assert sess.run(count) == 1


def test_take_grad_waits_for_num_required(graph):
    acc, grad, step, apply = _dense()
    take = acc.take_grad(2)
    result = {}
    with tf.Session() as sess:
        def taker():
            result["value"] = sess.run(take)
        thread = threading.Thread(target=taker)
        thread.start()
        sess.run(apply, {grad: [1.0, 2.0], step: 0})
        sess.run(apply, {grad: [3.0, 6.0], step: 0})
        thread.join(30)
        assert not thread.is_alive()
    np.testing.assert_allclose(result["value"], [2.0, 4.0])


def test_take_grad_ends_at_the_step_deadline_and_the_accumulator_stays_usable(graph):
    acc, grad, step, apply = _dense()
    take = acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0], step: 0})
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(take, options=tf.RunOptions(timeout_in_ms=100))
        sess.run(apply, {grad: [3.0, 4.0], step: 0})
        np.testing.assert_allclose(sess.run(take), [2.0, 3.0])


def test_shared_name_shares_one_accumulator_and_checks_its_type(graph):
    a, grad_a, step_a, apply_a = _dense(shared_name="grads")
    b = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="grads")
    other = tf.ConditionalAccumulator(tf.float32, shape=[3], shared_name="grads")
    with tf.Session() as sess:
        sess.run(apply_a, {grad_a: [2.0, 2.0], step_a: 0})
        assert sess.run(b.num_accumulated()) == 1
        with pytest.raises(errors.InvalidArgumentError, match="Shared accumulator 'grads'.*\\[2\\].*\\[3\\]"):
            sess.run(other.num_accumulated())


def test_bad_input(graph):
    acc, grad, step, apply = _dense()
    zero = acc.take_grad(0)
    wide = tf.placeholder(tf.float32, None)
    apply_wide = acc.apply_grad(wide)
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="num_required must be positive, but was 0"):
            sess.run(zero)
        with pytest.raises(errors.InvalidArgumentError, match=r"Shape mismatch.*expects gradients of shape \[2\], "
                                                              r"got \[3\]"):
            sess.run(apply_wide, {wide: [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="reduction_type must be 'MEAN' or 'SUM'"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
    with pytest.raises(ValueError):
        acc.apply_grad(np.zeros(3, np.float32))  # the static shape is checked when the op is built


def test_sparse_accumulator_means_per_row(graph):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    slices = tf.IndexedSlices(tf.constant([[1.0, 1.0], [2.0, 4.0]]), tf.constant([3, 0], tf.int64),
                              tf.constant([5, 2], tf.int64))
    first = acc.apply_indexed_slices_grad(slices)
    second = acc.apply_grad([3, 4], [[3.0, 5.0], [7.0, 7.0]], grad_shape=[5, 2])
    stale = acc.apply_grad([1], [[9.0, 9.0]], grad_shape=[5, 2], local_step=-1)
    taken = acc.take_indexed_slices_grad(2)
    with tf.Session() as sess:
        sess.run([first])
        sess.run(stale)  # local_step -1 < global step 0: dropped
        sess.run(second)
        value = sess.run(taken)
    dense = np.zeros((5, 2), np.float32)
    hits = np.zeros(5)
    for rows, vals in (([3, 0], [[1, 1], [2, 4]]), ([3, 4], [[3, 5], [7, 7]])):
        for r, v in zip(rows, vals):
            dense[r] += v
            hits[r] += 1
    present = np.nonzero(hits)[0]
    np.testing.assert_array_equal(value.indices, present)  # sorted row indices
    np.testing.assert_allclose(value.values, dense[present] / hits[present, None])
    np.testing.assert_array_equal(value.dense_shape, [5, 2])


def test_sparse_accumulator_sum_and_shape_errors(graph):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2], reduction_type="SUM")
    a = acc.apply_grad([1, 1], [[1.0, 2.0], [3.0, 4.0]])
    indices, values, shape = acc.take_grad(1)
    # (as in TF, a gradient is validated only if it is not stale: after the take the global step is 1)
    bad_rows = acc.apply_grad([0], [[1.0, 2.0, 3.0]], local_step=1)
    bad_count = acc.apply_grad([0, 1], [[1.0, 2.0]], local_step=1)
    with tf.Session() as sess:
        sess.run(a)
        i, v, s = sess.run([indices, values, shape])
        np.testing.assert_array_equal(i, [1])
        np.testing.assert_allclose(v, [[4.0, 6.0]])
        np.testing.assert_array_equal(s, [4, 2])
        with pytest.raises(errors.InvalidArgumentError, match="Shape mismatch"):
            sess.run(bad_rows)
        with pytest.raises(errors.InvalidArgumentError, match="got 2 indices but values of shape \\[1,2\\]"):
            sess.run(bad_count)

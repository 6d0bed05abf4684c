"""graphrt/sparse/: values against numpy on random input, gradients against finite
differences, Session.run fetches and feeds of SparseTensors, and TF's errors (their class,
the node they name and TF's message). TensorFlow's own outputs are compared by the TF1
program case tests/tf1_programs/cases/sparse_tensors.py."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from tests.helpers import run
from tests.ops.gradcheck import check_gradients

RNG = np.random.RandomState(3)


def _random_sparse(shape, density=0.4, sort=True):
    dense = RNG.randn(*shape) * (RNG.rand(*shape) < density)
    indices = np.argwhere(dense != 0)
    if not sort:
        indices = indices[RNG.permutation(len(indices))]
    return indices.astype(np.int64), dense[tuple(indices.T)], dense


def _run_error(build):
    with tf.Graph().as_default():
        fetch = build()
        with pytest.raises(errors.InvalidArgumentError) as info:
            run(fetch)
    return info.value


# -- values ----------------------------------------------------------------------------------

def test_reorder_and_to_dense_against_numpy():
    indices, values, dense = _random_sparse((4, 5, 3), sort=False)
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices, values, dense.shape)
        ordered = tf.sparse.reorder(sp)
        got, got_dense = run([ordered, tf.sparse.to_dense(ordered)])
    assert np.array_equal(got.indices, np.argwhere(dense != 0))
    np.testing.assert_array_equal(got_dense, dense)


@pytest.mark.parametrize("axes,keep", [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_reduce_sum_and_max_against_numpy(axes, keep):
    indices, values, dense = _random_sparse((3, 4, 5))
    present = dense != 0
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices, values, dense.shape)
        s, m = run([tf.sparse.reduce_sum(sp, axes, keepdims=keep), tf.sparse.reduce_max(sp, axes, keepdims=keep)])
        s_sp = run(tf.sparse.reduce_sum_sparse(sp, axes, keepdims=keep))
    axis = tuple(np.atleast_1d(axes)) if axes is not None else None
    np.testing.assert_allclose(s, dense.sum(axis=axis, keepdims=keep))
    # max over the entries present only; a group without entries is 0
    want_max = np.where(present, dense, -np.inf).max(axis=axis, keepdims=keep)
    np.testing.assert_allclose(m, np.where(np.isinf(want_max), 0, want_max))
    want = dense.sum(axis=axis, keepdims=keep)
    assert list(s_sp.dense_shape) == list(np.shape(want))
    np.testing.assert_allclose(np.asarray(want)[tuple(s_sp.indices.T)], s_sp.values)


def test_reduce_static_shape_needs_constant_axes_and_shape():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
        assert tf.sparse.reduce_sum(sp, 1).shape.as_list() == [2]
        assert tf.sparse.reduce_sum(sp, 1, keepdims=True).shape.as_list() == [2, 1]
        unknown = tf.sparse_placeholder(tf.float32)
        assert tf.sparse.reduce_sum(unknown, 1).shape.ndims is None


@pytest.mark.parametrize("adj_a,adj_b", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_dense_matmul_against_numpy(adj_a, adj_b):
    indices, values, dense = _random_sparse((4, 3))
    b = RNG.randn(*((2, 4) if adj_a else (2, 3))).astype(np.float32)
    b = b if adj_b else b.T
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices, values.astype(np.float32), dense.shape)
        out = tf.sparse.sparse_dense_matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b)
        got = run(out)
    a = dense.T if adj_a else dense
    np.testing.assert_allclose(got, a @ (b.T if adj_b else b), rtol=1e-5, atol=1e-6)
    assert out.shape.as_list() == list(got.shape)


def test_sparse_add_merges_as_tf_with_threshold():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 1], [1, 2]], [1.0, -2.0], [2, 3])
        b = tf.SparseTensor([[0, 0], [1, 2]], [4.0, 2.5], [2, 3])
        out = run(tf.sparse.add(a, b, threshold=0.6))
        kept = run(tf.sparse.add(a, b, threshold=0.5))
    assert out.indices.tolist() == [[0, 0], [0, 1]]  # |-2 + 2.5| < 0.6 is dropped
    assert kept.indices.tolist() == [[0, 0], [0, 1], [1, 2]]  # threshold <= |sum| is kept


def test_softmax_per_row_of_present_entries():
    indices, values, dense = _random_sparse((3, 2, 4), density=0.6)
    with tf.Graph().as_default():
        out = run(tf.sparse.softmax(tf.SparseTensor(indices, values, dense.shape)))
    for idx, v in zip(out.indices, out.values):
        row = [k for k, j in enumerate(indices) if tuple(j[:-1]) == tuple(idx[:-1])]
        e = np.exp(values[row] - values[row].max())
        assert np.isclose(v, e[[tuple(indices[k]) for k in row].index(tuple(idx))] / e.sum())


def test_reshape_slice_concat_split_against_dense():
    indices, values, dense = _random_sparse((4, 6))
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices, values, dense.shape)
        r = tf.sparse.to_dense(tf.sparse.reorder(tf.sparse.reshape(sp, [3, -1, 2])))
        s = tf.sparse.to_dense(tf.sparse.slice(sp, [1, 2], [2, 10]))
        c = tf.sparse.to_dense(tf.sparse.concat(1, [sp, sp]))
        parts = [tf.sparse.to_dense(p) for p in tf.sparse.split(sp_input=sp, num_split=4, axis=1)]
        t = tf.sparse.to_dense(tf.sparse.transpose(sp))
        got = run([r, s, c, parts, t])
    np.testing.assert_array_equal(got[0], dense.reshape(3, 4, 2))
    np.testing.assert_array_equal(got[1], dense[1:3, 2:])
    np.testing.assert_array_equal(got[2], np.concatenate([dense, dense], 1))
    np.testing.assert_array_equal(np.concatenate(got[3], 1), dense)
    assert [p.shape[1] for p in got[3]] == [2, 2, 1, 1]  # TF: the first size % num_split parts are larger
    np.testing.assert_array_equal(got[4], dense.T)


def test_segment_reductions_against_numpy():
    data = RNG.randn(5, 3)
    idx, seg = np.array([4, 0, 0, 2, 3]), np.array([0, 0, 2, 2, 2])
    with tf.Graph().as_default():
        s, m, q = run([tf.sparse_segment_sum(data, idx, seg), tf.sparse_segment_mean(data, idx, seg),
                       tf.sparse_segment_sqrt_n(data, idx, seg)])
    rows = [data[idx[seg == k]] for k in range(3)]
    np.testing.assert_allclose(s, [r.sum(0) for r in rows])
    np.testing.assert_allclose(m, [r.mean(0) if len(r) else np.zeros(3) for r in rows])
    np.testing.assert_allclose(q, [r.sum(0) / np.sqrt(len(r)) if len(r) else np.zeros(3) for r in rows])


def test_fill_empty_rows_and_its_reverse_map():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[1, 2], [1, 0], [3, 1]], [1.0, 2.0, 3.0], [5, 3])
        filled, empty = tf.sparse.fill_empty_rows(sp, 9.0)
        out, empty = run([filled, empty])
    assert out.indices.tolist() == [[0, 0], [1, 2], [1, 0], [2, 0], [3, 1], [4, 0]]
    assert out.values.tolist() == [9.0, 1.0, 2.0, 9.0, 3.0, 9.0]
    assert empty.tolist() == [True, False, True, False, True]


# -- gradients ----------------------------------------------------------------------------------

IDX = np.array([[0, 1], [1, 0], [1, 2], [2, 2]], np.int64)


@pytest.mark.parametrize("adj_a,adj_b", [(False, False), (True, True), (True, False), (False, True)])
def test_matmul_gradients(adj_a, adj_b):
    b = RNG.randn(3, 3)
    check_gradients(lambda v, b: tf.sparse.sparse_dense_matmul(tf.SparseTensor(IDX, v, [3, 3]), b,
                                                               adjoint_a=adj_a, adjoint_b=adj_b),
                    RNG.randn(4), b)


@pytest.mark.parametrize("build", [
    lambda v: tf.sparse.to_dense(tf.SparseTensor(IDX, v, [3, 3])),
    lambda v: tf.sparse.reduce_sum(tf.SparseTensor(IDX, v, [3, 3]), 0),
    lambda v: tf.sparse.softmax(tf.SparseTensor(IDX, v, [3, 3])).values,
    lambda v: tf.sparse.add(tf.SparseTensor(IDX, v, [3, 3]), tf.SparseTensor(IDX[1:], v[:3] ** 2, [3, 3])).values,
    lambda v: tf.sparse.reorder(tf.SparseTensor(IDX[::-1], v, [3, 3])).values,
    lambda v: tf.sparse.slice(tf.SparseTensor(IDX, v, [3, 3]), [1, 0], [2, 2]).values,
    lambda v: tf.sparse.fill_empty_rows(tf.SparseTensor(IDX[:2], v[:2], [4, 3]), v[3])[0].values,
    lambda v: (tf.SparseTensor(IDX, v, [3, 3]) / tf.constant([1.0, 2.0, 4.0], tf.float64)).values,
], ids=["to_dense", "reduce_sum", "softmax", "add", "reorder", "slice", "fill_empty_rows", "div_dense"])
def test_value_gradients(build):
    check_gradients(build, RNG.rand(4) + 0.5)


@pytest.mark.parametrize("fn", [tf.sparse_segment_sum, tf.sparse_segment_mean, tf.sparse_segment_sqrt_n])
def test_segment_gradients(fn):
    check_gradients(lambda d: fn(d, [3, 0, 0, 2], [0, 0, 1, 3]), RNG.randn(4, 2))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse_gradient_is_indexed_slices(combiner):
    with tf.Graph().as_default():
        params = tf.constant(RNG.randn(5, 2))
        ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([4, 1, 4], np.int64), [2, 2])
        out = tf.nn.embedding_lookup_sparse(params, ids, None, combiner=combiner)
        grad = tf.gradients(tf.reduce_sum(out), params)[0]
        assert isinstance(grad, tf.IndexedSlices)
        g = run(tf.convert_to_tensor(grad))
    scale = {"sum": [1, 1], "mean": [0.5, 1], "sqrtn": [2 ** -0.5, 1]}[combiner]
    want = np.zeros((5, 2))
    want[4] += scale[0] + scale[1]
    want[1] += scale[0]
    np.testing.assert_allclose(g, want)


# -- sessions -------------------------------------------------------------------------------------

def test_fetch_gives_sparse_tensor_value_and_feeds_take_triples():
    with tf.Graph().as_default():
        ph = tf.sparse_placeholder(tf.float32, shape=[2, None], name="x")
        assert ph.shape.as_list() == [2, None]
        assert ph.indices.op.name == "x/indices" and ph.values.op.name == "x/values"
        doubled = tf.SparseTensor(ph.indices, ph.values * 2.0, ph.dense_shape)
        with tf.Session() as sess:
            got = sess.run({"d": doubled, "same": ph}, {ph: ([[1, 1]], [3.0], [2, 4])})
            again = sess.run(doubled, {ph: tf.SparseTensorValue(np.array([[0, 0]]), np.array([1.0]), [2, 2])})
            with sess.as_default():
                ev = doubled.eval({ph: ([[0, 1]], [5.0], [2, 2])})
    assert isinstance(got["d"], tf.SparseTensorValue)
    assert got["d"].values.tolist() == [6.0] and got["same"].dense_shape.tolist() == [2, 4]
    assert again.values.tolist() == [2.0]
    assert ev.values.tolist() == [10.0]


def test_sparse_placeholder_shape_defaults_to_fed_or_given():
    with tf.Graph().as_default():
        ph = tf.sparse_placeholder(tf.float32, shape=[3, 4])
        assert ph.shape.as_list() == [3, 4]
        out = run(ph.dense_shape, {ph.indices: np.zeros((0, 2), np.int64), ph.values: np.zeros(0, np.float32)})
    assert out.tolist() == [3, 4]


def test_a_sparse_tensor_is_not_a_tensor():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0]], [1.0], [2])
        with pytest.raises(TypeError):
            tf.convert_to_tensor(sp)
        with pytest.raises(RuntimeError, match="Sparse dtype mismatch"):
            tf.convert_to_tensor_or_sparse_tensor(sp, dtype=tf.int64)
        assert tf.convert_to_tensor_or_sparse_tensor(sp) is sp


def test_dense_shape_may_hold_tensors():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        sp = tf.SparseTensor([[0, 1]], [1.0], [n, 3])
        assert run(tf.sparse.to_dense(sp), {n: 2}).shape == (2, 3)


# -- errors -----------------------------------------------------------------------------------------

def test_sparse_to_dense_validation_messages():
    e = _run_error(lambda: tf.sparse_to_dense([[1, 0], [0, 1]], [3, 4], [1.0, 2.0], name="std"))
    assert e.node == "std" and str(e.message).startswith("indices[1] = [0,1] is out of order.")
    e = _run_error(lambda: tf.sparse_to_dense([[0, 1], [0, 1]], [3, 4], [1.0, 2.0]))
    assert "indices[1] = [0,1] is repeated" in str(e)
    e = _run_error(lambda: tf.sparse_to_dense([[5, 1]], [3, 4], [1.0]))
    assert "indices[0] = [5,1] is out of bounds: need 0 <= index < [3,4]" in str(e)
    e = _run_error(lambda: tf.sparse_to_dense([[5, 1]], [3, 4], [1.0], validate_indices=False))
    assert "Indices are not valid (out of bounds).  Shape: [3,4]" in str(e)
    e = _run_error(lambda: tf.sparse_to_dense([[0, 0], [0, 1]], [3, 4], [1.0, 2.0, 3.0]))
    assert "sparse_values has incorrect shape [3], should be [] or [2]" in str(e)


def test_run_time_errors_name_their_node():
    e = _run_error(lambda: tf.sparse.sparse_dense_matmul(tf.SparseTensor([[5, 0]], [1.0], [3, 4]),
                                                         np.ones((4, 2), np.float32)))
    assert e.node == "SparseTensorDenseMatMul/SparseTensorDenseMatMul"
    assert "m (5) from index[0,0] out of bounds (>=3)" in str(e)
    e = _run_error(lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 1], [1, 0]))
    assert e.node == "SparseSegmentSum" and "segment ids are not increasing" in str(e)
    e = _run_error(lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 5], [0, 0]))
    assert "Bad: indices[1] == 5 out of range [0, 3)" in str(e)
    e = _run_error(lambda: tf.sparse.concat(0, [tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                                 tf.SparseTensor([[1, 0]], [1.0], [3, 5])]).values)
    assert "Input shapes must match: expected 4 for dimension 1 but got 5 at position 1" in str(e)
    e = _run_error(lambda: tf.sparse.reshape(
        tf.SparseTensor([[1, 0]], [1.0], tf.placeholder_with_default(np.array([3, 4], np.int64), [2])),
        [5, -1]).indices)
    assert e.node == "SparseReshape" and "requires a multiple of 5" in str(e)
    e = _run_error(lambda: tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [5, 0]], [1.0, 3.0], [3, 4]),
                                                     0.0)[0].values)
    assert "indices(1, 0) is invalid: 5 >= 3" in str(e)
    e = _run_error(lambda: tf.sparse.maximum(tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                             tf.SparseTensor([[1, 0]], [1.0], [3, 5])).values)
    assert "Operands' shapes do not match: got 4 and 5 for dimension 1" in str(e)


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.SparseTensor([[1, 0]], [1.0, 2.0], [3, 4])
        with pytest.raises(ValueError):
            tf.SparseTensor([1, 0], [1.0], [3, 4])
        sp = tf.SparseTensor([[1, 0]], [1.0], [3, 4])
        with pytest.raises(ValueError, match="Cannot reshape a tensor with 12 elements"):
            tf.sparse.reshape(sp, [5, -1])
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.sparse.sparse_dense_matmul(sp, np.ones((3, 2), np.float32))
        with pytest.raises(ValueError):
            tf.sparse.add(sp, tf.SparseTensor([[1, 0]], [1.0], [3, 5]))
        with pytest.raises(TypeError, match="Input must be a SparseTensor"):
            tf.sparse.reorder(tf.constant([1.0]))
        with pytest.raises(ValueError, match="Keyword arguments are required"):
            tf.sparse.split(sp, 2, 1)

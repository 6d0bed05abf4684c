"""tf.sets against Python sets, TF's orders and errors."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.registry import NO_GRADIENT, get_gradient_function


def _run(x):
    with tf.Session() as s:
        return s.run(x)


def _rows(value, rank_groups):
    """{group index: sorted values} of a set-op result."""
    out = {}
    for idx, v in zip(value.indices.tolist(), value.values.tolist()):
        out.setdefault(tuple(idx[:rank_groups]), []).append(v)
    return out


def test_dense_ops_match_python_sets():
    rng = np.random.RandomState(0)
    a, b = rng.randint(0, 6, (4, 5)).astype(np.int64), rng.randint(0, 6, (4, 3)).astype(np.int64)
    for fn, op in ((tf.sets.intersection, set.__and__), (tf.sets.union, set.__or__),
                   (tf.sets.difference, set.__sub__)):
        got = _rows(_run(fn(a, b)), 1)
        for i in range(4):
            want = sorted(op(set(a[i].tolist()), set(b[i].tolist())))
            assert got.get((i,), []) == want


def test_result_is_sorted_and_padded_to_largest_set():
    value = _run(tf.sets.union([[3, 1], [2, 2]], [[1, 0], [2, 2]]))
    assert value.values.tolist() == [0, 1, 3, 2]
    assert value.indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert value.dense_shape.tolist() == [2, 3]


def test_strings_sort_as_bytes():
    value = _run(tf.sets.union([["b", "B"]], [["a", ""]]))
    assert value.values.tolist() == [b"", b"B", b"a", b"b"]


def test_size_counts_distinct_values():
    sp = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [2, 0]], [4, 4, 5, 1], [3, 3])
    size = tf.sets.size(sp)
    assert size.dtype == tf.int32
    assert _run(size).tolist() == [2, 0, 1]


def test_flipped_sparse_dense_difference():
    sp = tf.SparseTensor([[0, 0], [0, 1]], [1, 2], [1, 2])
    # a sparse `a` with a dense `b` is computed as dense-sparse with aminusb flipped
    assert _run(tf.sets.difference(sp, [[2, 3]])).values.tolist() == [1]
    assert _run(tf.sets.difference(sp, [[2, 3]], aminusb=False)).values.tolist() == [3]


def test_unsorted_sparse_is_invalid_argument():
    sp = tf.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="out of order"):
        _run(tf.sets.size(sp))
    # without validation, TF's runs of consecutive entries
    assert _run(tf.sets.size(sp, validate_indices=False)).tolist() == [1, 1]


def test_build_time_errors():
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.sets.union([1, 2], [3])
    with pytest.raises(TypeError, match="invalid dtype"):
        tf.sets.union([[1.0]], [[1.0]])
    with pytest.raises(TypeError, match="Types don't match"):
        tf.sets.union([[1]], tf.constant([[1]], tf.int64))
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.size([[1]])


def test_mismatched_groups_at_run_time():
    with pytest.raises(errors.InvalidArgumentError, match="Mismatched shapes"):
        _run(tf.sets.union([[1, 2]], tf.SparseTensor([[1, 0]], [1], [2, 2])))


def test_not_differentiable():
    for op_type in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
                    "SparseToSparseSetOperation"):
        assert get_gradient_function(op_type) is NO_GRADIENT

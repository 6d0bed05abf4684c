"""Array ops against numpy: values, dtypes, static shapes, and their errors (at build time
when the shapes say so, InvalidArgumentError naming the node at run time otherwise)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphrt as tf
from tests.helpers import run


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def check(t, want, dtype=None):
    """Runs `t`; checks value, dtype, and that the static shape agrees with the value."""
    got = run(t)
    want = np.asarray(want)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == (want.dtype if dtype is None else dtype)
    assert t.shape.is_compatible_with(got.shape), (t.shape, got.shape)
    return got


# -- constants and placeholders -----------------------------------------------------------

def test_constant_dtypes_and_shapes(graph):
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant("s").dtype == tf.string
    assert tf.constant([1, 2.5]).dtype == tf.float32
    assert tf.constant(np.float64(1)).dtype == tf.float64
    assert tf.constant(np.arange(3)).dtype == tf.int64
    assert tf.constant([]).dtype == tf.float32 and tf.constant([]).shape.as_list() == [0]
    check(tf.constant(7.0, shape=[2, 2]), np.full((2, 2), 7.0, np.float32))
    check(tf.constant([1, 2, 3, 4], shape=[2, 2]), [[1, 2], [3, 4]], np.int32)
    check(tf.constant([1, 2], dtype=tf.float64), np.array([1.0, 2.0]))
    check(tf.constant(["a", "bc"]), np.array([b"a", b"bc"], dtype=object))


def test_constant_conversion_errors(graph):
    with pytest.raises(TypeError, match="Expected int32"):
        tf.constant(2.5, dtype=tf.int32)
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant([1, 2], shape=[3], verify_shape=True)
    with pytest.raises(ValueError, match="Too many elements provided"):
        tf.constant([1, 2, 3, 4, 5], shape=[2, 2])  # fewer are padded with the last, as in TF
    with pytest.raises(ValueError, match="out of range for int32"):
        tf.constant(2 ** 40, dtype=tf.int32)
    with pytest.raises(TypeError, match="Failed to convert object of type object"):
        tf.constant(object())


def test_constant_value_is_not_aliased_with_the_source_array(graph):
    src = np.array([1.0, 2.0], np.float32)
    c = tf.constant(src)
    src[0] = 100.0
    with tf.Session() as sess:
        first = sess.run(c)
        first[1] = -5.0  # mutating a fetched value cannot reach the constant
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_placeholder_with_default(graph):
    p = tf.placeholder_with_default(np.array([1.0, 2.0], np.float32), [None])
    assert p.shape.as_list() == [None]
    doubled = p * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(p), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(doubled, {p: [5.0, 6.0, 7.0]}), [10.0, 12.0, 14.0])
    with pytest.raises(ValueError, match="incompatible"):
        tf.placeholder_with_default([1.0, 2.0], [3])


# -- shapes ----------------------------------------------------------------------------------

def test_shape_size_rank(graph):
    t = tf.constant(X)
    check(tf.shape(t), np.array([2, 3, 4], np.int32))
    check(tf.shape(t, out_type=tf.int64), np.array([2, 3, 4], np.int64))
    check(tf.size(t), np.int32(24))
    check(tf.rank(t), np.int32(3))
    p = tf.placeholder(tf.float32, [None, 5])
    assert tf.shape(p).shape.as_list() == [2]
    with tf.Session() as sess:
        assert sess.run(tf.shape(p), {p: np.zeros((7, 5))}).tolist() == [7, 5]


@pytest.mark.parametrize("shape", [[-1, 4], [4, -1], [24], [2, 12], [1, 2, 3, 4], [-1], [3, 2, -1]])
def test_reshape(graph, shape):
    y = tf.reshape(tf.constant(X), shape)
    want = X.reshape(shape)
    assert y.shape.as_list() == list(want.shape)
    check(y, want)


def test_reshape_shape_from_tensors_and_tensorshape(graph):
    p = tf.placeholder(tf.float32, [None, 3, 4])
    flat = tf.reshape(p, [tf.shape(p)[0], -1])
    assert flat.shape.ndims == 2  # TF cannot infer the -1 next to another unknown dim either
    again = tf.reshape(flat, tf.TensorShape([None, 3, 4]))
    assert again.shape.as_list() == [None, 3, 4]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(again, {p: X}), X)


def test_reshape_errors(graph):
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 24 elements to shape"):
        tf.reshape(tf.constant(X), [5, 5])
    with pytest.raises(ValueError, match="Cannot infer multiple unknown dimensions"):
        tf.reshape(tf.constant(X), [-1, -1])
    p = tf.placeholder(tf.float32, None)
    r = tf.reshape(p, [5, -1], name="r")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input to reshape is a tensor with 24 values, "
                                                                 "but the requested shape requires a multiple of 5"
                           ) as info:
            sess.run(r, {p: X})
        assert info.value.node == "r"


@st.composite
def reshape_specs(draw):
    dims = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    n = int(np.prod(dims)) if dims else 1
    factors = []
    rest = n
    while rest > 1 and len(factors) < 4:
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        f = draw(st.sampled_from(divisors))
        factors.append(f)
        rest //= f
    if rest > 1:
        factors.append(rest)
    factors = draw(st.permutations(factors))
    target = list(factors)
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return dims, target


@settings(max_examples=40, deadline=None)
@given(reshape_specs())
def test_reshape_random_specs(spec):
    dims, target = spec
    x = np.arange(int(np.prod(dims)) if dims else 1, dtype=np.float32).reshape(dims)
    with tf.Graph().as_default():
        y = tf.reshape(tf.constant(x), target)
        want = x.reshape(target)
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(run(y), want)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=5).flatmap(
    lambda dims: st.tuples(st.just(dims), st.permutations(list(range(len(dims)))))))
def test_transpose_random_perms(spec):
    dims, perm = spec
    x = np.arange(int(np.prod(dims)) if dims else 1, dtype=np.int32).reshape(dims)
    with tf.Graph().as_default():
        y = tf.transpose(tf.constant(x), perm)
        want = np.transpose(x, perm)
        assert y.shape.as_list() == list(want.shape)
        got = run([y, tf.transpose(tf.constant(x))])
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], x.T)
    assert got[0].dtype == np.int32


def test_transpose_errors(graph):
    with pytest.raises(ValueError, match="is not a valid permutation"):
        tf.transpose(tf.constant(X), [0, 0, 1])
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.transpose(tf.constant(X), [1, 0])
    perm = tf.placeholder(tf.int32, [None])
    y = tf.transpose(tf.constant(X), perm)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {perm: [2, 0, 1]}), X.transpose(2, 0, 1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid permutation"):
            sess.run(y, {perm: [2, 2, 1]})


def test_invert_permutation(graph):
    check(tf.invert_permutation([2, 0, 1]), np.array([1, 2, 0], np.int32))


def test_expand_dims_and_squeeze(graph):
    t = tf.constant(X)
    check(tf.expand_dims(t, 0), X[None])
    check(tf.expand_dims(t, -1), X[..., None])
    check(tf.expand_dims(t, dim=1), X[:, None])
    ones = tf.zeros([1, 2, 1, 3])
    check(tf.squeeze(ones), np.zeros((2, 3), np.float32))
    check(tf.squeeze(ones, [2]), np.zeros((1, 2, 3), np.float32))
    check(tf.squeeze(ones, axis=-2), np.zeros((1, 2, 3), np.float32))
    check(tf.squeeze(ones, squeeze_dims=[0]), np.zeros((2, 1, 3), np.float32))
    with pytest.raises(ValueError, match="Can not squeeze dim\\[1\\], expected a dimension of 1, got 2"):
        tf.squeeze(ones, [1])
    with pytest.raises(ValueError, match="Tried to expand dim index 5"):
        tf.expand_dims(t, 5)
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(t)


def test_fill_zeros_ones(graph):
    check(tf.fill([2, 3], 5), np.full((2, 3), 5, np.int32))
    check(tf.fill([2], 0.5), np.array([0.5, 0.5], np.float32))
    check(tf.zeros([2, 3], tf.int64), np.zeros((2, 3), np.int64))
    check(tf.ones([2]), np.ones(2, np.float32))
    check(tf.zeros([40, 40]), np.zeros((40, 40), np.float32))  # large: built with Fill
    check(tf.zeros_like(tf.constant(X)), np.zeros_like(X))
    check(tf.ones_like(tf.constant(X), dtype=tf.int32), np.ones(X.shape, np.int32))
    n = tf.placeholder(tf.int32, [])
    z = tf.zeros([n, 2])
    assert z.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        assert sess.run(z, {n: 3}).shape == (3, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            sess.run(z, {n: -1})
    check(tf.ones(tf.TensorShape([2, 1])), np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match=r"Cannot convert a partially known TensorShape \(None, 3\)"):
        tf.zeros(tf.TensorShape([None, 3]))


def test_broadcast_to(graph):
    check(tf.broadcast_to(tf.constant([1, 2]), [3, 2]), np.broadcast_to(np.array([1, 2], np.int32), (3, 2)))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.broadcast_to(tf.constant([1, 2, 3]), [3, 2])


def test_tile(graph):
    check(tf.tile(tf.constant(X), [1, 2, 3]), np.tile(X, [1, 2, 3]))
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.tile(tf.constant(X), [1, 2])


# -- joining and splitting -------------------------------------------------------------------

def test_concat(graph):
    t = tf.constant(X)
    check(tf.concat([t, t], 0), np.concatenate([X, X], 0))
    check(tf.concat([t, t * 2], -1), np.concatenate([X, X * 2], -1))
    check(tf.concat([t], 1), X)
    p = tf.placeholder(tf.float32, [2, None, 4])
    assert tf.concat([t, p], 1).shape.as_list() == [2, None, 4]
    assert tf.concat([t, t], 1).shape.as_list() == [2, 6, 4]
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.concat([t, tf.zeros([3, 3, 4])], 1)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.concat([t, tf.zeros([3, 4])], 1)


def test_concat_runtime_mismatch_is_invalid_argument(graph):
    p = tf.placeholder(tf.float32, [None, None])
    c = tf.concat([p, tf.zeros([2, 2])], 1, name="cat")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dimensions of inputs should match") as info:
            sess.run(c, {p: np.zeros((3, 1))})
        assert info.value.node == "cat"


def test_split(graph):
    t = tf.constant(X)
    parts = tf.split(t, 2, axis=2)
    assert [p.shape.as_list() for p in parts] == [[2, 3, 2]] * 2
    for got, want in zip(run(parts), np.split(X, 2, axis=2)):
        np.testing.assert_array_equal(got, want)
    sized = tf.split(t, [1, -1, 2], axis=2)
    assert [p.shape.as_list() for p in sized] == [[2, 3, 1], [2, 3, 1], [2, 3, 2]]
    for got, want in zip(run(sized), np.split(X, [1, 2], axis=2)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="evenly divisible by 3"):
        tf.split(t, 3, axis=2)
    with pytest.raises(ValueError, match="Determined shape must either match input shape"):
        tf.split(t, [1, 1], axis=2)


def test_stack_unstack(graph):
    a, b = tf.constant([1, 2]), tf.constant([3, 4])
    check(tf.stack([a, b]), [[1, 2], [3, 4]], np.int32)
    check(tf.stack([a, b], axis=1), [[1, 3], [2, 4]], np.int32)
    check(tf.stack([a, b], axis=-1), [[1, 3], [2, 4]], np.int32)
    parts = tf.unstack(tf.constant(X), axis=1)
    assert len(parts) == 3 and parts[0].shape.as_list() == [2, 4]
    for got, want in zip(run(parts), np.moveaxis(X, 1, 0)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tf.stack([a, tf.constant([[1]])])
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32, None))


# -- slicing and gathering --------------------------------------------------------------------

def test_slice(graph):
    t = tf.constant(X)
    check(tf.slice(t, [0, 1, 1], [-1, 2, 2]), X[:, 1:3, 1:3])
    check(tf.slice(t, [1, 0, 0], [1, 3, 4]), X[1:2])
    b = tf.placeholder(tf.int32, [3])
    s = tf.slice(t, b, [1, 1, 1], name="sl")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(s, {b: [1, 2, 3]}), X[1:2, 2:3, 3:4])
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(s, {b: [1, 2, 4]})
        assert info.value.node == "sl"


INDEXES = [
    (1,), (slice(None), slice(1, None)), (Ellipsis, -1), (None, 0, slice(None, None, -1), slice(1, 3)),
    (slice(None), None, 2), (-1, -2, -3), (slice(None, None, 2), slice(None, None, -2)), (0, Ellipsis, None),
    (slice(1, 0),), (Ellipsis, slice(1, None, 2), slice(None)), (slice(-100, 100), slice(5, -5)),
    (slice(None, None, -1), Ellipsis, slice(-2, None)),
]


@pytest.mark.parametrize("index", INDEXES, ids=[str(i) for i in INDEXES])
def test_getitem_matches_numpy(graph, index):
    y = tf.constant(X)[index]
    want = X[index]
    assert y.shape.as_list() == list(want.shape)
    check(y, want)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_getitem_random_slices(data):
    dims = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    x = np.arange(int(np.prod(dims)), dtype=np.int64).reshape(dims)
    index = []
    for d in dims:
        if data.draw(st.booleans()):
            index.append(data.draw(st.integers(-d, d - 1)))
        else:
            bound = st.none() | st.integers(-d - 2, d + 2)
            step = data.draw(st.none() | st.integers(-3, 3).filter(lambda s: s != 0))
            index.append(slice(data.draw(bound), data.draw(bound), step))
    index = tuple(index)
    with tf.Graph().as_default():
        y = tf.constant(x)[index]
        got = run(y)
    want = x[index]
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64
    assert y.shape.as_list() == list(want.shape)


def test_getitem_with_tensor_index(graph):
    i = tf.placeholder(tf.int32, [])
    row = tf.constant(X)[i]
    part = tf.constant(X)[:, i:i + 2]
    flipped = tf.constant(X)[i, ::-1, tf.newaxis, ::2]
    assert row.shape.as_list() == [3, 4]
    assert part.shape.as_list() == [2, None, 4]
    assert flipped.shape.as_list() == [3, 1, 2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(row, {i: 1}), X[1])
        np.testing.assert_array_equal(sess.run(part, {i: 1}), X[:, 1:3])
        np.testing.assert_array_equal(sess.run(flipped, {i: 1}), X[1, ::-1, None, ::2])
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(row, {i: 5})
    with pytest.raises(TypeError, match="Only integers, slices"):
        tf.constant(X)["a"]


def test_getitem_out_of_range_index_at_build_time(graph):
    with pytest.raises(ValueError, match="out of bounds"):
        tf.constant(X)[2]


def test_strided_slice_masks(graph):
    t = tf.constant(X)
    y = tf.strided_slice(t, [0, 1], [2, 3], [1, 1], begin_mask=1, shrink_axis_mask=2)
    check(y, X[:2, 1])
    z = tf.strided_slice(t, [0, 0], [0, 0], [1, 1], ellipsis_mask=1, new_axis_mask=2)
    check(z, X[..., None])


def test_gather(graph):
    t = tf.constant(X)
    check(tf.gather(t, 1), X[1])
    check(tf.gather(t, [1, 0, 1]), X[[1, 0, 1]])
    check(tf.gather(t, [[2, 0]], axis=1), np.take(X, [[2, 0]], axis=1))
    check(tf.gather(t, [3], axis=-1), X[..., [3]])
    check(tf.gather(tf.constant([b"a", b"b"]), [1, 1]), np.array([b"b", b"b"], dtype=object))
    with pytest.raises(ValueError, match=r"Expected axis in the range \[-3, 3\), but got 3"):
        tf.gather(t, [0], axis=3)


def test_gather_out_of_range_names_node_and_index(graph):
    k = tf.placeholder(tf.int32, [2])
    g = tf.gather(tf.constant([1.0, 2.0, 3.0]), k, name="lookup")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 3\)") as info:
            sess.run(g, {k: [0, 7]})
        assert info.value.node == "lookup"
        assert "lookup" in str(info.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = -1 is not in \[0, 3\)"):
            sess.run(g, {k: [-1, 0]})
        np.testing.assert_array_equal(sess.run(g, {k: [2, 0]}), [3.0, 1.0])


def test_one_hot(graph):
    check(tf.one_hot([0, 2, -1, 5], 3), np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], np.float32))
    check(tf.one_hot([[0, 1]], 3, axis=0, on_value=5.0, off_value=-1.0),
          np.array([[[5, -1]], [[-1, 5]], [[-1, -1]]], np.float32))
    check(tf.one_hot([1], 2, dtype=tf.int64), np.array([[0, 1]], np.int64))
    assert tf.one_hot(tf.placeholder(tf.int32, [None]), 4).shape.as_list() == [None, 4]


def test_pad_and_reverse(graph):
    t = tf.constant(X)
    check(tf.pad(t, [[0, 0], [1, 0], [0, 2]]), np.pad(X, [(0, 0), (1, 0), (0, 2)]))
    check(tf.pad(t, [[1, 1], [0, 0], [0, 0]], constant_values=7), np.pad(X, [(1, 1), (0, 0), (0, 0)],
                                                                        constant_values=7))
    check(tf.reverse(t, [0, -1]), X[::-1, :, ::-1])
    check(tf.pad(t, [[1, 1], [0, 1], [1, 0]], mode="REFLECT"), np.pad(X, [(1, 1), (0, 1), (1, 0)], mode="reflect"))
    with pytest.raises(ValueError, match="Unknown padding mode: WRAP"):
        tf.pad(t, [[0, 0]] * 3, mode="WRAP")
    with pytest.raises(ValueError, match="must be the rank of inputs 3"):
        tf.pad(t, [[0, 0]])


def test_unsorted_segment_sum_and_boolean_mask(graph):
    check(tf.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0, 4.0]), [0, 2, 0, -1], 3),
          np.array([4.0, 0.0, 2.0], np.float32))
    check(tf.unsorted_segment_sum(tf.constant([[1, 2], [3, 4]]), [1, 1], 2), np.array([[0, 0], [4, 6]], np.int32))
    check(tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]),
          np.array([[1, 2], [5, 6]], np.int32))
    ids = tf.placeholder(tf.int32, [2])
    s = tf.unsorted_segment_sum(tf.constant([1.0, 2.0]), ids, 2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(s, {ids: [0, 2]})


def test_identity_and_stop_gradient_pass_values(graph):
    t = tf.constant(X)
    check(tf.identity(t), X)
    check(tf.stop_gradient(t), X)
    assert tf.identity(t, name="same").op.name == "same"


def test_ops_on_unknown_shapes_infer_what_they_can(graph):
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.transpose(p).shape.as_list() == [3, None]
    assert tf.expand_dims(p, 1).shape.as_list() == [None, 1, 3]
    assert tf.tile(p, [2, 2]).shape.as_list() == [None, 6]
    assert tf.gather(p, [0, 1]).shape.as_list() == [2, 3]
    assert tf.reshape(p, [-1]).shape.as_list() == [None]
    assert p[:, 1].shape.as_list() == [None]
    assert tf.pad(p, [[1, 1], [0, 0]]).shape.as_list() == [None, 3]
    u = tf.placeholder(tf.float32)
    assert tf.reshape(u, [2, -1]).shape.as_list() == [2, None]
    assert tf.transpose(u).shape.ndims is None

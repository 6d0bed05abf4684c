"""The extra ops against numpy: gather_nd / scatter_nd, is_nan / is_inf / is_finite,
div_no_nan, sequence_mask, linspace, eye and the matrix-diagonal ops, tensordot, einsum,
segment reductions, unique, sort / argsort, identity_n, clipping and norms, the check_ops
asserts and py_func. Gradients are checked against finite differences."""
import numpy as np
import pytest

import graphrt as tf
from tests.helpers import run
from tests.ops.gradcheck import check_gradients, check_gradients_float32

RNG = np.random.RandomState(2)


# -- gather_nd / scatter_nd --------------------------------------------------------------------

def test_gather_nd_values_shapes_and_errors(graph):
    p = RNG.randn(3, 4, 2).astype(np.float32)
    P = tf.constant(p)
    elems = tf.gather_nd(P, [[0, 1, 1], [2, 3, 0]])
    rows = tf.gather_nd(P, [[2], [0]])
    batched = tf.gather_nd(P, [[[1, 1]], [[0, 0]]])
    assert [t.shape.as_list() for t in (elems, rows, batched)] == [[2], [2, 4, 2], [2, 1, 2]]
    e, r, b = run([elems, rows, batched])
    np.testing.assert_array_equal(e, [p[0, 1, 1], p[2, 3, 0]])
    np.testing.assert_array_equal(r, p[[2, 0]])
    np.testing.assert_array_equal(b, [[p[1, 1]], [p[0, 0]]])
    with pytest.raises(ValueError, match="indices.shape\\[-1\\] must be <= params.rank"):
        tf.gather_nd(P, [[0, 1, 1, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[5,0\] does not index into param"):
        run(tf.gather_nd(tf.constant(p[:, :, 0]), [[5, 0]]))


def test_scatter_nd_sums_duplicates(graph):
    out = tf.scatter_nd([[1], [3], [1]], tf.constant([1.0, 2.0, 3.0]), [5])
    rows = tf.scatter_nd(tf.constant([[0], [2]]), tf.ones([2, 3]), tf.constant([4, 3]))
    assert out.shape.as_list() == [5] and rows.shape.as_list() == [4, 3]
    o, r = run([out, rows])
    np.testing.assert_array_equal(o, [0, 4, 0, 2, 0])
    np.testing.assert_array_equal(r, [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]])


def test_gather_scatter_nd_gradients():
    check_gradients(lambda x: tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]), RNG.randn(3, 4))
    check_gradients(lambda x: tf.gather_nd(x, [[1], [0]]), RNG.randn(3, 4))
    check_gradients(lambda u: tf.scatter_nd([[1], [3], [1]], u, [5, 2]), RNG.randn(3, 2))
    check_gradients_float32(lambda x: tf.gather_nd(x, [[2, 1]]), RNG.randn(3, 4))


# -- elementwise ------------------------------------------------------------------------------------

def test_nan_inf_finite_and_div_no_nan(graph):
    x = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    nan, inf, fin = run([tf.is_nan(x), tf.is_inf(x), tf.is_finite(x)])
    np.testing.assert_array_equal(nan, np.isnan(x))
    np.testing.assert_array_equal(inf, np.isinf(x))
    np.testing.assert_array_equal(fin, np.isfinite(x))
    assert tf.gradients(tf.reduce_sum(tf.cast(tf.is_nan(tf.constant(x)), tf.float32)), []) == []
    d = run(tf.div_no_nan([1.0, 2.0, 0.0], [0.0, 4.0, 0.0]))
    np.testing.assert_array_equal(d, [0.0, 0.5, 0.0])
    check_gradients(lambda a, b: tf.div_no_nan(a, b), RNG.randn(2, 3), RNG.rand(2, 3) + 0.5)
    check_gradients(lambda a, b: tf.div_no_nan(a, b), RNG.randn(2, 3), RNG.rand(3) + 0.5)
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        b = tf.constant([0.0, 2.0])
        ga, gb = run(tf.gradients(tf.reduce_sum(tf.div_no_nan(a, b)), [a, b]))
        np.testing.assert_array_equal(ga, [0.0, 0.5])
        np.testing.assert_array_equal(gb, [0.0, -0.5])


def test_sequence_mask(graph):
    lengths = tf.placeholder(tf.int32, [None])
    m = tf.sequence_mask([1, 3, 0], 4)
    mf = tf.sequence_mask([[1, 2], [0, 3]], dtype=tf.float32)
    md = tf.sequence_mask(lengths)
    assert m.shape.as_list() == [3, 4] and mf.shape.as_list() == [2, 2, 3] and md.shape.as_list() == [None, None]
    mv, mfv, mdv = run([m, mf, md], {lengths: [2, 0, 1]})
    np.testing.assert_array_equal(mv, np.arange(4) < np.array([1, 3, 0])[:, None])
    np.testing.assert_array_equal(mfv, (np.arange(3) < np.array([[1, 2], [0, 3]])[..., None]).astype(np.float32))
    np.testing.assert_array_equal(mdv, [[True, True], [False, False], [True, False]])
    with pytest.raises(ValueError, match="maxlen must be scalar"):
        tf.sequence_mask([1], [2, 3])


def test_linspace_eye_and_matrix_diagonals(graph):
    lin = tf.linspace(-1.0, 2.0, 7)
    lin_int = tf.linspace(0, 1, 3)
    assert lin.shape.as_list() == [7] and lin_int.dtype == tf.float64
    l, li, one = run([lin, lin_int, tf.lin_space(3.0, 5.0, 1)])
    np.testing.assert_allclose(l, np.linspace(-1, 2, 7), rtol=1e-6)
    assert l[-1] == 2.0 and l.dtype == np.float32
    np.testing.assert_array_equal(li, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(one, [3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires num > 0"):
        run(tf.linspace(0.0, 1.0, tf.placeholder_with_default(0, [])))
    e, er, eb = run([tf.eye(3), tf.eye(2, num_columns=4, dtype=tf.int32), tf.eye(2, batch_shape=[2])])
    np.testing.assert_array_equal(e, np.eye(3))
    np.testing.assert_array_equal(er, np.eye(2, 4, dtype=np.int32))
    np.testing.assert_array_equal(eb, np.stack([np.eye(2)] * 2))
    with pytest.raises(TypeError, match="must be positive integer values"):
        tf.eye(2.5)
    x = RNG.randn(2, 3, 4)
    d, dp, sd = run([tf.matrix_diag([[1, 2], [3, 4]]), tf.matrix_diag_part(x), tf.matrix_set_diag(x, np.zeros((2, 3)))])
    np.testing.assert_array_equal(d, [[[1, 0], [0, 2]], [[3, 0], [0, 4]]])
    np.testing.assert_array_equal(dp, np.diagonal(x, axis1=-2, axis2=-1))
    want = x.copy()
    want[:, np.arange(3), np.arange(3)] = 0
    np.testing.assert_array_equal(sd, want)
    check_gradients(lambda v: tf.matrix_diag(v), RNG.randn(2, 3))
    check_gradients(lambda v: tf.matrix_diag_part(v), RNG.randn(2, 3, 4))
    check_gradients(lambda v: tf.matrix_diag_part(v), RNG.randn(3, 3))
    check_gradients(lambda v, dg: tf.matrix_set_diag(v, dg), RNG.randn(3, 4), RNG.randn(3))


# -- tensordot / einsum ---------------------------------------------------------------------------

def test_tensordot(graph):
    a, b = RNG.randn(2, 3, 4).astype(np.float32), RNG.randn(3, 4, 5).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    t1 = tf.tensordot(a, b, axes=[[1, 2], [0, 1]])
    t2 = tf.tensordot(a, RNG.randn(4, 2).astype(np.float32), 1)
    t3 = tf.tensordot(x, tf.ones([4, 3]), [[1], [0]])
    assert [t.shape.as_list() for t in (t1, t2, t3)] == [[2, 5], [2, 3, 2], [None, 3]]
    v1, v3 = run([t1, t3], {x: np.ones((2, 4), np.float32)})
    np.testing.assert_allclose(v1, np.tensordot(a, b, axes=([1, 2], [0, 1])), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(v3, np.full((2, 3), 4.0))
    check_gradients(lambda p, q: tf.tensordot(p, q, [[1, 2], [0, 1]]), RNG.randn(2, 3, 4), RNG.randn(3, 4, 2))
    check_gradients(lambda p, q: tf.tensordot(p, q, 0), RNG.randn(2), RNG.randn(3))


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i", [(3,), (3,)]),
    ("ij,k->i", [(2, 3), (4,)]),
    ("...ij,jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (1, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij,j->ij", [(2, 2, 3), (3,)]),
    ("bii,bj->bj", [(2, 3, 3), (2, 4)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_matches_numpy_with_gradients(equation, shapes):
    arrays = [RNG.randn(*s) for s in shapes]
    with tf.Graph().as_default():
        out = tf.einsum(equation, *[a.astype(np.float32) for a in arrays])
        want = np.einsum(equation, *arrays)
        assert out.shape.as_list() == list(want.shape) and out.op.type == "Einsum"
        np.testing.assert_allclose(run(out), want, rtol=1e-4, atol=1e-5)
    check_gradients(lambda *xs: tf.einsum(equation, *xs), *arrays)


def test_einsum_errors(graph):
    with pytest.raises(ValueError, match="Expected dimension 4"):
        tf.einsum("ij,jk->ik", tf.ones([3, 4]), tf.ones([3, 2]))
    with pytest.raises(ValueError, match="Expected 2 inputs but got: 1"):
        tf.einsum("ij,jk->ik", tf.ones([3, 4]))
    with pytest.raises(ValueError, match="does not appear in any input"):
        tf.einsum("ij->iz", tf.ones([3, 4]))


# -- segments, unique, sort ------------------------------------------------------------------------------

def test_segment_reductions(graph):
    d = RNG.randn(4, 2).astype(np.float32)
    ids = [0, 0, 1, 3]
    s, m, mx, mn = run([tf.segment_sum(d, ids), tf.segment_mean(d, ids), tf.segment_max(d, ids),
                        tf.segment_min(d, ids)])
    np.testing.assert_allclose(s, [d[0] + d[1], d[2], [0, 0], d[3]], rtol=1e-6)
    np.testing.assert_allclose(m, [(d[0] + d[1]) / 2, d[2], [0, 0], d[3]], rtol=1e-6)
    np.testing.assert_array_equal(mx, [np.maximum(d[0], d[1]), d[2], [0, 0], d[3]])
    np.testing.assert_array_equal(mn, [np.minimum(d[0], d[1]), d[2], [0, 0], d[3]])
    u = run(tf.unsorted_segment_max(d, [1, 0, 1, -1], 3))
    np.testing.assert_array_equal(u[:2], [d[1], np.maximum(d[0], d[2])])
    np.testing.assert_array_equal(u[2], np.finfo(np.float32).min)
    assert tf.segment_sum(d, ids).shape.as_list() == [None, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        run(tf.segment_sum(d, [1, 0, 1, 2]))
    for fn in (tf.segment_sum, tf.segment_mean, tf.segment_max, tf.segment_min):
        check_gradients(lambda x: fn(x, ids), RNG.randn(4, 2))
    check_gradients(lambda x: tf.unsorted_segment_max(x, [0, 2, 0, 1, -1], 3), RNG.randn(5, 2))
    check_gradients(lambda x: tf.unsorted_segment_min(x, [[0, 1], [1, 0]], 2), RNG.randn(2, 2, 3))


def test_unique_sort_argsort(graph):
    y, idx = tf.unique(tf.constant([4, 1, 4, 2, 1, 7]))
    yv, iv = run([y, idx])
    np.testing.assert_array_equal(yv, [4, 1, 2, 7])
    np.testing.assert_array_equal(iv, [0, 1, 0, 2, 1, 3])
    assert idx.dtype == tf.int32 and tf.unique([1.0], out_idx=tf.int64)[1].dtype == tf.int64
    with pytest.raises(ValueError, match="Shape must be rank 1"):
        tf.unique(tf.ones([2, 2]))
    p = RNG.randn(3, 4).astype(np.float32)
    s, s0, a, ad = run([tf.sort(p), tf.sort(p, axis=0, direction="DESCENDING"), tf.argsort([3, 1, 2, 1]),
                        tf.argsort(p, direction="DESCENDING")])
    np.testing.assert_array_equal(s, np.sort(p, axis=1))
    np.testing.assert_array_equal(s0, -np.sort(-p, axis=0))
    np.testing.assert_array_equal(a, [1, 3, 2, 0])  # stable
    np.testing.assert_array_equal(ad, np.argsort(-p, axis=1, kind="stable"))
    assert tf.sort(p).shape.as_list() == [3, 4]
    with pytest.raises(ValueError, match="must be a constant scalar"):
        tf.sort(p, axis=tf.placeholder(tf.int32, []))
    check_gradients(lambda x: tf.sort(x, axis=0), RNG.randn(4, 3))


def test_identity_n(graph):
    a, b = tf.identity_n([tf.constant([1.0, 2.0]), tf.constant(3)])
    assert a.op.type == "IdentityN" and a.op is b.op and b.dtype == tf.int32
    av, bv = run([a, b])
    np.testing.assert_array_equal(av, [1.0, 2.0])
    assert bv == 3
    x = tf.constant([1.0, 2.0])
    y, _ = tf.identity_n([x * 2.0, tf.constant(1)])
    np.testing.assert_array_equal(run(tf.gradients(tf.reduce_sum(y), x)[0]), [2.0, 2.0])


# -- clipping and norms ----------------------------------------------------------------------------

def test_clipping_and_norms(graph):
    a = RNG.randn(3, 4).astype(np.float32)
    b = RNG.randn(5).astype(np.float32) * 3
    clipped, gnorm = tf.clip_by_global_norm([a, None, b], 2.0)
    assert clipped[1] is None and gnorm.name == "global_norm/global_norm:0"
    got = run({"cbn": tf.clip_by_norm(a, 1.5), "axes": tf.clip_by_norm(a, 1.0, axes=[1]),
               "gn": tf.global_norm([a, None, b]), "c0": clipped[0], "c2": clipped[2], "gnorm": gnorm,
               "norm": tf.norm(a), "n_ax": tf.norm(a, axis=1), "n1": tf.norm(b, ord=1),
               "ninf": tf.norm(a, ord=np.inf, axis=0, keepdims=True), "n3": tf.norm(b, ord=3),
               "fro": tf.norm(a, ord="fro", axis=[0, 1]), "m1": tf.norm(a, ord=1, axis=[0, 1])})
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    gn = np.sqrt((a64 ** 2).sum() + (b64 ** 2).sum())
    want = {"cbn": a64 * 1.5 / max(np.linalg.norm(a64), 1.5),
            "axes": a64 / np.maximum(np.linalg.norm(a64, axis=1, keepdims=True), 1.0),
            "gn": gn, "c0": a64 * 2 / max(gn, 2), "c2": b64 * 2 / max(gn, 2), "gnorm": gn,
            "norm": np.linalg.norm(a64), "n_ax": np.linalg.norm(a64, axis=1), "n1": np.abs(b64).sum(),
            "ninf": np.abs(a64).max(0, keepdims=True), "n3": (np.abs(b64) ** 3).sum() ** (1 / 3),
            "fro": np.linalg.norm(a64), "m1": np.abs(a64).sum(0).max()}
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5, err_msg=k)
    inf_clipped, _ = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.all(np.isnan(run(inf_clipped[0])))
    with pytest.raises(TypeError, match="should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant(a), 1.0)
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm"):
        tf.norm(a, ord=-1)
    with pytest.raises(ValueError, match="tuple of 2 unique integers"):
        tf.norm(a, axis=[0, 0])
    check_gradients(lambda x: tf.clip_by_norm(x, 1.0), RNG.randn(4, 3))
    check_gradients(lambda x: tf.norm(x, axis=1), RNG.randn(4, 3))
    check_gradients(lambda x, y: tf.clip_by_global_norm([x, y], 1.0)[0][0], RNG.randn(3), RNG.randn(2))


# -- asserts ---------------------------------------------------------------------------------------

def test_asserts_static_and_at_run_time(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    ok = tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))
    assert ok.type == "Assert"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x == y did not hold element-wise"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    with pytest.raises(ValueError, match=r"Tensor Const_\d+:0 must have rank 2\.  Received rank 1, shape"):
        tf.assert_rank(tf.constant([1, 2]), 2)
    assert tf.assert_rank(x, 2).type == "NoOp"
    assert tf.assert_rank_at_least(x, 1).type == "NoOp"
    with pytest.raises(TypeError, match="must be of type"):
        tf.assert_type(x, tf.int32)
    checks = [tf.assert_positive(x), tf.assert_less(x, 10.0, message="too big"), tf.assert_non_negative(x),
              tf.assert_greater_equal(x, 0.0), tf.assert_none_equal(x, 5.0)]
    with tf.control_dependencies(checks):
        y = tf.identity(x)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.ones((2, 3))}), np.ones((2, 3)))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: \[\[\], \[Condition x > 0 did "
                                                                 r"not hold element-wise:\], \[x \(Placeholder:0\) = "
                                                                 r"\], \[-1\. -1\. -1\.\]\]"):
            sess.run(y, {x: -np.ones((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"too big"):
            sess.run(y, {x: np.full((1, 3), 20.0)})


# -- py_func -----------------------------------------------------------------------------------------

def test_py_func_calls_python(graph):
    calls = []

    def f(a, b):
        calls.append((type(a), a.shape))
        return (a * 2).astype(np.float32) + b

    p = tf.placeholder(tf.float32, [2, 2])
    y = tf.py_func(f, [p, tf.constant(1.0)], tf.float32)
    s, n = tf.py_func(lambda a: (a.sum(), np.int64(a.size)), [p], [tf.float32, tf.int64], stateful=False)
    words = tf.py_func(lambda a: np.array([b"x" * int(v) for v in a]), [tf.constant([1, 3])], tf.string)
    assert y.op.type == "PyFunc" and s.op.type == "PyFuncStateless" and y.shape.ndims is None
    feed = {p: np.ones((2, 2), np.float32)}
    yv, sv, nv, wv = run([y, s, n, words], feed)
    np.testing.assert_array_equal(yv, np.full((2, 2), 3.0))
    assert (sv, nv) == (4.0, 4) and list(wv) == [b"x", b"xxx"]
    assert calls == [(np.ndarray, (2, 2))]
    assert tf.gradients(tf.reduce_sum(y), p) == [None]


def test_py_func_errors(graph):
    p = tf.constant([1.0, 2.0])
    wrong_dtype = tf.py_func(lambda a: a.astype(np.float64), [p], tf.float32)
    wrong_count = tf.py_func(lambda a: (a, a), [p], [tf.float32])
    value_error = tf.py_func(lambda a: (_ for _ in ()).throw(ValueError("bad input")), [p], tf.float32)
    other_error = tf.py_func(lambda a: {}["missing"], [p], tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="0-th value returned by pyfunc_[0-9a-f]+ is double, "
                                                                 "but expects float") as info:
            sess.run(wrong_dtype)
        assert info.value.node == wrong_dtype.op.name
        with pytest.raises(tf.errors.InvalidArgumentError, match="returns 2 values, but expects to see 1 values"):
            sess.run(wrong_count)
        with pytest.raises(tf.errors.InvalidArgumentError, match="ValueError: bad input"):
            sess.run(value_error)
        with pytest.raises(tf.errors.UnknownError, match="KeyError"):
            sess.run(other_error)


def test_py_func_gradient_override(graph):
    @tf.RegisterGradient("DoubleGradForTest")
    def _double_grad(op, grad):
        return [grad * 2.0]

    x = tf.constant([1.0, 3.0])
    with graph.gradient_override_map({"PyFunc": "DoubleGradForTest"}):
        y = tf.py_func(lambda a: a, [x], tf.float32)
    y.set_shape([2])
    np.testing.assert_array_equal(run(tf.gradients(tf.reduce_sum(y), x)[0]), [2.0, 2.0])

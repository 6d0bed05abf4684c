"""tf.linalg.lu / lu_solve / lu_matrix_inverse / lu_reconstruct, pinv, matrix_rank, normalize,
tridiagonal_solve / tridiagonal_matmul and logm (graphrt/linear_algebra/{lu,pinv,normalize,
tridiagonal,logm}.py): edge cases and messages, values against numpy, gradients against finite
differences. TensorFlow's own outputs are compared by tests/tf1_programs/cases/linalg_more.py."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.linear_algebra.lu import lu_factor
from graphrt.linear_algebra.tridiagonal import _solve_op
from tests.helpers import run
from tests.ops.gradcheck import check_gradients

RNG = np.random.RandomState(11)


def _full(d):
    """The matrices of compact diagonals d [..., 3, m]."""
    m = d.shape[-1]
    a = np.zeros(d.shape[:-2] + (m, m), d.dtype)
    idx = np.arange(m)
    a[..., idx, idx] = d[..., 1, :]
    a[..., idx[:-1], idx[1:]] = d[..., 0, :-1]
    a[..., idx[1:], idx[:-1]] = d[..., 2, 1:]
    return a


# -- lu ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 20])
def test_lu_factors_reconstruct_with_partial_pivoting(graph, n):
    x = RNG.randn(2, n, n)
    lu, p = run(tf.linalg.lu(tf.constant(x)))
    assert p.dtype == np.int32 and lu.shape == x.shape and p.shape == (2, n)
    lower = np.tril(lu, -1) + np.eye(n)
    upper = np.triu(lu)
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(x, p[..., None], axis=-2), rtol=1e-10, atol=1e-12)
    assert np.all(np.abs(np.tril(lu, -1)) <= 1.0)  # partial pivoting: |L| <= 1


def test_lu_pivot_ties_take_the_first_row_and_nan_does_not_raise(graph):
    lu, p = run(tf.linalg.lu(tf.constant([[1.0, 2.0], [-1.0, 3.0]], tf.float64)))
    np.testing.assert_array_equal(p, [0, 1])
    np.testing.assert_allclose(lu, [[1.0, 2.0], [-1.0, 5.0]])
    lu, p = run(tf.linalg.lu(tf.constant([[1.0, np.nan], [2.0, 4.0]], tf.float64)))
    np.testing.assert_array_equal(p, [1, 0])
    assert np.isnan(lu[1, 1]) and lu[1, 0] == 0.5


def test_lu_singular_empty_half_and_int64(graph):
    x = tf.placeholder(tf.float32, None)
    lu = tf.linalg.lu(x, output_idx_type=tf.int64)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible."):
            sess.run(lu, {x: [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square."):
            sess.run(lu, {x: np.ones([2, 3])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input tensor must have rank >= 2, got 1"):
            sess.run(lu, {x: np.ones([3])})
        packed, p = sess.run(lu, {x: np.zeros([2, 0, 0])})
        assert packed.shape == (2, 0, 0) and p.shape == (2, 0) and p.dtype == np.int64
        half = tf.linalg.lu(tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float16))
        with pytest.raises(tf.errors.InvalidArgumentError, match="No OpKernel was registered to support Op 'Lu'"):
            sess.run(half)


def test_lu_build_time_errors(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.linalg.lu(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.linalg.lu(tf.ones([3]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.linalg.lu(tf.ones([3, 3], tf.int32))
    with pytest.raises(LookupError, match=r"No gradient defined for operation .*\(op type: Lu\)"):
        x = tf.ones([2, 2])
        tf.gradients(tf.reduce_sum(tf.linalg.lu(x)[0]), x)
    lu, p = tf.linalg.lu(tf.ones([3, 3]))
    with pytest.raises(ValueError, match=r"`lower_upper.shape\[-1\]` must equal"):
        tf.linalg.lu_solve(lu, p, tf.ones([4, 1]))
    with pytest.raises(ValueError, match="Input `rhs` must have at least 2 dimensions."):
        tf.linalg.lu_solve(lu, p, tf.ones([3]))
    with pytest.raises(ValueError, match=r"`rank\(lower_upper\)` must equal `rank\(perm\) \+ 1`"):
        tf.linalg.lu_reconstruct(lu, tf.ones([1, 3], tf.int32))
    with pytest.raises(ValueError, match="`lower_upper` must be square."):
        tf.linalg.lu_reconstruct(tf.ones([3, 4]), tf.ones([3], tf.int32))


def test_lu_compositions_against_numpy_and_numpy_lu(graph):
    x = RNG.randn(3, 4, 4)
    b = RNG.randn(3, 4, 2)
    b2 = RNG.randn(4, 2)
    lu, p = tf.linalg.lu(tf.constant(x))
    out = run({"solve": tf.linalg.lu_solve(lu, p, b), "bcast": tf.linalg.lu_solve(lu, p, b2),
               "inv": tf.linalg.lu_matrix_inverse(lu, p), "rec": tf.linalg.lu_reconstruct(lu, p),
               "lu": lu, "p": p})
    np.testing.assert_allclose(out["solve"], np.linalg.solve(x, b), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["bcast"], np.linalg.solve(x, b2[None]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["inv"], np.linalg.inv(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["rec"], x, rtol=1e-12, atol=1e-12)
    ref_lu, ref_p, singular = lu_factor(x)
    np.testing.assert_array_equal(out["p"], ref_p)
    assert not singular.any()


def test_lu_compositions_validate_args_at_run_time(graph):
    lu = tf.placeholder(tf.float64, None)
    perm = tf.placeholder(tf.int32, None)
    rec = tf.linalg.lu_reconstruct(lu, perm, validate_args=True)
    rhs = tf.placeholder(tf.float64, None)
    solve = tf.linalg.lu_solve(lu, perm, rhs, validate_args=True)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="must have at least 2 dimensions"):
            sess.run(rec, {lu: np.ones([3]), perm: [0, 1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be square"):
            sess.run(rec, {lu: np.ones([2, 3]), perm: [0, 1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must equal"):
            sess.run(solve, {lu: np.eye(3), perm: [0, 1, 2], rhs: np.ones([2, 1])})
        np.testing.assert_allclose(sess.run(solve, {lu: np.eye(3), perm: [2, 0, 1], rhs: [[1.0], [2.0], [3.0]]}),
                                   [[3.0], [1.0], [2.0]])


def test_lu_composition_gradients():
    x = RNG.randn(2, 3, 3) + 3 * np.eye(3)
    b = RNG.randn(2, 3, 2)
    p = run_perm(x)
    check_gradients(lambda lu, r: tf.linalg.lu_solve(lu, tf.constant(p), r), x, b)
    check_gradients(lambda lu: tf.linalg.lu_matrix_inverse(lu, tf.constant(p)), x)
    check_gradients(lambda lu: tf.linalg.lu_reconstruct(lu, tf.constant(p)), x)
    check_gradients(lambda lu: tf.linalg.lu_reconstruct(lu, tf.constant(p[0])), x[0])


def run_perm(x):
    with tf.Graph().as_default():
        return run(tf.linalg.lu(tf.constant(x))[1])


# -- pinv, matrix_rank ---------------------------------------------------------------------------

def test_pinv_and_rank_against_numpy(graph):
    a = RNG.randn(2, 5, 3)
    deficient = RNG.randn(4, 2) @ RNG.randn(2, 4)
    out = run({"pinv": tf.linalg.pinv(a), "pinv_def": tf.linalg.pinv(deficient),
               "rank": tf.linalg.matrix_rank(a), "rank_def": tf.linalg.matrix_rank(deficient),
               "rank_tol": tf.linalg.matrix_rank(deficient, tol=1e3)})
    np.testing.assert_allclose(out["pinv"], np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["pinv_def"], np.linalg.pinv(deficient, rcond=40 * np.finfo(float).eps),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(out["rank"], [3, 3])
    assert out["rank_def"] == 2 and out["rank_tol"] == 0 and out["rank"].dtype == np.int32


def test_pinv_and_rank_errors(graph):
    with pytest.raises(TypeError, match=r"Input `a` must have `float`-like `dtype` \(saw int32\)."):
        tf.linalg.pinv([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"at least 2 dimensions \(saw: 1\)"):
        tf.linalg.matrix_rank(tf.ones([3]))
    assert run(tf.linalg.matrix_rank([[1, 2], [2, 4]])) == 1  # Python ints take the float32 hint
    x = tf.placeholder(tf.float32, None)
    checked = tf.linalg.pinv(x, validate_args=True)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input `a` must have at least 2 dimensions."):
            sess.run(checked, {x: np.ones([3])})


def test_pinv_gradient():
    check_gradients(lambda a: tf.linalg.pinv(a), RNG.randn(2, 4, 3))
    check_gradients(lambda a: tf.linalg.pinv(a), RNG.randn(2, 3))


# -- normalize -----------------------------------------------------------------------------------

def test_normalize_norms(graph):
    x = RNG.randn(2, 3, 4)
    out = run({"default": tf.linalg.normalize(x), "axis": tf.linalg.normalize(x, ord=3, axis=1),
               "mat2": tf.linalg.normalize(x, ord=2, axis=(2, 0)), "fro": tf.linalg.normalize(x, "fro", (1, 2))})
    np.testing.assert_allclose(out["default"][1], np.linalg.norm(x.ravel()).reshape(1, 1, 1))
    np.testing.assert_allclose(out["axis"][1], np.sum(np.abs(x) ** 3, 1, keepdims=True) ** (1 / 3))
    mat2 = np.linalg.norm(np.transpose(x, (1, 2, 0)), 2, axis=(1, 2)).reshape(1, 3, 1)
    np.testing.assert_allclose(out["mat2"][1], mat2)
    np.testing.assert_allclose(out["mat2"][0], x / mat2)
    np.testing.assert_allclose(out["fro"][1], np.linalg.norm(x, axis=(1, 2), keepdims=True))


def test_normalize_complex_and_unknown_rank(graph):
    c = np.array([[1 + 1j, 2], [3, 4j]], np.complex128)
    normalized, norm = run(tf.linalg.normalize(c))
    assert norm.dtype == np.complex128
    np.testing.assert_allclose(norm, [[np.linalg.norm(c)]])
    np.testing.assert_allclose(normalized, c / np.linalg.norm(c))
    u = tf.placeholder(tf.float64, None)
    n = tf.linalg.normalize(u, ord=2, axis=[0, -1])[1]
    x = RNG.randn(3, 2, 4)
    np.testing.assert_allclose(run(n, {u: x}), np.linalg.norm(np.transpose(x, (1, 0, 2)), 2, (1, 2))[None, :, None])


def test_normalize_gradients():
    check_gradients(lambda x: tf.linalg.normalize(x, axis=1)[0], RNG.randn(2, 3))
    check_gradients(lambda x: tf.linalg.normalize(x, ord=2, axis=(0, 1))[0], RNG.randn(3, 2))


# -- tridiagonal ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [{}, {"partial_pivoting": False}, {"perturb_singular": True}])
def test_tridiagonal_solve_against_numpy(graph, kwargs):
    d = RNG.randn(3, 3, 6)
    d[:, 1] += 4.0
    rhs = RNG.randn(3, 6, 2)
    x = run(tf.linalg.tridiagonal_solve(d, rhs, **kwargs))
    np.testing.assert_allclose(x, np.linalg.solve(_full(d), rhs), rtol=1e-10, atol=1e-12)


def test_tridiagonal_solve_zero_pivot_gives_nan_per_system(graph):
    d = np.array([[[1.0, 1, 0], [0, 1, 1], [0, 1, 1]], [[1.0, 1, 0], [2, 1, 1], [0, 1, 1]]])
    rhs = np.array([[[1.0], [2], [3]]] * 2)
    piv = run(tf.linalg.tridiagonal_solve(d, rhs))
    thomas = run(tf.linalg.tridiagonal_solve(d, rhs, partial_pivoting=False))
    np.testing.assert_allclose(piv[0], np.linalg.solve(_full(d[0]), rhs[0]))
    assert np.all(np.isnan(thomas[0])) and np.all(np.isfinite(thomas[1]))
    singular = np.array([[2.0, 9], [1, 4], [9, 2]])
    assert np.all(np.isnan(run(tf.linalg.tridiagonal_solve(singular, np.array([[4.0], [6.0]])))))
    perturbed = run(tf.linalg.tridiagonal_solve(singular, np.array([[4.0], [6.0]]), perturb_singular=True))
    assert np.all(np.isfinite(perturbed)) and np.max(np.abs(perturbed)) > 1e10  # large, not inf


def test_tridiagonal_errors(graph):
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        _solve_op(tf.ones([4, 3]), tf.ones([3, 1]))
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 1 and 0"):
        _solve_op(tf.ones([2, 3, 3]), tf.ones([3, 1]))
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are 2 and 3. "
                                         r"Shapes are \[2\] and \[3\]."):
        tf.linalg.tridiagonal_matmul(tf.ones([2, 3, 4]), tf.ones([3, 4, 2]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 5"):
        tf.linalg.tridiagonal_matmul(tf.ones([3, 4]), tf.ones([5, 2]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.linalg.tridiagonal_solve(tf.ones([3, 3], tf.float16), tf.ones([3, 1], tf.float16))
    m = tf.placeholder(tf.float32, None)
    r = tf.placeholder(tf.float32, None)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid main diagonal shape."):
            sess.run(tf.linalg.tridiagonal_matmul([m[0], m[1, :2], m[0]], r, diagonals_format="sequence"),
                     {m: np.ones([2, 3]), r: np.ones([3, 1])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="All input tensors must have the same rank."):
            sess.run(tf.linalg.tridiagonal_solve(m, r), {m: np.ones([3, 3]), r: np.ones([3])})


def test_tridiagonal_gradients():
    d = RNG.randn(2, 3, 4)
    d[:, 1] += 3.0
    rhs = RNG.randn(2, 4, 2)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_solve(a, b), d, rhs)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_solve(a, b, partial_pivoting=False), d, rhs)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_solve(a, b, diagonals_format="matrix"), _full(d), rhs)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_matmul(a, b), d, rhs)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_matmul(a, b, diagonals_format="matrix"), _full(d), rhs)
    # unknown shapes: the gradients pad through the dynamic rank
    check_gradients(lambda a, b: tf.linalg.tridiagonal_solve(tf.placeholder_with_default(a, None),
                                                             tf.placeholder_with_default(b, None)), d, rhs)
    check_gradients(lambda a, b: tf.linalg.tridiagonal_matmul(tf.placeholder_with_default(a, None),
                                                              tf.placeholder_with_default(b, None)), d, rhs)


# -- logm ------------------------------------------------------------------------------------------

def test_logm_inverts_expm(graph):
    a = (RNG.randn(3, 4, 4) + 1j * RNG.randn(3, 4, 4)) * 0.3
    w, v = np.linalg.eig(a)
    expm = (v * np.exp(w)[..., None, :]) @ np.linalg.inv(v)
    np.testing.assert_allclose(run(tf.linalg.logm(tf.constant(expm))), a, atol=1e-9)
    log64 = run(tf.linalg.logm(tf.constant(expm.astype(np.complex64))))
    assert log64.dtype == np.complex64
    np.testing.assert_allclose(log64, a, atol=1e-4)


def test_logm_defective_and_singular(graph):
    jordan = np.array([[2.0, 1, 0], [0, 2, 1], [0, 0, 2]], np.complex128)
    expected = np.log(2) * np.eye(3) + np.array([[0, 0.5, -0.125], [0, 0, 0.5], [0, 0, 0]])
    np.testing.assert_allclose(run(tf.linalg.logm(jordan)), expected, atol=1e-9)
    assert np.all(np.isnan(run(tf.linalg.logm(np.zeros([2, 2], np.complex64)))))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.linalg.logm(tf.ones([2, 2]))

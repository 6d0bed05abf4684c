"""tf.matrix_inverse, tf.cholesky, tf.svd, ... (graphrt/linear_algebra/) against numpy, their
gradients against central finite differences (float64), and TF's run-time behaviour for
singular and non-positive-definite input. TensorFlow's own outputs are compared by the TF1
program case tests/tf1_programs/cases/linear_algebra.py."""
import numpy as np
import pytest

import graphrt as tf
from tests.helpers import run
from tests.ops.gradcheck import check_gradients

RNG = np.random.RandomState(7)


def _general(*batch, n=3):
    return RNG.randn(*batch, n, n) + 3.0 * np.eye(n)


def _spd(*batch, n=3):
    a = RNG.randn(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + 2.0 * np.eye(n)


def _sym(a):
    return 0.5 * (a + np.swapaxes(a, -1, -2))


# -- values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_against_numpy(graph, dtype):
    g, s = _general(2).astype(dtype), _spd(2).astype(dtype)
    b, tall = RNG.randn(2, 3, 2).astype(dtype), RNG.randn(2, 5, 3).astype(dtype)
    G, S, B, T = (tf.constant(v) for v in (g, s, b, tall))
    sign, logabs = tf.linalg.slogdet(G)
    q, r = tf.qr(T)
    sv, u, v = tf.svd(T)
    e, ev = tf.self_adjoint_eig(S)
    out = run(dict(inv=tf.matrix_inverse(G), inv_adj=tf.matrix_inverse(G, adjoint=True), det=tf.matrix_determinant(G),
                   sign=sign, logabs=logabs, logdet=tf.linalg.logdet(S), chol=tf.cholesky(S),
                   chol_solve=tf.cholesky_solve(tf.cholesky(S), B), solve=tf.matrix_solve(G, B),
                   solve_adj=tf.matrix_solve(G, B, adjoint=True), tri=tf.matrix_triangular_solve(G, B),
                   tri_up_adj=tf.matrix_triangular_solve(G, B, lower=False, adjoint=True),
                   lstsq=tf.matrix_solve_ls(T, tf.constant(RNG.randn(2, 5, 2).astype(dtype))),
                   q=q, r=r, s=sv, u=u, v=v, e=e, ev=ev, band=tf.matrix_band_part(G, 1, 0),
                   trace=tf.trace(G), sqrtm=tf.matrix_square_root(S), expm=tf.linalg.expm(S * 0.1)))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for k, v_ in out.items():
        assert v_.dtype == dtype, k
    np.testing.assert_allclose(out["inv"], np.linalg.inv(g), **tol)
    np.testing.assert_allclose(out["inv_adj"], np.linalg.inv(np.swapaxes(g, -1, -2)), **tol)
    np.testing.assert_allclose(out["det"], np.linalg.det(g), **tol)
    np.testing.assert_allclose(out["sign"], np.linalg.slogdet(g)[0], **tol)
    np.testing.assert_allclose(out["logabs"], np.linalg.slogdet(g)[1], **tol)
    np.testing.assert_allclose(out["logdet"], np.linalg.slogdet(s)[1], **tol)
    np.testing.assert_allclose(out["chol"], np.linalg.cholesky(s), **tol)
    np.testing.assert_allclose(out["chol_solve"], np.linalg.solve(s, b), **tol)
    np.testing.assert_allclose(out["solve"], np.linalg.solve(g, b), **tol)
    np.testing.assert_allclose(out["solve_adj"], np.linalg.solve(np.swapaxes(g, -1, -2), b), **tol)
    np.testing.assert_allclose(out["tri"], np.linalg.solve(np.tril(g), b), **tol)
    np.testing.assert_allclose(out["tri_up_adj"], np.linalg.solve(np.swapaxes(np.triu(g), -1, -2), b), **tol)
    # the factorizations: reconstructions and sign-invariant parts
    np.testing.assert_allclose(out["q"] @ out["r"], tall, **tol)
    np.testing.assert_allclose(np.swapaxes(out["q"], -1, -2) @ out["q"], np.broadcast_to(np.eye(3), (2, 3, 3)),
                               **tol)
    assert np.all(np.tril(out["r"], -1) == 0)
    np.testing.assert_allclose(np.abs(out["r"]), np.abs(np.linalg.qr(tall)[1]), **tol)
    np.testing.assert_allclose(out["s"], np.linalg.svd(tall, compute_uv=False), **tol)
    np.testing.assert_allclose((out["u"] * out["s"][..., None, :]) @ np.swapaxes(out["v"], -1, -2), tall, **tol)
    np.testing.assert_allclose(out["e"], np.linalg.eigvalsh(s), **tol)
    np.testing.assert_allclose((out["ev"] * out["e"][..., None, :]) @ np.swapaxes(out["ev"], -1, -2), s,
                               rtol=1e-4 if dtype == np.float32 else 1e-9)
    np.testing.assert_allclose(out["band"], np.tril(g) - np.tril(g, -2), **tol)
    np.testing.assert_allclose(out["trace"], np.trace(g, axis1=-2, axis2=-1), **tol)
    np.testing.assert_allclose(out["sqrtm"] @ out["sqrtm"], s, rtol=1e-4 if dtype == np.float32 else 1e-9)
    w, vecs = np.linalg.eigh(s * 0.1)
    np.testing.assert_allclose(out["expm"], (vecs * np.exp(w)[..., None, :]) @ np.swapaxes(vecs, -1, -2),
                               rtol=1e-4 if dtype == np.float32 else 1e-9)
    x_ls = out["lstsq"]
    assert x_ls.shape == (2, 3, 2)


def test_float16_is_computed_in_float32(graph):
    a = _general().astype(np.float16)
    inv = run(tf.matrix_inverse(tf.constant(a)))
    assert inv.dtype == np.float16
    np.testing.assert_allclose(inv, np.linalg.inv(a.astype(np.float32)), rtol=2e-3, atol=2e-3)


def test_diag_diag_part_cross_band_part(graph):
    d = RNG.randn(2, 3)
    full = run(tf.diag(tf.constant(d)))
    assert full.shape == (2, 3, 2, 3)
    np.testing.assert_array_equal(full.reshape(6, 6), np.diag(d.reshape(-1)))
    np.testing.assert_array_equal(run(tf.diag_part(tf.constant(full))), d)
    a, b = RNG.randn(5, 3), RNG.randn(5, 3)
    np.testing.assert_allclose(run(tf.cross(tf.constant(a), tf.constant(b))), np.cross(a, b))
    x = np.arange(20).reshape(4, 5)
    got = run(tf.matrix_band_part(tf.constant(x), 1, 2))
    rows, cols = np.indices((4, 5))
    np.testing.assert_array_equal(got, np.where((rows - cols <= 1) & (cols - rows <= 2), x, 0))
    np.testing.assert_array_equal(run(tf.matrix_band_part(tf.constant(x), -1, -1)), x)


def test_lstsq_matches_numpy_and_unknown_shapes_take_the_cond(graph):
    a, b = RNG.randn(6, 3), RNG.randn(6, 2)
    want = np.linalg.lstsq(a, b, rcond=None)[0]
    A, B = tf.placeholder(tf.float64, [None, None]), tf.placeholder(tf.float64, [None, None])
    fast = tf.matrix_solve_ls(A, B)  # the shapes decide at run time (a cond), as TF
    slow = tf.matrix_solve_ls(A, B, fast=False)
    got_fast, got_slow = run([fast, slow], {A: a, B: b})
    np.testing.assert_allclose(got_fast, want, rtol=1e-9)
    np.testing.assert_allclose(got_slow, want, rtol=1e-9)
    # underdetermined: the minimum-norm solution
    wide, rhs = RNG.randn(2, 4), RNG.randn(2, 1)
    got_fast, got_slow = run([fast, slow], {A: wide, B: rhs})
    np.testing.assert_allclose(got_fast, np.linalg.pinv(wide) @ rhs, rtol=1e-9)
    np.testing.assert_allclose(got_slow, np.linalg.pinv(wide) @ rhs, rtol=1e-9)
    # regularized: (A^T A + l2 I)^-1 A^T b
    reg = run(tf.matrix_solve_ls(tf.constant(a), tf.constant(b), l2_regularizer=0.7))
    np.testing.assert_allclose(reg, np.linalg.solve(a.T @ a + 0.7 * np.eye(3), a.T @ b), rtol=1e-9)


def test_static_shapes(graph):
    p = tf.placeholder(tf.float32, [None, 5, 3])
    q, r = tf.qr(p)
    qf, rf = tf.qr(p, full_matrices=True)
    s, u, v = tf.svd(p)
    sf, uf, vf = tf.svd(p, full_matrices=True)
    e, ev = tf.self_adjoint_eig(tf.placeholder(tf.float64, [2, None, 4]))
    shapes = [t.shape.as_list() for t in (q, r, qf, rf, s, u, v, uf, vf, e, ev)]
    assert shapes == [[None, 5, 3], [None, 3, 3], [None, 5, 5], [None, 5, 3], [None, 3], [None, 5, 3],
                      [None, 3, 3], [None, 5, 5], [None, 3, 3], [2, 4], [2, 4, 4]]
    assert tf.matrix_triangular_solve(tf.ones([4, 1, 3, 3]), tf.ones([2, 3, 5])).shape.as_list() == [4, 2, 3, 5]
    assert tf.diag(tf.ones([2, 3])).shape.as_list() == [2, 3, 2, 3]
    assert tf.linalg.slogdet(tf.ones([7, 2, 2]))[1].shape.as_list() == [7]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.matrix_inverse(tf.ones([2, 3]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.cholesky(tf.ones([2, 2], tf.int32))
    with pytest.raises(ValueError, match="must be 3"):
        tf.cross(tf.ones([2]), tf.ones([2]))


# -- TF's run-time behaviour -----------------------------------------------------------------

def test_singular_inverse_and_solve_raise_naming_the_node(graph):
    m = tf.placeholder(tf.float32, [2, 2])
    inv = tf.matrix_inverse(m, name="my_inverse")
    solve = tf.matrix_solve(m, tf.ones([2, 1]), name="my_solve")
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible.") as info:
        run(inv, {m: singular})
    assert info.value.node == "my_inverse"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix is not invertible.") as info:
        run(solve, {m: singular})
    assert info.value.node == "my_solve"
    assert run(tf.matrix_determinant(m), {m: singular}) == 0.0


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_tf(graph):
    m = tf.placeholder(tf.float64, [2, 2, 2])
    got = run(tf.cholesky(m), {m: [[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0], [2.0, 3.0]]]})
    assert np.isnan(got[0][np.tril_indices(2)]).all()
    np.testing.assert_allclose(got[1], [[2.0, 0.0], [1.0, np.sqrt(2.0)]])


def test_triangular_solve_reads_one_triangle_and_broadcasts(graph):
    a, b = RNG.randn(3, 3) + 3 * np.eye(3), RNG.randn(2, 3, 4)
    got = run(tf.matrix_triangular_solve(tf.constant(a), tf.constant(b), lower=False))
    np.testing.assert_allclose(got, np.linalg.solve(np.triu(a), b), rtol=1e-10)


# -- gradients against finite differences ----------------------------------------------------

def test_gradients_inverse_det_slogdet_logdet():
    g = _general(2)
    check_gradients(lambda x: tf.matrix_inverse(x), g)
    check_gradients(lambda x: tf.matrix_inverse(x, adjoint=True), g)
    check_gradients(lambda x: tf.matrix_determinant(x), g)
    check_gradients(lambda x: tf.linalg.slogdet(x)[1], g)
    check_gradients(lambda x: tf.linalg.logdet(tf.matmul(x, x, transpose_b=True)), g)


def test_gradients_cholesky_and_solvers():
    s, g = _spd(2), _general(2)
    b = RNG.randn(2, 3, 2)
    # cholesky reads the lower triangle: differentiate through a symmetric input
    check_gradients(lambda x: tf.cholesky(0.5 * (x + tf.matrix_transpose(x))), s)
    check_gradients(lambda x, y: tf.cholesky_solve(tf.cholesky(0.5 * (x + tf.matrix_transpose(x))), y), s, b)
    check_gradients(lambda x, y: tf.matrix_solve(x, y), g, b)
    check_gradients(lambda x, y: tf.matrix_solve(x, y, adjoint=True), g, b)
    check_gradients(lambda x, y: tf.matrix_triangular_solve(x, y), g, b)
    check_gradients(lambda x, y: tf.matrix_triangular_solve(x, y, lower=False, adjoint=True), g, b)
    check_gradients(lambda x, y: tf.matrix_triangular_solve(x, y), g[0], b)  # broadcast batch dims
    check_gradients(lambda x, y: tf.matrix_solve_ls(x, y), RNG.randn(5, 3), RNG.randn(5, 2))
    check_gradients(lambda x, y: tf.matrix_solve_ls(x, y, l2_regularizer=0.3), RNG.randn(2, 4), RNG.randn(2, 2))


def test_gradients_qr_svd_eig_through_sign_invariant_losses():
    tall, wide, s = RNG.randn(2, 4, 3), RNG.randn(2, 3, 4), _spd(2)
    for a in (tall, RNG.randn(3, 3)):
        check_gradients(lambda x: tf.abs(tf.qr(x)[1]), a)
        check_gradients(lambda x: tf.square(tf.qr(x)[0]), a)
    check_gradients(lambda x: tf.abs(tf.qr(x)[1]) + 0 * tf.reduce_sum(tf.square(tf.qr(x)[0])), wide)
    for a in (tall, wide):
        check_gradients(lambda x: tf.svd(x)[0], a)
        check_gradients(lambda x: tf.svd(x, compute_uv=False), a)
        check_gradients(lambda x: tf.square(tf.svd(x)[1]), a)
        check_gradients(lambda x: tf.square(tf.svd(x)[2]), a)
    check_gradients(lambda x: tf.square(tf.svd(x, full_matrices=True)[2]), RNG.randn(3, 4))
    sym = lambda x: 0.5 * (x + tf.matrix_transpose(x))  # noqa: E731
    check_gradients(lambda x: tf.self_adjoint_eig(sym(x))[0], s)
    check_gradients(lambda x: tf.square(tf.self_adjoint_eig(sym(x))[1]), s)
    check_gradients(lambda x: tf.self_adjoint_eigvals(sym(x)), s)


def test_gradients_band_trace_diag_cross_sqrtm_expm():
    g = _general(2)
    check_gradients(lambda x: tf.matrix_band_part(x, 1, 0), g)
    check_gradients(lambda x: tf.trace(x), g)
    check_gradients(lambda x: tf.matrix_transpose(x), RNG.randn(2, 3, 4))
    check_gradients(lambda x: tf.diag(x), RNG.randn(2, 3))
    check_gradients(lambda x: tf.diag_part(x), RNG.randn(2, 3, 2, 3))
    check_gradients(lambda x, y: tf.cross(x, y), RNG.randn(4, 3), RNG.randn(4, 3))
    check_gradients(lambda x: tf.matrix_square_root(x), _spd(2), rtol=1e-4, atol=1e-6)
    check_gradients(lambda x: tf.linalg.expm(x), 0.3 * RNG.randn(2, 3, 3), rtol=1e-4, atol=1e-6)


def test_gradient_errors_as_tf():
    x = tf.ones([5, 3])
    with pytest.raises(NotImplementedError, match="nrows > ncols and full_matrices"):
        tf.gradients(tf.reduce_sum(tf.qr(x, full_matrices=True)[1]), x)
    a = tf.placeholder(tf.float64, [4, 2])
    with pytest.raises(ValueError, match="Gradient not defined for fast=False"):
        tf.gradients(tf.reduce_sum(tf.matrix_solve_ls(a, tf.ones([4, 1], tf.float64), fast=False)), a)

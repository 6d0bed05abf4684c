"""Gradients of the linear-algebra ops: TF's formulas (tensorflow/python/ops/linalg_grad.py and
array_grad.py / math_grad.py for Diag, DiagPart, MatrixBandPart, Cross), for real dtypes."""
from ..framework.op_builder import apply_op
from ..framework.registry import register_gradient
from ..ops import array_ops, control_flow_ops, extra_ops, math_ops
from . import ops as la

matmul = math_ops.matmul
adjoint = la.matrix_transpose  # real dtypes: the adjoint is the transpose


def _safe_reciprocal(x, epsilon=1e-20):
    return x * math_ops.reciprocal(x * x + epsilon)


@register_gradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    adj = op.get_attr("adjoint")
    return [-matmul(ainv, matmul(grad, ainv, adjoint_a=adj, adjoint_b=not adj), adjoint_a=not adj)]


def _times_batch(scale, c, a_adj_inv):
    multipliers = array_ops.reshape(scale, array_ops.concat([array_ops.shape(c), [1, 1]], 0))
    return multipliers * a_adj_inv


@register_gradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    a, c = op.inputs[0], op.outputs[0]
    return [_times_batch(grad * c, c, la.matrix_inverse(a, adjoint=True))]


@register_gradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op, _, grad_b):
    a, c = op.inputs[0], op.outputs[1]
    return [_times_batch(grad_b, c, la.matrix_inverse(a, adjoint=True))]


@register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    l = op.outputs[0]  # noqa: E741
    shape = array_ops.shape(l)
    l_inverse = la.matrix_triangular_solve(l, extra_ops.eye(shape[-1], batch_shape=shape[:-2], dtype=l.dtype))
    middle = matmul(l, grad, adjoint_a=True)
    middle = extra_ops.matrix_set_diag(middle, 0.5 * extra_ops.matrix_diag_part(middle))
    middle = la.matrix_band_part(middle, -1, 0)
    grad_a = matmul(matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a += adjoint(grad_a)
    return [grad_a * 0.5]


@register_gradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    a = op.inputs[0]
    adj = op.get_attr("adjoint")
    c = op.outputs[0]
    grad_b = la.matrix_solve(a, grad, adjoint=not adj)
    grad_a = -matmul(c, grad_b, adjoint_b=True) if adj else -matmul(grad_b, c, adjoint_b=True)
    return [grad_a, grad_b]


@register_gradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op, grad):
    a, b = op.inputs
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    c = op.outputs[0]
    grad_b = la.matrix_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = -matmul(c, grad_b, adjoint_b=True) if adj else -matmul(grad_b, c, adjoint_b=True)
    grad_a = la.matrix_band_part(grad_a, -1, 0) if lower else la.matrix_band_part(grad_a, 0, -1)
    if a.shape.is_fully_defined() and b.shape.is_fully_defined() and a.shape[:-2] == b.shape[:-2]:
        return [grad_a, grad_b]
    a_shape, b_shape = array_ops.shape(a), array_ops.shape(b)
    op_args = apply_op("BroadcastGradientArgs", [a_shape[:-2], b_shape[:-2]])
    ra, rb = op_args.outputs
    grad_a = array_ops.reshape(math_ops.reduce_sum(grad_a, axis=ra), a_shape)
    grad_b = array_ops.reshape(math_ops.reduce_sum(grad_b, axis=rb), b_shape)
    return [grad_a, grad_b]


@register_gradient("MatrixSolveLs")
def _matrix_solve_ls_grad(op, grad):
    if op.get_attr("fast") is False:
        raise ValueError("Gradient not defined for fast=False")
    a, b = op.inputs[0], op.inputs[1]
    l2 = math_ops.cast(op.inputs[2], a.dtype.base_dtype)

    def over():
        x = op.outputs[0]
        chol = la._regularized_gramian_cholesky(a, l2, first_kind=True)
        z = la.cholesky_solve(chol, grad)
        xzt = matmul(x, z, adjoint_b=True)
        zx_sym = xzt + adjoint(xzt)
        return [-matmul(a, zx_sym) + matmul(b, z, adjoint_b=True), matmul(a, z), None]

    def under():
        chol = la._regularized_gramian_cholesky(a, l2, first_kind=False)
        grad_b = la.cholesky_solve(chol, matmul(a, grad))
        tmp = la.cholesky_solve(chol, b)
        a1 = -matmul(grad_b, matmul(tmp, a, adjoint_a=True))
        a2 = matmul(tmp, grad - matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
        return [a1 + a2, grad_b, None]

    m, n = a.shape[-2], a.shape[-1]
    if m is not None and n is not None:
        return over() if m >= n else under()
    shape = array_ops.shape(a)
    pred = math_ops.greater_equal(shape[-2], shape[-1])
    ga, gb = control_flow_ops.cond(pred, lambda: over()[:2], lambda: under()[:2])
    return [ga, gb, None]


def _triangular_solve_right(x, r):
    """x @ inverse(r)^H for an upper-triangular r."""
    return adjoint(la.matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


@register_gradient("Qr")
def _qr_grad(op, dq, dr):
    q, r = op.outputs
    if r.shape.ndims is None or r.shape[-2] is None or r.shape[-1] is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes. Received r.shape: {r.shape}")
    if r.shape[-2] > r.shape[-1] and q.shape[-2] == q.shape[-1]:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and full_matrices is true. "
                                  f"Received r.shape={r.shape} with nrows={r.shape[-2]}and ncols={r.shape[-1]}.")

    def square_and_deep(q, r, dq, dr):
        qdq = matmul(q, dq, adjoint_a=True)
        qdq_ = qdq - adjoint(qdq)
        rdr = matmul(r, dr, adjoint_b=True)
        rdr_ = rdr - adjoint(rdr)
        tril = la.matrix_band_part(qdq_ + rdr_, -1, 0)
        grad_a = matmul(q, dr + _triangular_solve_right(tril, r))
        grad_b = _triangular_solve_right(dq - matmul(q, qdq), r)
        return grad_a + grad_b

    num_rows, num_cols = q.shape[-2], r.shape[-1]
    if num_rows >= num_cols:
        return [square_and_deep(q, r, dq, dr)]
    a = op.inputs[0]
    y = a[..., :, num_rows:]
    u = r[..., :, :num_rows]
    dv = dr[..., :, num_rows:]
    du = dr[..., :, :num_rows]
    dy = matmul(q, dv)
    dx = square_and_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return [array_ops.concat([dx, dy], axis=-1)]


@register_gradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    with op.graph.control_dependencies([grad_e, grad_v]):
        if op.get_attr("compute_v"):
            v = op.outputs[1]
            f = extra_ops.matrix_set_diag(
                _safe_reciprocal(array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)),
                array_ops.zeros_like(e))
            grad_a = matmul(v, matmul(extra_ops.matrix_diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True), v,
                                      adjoint_b=True))
        else:
            _, v = la.self_adjoint_eig(op.inputs[0])
            grad_a = matmul(v, matmul(extra_ops.matrix_diag(grad_e), v, adjoint_b=True))
        grad_a = la.matrix_band_part(grad_a + adjoint(grad_a), -1, 0)
        grad_a = extra_ops.matrix_set_diag(grad_a, 0.5 * extra_ops.matrix_diag_part(grad_a))
        return [grad_a]


@register_gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    a_shape = a.shape.with_rank_at_least(2)
    grad_s_mat = extra_ops.matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        s, u, v = la.svd(a, compute_uv=True)
        grad_a = matmul(u, matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a_shape)
        return [grad_a]
    full_matrices = op.get_attr("full_matrices")
    m = a_shape[-2] if a_shape[-2] is not None else grad_u.shape[-2]
    n = a_shape[-1] if a_shape[-1] is not None else grad_v.shape[-2]
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown inner matrix shape.")
    s, u, v = op.outputs
    use_adjoint = False
    if m > n:
        use_adjoint = True
        m, n = n, m
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    with op.graph.control_dependencies([grad_s, grad_u, grad_v]):
        if full_matrices and abs(m - n) > 1:
            raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is "
                                      f"True. Received: m={m} and n={n} from op input={a} with shape={a_shape}.")
        s_mat = extra_ops.matrix_diag(s)
        s2 = math_ops.square(s)
        f = extra_ops.matrix_set_diag(
            _safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)),
            array_ops.zeros_like(s))
        s_inv_mat = extra_ops.matrix_diag(_safe_reciprocal(s))
        v1 = v[..., :, :m]
        grad_v1 = grad_v[..., :, :m]
        u_gu = matmul(u, grad_u, adjoint_a=True)
        v_gv = matmul(v1, grad_v1, adjoint_a=True)
        f_u = f * u_gu
        f_v = f * v_gv
        term1_nouv = grad_s_mat + matmul(f_u + adjoint(f_u), s_mat) + matmul(s_mat, f_v + adjoint(f_v))
        term1 = matmul(u, matmul(term1_nouv, v1, adjoint_b=True))
        if m == n:
            grad_a = term1
        else:
            gv1t = adjoint(grad_v1)
            gv1t_v1 = matmul(gv1t, v1)
            term2_nous = gv1t - matmul(gv1t_v1, v1, adjoint_b=True)
            if full_matrices:
                v2 = v[..., :, m:n]
                grad_v2 = grad_v[..., :, m:n]
                v1t_gv2 = matmul(v1, grad_v2, adjoint_a=True)
                term2_nous -= matmul(v1t_gv2, v2, adjoint_b=True)
            u_s_inv = matmul(u, s_inv_mat)
            grad_a = term1 + matmul(u_s_inv, term2_nous)
        if use_adjoint:
            grad_a = adjoint(grad_a)
        grad_a.set_shape(a_shape)
        return [grad_a]


@register_gradient("MatrixBandPart")
def _matrix_band_part_grad(op, grad):
    return [la.matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


@register_gradient("Diag")
def _diag_grad(op, grad):
    return [la.diag_part(grad)]


@register_gradient("DiagPart")
def _diag_part_grad(op, grad):
    return [la.diag(grad)]


@register_gradient("Cross")
def _cross_grad(op, grad):
    u, v = op.inputs
    return [la.cross(v, grad), la.cross(grad, u)]


@register_gradient("MatrixSquareRoot")
def _matrix_square_root_grad(op, grad):
    """TF's: solve the Sylvester equation R dA + dA R = grad through a Kronecker-sum system."""
    sqrtm = op.outputs[0]
    shape = array_ops.shape(sqrtm)
    order = shape[-1]
    batch = shape[:-2]
    eye_batch = extra_ops.eye(order, batch_shape=batch, dtype=sqrtm.dtype)

    def kron(b1, b2):
        s = array_ops.concat([batch, array_ops.stack([order, 1, order, 1])], 0)
        s2 = array_ops.concat([batch, array_ops.stack([1, order, 1, order])], 0)
        out_shape = array_ops.concat([batch, array_ops.stack([order * order, order * order])], 0)
        return array_ops.reshape(array_ops.reshape(b1, s) * array_ops.reshape(b2, s2), out_shape)

    ksum = kron(eye_batch, adjoint(sqrtm)) + kron(sqrtm, eye_batch)
    vec_shape = array_ops.concat([batch, array_ops.stack([order * order, 1])], 0)
    vec_da = array_ops.reshape(adjoint(grad), vec_shape)
    vec_dsqrtm = la.matrix_solve(ksum, vec_da)
    return [adjoint(array_ops.reshape(vec_dsqrtm, shape))]


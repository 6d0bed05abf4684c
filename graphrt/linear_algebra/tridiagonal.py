"""`tf.linalg.tridiagonal_solve` and `tf.linalg.tridiagonal_matmul`: TF's TridiagonalSolve and
TridiagonalMatMul ops, numpy kernels, TF's gradients, and the Python API's three formats of the
diagonals ('compact' [..., 3, M], 'sequence' (super, main, sub), 'matrix' [..., M, M]).

The solve kernel runs TF's CPU algorithms, vectorized over the batch: Gaussian elimination with
LAPACK's (dgtsv) partial pivoting, the Thomas algorithm without pivoting, and xLAGTF/xLAGTS with
perturbed tiny pivots for perturb_singular. A zero pivot gives NaNs for that system (TF logs a
warning, raises no error).
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import register_gradient, register_kernel, register_op
from ..ops import array_ops, extra_ops, math_ops
from . import ops as la
from .kernels import CPU

TRIDIAGONAL = (dtypes.float64, dtypes.float32, dtypes.complex64, dtypes.complex128)


# -- shape functions -----------------------------------------------------------------------------

def _merge_shapes(a, b):
    """TF's Merge of two shapes (the first error it reports)."""
    if a.ndims is None or b.ndims is None:
        return a if b.ndims is None else b
    if a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
        if x is not None and y is not None and x != y:
            raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and {y}. Shapes are "
                             f"{_short(a)} and {_short(b)}.")
    return a.merge_with(b)


def _short(s):
    return "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


def _with_value(d, value):
    if d is not None and d != value:
        raise ValueError(f"Dimension must be {value} but is {d}")


def _tridiagonal_solve_shape(ctx):
    lhs, rhs = ctx.shape(0), ctx.shape(1)
    la._at_least(lhs, 2)
    la._at_least(rhs, 2)
    if lhs.ndims is not None and rhs.ndims is not None:
        _merge_shapes(lhs[:-2], rhs[:-2])
        la._merge(lhs[-1], rhs[-2])
        _with_value(lhs[-2], 3)
    elif lhs.ndims is not None:
        _with_value(lhs[-2], 3)
    return rhs


def _tridiagonal_matmul_shape(ctx):
    shapes = [ctx.shape(i) for i in range(4)]
    for s in shapes:
        la._at_least(s, 2)
    superdiag, maindiag, subdiag, rhs = shapes
    superdiag = _merge_shapes(superdiag, maindiag)
    _merge_shapes(subdiag, maindiag)
    if superdiag.ndims is not None and rhs.ndims is not None:
        _merge_shapes(superdiag[:-2], rhs[:-2])
    if maindiag.ndims is not None and rhs.ndims is not None:
        la._merge(maindiag[-1], rhs[-2])
    if maindiag.ndims is not None:
        _with_value(maindiag[-2], 1)
    return rhs


register_op("TridiagonalSolve", ["diagonals: T", "rhs: T"], ["output: T"],
            attrs={"partial_pivoting": True, "perturb_singular": False}, shape_fn=_tridiagonal_solve_shape,
            allowed_types={"T": TRIDIAGONAL})
register_op("TridiagonalMatMul", ["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"], ["output: T"],
            shape_fn=_tridiagonal_matmul_shape, allowed_types={"T": TRIDIAGONAL})


# -- kernels ---------------------------------------------------------------------------------------

def _check_batch(inputs, name):
    """TF's LinearAlgebraOp checks: a first input of rank >= 2, the others of its rank and batch dims."""
    first = inputs[0]
    if first.ndim < 2:
        raise errors.InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {first.ndim}", node=name)
    for x in inputs[1:]:
        if x.ndim != first.ndim:
            raise errors.InvalidArgumentError("All input tensors must have the same rank.", node=name)
        if x.shape[:-2] != first.shape[:-2]:
            raise errors.InvalidArgumentError("All input tensors must have the same outer dimensions.", node=name)


def _solve_pivoting(sup, diag, sub, rhs):
    """Gaussian elimination with partial pivoting (dgtsv) of [B, n] diagonals, rhs [B, n, K];
    returns (x, failed)."""
    b, n = diag.shape
    u = np.zeros((b, n, 3), diag.dtype)
    x = np.zeros(rhs.shape, rhs.dtype)
    u[:, 0, 0], u[:, 0, 1] = diag[:, 0], sup[:, 0]
    x[:, 0] = rhs[:, 0]
    failed = np.zeros(b, bool)
    for i in range(n - 1):
        keep = np.abs(u[:, i, 0]) >= np.abs(sub[:, i + 1])
        failed |= keep & (u[:, i, 0] == 0)
        f_keep = sub[:, i + 1] / u[:, i, 0]
        f_swap = u[:, i, 0] / sub[:, i + 1]
        k1 = keep[:, None]
        x_next = np.where(k1, rhs[:, i + 1] - f_keep[:, None] * x[:, i], x[:, i] - f_swap[:, None] * rhs[:, i + 1])
        x[:, i] = np.where(k1, x[:, i], rhs[:, i + 1])
        x[:, i + 1] = x_next
        u_next = np.where(keep, diag[:, i + 1] - f_keep * u[:, i, 1], u[:, i, 1] - f_swap * diag[:, i + 1])
        u[:, i, 1] = np.where(keep, u[:, i, 1], diag[:, i + 1])
        u[:, i, 0] = np.where(keep, u[:, i, 0], sub[:, i + 1])
        u[:, i + 1, 0] = u_next
        if i != n - 2:
            u[:, i + 1, 1] = np.where(keep, sup[:, i + 1], -f_swap * sup[:, i + 1])
            u[:, i, 2] = np.where(keep, 0, sup[:, i + 1])
    failed |= u[:, n - 1, 0] == 0
    x[:, n - 1] /= u[:, n - 1, 0, None]
    x[:, n - 2] = (x[:, n - 2] - u[:, n - 2, 1, None] * x[:, n - 1]) / u[:, n - 2, 0, None]
    for i in range(n - 3, -1, -1):
        x[:, i] = (x[:, i] - u[:, i, 1, None] * x[:, i + 1] - u[:, i, 2, None] * x[:, i + 2]) / u[:, i, 0, None]
    return x, failed


def _solve_thomas(sup, diag, sub, rhs):
    b, n = diag.shape
    u = np.zeros((b, n), diag.dtype)
    x = np.zeros(rhs.shape, rhs.dtype)
    failed = diag[:, 0] == 0
    u[:, 0] = sup[:, 0] / diag[:, 0]
    x[:, 0] = rhs[:, 0] / diag[:, 0, None]
    for i in range(1, n):
        denom = diag[:, i] - sub[:, i] * u[:, i - 1]
        failed |= denom == 0
        u[:, i] = sup[:, i] / denom
        x[:, i] = (rhs[:, i] - sub[:, i, None] * x[:, i - 1]) / denom[:, None]
    for i in range(n - 2, -1, -1):
        x[:, i] -= u[:, i, None] * x[:, i + 1]
    return x, failed


def _perturb_pivot(perturb, pivot, row, real):
    """TF's MaybePerturbPivot (from LAPACK's xLAGTS): moves a tiny pivot away from zero (or scales
    the row up) so that row / pivot cannot overflow; returns (pivot, row)."""
    finfo = np.finfo(real)
    one, tiny, small = real(1), finfo.tiny, real(1) / finfo.max
    safemin = tiny if small < tiny else small * (one + finfo.eps)
    bignum = one / safemin
    abs_pivot = np.abs(pivot)
    if abs_pivot >= one:
        return pivot, row
    perturb = max(abs(perturb), safemin)
    perturb = np.copysign(perturb, np.real(pivot)).astype(real)
    max_factor = np.max(np.abs(row)) if row.size else real(0)
    stop = False
    while abs_pivot < one and not stop:
        if abs_pivot < safemin:
            if abs_pivot == 0 or max_factor * safemin > abs_pivot:
                pivot, perturb = pivot + perturb, perturb * 2
            else:
                pivot, row, stop = pivot * bignum, row * bignum, True
        elif max_factor > abs_pivot * bignum:
            pivot, perturb = pivot + perturb, perturb * 2
        else:
            stop = True
        abs_pivot = np.abs(pivot)
    return pivot, row


def _solve_perturbed_one(sup, diag, sub, rhs):
    """xLAGTF + xLAGTS for one system (TF's SolveWithGaussianEliminationWithPivotingAndPerturbSingular)."""
    n = diag.shape[0]
    real = np.dtype(diag.dtype).type(0).real.dtype.type
    eps = np.finfo(real).eps
    one = diag.dtype.type(1)
    if n == 1:
        denom, row = _perturb_pivot(eps * np.abs(diag[0]), diag[0], rhs[0].copy(), real)
        return (row * (one / denom))[None]
    u = np.zeros((n, 3), diag.dtype)
    x = np.zeros(rhs.shape, rhs.dtype)
    u[0, 0], u[0, 1] = diag[0], sup[0]
    max_abs_u = max(np.abs(u[0, 0]), np.abs(u[0, 1]))
    scale1 = np.abs(u[0, 0]) + np.abs(u[0, 1])
    x[0] = rhs[0]
    for k in range(n - 1):
        u[k + 1, 0] = diag[k + 1]
        scale2 = np.abs(sub[k + 1]) + np.abs(u[k + 1, 0])
        if k < n - 2:
            scale2 += np.abs(sup[k + 1])
        if sub[k + 1] == 0:
            scale1 = scale2
            u[k + 1, 1] = sup[k + 1]
            u[k, 2] = 0
            x[k + 1] = rhs[k + 1]
        else:
            piv1 = 0 if u[k, 0] == 0 else np.abs(u[k, 0]) / scale1
            piv2 = np.abs(sub[k + 1]) / scale2
            if piv2 <= piv1:
                scale1 = scale2
                factor = sub[k + 1] / u[k, 0]
                u[k + 1, 0] = diag[k + 1] - factor * u[k, 1]
                u[k + 1, 1] = sup[k + 1]
                u[k, 2] = 0
                x[k + 1] = rhs[k + 1] - factor * x[k]
            else:
                factor = u[k, 0] / sub[k + 1]
                u[k, 0] = sub[k + 1]
                u[k + 1, 0] = u[k, 1] - factor * diag[k + 1]
                u[k, 1] = diag[k + 1]
                if k < n - 2:
                    u[k, 2] = sup[k + 1]
                    u[k + 1, 1] = -factor * sup[k + 1]
                x[k + 1] = x[k] - factor * rhs[k + 1]
                x[k] = rhs[k + 1]
        if k < n - 2:
            max_abs_u = max(max_abs_u, *np.abs(u[k]))
    max_abs_u = max(max_abs_u, np.abs(u[n - 1, 0]))
    tol = real(eps * max_abs_u)
    denom, row = _perturb_pivot(tol, u[n - 1, 0], x[n - 1].copy(), real)
    x[n - 1] = row * (one / denom)
    denom, row = u[n - 2, 0], x[n - 2] - u[n - 2, 1] * x[n - 1]
    denom, row = _perturb_pivot(np.copysign(tol, np.real(denom)), denom, row, real)
    x[n - 2] = row * (one / denom)
    for k in range(n - 3, -1, -1):
        row = x[k] - u[k, 1] * x[k + 1] - u[k, 2] * x[k + 2]
        denom, row = _perturb_pivot(np.copysign(tol, np.real(u[k, 0])), u[k, 0], row, real)
        x[k] = row * (one / denom)
    return x


def tridiagonal_solve_numpy(diagonals, rhs, partial_pivoting=True, perturb_singular=False):
    """The solutions of batches of tridiagonal systems: diagonals [..., 3, M], rhs [..., M, K]."""
    m, k = rhs.shape[-2], rhs.shape[-1]
    out = np.zeros(rhs.shape, rhs.dtype)
    if m == 0 or k == 0 or out.size == 0:
        return out
    batch = int(np.prod(rhs.shape[:-2]))
    d = diagonals.reshape((batch, 3, m))
    r = rhs.reshape((batch, m, k))
    sup, diag, sub = d[:, 0], d[:, 1], d[:, 2]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if perturb_singular:
            x = np.stack([_solve_perturbed_one(*args) for args in zip(sup, diag, sub, r)])
            return x.reshape(rhs.shape)
        if m == 1:
            failed = diag[:, 0] == 0
            x = r / diag[:, :, None]
        elif partial_pivoting:
            x, failed = _solve_pivoting(sup, diag, sub, r)
        else:
            x, failed = _solve_thomas(sup, diag, sub, r)
    x[failed] = np.nan
    return x.reshape(rhs.shape)


@register_kernel("TridiagonalSolve", CPU, fresh_outputs=True)
def _tridiagonal_solve_kernel(ctx):
    name, pivoting, perturb = ctx.name, ctx.attr("partial_pivoting"), ctx.attr("perturb_singular")
    if perturb and not pivoting:
        raise errors.InvalidArgumentError("Setting perturb_singular requires also setting partial_pivoting.",
                                          node=name)

    def solve(diagonals, rhs):
        _check_batch([diagonals, rhs], name)
        if diagonals.shape[-2] != 3:
            raise errors.InvalidArgumentError(f"Expected diagonals to be provided as a matrix with 3 rows, got "
                                              f"{diagonals.shape[-2]} rows.", node=name)
        if diagonals.shape[-1] != rhs.shape[-2]:
            raise errors.InvalidArgumentError(f"Expected the same number of left-hand sides and right-hand sides, "
                                              f"got {diagonals.shape[-1]} and {rhs.shape[-2]}.", node=name)
        return tridiagonal_solve_numpy(diagonals, rhs, pivoting, perturb)
    return solve


@register_kernel("TridiagonalMatMul", CPU, fresh_outputs=True)
def _tridiagonal_matmul_kernel(ctx):
    name = ctx.name

    def matmul(superdiag, maindiag, subdiag, rhs):
        _check_batch([superdiag, maindiag, subdiag, rhs], name)
        m = rhs.shape[-2]
        for x, what in ((superdiag, "superdiagonal"), (maindiag, "main diagonal"), (subdiag, "subdiagonal")):
            if x.shape[-2:] != (1, m):
                raise errors.InvalidArgumentError(f"Invalid {what} shape.", node=name)
        out = rhs * np.swapaxes(maindiag, -1, -2)
        out[..., 1:, :] += rhs[..., :-1, :] * np.swapaxes(subdiag[..., 1:], -1, -2)
        out[..., :-1, :] += rhs[..., 1:, :] * np.swapaxes(superdiag[..., :-1], -1, -2)
        return out
    return matmul


# -- gradients (TF's linalg_grad.py) ---------------------------------------------------------------

def _adjoint(x):
    t = la.matrix_transpose(x)
    return math_ops.conj(t) if t.dtype.is_complex else t


def _conj(x):
    return math_ops.conj(x) if x.dtype.is_complex else x


def _pad(x, first, second):
    rank = x.shape.ndims
    if rank is not None:
        return array_ops.pad(x, [[0, 0]] * (rank - 2) + [first, second])
    zeros = array_ops.zeros(array_ops.stack([array_ops.rank(x) - 2, 2]), dtypes.int32)
    return array_ops.pad(x, array_ops.concat([zeros, convert_to_tensor([first, second], dtype=dtypes.int32)], 0))


def _left_shift(x):
    """Shifts the next-to-last dimension left, a zero row coming in on the right."""
    return _pad(x[..., 1:, :], [0, 1], [0, 0])


def _right_shift(x):
    return _pad(x[..., :-1, :], [1, 0], [0, 0])


@register_gradient("TridiagonalMatMul")
def _tridiagonal_matmul_grad(op, grad):
    superdiag_conj = _adjoint(op.inputs[0])
    maindiag_conj = _adjoint(op.inputs[1])
    subdiag_conj = _adjoint(op.inputs[2])
    rhs_conj = _conj(op.inputs[3])
    superdiag_grad = math_ops.reduce_sum(_left_shift(rhs_conj) * grad, axis=-1)
    maindiag_grad = math_ops.reduce_sum(rhs_conj * grad, axis=-1)
    subdiag_grad = math_ops.reduce_sum(_right_shift(rhs_conj) * grad, axis=-1)
    rhs_grad = _right_shift(superdiag_conj * grad) + maindiag_conj * grad + _left_shift(subdiag_conj * grad)
    return [array_ops.expand_dims(superdiag_grad, -2), array_ops.expand_dims(maindiag_grad, -2),
            array_ops.expand_dims(subdiag_grad, -2), rhs_grad]


def _transpose_tridiagonal(diags):
    """The compact diagonals of the transposed matrix."""
    diag = diags[..., 1, :]
    if diags.shape.is_fully_defined():
        zeros = array_ops.zeros(diags.shape[:-2].as_list() + [1], dtype=diags.dtype)
        superdiag = array_ops.concat([diags[..., 2, 1:], zeros], axis=-1)
        subdiag = array_ops.concat([zeros, diags[..., 0, :-1]], axis=-1)
    else:
        superdiag = _pad_last(diags[..., 2, 1:], [0, 1])
        subdiag = _pad_last(diags[..., 0, :-1], [1, 0])
    return array_ops.stack([superdiag, diag, subdiag], axis=-2)


def _pad_last(x, last):
    rank = x.shape.ndims
    if rank is not None:
        return array_ops.pad(x, [[0, 0]] * (rank - 1) + [last])
    zeros = array_ops.zeros(array_ops.stack([array_ops.rank(x) - 1, 2]), dtypes.int32)
    return array_ops.pad(x, array_ops.concat([zeros, convert_to_tensor([last], dtype=dtypes.int32)], 0))


def _matmul_extracting_three_diagonals(x, y_tr):
    """The three diagonals of x @ y_tr^T, in the compact format."""
    diag = math_ops.reduce_sum(x * y_tr, axis=-1)
    if y_tr.shape.is_fully_defined():
        zeros = array_ops.zeros(x.shape[:-2].as_list() + [1, x.shape[-1]], dtype=x.dtype)
        superdiag = math_ops.reduce_sum(x * array_ops.concat([y_tr[..., 1:, :], zeros], axis=-2), axis=-1)
        subdiag = math_ops.reduce_sum(x * array_ops.concat([zeros, y_tr[..., :-1, :]], axis=-2), axis=-1)
    else:
        superdiag = math_ops.reduce_sum(x * _left_shift(y_tr), axis=-1)
        subdiag = math_ops.reduce_sum(x * _right_shift(y_tr), axis=-1)
    return array_ops.stack([superdiag, diag, subdiag], axis=-2)


@register_gradient("TridiagonalSolve")
def _tridiagonal_solve_grad(op, grad):
    diags, x = op.inputs[0], op.outputs[0]
    grad_rhs = _solve_op(_transpose_tridiagonal(diags), grad, op.get_attr("partial_pivoting"),
                         op.get_attr("perturb_singular"))
    return [-_matmul_extracting_three_diagonals(grad_rhs, x), grad_rhs]


# -- the TF API --------------------------------------------------------------------------------------

def _solve_op(diagonals, rhs, partial_pivoting=True, perturb_singular=False, name=None):
    return apply_op("TridiagonalSolve", [diagonals, rhs], name=name or "TridiagonalSolve",
                    partial_pivoting=bool(partial_pivoting), perturb_singular=bool(perturb_singular)).outputs[0]


def _diagonals_of_matrix(matrix):
    """[..., 3, M] (superdiagonal padded on the right, subdiagonal on the left) of [..., M, M]
    (TF's matrix_diag_part with k=(-1, 1) and align LEFT_RIGHT)."""
    m1, m2 = matrix.shape[-1], matrix.shape[-2]
    if m1 and m2 and m1 != m2:
        raise ValueError(f"Expected last two dimensions of diagonals to be same, got {m1} and {m2}")
    main = extra_ops.matrix_diag_part(matrix)
    superdiag = _pad_last(extra_ops.matrix_diag_part(matrix[..., :-1, 1:]), [0, 1])
    subdiag = _pad_last(extra_ops.matrix_diag_part(matrix[..., 1:, :-1]), [1, 0])
    return array_ops.stack([superdiag, main, subdiag], axis=-2)


def _compact_solve(diagonals, rhs, transpose_rhs, conjugate_rhs, partial_pivoting, perturb_singular, name):
    diags_rank, rhs_rank = diagonals.shape.ndims, rhs.shape.ndims
    if diags_rank:
        if diags_rank < 2:
            raise ValueError(f"Expected diagonals to have rank at least 2, got {diags_rank}")
        if rhs_rank and rhs_rank != diags_rank and rhs_rank != diags_rank - 1:
            raise ValueError(f"Expected the rank of rhs to be {diags_rank - 1} or {diags_rank}, got {rhs_rank}")
        if rhs_rank and not diagonals.shape[:-2].is_compatible_with(rhs.shape[:diags_rank - 2]):
            raise ValueError(f"Batch shapes {_tuple(diagonals.shape[:-2])} and "
                             f"{_tuple(rhs.shape[:diags_rank - 2])} are incompatible")
    if diagonals.shape[-2] and diagonals.shape[-2] != 3:
        raise ValueError(f"Expected 3 diagonals got {diagonals.shape[-2]}")

    def check_num_lhs_matches_num_rhs():
        if diagonals.shape[-1] and rhs.shape[-2] and diagonals.shape[-1] != rhs.shape[-2]:
            raise ValueError(f"Expected number of left-hand sided and right-hand sides to be equal, got "
                             f"{diagonals.shape[-1]} and {rhs.shape[-2]}")

    if rhs_rank and diags_rank and rhs_rank == diags_rank - 1:  # a vector rhs: transpose_rhs is ignored
        if conjugate_rhs:
            rhs = math_ops.conj(rhs)
        rhs = array_ops.expand_dims(rhs, -1)
        check_num_lhs_matches_num_rhs()
        return array_ops.squeeze(_solve_op(diagonals, rhs, partial_pivoting, perturb_singular, name), [-1])
    if transpose_rhs:
        rhs = _adjoint(rhs) if conjugate_rhs else la.matrix_transpose(rhs)
    elif conjugate_rhs:
        rhs = math_ops.conj(rhs)
    check_num_lhs_matches_num_rhs()
    return _solve_op(diagonals, rhs, partial_pivoting, perturb_singular, name)


def _tuple(shape):
    return tuple(shape.as_list()) if shape.ndims is not None else shape


def _tensor(x, name):
    return convert_to_tensor(x, name=name)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False, conjugate_rhs=False,
                      name=None, partial_pivoting=True, perturb_singular=False):
    """Solves tridiagonal systems: rhs [..., M] or [..., M, K] (or [..., K, M] with transpose_rhs)."""
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    if diagonals_format == "compact":
        return _compact_solve(_tensor(diagonals, "diagonals"), _tensor(rhs, "rhs"), transpose_rhs, conjugate_rhs,
                              partial_pivoting, perturb_singular, name)
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        superdiag, maindiag, subdiag = (_tensor(d, "diagonals") for d in diagonals)
        if (not subdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1])
                or not superdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1])):
            raise ValueError(f"Tensors representing the three diagonals must have the same shape,except for the "
                             f"last dimension, got {_tuple(subdiag.shape)}, {_tuple(maindiag.shape)}, "
                             f"{_tuple(superdiag.shape)}")
        m = maindiag.shape[-1]

        def pad_if_necessary(t, what, last_dim_padding):
            n = t.shape[-1]
            if not n or n == m:
                return t
            if n == m - 1:
                return array_ops.pad(t, [[0, 0]] * (t.shape.ndims - 1) + [last_dim_padding])
            raise ValueError(f"Expected {what} to be have length {m} or {m - 1}, got {n}.")

        subdiag = pad_if_necessary(subdiag, "subdiagonal", [1, 0])
        superdiag = pad_if_necessary(superdiag, "superdiagonal", [0, 1])
        diagonals = array_ops.stack([superdiag, maindiag, subdiag], axis=-2)
        return _compact_solve(diagonals, _tensor(rhs, "rhs"), transpose_rhs, conjugate_rhs, partial_pivoting,
                              perturb_singular, name)
    if diagonals_format == "matrix":
        diagonals = _diagonals_of_matrix(_tensor(diagonals, "diagonals"))
        return _compact_solve(diagonals, _tensor(rhs, "rhs"), transpose_rhs, conjugate_rhs, partial_pivoting,
                              perturb_singular, name)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The product of tridiagonal matrices and rhs [..., M, N]."""
    if diagonals_format == "compact":
        diagonals = _tensor(diagonals, "diagonals")
        superdiag, maindiag, subdiag = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    elif diagonals_format == "sequence":
        superdiag, maindiag, subdiag = (_tensor(d, "diagonals") for d in diagonals)
    elif diagonals_format == "matrix":
        diags = _diagonals_of_matrix(_tensor(diagonals, "diagonals"))
        superdiag, maindiag, subdiag = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    # the kernel takes matrices: each diagonal as a row
    superdiag = array_ops.expand_dims(superdiag, -2)
    maindiag = array_ops.expand_dims(maindiag, -2)
    subdiag = array_ops.expand_dims(subdiag, -2)
    return apply_op("TridiagonalMatMul", [superdiag, maindiag, subdiag, rhs],
                    name=name or "TridiagonalMatMul").outputs[0]


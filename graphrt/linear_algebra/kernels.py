"""numpy kernels of the linear-algebra ops, batched over the leading dimensions.

numpy.linalg has no float16 routines: float16 inputs are computed in float32
and rounded back, as TF's Eigen kernels compute half in float. The errors are
TF's: InvalidArgumentError naming the node for a singular matrix to invert or solve with
(a matrix that is not positive definite gives a NaN Cholesky factor, as in TF).
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel

CPU = ("CPU",)  # numpy.linalg; SIM reuses the CPU kernels


def _wide(x):
    """x in a dtype numpy.linalg computes in, and the dtype to return."""
    if x.dtype == np.float16:
        return x.astype(np.float32), np.float16
    return x, x.dtype


def _square(x, name, what="Input"):
    if x.ndim < 2:
        raise errors.InvalidArgumentError(f"{what} must have rank >= 2, got {x.ndim}", node=name)
    if x.shape[-1] != x.shape[-2]:
        raise errors.InvalidArgumentError(f"{what} matrix must be square.", node=name)


def _adj(x):
    return np.conj(np.swapaxes(x, -1, -2)) if np.iscomplexobj(x) else np.swapaxes(x, -1, -2)


@register_kernel("MatrixInverse", CPU, fresh_outputs=True)
def _matrix_inverse(ctx):
    name, adjoint = ctx.name, ctx.attr("adjoint")

    def inverse(x):
        _square(x, name)
        a, out = _wide(x)
        if adjoint:
            a = _adj(a)
        if a.shape[-1] == 0:
            return np.empty(x.shape, out)
        try:
            inv = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise errors.InvalidArgumentError("Input is not invertible.", node=name) from None
        return inv.astype(out, copy=False)
    return inverse


@register_kernel("MatrixDeterminant", CPU, fresh_outputs=True)
def _matrix_determinant(ctx):
    name = ctx.name

    def determinant(x):
        _square(x, name)
        a, out = _wide(x)
        return np.asarray(np.linalg.det(a)).astype(out)
    return determinant


@register_kernel("LogMatrixDeterminant", CPU, fresh_outputs=True)
def _log_matrix_determinant(ctx):
    name = ctx.name

    def slogdet(x):
        _square(x, name)
        a, out = _wide(x)
        sign, logabs = np.linalg.slogdet(a)
        return np.asarray(sign).astype(out), np.asarray(logabs).astype(out)
    return slogdet


def _cholesky(a):
    """Lower Cholesky factors; as TF's kernel (TF >= 2.?), a matrix that is not positive definite
    gives NaN on and below its diagonal (and zeros above), with no error."""
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(flat)
    failed = np.tril(np.full(a.shape[-2:], np.nan, a.dtype))
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = failed
    return out.reshape(a.shape)


@register_kernel("Cholesky", CPU, fresh_outputs=True)
def _cholesky_kernel(ctx):
    name = ctx.name

    def cholesky(x):
        _square(x, name)
        a, out = _wide(x)
        # TF (and numpy's potrf) reads the lower triangle only
        a = np.tril(a) + _adj(np.tril(a, -1))
        return _cholesky(a).astype(out, copy=False)
    return cholesky


def _check_rhs(m, rhs, name):
    if rhs.ndim < 2:
        raise errors.InvalidArgumentError(f"Input rhs must have rank >= 2, got {rhs.ndim}", node=name)
    if rhs.shape[-2] != m:
        raise errors.InvalidArgumentError(f"Input matrix and right-hand side must have the same number of rows: "
                                          f"{m} vs. {rhs.shape[-2]}", node=name)


@register_kernel("MatrixSolve", CPU, fresh_outputs=True)
def _matrix_solve(ctx):
    name, adjoint = ctx.name, ctx.attr("adjoint")

    def solve(matrix, rhs):
        _square(matrix, name)
        _check_rhs(matrix.shape[-1], rhs, name)
        if matrix.shape[:-2] != rhs.shape[:-2]:
            raise errors.InvalidArgumentError(f"matrix and rhs must have the same batch shape: "
                                              f"{list(matrix.shape)} vs {list(rhs.shape)}", node=name)
        a, out = _wide(matrix)
        b, _ = _wide(rhs)
        if adjoint:
            a = _adj(a)
        if a.shape[-1] == 0 or b.shape[-1] == 0:
            return np.zeros(rhs.shape, out)
        try:
            return np.linalg.solve(a, b).astype(out, copy=False)
        except np.linalg.LinAlgError:
            raise errors.InvalidArgumentError("Input matrix is not invertible.", node=name) from None
    return solve


def triangular_solve(a, b, lower, adjoint):
    """Substitution over the rows (batched, broadcasting the batch dims); only the `lower` (or
    upper) triangle of `a` is read. A zero on the diagonal gives inf/nan, as TF's kernel."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    a = np.tril(a) if lower else np.triu(a)
    if adjoint:
        a, lower = _adj(a), not lower
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(b.shape, b.shape), np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, :], x)
            x[..., i, :] = acc / a[..., i, i][..., None]
    return x


@register_kernel("MatrixTriangularSolve", CPU, fresh_outputs=True)
def _matrix_triangular_solve(ctx):
    name, lower, adjoint = ctx.name, ctx.attr("lower"), ctx.attr("adjoint")

    def solve(matrix, rhs):
        _square(matrix, name)
        _check_rhs(matrix.shape[-1], rhs, name)
        a, out = _wide(matrix)
        b, _ = _wide(rhs)
        try:
            x = triangular_solve(a, b, lower, adjoint)
        except ValueError as e:
            raise errors.InvalidArgumentError(f"Incompatible batch shapes: {e}", node=name) from None
        return x.astype(out, copy=False)
    return solve


@register_kernel("MatrixSolveLs", CPU, fresh_outputs=True, host_memory=("l2_regularizer",))
def _matrix_solve_ls(ctx):
    name, fast = ctx.name, ctx.attr("fast")

    def solve_ls(matrix, rhs, l2):
        if matrix.ndim < 2:
            raise errors.InvalidArgumentError(f"Input matrix must have rank >= 2, got {matrix.ndim}", node=name)
        _check_rhs(matrix.shape[-2], rhs, name)
        a, out = _wide(matrix)
        b, _ = _wide(rhs)
        l2 = float(l2)
        m, n = a.shape[-2:]
        if fast:  # the normal equations, regularized
            if m >= n:
                gram = _adj(a) @ a + l2 * np.eye(n, dtype=a.dtype)
                chol = _cholesky(gram)
                x = _chol_solve(chol, _adj(a) @ b)
            else:
                gram = a @ _adj(a) + l2 * np.eye(m, dtype=a.dtype)
                x = _adj(a) @ _chol_solve(_cholesky(gram), b)
        else:  # minimum-norm least squares; l2 > 0 as the stacked system [A; sqrt(l2) I] X = [B; 0]
            if l2 > 0:
                batch = a.shape[:-2]
                eye = np.broadcast_to(np.sqrt(l2) * np.eye(n, dtype=a.dtype), batch + (n, n))
                a = np.concatenate([a, eye], -2)
                b = np.concatenate([b, np.zeros(batch + (n, b.shape[-1]), b.dtype)], -2)
            x = np.linalg.pinv(a) @ b
        return x.astype(out, copy=False)
    return solve_ls


def _chol_solve(chol, b):
    return triangular_solve(chol, triangular_solve(chol, b, True, False), True, True)


@register_kernel("Qr", CPU, fresh_outputs=True)
def _qr(ctx):
    name, full = ctx.name, ctx.attr("full_matrices")

    def qr(x):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"Input must have rank >= 2, got {x.ndim}", node=name)
        a, out = _wide(x)
        q, r = np.linalg.qr(a, mode="complete" if full else "reduced")
        return q.astype(out), r.astype(out)
    return qr


@register_kernel("Svd", CPU, fresh_outputs=True)
def _svd(ctx):
    name, full, compute_uv = ctx.name, ctx.attr("full_matrices"), ctx.attr("compute_uv")

    def svd(x):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"Input must have rank >= 2, got {x.ndim}", node=name)
        a, out = _wide(x)
        if not compute_uv:
            s = np.linalg.svd(a, compute_uv=False)
            return s.astype(out), np.zeros([0], out), np.zeros([0], out)
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        return s.astype(out), u.astype(out), _adj(vh).astype(out)
    return svd


@register_kernel("SelfAdjointEigV2", CPU, fresh_outputs=True)
def _self_adjoint_eig(ctx):
    name, compute_v = ctx.name, ctx.attr("compute_v")

    def eig(x):
        _square(x, name)
        a, out = _wide(x)
        if not compute_v:
            return np.linalg.eigvalsh(a, UPLO="L").astype(out), np.zeros([0], out)
        e, v = np.linalg.eigh(a, UPLO="L")
        return e.astype(out), v.astype(out)
    return eig


@register_kernel("MatrixBandPart", ("CPU", "GPU"), host_memory=("num_lower", "num_upper"), fresh_outputs=True)
def _matrix_band_part(ctx):
    xp, name = ctx.xp, ctx.name

    def band_part(x, num_lower, num_upper):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"input must be at least 2-dim, received shape: {list(x.shape)}",
                                              node=name)
        m, n = x.shape[-2:]
        lo, up = int(num_lower), int(num_upper)
        if lo > m:
            raise errors.InvalidArgumentError(f"num_lower must be negative or less or equal to number of rows "
                                              f"({m}) got: {lo}", node=name)
        if up > n:
            raise errors.InvalidArgumentError(f"num_upper must be negative or less or equal to number of columns "
                                              f"({n}) got: {up}", node=name)
        offset = xp.arange(n)[None, :] - xp.arange(m)[:, None]  # col - row
        keep = xp.ones((m, n), dtype=bool)
        if lo >= 0:
            keep &= offset >= -lo
        if up >= 0:
            keep &= offset <= up
        return xp.where(keep, x, xp.zeros((), x.dtype))
    return band_part


@register_kernel("Diag", ("CPU", "GPU"), fresh_outputs=True)
def _diag(ctx):
    xp, name = ctx.xp, ctx.name

    def diag(d):
        if d.ndim < 1:
            raise errors.InvalidArgumentError(f"Input must be at least rank 1, got {d.ndim}", node=name)
        size = d.size
        out = xp.zeros((size, size), dtype=d.dtype)
        out[xp.arange(size), xp.arange(size)] = d.reshape(-1)
        return out.reshape(d.shape + d.shape)
    return diag


@register_kernel("DiagPart", ("CPU", "GPU"), fresh_outputs=True)
def _diag_part(ctx):
    xp, name = ctx.xp, ctx.name

    def diag_part(x):
        k = x.ndim // 2
        if x.ndim < 2 or x.ndim % 2:
            raise errors.InvalidArgumentError(f"The rank of the tensor should be even and positive, got shape "
                                              f"{list(x.shape)}", node=name)
        if x.shape[:k] != x.shape[k:]:
            raise errors.InvalidArgumentError(f"Invalid shape {list(x.shape)}: dimensions {list(x.shape[:k])} and "
                                              f"{list(x.shape[k:])} do not match", node=name)
        size = int(np.prod(x.shape[:k]))
        flat = x.reshape(size, size)
        return xp.array(flat[xp.arange(size), xp.arange(size)]).reshape(x.shape[:k])
    return diag_part


@register_kernel("Cross", ("CPU", "GPU"), fresh_outputs=True)
def _cross(ctx):
    xp, name = ctx.xp, ctx.name

    def cross(a, b):
        if a.shape != b.shape:
            raise errors.InvalidArgumentError(f"Both inputs must be of same shape: {list(a.shape)} vs. "
                                              f"{list(b.shape)}", node=name)
        if a.ndim < 1 or a.shape[-1] != 3:
            raise errors.InvalidArgumentError(f"Trailing dimension must be of size 3, got shape {list(a.shape)}",
                                              node=name)
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
        return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1).astype(a.dtype)
    return cross


@register_kernel("MatrixSquareRoot", CPU, fresh_outputs=True)
def _matrix_square_root(ctx):
    name = ctx.name

    def sqrtm(x):
        _square(x, name)
        a, out = _wide(x)
        if a.shape[-1] == 0:
            return np.empty(x.shape, out)
        # The principal root through an eigendecomposition (TF uses a Schur decomposition; both
        # give the principal root of a diagonalizable matrix).
        w, v = np.linalg.eig(a)
        with np.errstate(invalid="ignore"):
            root = (v * np.sqrt(w.astype(np.complex128))[..., None, :]) @ np.linalg.inv(v)
        if not np.iscomplexobj(x):
            root = root.real
        return root.astype(out)
    return sqrtm

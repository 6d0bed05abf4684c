"""Declarations and TF1 API of the linear-algebra ops (TF's op names, dtypes and attrs).

Ops with kernels: MatrixInverse, MatrixDeterminant, LogMatrixDeterminant,
Cholesky, MatrixSolve, MatrixTriangularSolve, MatrixSolveLs, Qr, Svd,
SelfAdjointEigV2, MatrixBandPart, Diag, DiagPart, Cross, MatrixSquareRoot.
The rest (cholesky_solve, logdet, trace, matrix_transpose, lstsq with
fast=True, expm, matvec) are compositions, as TF's Python builds them.
"""
import collections

import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, control_flow_ops, extra_ops, math_ops

# TF's allowed types of the decompositions and solvers (numpy computes float16 in float32).
LINALG = (dtypes.float64, dtypes.float32, dtypes.float16, dtypes.complex64, dtypes.complex128)
DIAG = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.complex64,
        dtypes.complex128)
CROSS = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint8, dtypes.int16, dtypes.int8, dtypes.int64,
         dtypes.uint16, dtypes.float16, dtypes.uint32, dtypes.uint64)
INDEX = (dtypes.int32, dtypes.int64)


# -- shape functions -------------------------------------------------------------

def _merge(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _at_least(s, rank):
    if s.ndims is not None and s.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {s.ndims}")


def _matrix(ctx, i, square=False):
    """(batch dims, rows, cols) of input i, or None for an unknown rank."""
    s = ctx.shape(i)
    _at_least(s, 2)
    if s.ndims is None:
        return None
    m, n = s[-2], s[-1]
    if square:
        m = n = _merge(m, n)
    return s.as_list()[:-2], m, n


def _square_unchanged(ctx):
    mat = _matrix(ctx, 0, square=True)
    if mat is None:
        return TensorShape(None)
    batch, n, _ = mat
    return TensorShape(batch + [n, n])


def _batch_only(ctx):
    mat = _matrix(ctx, 0, square=True)
    return TensorShape(None) if mat is None else TensorShape(mat[0])


def _log_det_shape(ctx):
    s = _batch_only(ctx)
    return [s, s]


def _solve_shape(ctx):
    """MatrixSolve: matrix [..., M, M], rhs [..., M, K] -> [..., M, K] (same batch dims)."""
    mat = _matrix(ctx, 0, square=True)
    rhs = _matrix(ctx, 1)
    if mat is None or rhs is None:
        if rhs is not None:
            return TensorShape(rhs[0] + [rhs[1], rhs[2]])
        return TensorShape(None)
    batch = TensorShape(mat[0])
    if len(mat[0]) != len(rhs[0]) or not batch.is_compatible_with(TensorShape(rhs[0])):
        raise ValueError(f"Shapes must be equal rank, but are {len(rhs[0]) + 2} and {len(mat[0]) + 2}"
                         if len(mat[0]) != len(rhs[0]) else
                         f"Dimensions must be equal, batch shapes {batch} and {TensorShape(rhs[0])}")
    m = _merge(mat[1], rhs[1])
    return TensorShape(batch.merge_with(TensorShape(rhs[0])).as_list() + [m, rhs[2]])


def _broadcast_batch(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)  # (x or y is not 1: the other must equal it)
        elif x != y:
            raise ValueError(f"Incompatible batch shapes {TensorShape(a)} and {TensorShape(b)}")
        else:
            out.append(x)
    return out[::-1]


def _triangular_solve_shape(ctx):
    """MatrixTriangularSolve broadcasts the batch dims of matrix and rhs (TF >= 2.2)."""
    mat = _matrix(ctx, 0, square=True)
    rhs = _matrix(ctx, 1)
    if mat is None or rhs is None:
        return TensorShape(None)
    m = _merge(mat[1], rhs[1])
    return TensorShape(_broadcast_batch(mat[0], rhs[0]) + [m, rhs[2]])


def _solve_ls_shape(ctx):
    mat = _matrix(ctx, 0)
    rhs = _matrix(ctx, 1)
    reg = ctx.shape(2)
    if reg.ndims is not None and reg.ndims != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {reg.ndims}")
    if mat is None or rhs is None:
        return TensorShape(None)
    if len(mat[0]) != len(rhs[0]):
        raise ValueError(f"Shapes must be equal rank, but are {len(rhs[0]) + 2} and {len(mat[0]) + 2}")
    batch = TensorShape(mat[0]).merge_with(TensorShape(rhs[0]))
    _merge(mat[1], rhs[1])
    return TensorShape(batch.as_list() + [mat[2], rhs[2]])


def _min(m, n):
    return None if m is None or n is None else min(m, n)


def _qr_shape(ctx):
    mat = _matrix(ctx, 0)
    if mat is None:
        return [TensorShape(None), TensorShape(None)]
    batch, m, n = mat
    if ctx.attr("full_matrices"):
        return [TensorShape(batch + [m, m]), TensorShape(batch + [m, n])]
    p = _min(m, n)
    return [TensorShape(batch + [m, p]), TensorShape(batch + [p, n])]


def _svd_shape(ctx):
    mat = _matrix(ctx, 0)
    if mat is None:
        return [TensorShape(None)] * 3
    batch, m, n = mat
    p = _min(m, n)
    s = TensorShape(batch + [p])
    if not ctx.attr("compute_uv"):
        return [s, TensorShape([0]), TensorShape([0])]
    if ctx.attr("full_matrices"):
        return [s, TensorShape(batch + [m, m]), TensorShape(batch + [n, n])]
    return [s, TensorShape(batch + [m, p]), TensorShape(batch + [n, p])]


def _eig_shape(ctx):
    mat = _matrix(ctx, 0, square=True)
    if mat is None:
        return [TensorShape(None), TensorShape(None)]
    batch, n, _ = mat
    v = TensorShape(batch + [n, n]) if ctx.attr("compute_v") else TensorShape([0])
    return [TensorShape(batch + [n]), v]


def _band_part_shape(ctx):
    s = ctx.shape(0)  # (any rank: TF checks the rank when the kernel runs)
    for i in (1, 2):
        if ctx.shape(i).ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {ctx.shape(i).ndims}")
    return s


def _diag_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is None:
        return TensorShape(None)
    if s.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.ndims}")
    return s.concatenate(s)


def _diag_part_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is None:
        return TensorShape(None)
    if s.ndims < 2 or s.ndims % 2:
        raise ValueError(f"Input must have even rank <= 2*k and >= 2, got rank {s.ndims}")
    k = s.ndims // 2
    dims = s.as_list()
    return TensorShape([_merge(a, b) for a, b in zip(dims[:k], dims[k:])])


def _cross_shape(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    _at_least(a, 1)
    _at_least(b, 1)
    if a.ndims is not None and b.ndims is not None and a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    s = a.merge_with(b) if a.is_compatible_with(b) else None
    if s is None:
        raise ValueError(f"Dimensions must be equal: shapes {a} and {b}")
    if s.ndims is not None and s[-1] is not None and s[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {s[-1]}")
    return s


register_op("MatrixInverse", ["input: T"], ["output: T"], attrs={"adjoint": False},
            shape_fn=_square_unchanged, allowed_types={"T": LINALG})
register_op("MatrixDeterminant", ["input: T"], ["output: T"], shape_fn=_batch_only, allowed_types={"T": LINALG})
register_op("LogMatrixDeterminant", ["input: T"], ["sign: T", "log_abs_determinant: T"],
            shape_fn=_log_det_shape, allowed_types={"T": LINALG})
register_op("Cholesky", ["input: T"], ["output: T"], shape_fn=_square_unchanged, allowed_types={"T": LINALG})
register_op("MatrixSolve", ["matrix: T", "rhs: T"], ["output: T"], attrs={"adjoint": False},
            shape_fn=_solve_shape, allowed_types={"T": LINALG})
register_op("MatrixTriangularSolve", ["matrix: T", "rhs: T"], ["output: T"],
            attrs={"lower": True, "adjoint": False}, shape_fn=_triangular_solve_shape, allowed_types={"T": LINALG})
register_op("MatrixSolveLs", ["matrix: T", "rhs: T", "l2_regularizer: float64"], ["output: T"],
            attrs={"fast": True}, shape_fn=_solve_ls_shape, allowed_types={"T": LINALG})
register_op("Qr", ["input: T"], ["q: T", "r: T"], attrs={"full_matrices": False}, shape_fn=_qr_shape,
            allowed_types={"T": LINALG})
register_op("Svd", ["input: T"], ["s: T", "u: T", "v: T"], attrs={"compute_uv": True, "full_matrices": False},
            shape_fn=_svd_shape, allowed_types={"T": LINALG})
register_op("SelfAdjointEigV2", ["input: T"], ["e: T", "v: T"], attrs={"compute_v": True}, shape_fn=_eig_shape,
            allowed_types={"T": LINALG})
register_op("MatrixBandPart", ["input: T", "num_lower: Tindex", "num_upper: Tindex"], ["band: T"],
            attrs={"Tindex": dtypes.int64}, shape_fn=_band_part_shape, allowed_types={"Tindex": INDEX})
register_op("Diag", ["diagonal: T"], ["output: T"], shape_fn=_diag_shape, allowed_types={"T": DIAG})
register_op("DiagPart", ["input: T"], ["diagonal: T"], shape_fn=_diag_part_shape, allowed_types={"T": DIAG})
register_op("Cross", ["a: T", "b: T"], ["product: T"], shape_fn=_cross_shape, allowed_types={"T": CROSS})
register_op("MatrixSquareRoot", ["input: T"], ["output: T"], shape_fn=_square_unchanged,
            allowed_types={"T": LINALG})


# -- the TF1 API -----------------------------------------------------------------

LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])
Qr = collections.namedtuple("Qr", ["q", "r"])


def _out(op_type, inputs, name, **attrs):
    return apply_op(op_type, inputs, name=name or op_type, **attrs).outputs


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    return _out("MatrixInverse", [input], name, adjoint=bool(adjoint))[0]


def matrix_determinant(input, name=None):  # noqa: A002
    return _out("MatrixDeterminant", [input], name)[0]


def log_matrix_determinant(input, name=None):  # noqa: A002
    return LogMatrixDeterminant(*_out("LogMatrixDeterminant", [input], name))


def cholesky(input, name=None):  # noqa: A002
    return _out("Cholesky", [input], name)[0]


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    return _out("MatrixSolve", [matrix, rhs], name, adjoint=bool(adjoint))[0]


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    with get_default_graph().name_scope(name or "triangular_solve"):
        return _out("MatrixTriangularSolve", [matrix, rhs], None, lower=bool(lower), adjoint=bool(adjoint))[0]


def cholesky_solve(chol, rhs, name=None):
    """Solves A X = rhs given chol = cholesky(A): two triangular solves, as TF."""
    with get_default_graph().name_scope(name or "cholesky_solve"):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def qr(input, full_matrices=False, name=None):  # noqa: A002
    return Qr(*_out("Qr", [input], name, full_matrices=bool(full_matrices)))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, u, v) with tensor = u diag(s) v^H (TF1 order: s first, v not transposed); s alone
    when compute_uv is False."""
    s, u, v = _out("Svd", [tensor], name, compute_uv=bool(compute_uv), full_matrices=bool(full_matrices))
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor, name=None):
    e, v = _out("SelfAdjointEigV2", [tensor], name, compute_v=True)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    return _out("SelfAdjointEigV2", [tensor], name, compute_v=False)[0]


def _index(value, name):
    if is_tensor_like(value):
        return value
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    g = get_default_graph()
    with g.name_scope(name or "MatrixBandPart") as scope:
        lo, up = _index(num_lower, "num_lower"), _index(num_upper, "num_upper")
        return apply_op("MatrixBandPart", [input, lo, up], name=scope).outputs[0]


def diag(diagonal, name=None):
    """TF1 `tf.diag`: a rank-2k tensor from a rank-k one (`tf.linalg.tensor_diag`)."""
    return _out("Diag", [diagonal], name)[0]


def diag_part(input, name=None):  # noqa: A002
    """TF1 `tf.diag_part`: the inverse of `diag` (`tf.linalg.tensor_diag_part`)."""
    return _out("DiagPart", [input], name)[0]


def cross(a, b, name=None):
    return _out("Cross", [a, b], name)[0]


def matrix_square_root(input, name=None):  # noqa: A002
    return _out("MatrixSquareRoot", [input], name)[0]


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions (conjugate is a no-op on real types)."""
    with get_default_graph().name_scope(name):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  "
                                 f"Received `a` = {a} with shape: {a.shape}")
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            rk = array_ops.rank(a)
            perm = array_ops.concat([math_ops.range(rk - 2), [rk - 1, rk - 2]], 0)
        if conjugate and a.dtype.is_complex:
            raise NotImplementedError("graphrt: conjugate transpose of complex tensors")
        return array_ops.transpose(a, perm)


def adjoint(matrix, name=None):
    with get_default_graph().name_scope(name or "adjoint"):
        matrix = convert_to_tensor(matrix, name="matrix")
        return matrix_transpose(matrix, conjugate=True)


def trace(x, name=None):
    """The sum of the main diagonal of each innermost matrix (as TF: reduce_sum of matrix_diag_part)."""
    with get_default_graph().name_scope(name or "Trace") as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.reduce_sum(extra_ops.matrix_diag_part(x), [-1], name=scope)


def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive-definite matrices, through their Cholesky factor."""
    with get_default_graph().name_scope(name or "logdet"):
        chol = cholesky(matrix)
        return 2.0 * math_ops.reduce_sum(math_ops.log(extra_ops.matrix_diag_part(chol)), axis=[-1])


def slogdet(input, name=None):  # noqa: A002
    return log_matrix_determinant(input, name=name)


def _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind):
    gramian = math_ops.matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if is_tensor_like(l2_regularizer) or l2_regularizer != 0:
        shape = array_ops.shape(matrix)
        small_dim = shape[-1] if first_kind else shape[-2]
        static = matrix.shape[-1 if first_kind else -2]
        if static is not None and matrix.shape[:-2].is_fully_defined():
            identity = extra_ops.eye(static, batch_shape=matrix.shape[:-2].as_list(), dtype=matrix.dtype)
        else:
            identity = extra_ops.eye(small_dim, batch_shape=shape[:-2], dtype=matrix.dtype)
        gramian += l2_regularizer * identity
    return apply_op("Cholesky", [gramian], name="Cholesky").outputs[0]


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least squares: with fast=True the normal equations through a Cholesky factorization,
    composed of ops (as TF's composite implementation); else the MatrixSolveLs op (an SVD based
    minimum-norm solution, not differentiable)."""
    with get_default_graph().name_scope(name or "matrix_solve_ls"):
        matrix = convert_to_tensor(matrix, name="matrix")
        if matrix.dtype == dtypes.complex128 and l2_regularizer != 0:
            raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 and "
                                      "l2_regularizer != 0 due to poor accuracy.")
        if not fast:
            reg = convert_to_tensor(l2_regularizer, dtype=dtypes.float64, name="l2_regularizer")
            return apply_op("MatrixSolveLs", [matrix, rhs, reg], name="MatrixSolveLs", fast=False).outputs[0]
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        if is_tensor_like(l2_regularizer):
            reg = math_ops.cast(l2_regularizer, matrix.dtype)
        else:
            reg = l2_regularizer

        def over():
            chol = _regularized_gramian_cholesky(matrix, reg, first_kind=True)
            return cholesky_solve(chol, math_ops.matmul(matrix, rhs, adjoint_a=True))

        def under():
            chol = _regularized_gramian_cholesky(matrix, reg, first_kind=False)
            return math_ops.matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)

        m, n = matrix.shape[-2], matrix.shape[-1]
        if m is not None and n is not None:
            return over() if m >= n else under()
        shape = array_ops.shape(matrix)
        return control_flow_ops.cond(math_ops.greater_equal(shape[-2], shape[-1]), over, under)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    with get_default_graph().name_scope(name or "MatVec"):
        b = convert_to_tensor(b, name="b")
        out = math_ops.matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(out, axis=-1)


def expm(input, name=None):  # noqa: A002
    """The matrix exponential: scaling and squaring with a [13/13] Pade approximant (Higham 2005),
    as TF's `linalg.expm`, composed of ops (differentiable through them)."""
    with get_default_graph().name_scope(name or "matrix_exponential"):
        matrix = convert_to_tensor(input, name="input")
        if matrix.shape.ndims is not None and matrix.shape.ndims < 2:
            raise ValueError(f"tf.linalg.expm requires at least 2D input, got shape {matrix.shape}")
        dt = matrix.dtype.base_dtype
        l1 = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(matrix), axis=-2), axis=-1)
        const = lambda v: np.asarray(v, dt.np)  # noqa: E731
        theta = 5.371920351148152 if dt == dtypes.float64 else 3.925724783138660
        squarings = math_ops.maximum(math_ops.floor(math_ops.log(l1 / const(theta)) / np.log(2.0)), const(0.0))
        scaled = matrix / array_ops.expand_dims(array_ops.expand_dims(math_ops.pow(const(2.0), squarings), -1), -1)
        ident = array_ops.ones_like(scaled[..., 0])
        ident = extra_ops.matrix_diag(ident)
        b = [64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
             10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.]
        a2 = math_ops.matmul(scaled, scaled)
        a4 = math_ops.matmul(a2, a2)
        a6 = math_ops.matmul(a4, a2)
        tmp_u = math_ops.matmul(a6, const(b[13]) * a6 + const(b[11]) * a4 + const(b[9]) * a2)
        u = math_ops.matmul(scaled, tmp_u + const(b[7]) * a6 + const(b[5]) * a4 + const(b[3]) * a2
                            + const(b[1]) * ident)
        tmp_v = math_ops.matmul(a6, const(b[12]) * a6 + const(b[10]) * a4 + const(b[8]) * a2)
        v = tmp_v + const(b[6]) * a6 + const(b[4]) * a4 + const(b[2]) * a2 + const(b[0]) * ident
        result = matrix_solve(v - u, u + v)
        # Square `squarings` times: a while loop over the largest count, each matrix squared while it needs to.
        max_squarings = math_ops.cast(math_ops.reduce_max(squarings), dtypes.int32)
        steps = math_ops.cast(squarings, dtypes.int32)
        steps = array_ops.expand_dims(array_ops.expand_dims(steps, -1), -1)

        def body(i, r):
            squared = math_ops.matmul(r, r)
            return i + 1, math_ops.where_v2(math_ops.less(i, steps), squared, r)

        _, result = control_flow_ops.while_loop(lambda i, r: math_ops.less(i, max_squarings), body,
                                                [convert_to_tensor(0, dtype=dtypes.int32), result])
        return result

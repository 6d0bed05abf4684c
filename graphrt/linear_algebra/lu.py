"""`tf.linalg.lu` (TF's Lu op: LU with partial pivoting, a numpy kernel; like TF, no gradient) and
the compositions TF's Python builds on it: `lu_solve`, `lu_matrix_inverse`, `lu_reconstruct`.

The kernel follows Eigen's PartialPivLU, as TF's: in each column the row of the largest modulus
(the first of equal ones) becomes the pivot, so the packed factors and the permutation are TF's.
`perm[i]` is the row of the input that is row i of L U (P_mat @ input = L @ U).
"""
import collections

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, extra_ops, math_ops
from . import ops as la
from .kernels import CPU

LU_TYPES = (dtypes.float64, dtypes.float32, dtypes.float16, dtypes.complex64, dtypes.complex128)


def _lu_shape(ctx):
    mat = la._matrix(ctx, 0, square=True)
    if mat is None:
        return [TensorShape(None), TensorShape(None)]
    batch, n, _ = mat
    return [TensorShape(batch + [n, n]), TensorShape(batch + [n])]


Lu = collections.namedtuple("Lu", ["lu", "p"])

register_op("Lu", ["input: T"], ["lu: T", "p: output_idx_type"], attrs={"output_idx_type": dtypes.int32},
            shape_fn=_lu_shape, allowed_types={"T": LU_TYPES, "output_idx_type": la.INDEX})


def _pivot_rows(scores):
    """Eigen's maxCoeff over each row of `scores`: the first largest; a NaN wins only in front."""
    first_nan = np.isnan(scores[:, 0])
    best = np.argmax(np.where(np.isnan(scores), -np.inf, scores), axis=1)
    return np.where(first_nan, 0, best)


def lu_factor(a):
    """(packed L\\U, perm, singular) of a batch [B, n, n] (a copy is factored)."""
    lu = np.array(a, copy=True)
    b, n = lu.shape[0], lu.shape[-1]
    perm = np.tile(np.arange(n), (b, 1))
    rows = np.arange(b)
    for k in range(n):
        p = k + _pivot_rows(np.abs(lu[:, k:, k]))
        swap = p != k
        if swap.any():
            r, pr = rows[swap], p[swap]
            lu[r, k], lu[r, pr] = lu[r, pr].copy(), lu[r, k].copy()
            perm[r, k], perm[r, pr] = perm[r, pr], perm[r, k].copy()
        pivot = lu[:, k, k]
        nonzero = pivot != 0  # Eigen neither swaps nor scales below a zero pivot
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            scaled = lu[:, k + 1:, k] / np.where(nonzero, pivot, 1)[:, None]
            lu[:, k + 1:, k] = np.where(nonzero[:, None], scaled, lu[:, k + 1:, k])
            lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    # TF checks the smallest |pivot| (Eigen's minCoeff: a NaN counts only in front) is > 0
    d = np.abs(np.diagonal(lu, axis1=-2, axis2=-1))
    singular = (np.isnan(d[:, 0]) | np.any(d == 0, axis=1)) if n else np.zeros(b, bool)
    return lu, perm, singular


@register_kernel("Lu", CPU, fresh_outputs=True)
def _lu_kernel(ctx):
    name, idx_type = ctx.name, ctx.attr("output_idx_type")
    idx = idx_type.np

    def lu(x):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"Input tensor must have rank >= 2, got {x.ndim}", node=name)
        if x.shape[-1] != x.shape[-2]:
            raise errors.InvalidArgumentError("Input matrix must be square.", node=name)
        if x.dtype == np.float16:  # TF registers no half kernel
            raise errors.InvalidArgumentError(
                f"No OpKernel was registered to support Op 'Lu' used by {{{{node {name}}}}} with these attrs: "
                f"[output_idx_type=DT_{idx_type.name.upper()}, T=DT_HALF]",
                node=name)
        n = x.shape[-1]
        flat = x.reshape((int(np.prod(x.shape[:-2])), n, n))
        packed, perm, singular = lu_factor(flat)
        if singular.any():
            raise errors.InvalidArgumentError("Input is not invertible.", node=name)
        return packed.reshape(x.shape), perm.astype(idx).reshape(x.shape[:-1])
    return lu


# -- the TF API ----------------------------------------------------------------------------------

def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002
    """(lu, p): the packed factors (L's strict lower triangle, U's upper one) and the permutation."""
    out = apply_op("Lu", [input], name=name or "Lu", output_idx_type=dtypes.as_dtype(output_idx_type)).outputs
    return Lu(*out)


def _convert_hint(value, hint, name):
    """TF's convert_to_tensor(dtype_hint=...): a non-tensor takes the hint when it converts to it."""
    return convert_to_tensor(value, preferred_dtype=hint, name=name)


def lu_reconstruct_assertions(lower_upper, perm, validate_args):
    assertions = []
    message = "Input `lower_upper` must have at least 2 dimensions."
    if lower_upper.shape.ndims is not None and lower_upper.shape.ndims < 2:
        raise ValueError(message)
    elif validate_args:
        assertions.append(extra_ops.assert_rank_at_least(lower_upper, 2, message=message))
    message = "`rank(lower_upper)` must equal `rank(perm) + 1`"
    if lower_upper.shape.ndims is not None and perm.shape.ndims is not None:
        if lower_upper.shape.ndims != perm.shape.ndims + 1:
            raise ValueError(message)
    elif validate_args:
        assertions.append(extra_ops.assert_rank(lower_upper, array_ops.rank(perm) + 1, message=message))
    message = "`lower_upper` must be square."
    if lower_upper.shape[:-2].is_fully_defined():  # (TF's test: a known and an unknown size differ)
        if lower_upper.shape[-2] != lower_upper.shape[-1]:
            raise ValueError(message)
    elif validate_args:
        dims = array_ops.shape(lower_upper)[-2:]
        assertions.append(extra_ops.assert_equal(dims[:1], dims[1:], message=message))
    return assertions


def _lu_solve_assertions(lower_upper, perm, rhs, validate_args):
    assertions = lu_reconstruct_assertions(lower_upper, perm, validate_args)
    message = "Input `rhs` must have at least 2 dimensions."
    if rhs.shape.ndims is not None:
        if rhs.shape.ndims < 2:
            raise ValueError(message)
    elif validate_args:
        assertions.append(extra_ops.assert_rank_at_least(rhs, 2, message=message))
    message = "`lower_upper.shape[-1]` must equal `rhs.shape[-1]`."
    if lower_upper.shape[-1] is not None and rhs.shape[-2] is not None:
        if lower_upper.shape[-1] != rhs.shape[-2]:
            raise ValueError(message)
    elif validate_args:
        assertions.append(extra_ops.assert_equal(array_ops.shape(lower_upper)[-1], array_ops.shape(rhs)[-2],
                                                 message=message))
    return assertions


def _guarded(assertions, *tensors):
    if not assertions:
        return tensors
    with get_default_graph().control_dependencies(assertions):
        return tuple(array_ops.identity(t) for t in tensors)


def _broadcast_shape(s0, s1):
    """The broadcast of two shape vectors (TF's broadcast_dynamic_shape), through a broadcasting add."""
    return array_ops.shape(array_ops.zeros(s0, dtypes.int8) + array_ops.zeros(s1, dtypes.int8))


def _unit_lower(lower_upper, shape):
    return extra_ops.matrix_set_diag(la.matrix_band_part(lower_upper, -1, 0),
                                     array_ops.ones(shape[:-1], dtype=lower_upper.dtype))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """X with A X = rhs, given (lower_upper, perm) = lu(A): rhs permuted (batch dims broadcast),
    then two triangular solves, as TF composes it."""
    with get_default_graph().name_scope(name or "lu_solve"):
        lower_upper = _convert_hint(lower_upper, dtypes.float32, "lower_upper")
        perm = _convert_hint(perm, dtypes.int32, "perm")
        rhs = _convert_hint(rhs, lower_upper.dtype, "rhs")
        assertions = _lu_solve_assertions(lower_upper, perm, rhs, validate_args)
        lower_upper, perm, rhs = _guarded(assertions, lower_upper, perm, rhs)
        if rhs.shape.ndims == 2 and perm.shape.ndims == 1:
            permuted_rhs = array_ops.gather(rhs, perm, axis=-2)
        else:
            rhs_shape = array_ops.shape(rhs)
            batch_shape = _broadcast_shape(rhs_shape[:-2], array_ops.shape(perm)[:-1])
            d, m = rhs_shape[-2], rhs_shape[-1]
            rhs_broadcast_shape = array_ops.concat([batch_shape, array_ops.stack([d, m])], axis=0)
            broadcast_rhs = array_ops.broadcast_to(rhs, rhs_broadcast_shape)
            broadcast_rhs = array_ops.reshape(broadcast_rhs, array_ops.stack([-1, d, m]))
            broadcast_perm = array_ops.broadcast_to(perm, rhs_broadcast_shape[:-1])
            broadcast_perm = array_ops.reshape(broadcast_perm, array_ops.stack([-1, d]))
            batch_size = math_ops.reduce_prod(batch_shape)
            batch_indices = array_ops.broadcast_to(
                array_ops.expand_dims(math_ops.cast(math_ops.range(batch_size), perm.dtype), -1),
                math_ops.cast(array_ops.stack([batch_size, d]), perm.dtype))
            broadcast_perm = array_ops.stack([batch_indices, broadcast_perm], axis=-1)
            permuted_rhs = extra_ops.gather_nd(broadcast_rhs, broadcast_perm)
            permuted_rhs = array_ops.reshape(permuted_rhs, rhs_broadcast_shape)
        lower = _unit_lower(lower_upper, array_ops.shape(lower_upper))
        return la.matrix_triangular_solve(lower_upper, la.matrix_triangular_solve(lower, permuted_rhs),
                                          lower=False)


def _checked_factors(lower_upper, perm, validate_args):
    """lu()'s outputs as tensors, behind TF's assertions when `validate_args`."""
    lower_upper = _convert_hint(lower_upper, dtypes.float32, "lower_upper")
    perm = _convert_hint(perm, dtypes.int32, "perm")
    return _guarded(lu_reconstruct_assertions(lower_upper, perm, validate_args), lower_upper, perm)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """inverse(A) given lu(A): lu_solve against the identity, as TF."""
    with get_default_graph().name_scope(name or "lu_matrix_inverse"):
        lower_upper, perm = _checked_factors(lower_upper, perm, validate_args)
        shape = array_ops.shape(lower_upper)
        eye = extra_ops.eye(shape[-1], batch_shape=shape[:-2], dtype=lower_upper.dtype)
        return lu_solve(lower_upper, perm, rhs=eye, validate_args=False)


def _batched_inverse_permutation(perm, batch_indices):
    """invert_permutation of each row of perm [B, d] (TF maps invert_permutation over them)."""
    d = array_ops.shape(perm)[-1]
    positions = array_ops.broadcast_to(math_ops.range(d, dtype=perm.dtype), array_ops.shape(perm))
    return extra_ops.scatter_nd(array_ops.stack([batch_indices, perm], axis=-1), positions,
                                array_ops.shape(perm, out_type=perm.dtype))


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """A from lu(A): P^-1 L U, as TF composes it."""
    with get_default_graph().name_scope(name or "lu_reconstruct"):
        lower_upper, perm = _checked_factors(lower_upper, perm, validate_args)
        shape = array_ops.shape(lower_upper)
        lower = _unit_lower(lower_upper, shape)
        upper = la.matrix_band_part(lower_upper, 0, -1)
        x = math_ops.matmul(lower, upper)
        if lower_upper.shape.ndims != 2:  # batch dims (or an unknown rank)
            batch_size = math_ops.reduce_prod(shape[:-2])
            d = shape[-1]
            x = array_ops.reshape(x, array_ops.stack([batch_size, d, d]))
            perm = array_ops.reshape(perm, math_ops.cast(array_ops.stack([batch_size, d]), perm.dtype))
            batch_indices = array_ops.broadcast_to(
                array_ops.expand_dims(math_ops.cast(math_ops.range(batch_size), perm.dtype), -1),
                array_ops.shape(perm, out_type=perm.dtype))
            inverse = _batched_inverse_permutation(perm, batch_indices)
            x = extra_ops.gather_nd(x, array_ops.stack([batch_indices, inverse], axis=-1))
            x = array_ops.reshape(x, shape)
        else:
            x = array_ops.gather(x, array_ops.invert_permutation(perm))
        x.set_shape(lower_upper.shape)
        return x

"""`tf.linalg.pinv` and `tf.linalg.matrix_rank`: compositions of the SVD and elementwise ops, as
TF's Python builds them (so the pseudo-inverse differentiates through Svd's gradient)."""
import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, extra_ops, math_ops
from . import ops as la
from .lu import _convert_hint


def _maybe_validate_matrix(a, validate_args):
    """TF's checks that `a` is a float (batch of) matrix: static ones raise, else an assertion."""
    if not a.dtype.is_floating:
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {a.dtype.base_dtype.name}).")
    if a.shape.ndims is not None:
        if a.shape.ndims < 2:
            raise ValueError(f"Input `a` must have at least 2 dimensions (saw: {a.shape.ndims}).")
        return []
    if validate_args:
        return [extra_ops.assert_rank_at_least(a, 2, message="Input `a` must have at least 2 dimensions.")]
    return []


def _validated(a, validate_args):
    assertions = _maybe_validate_matrix(a, validate_args)
    if not assertions:
        return a
    with get_default_graph().control_dependencies(assertions):
        return array_ops.identity(a)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above `tol` (default eps * max(rows, cols) * the largest), int32."""
    with get_default_graph().name_scope(name or "matrix_rank"):
        a = _validated(_convert_hint(a, dtypes.float32, "a"), validate_args)
        s = la.svd(a, compute_uv=False)
        if tol is None:
            if a.shape[-2:].is_fully_defined():
                m = np.max(a.shape[-2:].as_list())
            else:
                m = math_ops.reduce_max(array_ops.shape(a)[-2:])
            eps = np.finfo(a.dtype.base_dtype.np).eps
            tol = eps * math_ops.cast(m, a.dtype) * math_ops.reduce_max(s, axis=-1, keepdims=True)
        return math_ops.reduce_sum(math_ops.cast(s > tol, dtypes.int32), axis=-1)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse through the SVD: singular values at most rcond times the
    largest are dropped (default rcond: 10 * max(rows, cols) * eps)."""
    with get_default_graph().name_scope(name or "pinv"):
        a = _validated(convert_to_tensor(a, name="a"), validate_args)
        dtype = a.dtype.base_dtype.np
        if rcond is None:
            def dim(i):
                return a.shape[i] if a.shape[i] is not None else array_ops.shape(a)[i]
            num_rows, num_cols = dim(-2), dim(-1)
            if isinstance(num_rows, int) and isinstance(num_cols, int):
                max_rows_cols = float(max(num_rows, num_cols))
            else:
                max_rows_cols = math_ops.cast(math_ops.maximum(num_rows, num_cols), a.dtype)
            rcond = 10. * max_rows_cols * np.finfo(dtype).eps
        rcond = convert_to_tensor(rcond, dtype=a.dtype, name="rcond")
        singular_values, left, right = la.svd(a, full_matrices=False, compute_uv=True)
        # Small singular values become inf: 1 / s is then 0, with no NaN gradients.
        cutoff = rcond * math_ops.reduce_max(singular_values, axis=-1)
        singular_values = math_ops.where_v2(singular_values > array_ops.expand_dims(cutoff, -1), singular_values,
                                            np.array(np.inf, dtype))
        a_pinv = math_ops.matmul(right / array_ops.expand_dims(singular_values, -2), left, adjoint_b=True)
        if a.shape.ndims is not None:
            a_pinv.set_shape(a.shape[:-2].concatenate([a.shape[-1], a.shape[-2]]))
        return a_pinv

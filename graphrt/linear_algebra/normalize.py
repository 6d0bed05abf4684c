"""`tf.linalg.normalize`: (tensor / norm, norm) with the norm kept in the reduced dimensions, as
TF's Python builds it. The norm is `tf.norm`'s, plus what graphrt's tf.norm lacks: the matrix
2-norm (the largest singular value, through the SVD) and the Euclidean norm of complex tensors
(sqrt(sum(x * conj(x))), a complex result as in TF)."""
import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, clip_ops, control_flow_ops, extra_ops, math_ops
from . import ops as la

EUCLIDEAN = ("fro", "euclidean", 2, 2.0)


def _check(ord, axis):  # noqa: A002 - TF's argument name
    """TF's validation of tf.norm's arguments; True for a matrix norm."""
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
        return True
    if not (isinstance(axis, int) or axis is None):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    if ord not in ["euclidean", 1, 2, np.inf] and (isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False


def _from_loop(t):
    """`t` passed through a while loop (of no iteration): shape inference does not read its value,
    as TF's does not read the permutations TF computes with map_fn."""
    _, out = control_flow_ops.while_loop(lambda i, x: math_ops.less(i, 0), lambda i, x: (i + 1, x),
                                         [convert_to_tensor(0, dtype=dtypes.int32), t])
    return out


def _matrix_2_norm(tensor, axis):
    """The largest singular value of the matrices over `axis`, the dims kept (TF's transposes)."""
    # The permutations are tensors, as TF's (built with map_fn): the result's dims are unknown.
    rank = array_ops.rank(tensor)
    axis_t = convert_to_tensor(list(axis), dtype=dtypes.int32)
    pos = math_ops.where_v2(axis_t < 0, axis_t + rank, axis_t)
    axes = math_ops.range(rank)
    hits = math_ops.cast(math_ops.equal(array_ops.expand_dims(axes, 1), array_ops.expand_dims(pos, 0)),
                         dtypes.int32)  # [rank, 2]: axes[i] == pos[j]
    in_axis = math_ops.reduce_sum(hits, axis=1) > 0
    # the other axes in order, then axis[0], axis[1]
    key = math_ops.where_v2(in_axis, rank + math_ops.reduce_sum(hits * [0, 1], axis=1), axes)
    perm_before = _from_loop(extra_ops.argsort(key))
    perm_after = _from_loop(array_ops.invert_permutation(perm_before))
    permed = array_ops.transpose(tensor, perm=perm_before)
    s = la.svd(permed, compute_uv=False)
    norm = array_ops.expand_dims(math_ops.reduce_max(math_ops.abs(s), axis=-1, keepdims=True), axis=-1)
    return array_ops.transpose(norm, perm=perm_after)


def _norm(tensor, ord, axis):  # noqa: A002
    is_matrix = _check(ord, axis)
    special = (is_matrix and ord in (2, 2.0)) or (tensor.dtype.is_complex and ord in EUCLIDEAN)
    if not special:
        return clip_ops.norm(tensor, ord, axis, keepdims=True)
    with get_default_graph().name_scope("norm"):
        if is_matrix and ord in (2, 2.0):
            return _matrix_2_norm(tensor, tuple(axis))
        reduce_axis = None if axis is None else (list(axis) if is_matrix else [axis])
        return math_ops.sqrt(math_ops.reduce_sum(tensor * math_ops.conj(tensor), reduce_axis, keepdims=True))


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """(tensor / norm, norm): the norm over `axis` (None: all elements), the reduced dims kept."""
    with get_default_graph().name_scope(name or "normalize"):
        tensor = convert_to_tensor(tensor)
        norm = math_ops.cast(_norm(tensor, ord, axis), tensor.dtype)
        return tensor / norm, norm

"""Clipping and norms: `tf.clip_by_norm`, `tf.clip_by_global_norm`,
`tf.global_norm`, `tf.norm`, composed from graph ops as TF composes them
(so their gradients come from the ops')."""
import collections.abc

import numpy as np

from ..framework.graph import get_default_graph, graph_of
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op, constant, convert_to_tensor
from ..framework import dtypes
from . import array_ops, control_flow_ops, extra_ops, math_ops, nn_ops


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm), for a Tensor or an IndexedSlices's values;
    a negative clip_norm counts as 0 and a tensor one is cast to t's dtype, as in TF."""
    g = graph_of([t.values if isinstance(t, IndexedSlices) else t, clip_norm])
    with g.as_default(), g.name_scope(name or "clip_by_norm") as scope:
        values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name="t")
        if np.isscalar(clip_norm):
            clip_norm = max(clip_norm, 0)
        else:
            clip_norm = math_ops.cast(math_ops.maximum(clip_norm, 0), values.dtype)
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        # two-tap where: no NaN gradient at a zero norm
        l2sum_safe = math_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = math_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.assert_is_compatible_with(intermediate.shape)  # no unintended broadcasting
        values_clip = array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm), name=scope)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(values_clip, t.indices, t.dense_shape)
        return values_clip


def _check_sequence(t_list):
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def _values(t_list):
    """The tensors of t_list: an IndexedSlices's values, Nones left out."""
    return [t.values if isinstance(t, IndexedSlices) else t for t in t_list if t is not None]


def _convert_values(t_list):
    return [convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=f"t_{i}") if t is not None
            else None for i, t in enumerate(t_list)]


def global_norm(t_list, name=None):
    """sqrt(sum(l2norm(t) ** 2 for t in t_list)); None entries are ignored."""
    t_list = _check_sequence(t_list)
    g = graph_of(_values(t_list))
    with g.as_default(), g.name_scope(name or "global_norm"):
        values = _convert_values(t_list)
        half_squared_norms = []
        for v in values:
            if v is not None:
                with g.colocate_with(v.op):
                    half_squared_norms.append(nn_ops.l2_loss(v))
        half_squared_norm = math_ops.reduce_sum(array_ops.stack(half_squared_norms))
        two = constant(2.0, dtype=half_squared_norm.dtype)
        return math_ops.sqrt(half_squared_norm * two, name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(t * clip_norm / max(global_norm, clip_norm) for each t, global_norm); Nones stay None.
    A non-finite global norm makes every clipped value NaN, as in TF."""
    t_list = _check_sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    g = graph_of(_values(t_list) + [clip_norm])
    with g.as_default(), g.name_scope(name or "clip_by_global_norm") as scope:
        one = constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm, one / clip_norm)
        scale = scale_for_finite + (use_norm - use_norm)  # NaN for an inf/NaN norm
        values = _convert_values(t_list)
        clipped = []
        for i, v in enumerate(values):
            if v is None:
                clipped.append(None)
                continue
            with g.colocate_with(v.op):
                clipped.append(array_ops.identity(v * math_ops.cast(scale, v.dtype.base_dtype), name=f"{scope}_{i}"))
        clipped = [IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c
                   for c, t in zip(clipped, t_list)]
    return clipped, use_norm


def _behind_a_loop(t):
    """`t` passed through a while loop of no iteration, so shape inference does not read its value:
    TF computes these permutations with map_fn, and its result's dims are unknown."""
    _, out = control_flow_ops.while_loop(lambda i, x: math_ops.less(i, 0), lambda i, x: (i + 1, x),
                                         [constant(0, dtype=dtypes.int32), t])
    return out


def _matrix_2_norm(tensor, axis):
    """The largest singular value of the matrices over `axis`, kept as size-1 dimensions where they
    were (TF's: the two axes moved last by permutations computed in the graph, an Svd without vectors)."""
    rank = array_ops.rank(tensor)
    axis_t = convert_to_tensor(list(axis), dtype=dtypes.int32)
    pos = math_ops.where_v2(axis_t < 0, axis_t + rank, axis_t)
    axes = math_ops.range(rank)
    hits = math_ops.cast(math_ops.equal(array_ops.expand_dims(axes, 1), array_ops.expand_dims(pos, 0)),
                         dtypes.int32)  # [rank, 2]: axes[i] == pos[j]
    in_axis = math_ops.reduce_sum(hits, axis=1) > 0
    # the other axes in order, then axis[0], axis[1]
    key = math_ops.where_v2(in_axis, rank + math_ops.reduce_sum(hits * [0, 1], axis=1), axes)
    perm_before = _behind_a_loop(extra_ops.argsort(key))
    perm_after = _behind_a_loop(array_ops.invert_permutation(perm_before))
    permed = array_ops.transpose(tensor, perm_before)
    # Svd is declared by linear_algebra/ (above this layer): the op is built by name, as a GraphDef names it
    singular = apply_op("Svd", [permed], compute_uv=False, full_matrices=False).outputs[0]
    largest = math_ops.reduce_max(math_ops.abs(singular), -1, keepdims=True)
    return array_ops.transpose(array_ops.expand_dims(largest, -1), perm_after)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """Vector norms (ord 'euclidean'/2, 1, inf, or p > 0) over `axis` (None: all
    elements), and matrix norms 'fro'/'euclidean', 1, 2 and inf over a 2-tuple `axis`; a complex
    tensor's euclidean norm sums x * conj(x) (a complex result with zero imaginary part, as TF's)."""
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
        keepdims = keep_dims
    keepdims = bool(keepdims)
    is_matrix_norm = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix_norm:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", 1, 2, np.inf]
        if ord not in supported and (isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (axis,)
    g = get_default_graph()
    with g.name_scope(name or "norm"):
        tensor = convert_to_tensor(tensor)
        reduce_axis = None if axis is None else list(axis)
        if is_matrix_norm and ord in (2, 2.0):
            result = _matrix_2_norm(tensor, axis)
        elif ord in ("fro", "euclidean", 2, 2.0):
            squares = tensor * math_ops.conj(tensor) if tensor.dtype.base_dtype.is_complex else tensor * tensor
            result = math_ops.sqrt(math_ops.reduce_sum(squares, reduce_axis, keepdims=True))
        else:
            result = math_ops.abs(tensor)
            if ord == 1:
                sum_axis = None if axis is None else axis[0]
                result = math_ops.reduce_sum(result, sum_axis, keepdims=True)
                if is_matrix_norm:
                    result = math_ops.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix_norm:
                    result = math_ops.reduce_sum(result, axis[1], keepdims=True)
                max_axis = None if axis is None else axis[0]
                result = math_ops.reduce_max(result, max_axis, keepdims=True)
            else:
                p = np.asarray(ord, dtype=tensor.dtype.base_dtype.np)
                result = math_ops.pow(math_ops.reduce_sum(math_ops.pow(result, p), reduce_axis, keepdims=True),
                                      np.asarray(1.0 / ord, dtype=tensor.dtype.base_dtype.np))
        if not keepdims:
            result = array_ops.squeeze(result, None if axis is None else list(axis))
        return result


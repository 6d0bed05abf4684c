"""Declarations and the TF1 API of the array, scatter and search ops that
graphrt/ops does not have: TF's op names, attrs and shape functions.

One op each, as in TF: TensorScatter{Update,Add,Sub,Min,Max}, the variable
scatters ScatterNd{Update,Add,Sub} and Scatter{Mul,Div,Min,Max}, LowerBound /
UpperBound (searchsorted), UniqueWithCounts, HistogramFixedWidth,
UnravelIndex, ShapeN, ParallelConcat, Bitcast, EnsureShape, SegmentProd,
UnsortedSegmentProd, BroadcastArgs (broadcast_dynamic_shape) and GuaranteeConst. Compositions, built as TF builds them: searchsorted
(reshapes around the bound op), histogram_fixed_width_bins, saturate_cast
(a clamp then a cast), batch_scatter_update (scatter_nd_update on built
index vectors), batch_gather. setdiff1d is TF's ListDiff, which graphrt/sparse
declares.
"""
import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops, control_ops, math_ops, shape_fns
from ..ops.extra_ops import _segment_shape, _unsorted_segment_shape
from ..ops.sparse_training_ops import _scatter_shape
from ..ops.state_ops import _ref
from ..sparse import ops as _sparse_ops  # noqa: F401 - declares ListDiff (setdiff1d)

INDEX = (dtypes.int32, dtypes.int64)
REAL = dtypes.FLOATING + dtypes.INTEGER


# -- declarations ---------------------------------------------------------------------------

def _scatter_nd_onto_shape(ctx):
    """TF's ScatterNdTensorShape: the output is input 0's shape; updates must be
    indices.shape[:-1] + shape[indices.shape[-1]:]."""
    shape, indices, updates = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if indices.ndims is not None and indices.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {indices.ndims}")
    if None in (shape.ndims, indices.ndims, updates.ndims) or indices[-1] is None:
        return shape
    r = indices[-1]
    if r > shape.ndims:
        raise ValueError(f"Index innermost dimension length must be <= tensor rank; saw: {r} vs. {shape.ndims}")
    outer = TensorShape(indices.dims[:-1])
    if updates.ndims < outer.ndims or not TensorShape(updates.dims[:outer.ndims]).is_compatible_with(outer):
        raise ValueError(f"Dimensions [0,{outer.ndims}) of indices[shape={indices.short()}] must match dimensions "
                         f"[0,{outer.ndims}) of updates[shape={updates.short()}]")
    inner = TensorShape(shape.dims[r:])
    if not TensorShape(updates.dims[outer.ndims:]).is_compatible_with(inner):
        raise ValueError(f"Dimensions [{outer.ndims},{updates.ndims}) of updates[shape={updates.short()}] must "
                         f"match dimensions [{r},{shape.ndims}) of input[shape={shape.short()}]")
    return shape


for _name in ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
              "TensorScatterMax"):
    register_op(_name, ["tensor: T", "indices: Tindices", "updates: T"], ["output: T"],
                attrs={"bad_indices_policy": ""}, shape_fn=_scatter_nd_onto_shape,
                allowed_types={"Tindices": INDEX})
for _name in ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub"):
    register_op(_name, ["ref: Ref(T)", "indices: Tindices", "updates: T"], ["output_ref: Ref(T)"],
                attrs={"use_locking": _name == "ScatterNdUpdate", "bad_indices_policy": ""},
                shape_fn=_scatter_nd_onto_shape, allowed_types={"Tindices": INDEX}, is_stateful=True)
for _name in ("ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax"):
    register_op(_name, ["ref: Ref(T)", "indices: Tindices", "updates: T"], ["output_ref: Ref(T)"],
                attrs={"use_locking": False}, shape_fn=_scatter_shape,
                allowed_types={"Tindices": INDEX, "T": REAL if _name in ("ScatterMin", "ScatterMax")
                               else dtypes.NUMERIC},
                is_stateful=True)


def _bound_shape(ctx):
    seq, values = ctx.shape(0), ctx.shape(1)
    for s in (seq, values):
        if s.ndims is not None and s.ndims != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {s.ndims}")
    if seq.ndims == 2 and values.ndims == 2 and not seq.dim(0).is_compatible_with(values.dim(0)):
        raise ValueError(f"Dimensions must be equal, but are {seq[0]} and {values[0]}")
    return values


for _name in ("LowerBound", "UpperBound"):
    register_op(_name, ["sorted_inputs: T", "values: T"], ["output: out_type"], attrs={"out_type": dtypes.int32},
                shape_fn=_bound_shape, allowed_types={"out_type": INDEX})


def _unique_with_counts_shape(ctx):
    """TF's: no rank check at build (a non-vector fails when the kernel runs)."""
    return [TensorShape([None]), ctx.shape(0), TensorShape([None])]


register_op("UniqueWithCounts", ["x: T"], ["y: T", "idx: out_idx", "count: out_idx"],
            attrs={"out_idx": dtypes.int32}, shape_fn=_unique_with_counts_shape, allowed_types={"out_idx": INDEX})


def _histogram_shape(ctx):
    nbins = ctx.constant(2)
    return TensorShape([None if nbins is None else int(nbins)])


register_op("HistogramFixedWidth", ["values: T", "value_range: T", "nbins: int32"], ["out: dtype"],
            attrs={"dtype": dtypes.int32}, shape_fn=_histogram_shape,
            allowed_types={"T": (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64), "dtype": INDEX})


def _unravel_shape(ctx):
    indices, dims = ctx.shape(0), ctx.shape(1)
    if dims.ndims is not None and dims.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {dims.ndims}")
    n = dims[0] if dims.ndims == 1 else None
    if indices.ndims is None:
        return TensorShape(None)
    if indices.ndims == 0:
        return TensorShape([n])
    return TensorShape([n, indices.num_elements()])


register_op("UnravelIndex", ["indices: Tidx", "dims: Tidx"], ["output: Tidx"], attrs={"Tidx": dtypes.int32},
            shape_fn=_unravel_shape, allowed_types={"Tidx": INDEX})
register_op("ShapeN", ["input: N * T"], ["output: N * out_type"], attrs={"out_type": dtypes.int32},
            shape_fn=lambda ctx: [TensorShape([ctx.shape(i).ndims]) for i in range(ctx.num_inputs)],
            allowed_types={"out_type": INDEX})


def _parallel_concat_shape(ctx):
    """The declared shape; each value must be one row of it."""
    declared = ctx.attr("shape")
    row = TensorShape([1]).concatenate(declared.dims[1:]) if declared.ndims else TensorShape(None)
    for i in range(ctx.num_inputs):
        if not ctx.shape(i).is_compatible_with(row):
            raise ValueError(f"Shapes {ctx.shape(i).short()} and {row.short()} are incompatible")
    return declared


register_op("ParallelConcat", ["values: N * T"], ["output: T"], attrs={"shape": TensorShape(None)},
            shape_fn=_parallel_concat_shape)


def _bitcast_shape(ctx):
    """TF's: equal sizes keep the shape; a wider input gains a last dimension of
    in/out; a narrower one loses its last dimension, which must be out/in."""
    shape = ctx.shape(0)
    src, dst = ctx.dtype(0).base_dtype.np.itemsize, ctx.attr("type").np.itemsize
    if shape.ndims is None:
        return shape
    if src == dst:
        return shape
    if src > dst:
        return shape.concatenate([src // dst])
    if shape.ndims < 1:
        raise ValueError(f"Cannot bitcast from {src} to {dst} due to shape. The input is a scalar")
    last = shape[-1]
    if last is not None and last != dst // src:
        raise ValueError(f"Cannot bitcast from {src} to {dst} due to shape. {last} does not match {dst // src}")
    return TensorShape(shape.dims[:-1])


_BITCAST_TYPES = dtypes.NUMERIC
register_op("Bitcast", ["input: T"], ["output: type"], shape_fn=_bitcast_shape,
            allowed_types={"T": _BITCAST_TYPES, "type": _BITCAST_TYPES})


def _ensure_shape_shape(ctx):
    actual, declared = ctx.shape(0), ctx.attr("shape")
    if not actual.is_compatible_with(declared):
        raise ValueError(f"Shapes {declared.short()} and {actual.short()} are incompatible "
                         f"(EnsureShape {ctx.name})")
    return actual.merge_with(declared)


register_op("EnsureShape", ["input: T"], ["output: T"], attrs={"shape": TensorShape(None)},
            shape_fn=_ensure_shape_shape)
register_op("SegmentProd", ["data: T", "segment_ids: Tindices"], ["output: T"], shape_fn=_segment_shape,
            allowed_types={"Tindices": INDEX, "T": dtypes.NUMERIC})
register_op("UnsortedSegmentProd", ["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"], ["output: T"],
            attrs={"Tnumsegments": dtypes.int32}, shape_fn=_unsorted_segment_shape,
            allowed_types={"Tindices": INDEX, "Tnumsegments": INDEX, "T": dtypes.NUMERIC})


# -- Python API: tensor scatters -----------------------------------------------------------------

def _op(op_type, inputs, name, **attrs):
    return apply_op(op_type, list(inputs), name=name or op_type, **attrs).outputs[0]


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with the slices at `indices` replaced by `updates`."""
    return _op("TensorScatterUpdate", [tensor, indices, updates], name)


def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None):
    """A copy of `tensor` with `updates` added at `indices` (repeated indices add up)."""
    return _op("TensorScatterAdd", [tensor, indices, updates], name, bad_indices_policy=bad_indices_policy)


def tensor_scatter_nd_sub(tensor, indices, updates, bad_indices_policy="", name=None):
    return _op("TensorScatterSub", [tensor, indices, updates], name, bad_indices_policy=bad_indices_policy)


def tensor_scatter_nd_min(tensor, indices, updates, bad_indices_policy="", name=None):
    return _op("TensorScatterMin", [tensor, indices, updates], name, bad_indices_policy=bad_indices_policy)


def tensor_scatter_nd_max(tensor, indices, updates, bad_indices_policy="", name=None):
    return _op("TensorScatterMax", [tensor, indices, updates], name, bad_indices_policy=bad_indices_policy)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


# -- Python API: variable scatters ---------------------------------------------------------------

def _var_scatter(op_type, ref, indices, updates, use_locking, name):
    return apply_op(op_type, [_ref(ref), indices, updates], name=name or op_type,
                    use_locking=bool(use_locking)).outputs[0]


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices] = updates, indices holding index vectors in their last dimension; returns ref."""
    return _var_scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    return _var_scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    return _var_scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i]] *= updates[i]; returns ref."""
    return _var_scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    return _var_scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    return _var_scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    return _var_scatter("ScatterMax", ref, indices, updates, use_locking, name)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[i, ..., indices[i, ..., j]] = updates[i, ..., j]: scatter_nd_update on index
    vectors that prefix each index with its batch position (TF's composition)."""
    g = get_default_graph()
    with g.name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = array_ops.shape(indices)
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = array_ops.expand_dims(indices, axis=-1)
        parts = []
        for dim in range(ndims - 1):
            size = indices_shape[dim]
            broadcast_shape = [1] * (ndims + 1)
            broadcast_shape[dim] = size
            positions = array_ops.reshape(math_ops.range(0, size, 1), broadcast_shape)
            positions = math_ops.cast(positions, nd_indices.dtype.base_dtype)
            parts.append(positions * array_ops.ones_like(nd_indices))
        parts.append(nd_indices)
        final_indices = array_ops.concat(parts, axis=-1)
        return scatter_nd_update(ref, final_indices, updates, use_locking=use_locking)


# -- Python API: search, sets, counting ----------------------------------------------------------

def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each value, its insertion index in the last dimension of `sorted_sequence`
    (leading dimensions are batches): LowerBound (side='left') or UpperBound (side='right')."""
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'.")
    sorted_sequence = convert_to_tensor(sorted_sequence, name="sorted_sequence")
    values = convert_to_tensor(values, name="values")
    sequence_size = array_ops.shape(sorted_sequence)[-1]
    values_size = array_ops.shape(values)[-1]
    sequence_2d = array_ops.reshape(sorted_sequence, array_ops.stack([-1, sequence_size]))
    values_2d = array_ops.reshape(values, array_ops.stack([-1, values_size]))
    op_type = "UpperBound" if side == "right" else "LowerBound"
    output = apply_op(op_type, [sequence_2d, values_2d], name=name or op_type,
                      out_type=dtypes.as_dtype(out_type)).outputs[0]
    return array_ops.reshape(output, array_ops.shape(values))


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """(out, idx): the values of 1-D x not in y, in x's order, and their positions in x (ListDiff)."""
    op = apply_op("ListDiff", [x, y], name=name or "ListDiff", out_idx=dtypes.as_dtype(index_dtype))
    return op.outputs[0], op.outputs[1]


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): unique's outputs and how often each value of y occurs in x."""
    op = apply_op("UniqueWithCounts", [x], name=name or "UniqueWithCounts", out_idx=dtypes.as_dtype(out_idx))
    return tuple(op.outputs)


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of `values` in `nbins` equal bins over value_range = [lo, hi] (values
    outside it count in the first or last bin)."""
    g = get_default_graph()
    with g.name_scope(name or "histogram_fixed_width") as scope:
        return _op("HistogramFixedWidth", [values, value_range, nbins], scope, dtype=dtypes.as_dtype(dtype))


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin of each value (histogram_fixed_width's binning), TF's composition of ops."""
    g = get_default_graph()
    with g.name_scope(name or "histogram_fixed_width_bins"):
        values = convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        values = array_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        check = control_ops.Assert(math_ops.greater(nbins, 0), [f"nbins {nbins} must > 0"])
        nbins = control_ops.with_dependencies([check], nbins)
        nbins_float = math_ops.cast(nbins, values.dtype.base_dtype)
        scaled = math_ops.truediv(values - value_range[0], value_range[1] - value_range[0], name="scaled_values")
        indices = math_ops.floor(nbins_float * scaled, name="indices")
        indices = math_ops.cast(math_ops.clip_by_value(indices, 0, nbins_float - 1), dtypes.int32)
        return array_ops.reshape(indices, shape)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat `indices` in an array of shape `dims` (one row per dimension)."""
    return _op("UnravelIndex", [indices, dims], name)


# -- Python API: shapes, casts, stacking ---------------------------------------------------------

def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002 - the TF name
    """The shapes of a list of tensors, one ShapeN op."""
    return apply_op("ShapeN", [list(input)], name=name or "ShapeN", out_type=dtypes.as_dtype(out_type)).outputs


def parallel_stack(values, name="parallel_stack"):
    """stack(values) along a new axis 0 as one ParallelConcat op (its shape fixed at build)."""
    g = get_default_graph()
    with g.name_scope(name):
        first = convert_to_tensor(values[0])
        output_shape = TensorShape([len(values)]).concatenate(first.shape)
        return apply_op("ParallelConcat", [[array_ops.expand_dims(v, 0) for v in values]], name="ParallelConcat",
                        shape=output_shape).outputs[0]


def bitcast(input, type, name=None):  # noqa: A002 - the TF names
    """The bytes of `input` read as `type` (see _bitcast_shape for how the shape changes)."""
    return _op("Bitcast", [input], name, type=dtypes.as_dtype(type).base_dtype)


def ensure_shape(x, shape, name=None):
    """x, with its static shape merged with `shape`; at run time an InvalidArgumentError
    when the value's shape is not compatible with `shape`."""
    return _op("EnsureShape", [x], name, shape=as_shape(shape))


def saturate_cast(value, dtype, name=None):
    """cast(value, dtype) with values clamped to dtype's range first (TF's limits:
    each bound moved toward 0 when the input type cannot hold it exactly)."""
    g = get_default_graph()
    with g.name_scope(name or "saturate_cast") as scope:
        value = convert_to_tensor(value, name="value")
        dtype = dtypes.as_dtype(dtype).base_dtype
        in_dtype = value.dtype.base_dtype
        if in_dtype.is_complex:
            if dtype.is_complex:
                return math_ops.cast(value, dtype, name=scope)
            value = math_ops.real(value)
            in_dtype = value.dtype.base_dtype
        lo, hi = _saturation_limits(in_dtype, dtype.real_dtype if dtype.is_complex else dtype)
        value = math_ops.clip_by_value(value, convert_to_tensor(lo, dtype=in_dtype),
                                       convert_to_tensor(hi, dtype=in_dtype), name="clamp")
        return math_ops.cast(value, dtype, name=scope)


def _saturation_limits(in_dtype, out_dtype):
    src = in_dtype.np
    out_min, out_max = _range_of(out_dtype.np)
    in_min, in_max = _range_of(src)
    try:
        promoted = np.promote_types(src, out_dtype.np)
    except TypeError:
        promoted = float
    lo = src.type(np.maximum(in_min, out_min))
    if np.array([lo, out_min], dtype=promoted)[0] < np.array([lo, out_min], dtype=promoted)[1]:
        lo = np.nextafter(lo, src.type(0), dtype=src)
    hi = src.type(np.minimum(float(in_max), float(out_max)))
    if np.array([hi, out_max], dtype=promoted)[0] > np.array([hi, out_max], dtype=promoted)[1]:
        hi = np.nextafter(hi, src.type(0), dtype=src)
    return lo, hi


def _range_of(np_dtype):
    if np_dtype.kind == "b":
        return np_dtype.type(False), np_dtype.type(True)
    info = np.finfo(np_dtype) if np_dtype.kind == "f" else np.iinfo(np_dtype)
    return np_dtype.type(info.min), np_dtype.type(info.max)


# -- Python API: gathers and segment products ----------------------------------------------------

def batch_gather(params, indices, name=None):
    """gather within each batch: batch_dims = rank(indices) - 1 (TF's composition)."""
    g = get_default_graph()
    with g.name_scope(name or "BatchGather"):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        return array_ops.batched_gather(params, indices, batch_dims=indices.shape.ndims - 1)


def segment_prod(data, segment_ids, name=None):
    """The product of each segment of sorted `segment_ids` (an empty one is 1)."""
    return _op("SegmentProd", [data, segment_ids], name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the rows of each of `num_segments` segments (an empty one is 1;
    negative ids are dropped)."""
    return _op("UnsortedSegmentProd", [data, segment_ids, num_segments], name)


# -- BroadcastArgs and GuaranteeConst ---------------------------------------------------------------

def _broadcast_args_shape(ctx):
    """TF's: a vector as long as the longer input, its length known when both lengths are."""
    a, b = ctx.shape(0), ctx.shape(1)
    for s in (a, b):
        if s.ndims is not None and s.ndims != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {s.ndims}")
    n = [None if s.ndims is None else s.dims[0].value for s in (a, b)]
    return TensorShape([None if None in n else max(n)])


register_op("BroadcastArgs", ["s0: T", "s1: T"], ["r0: T"], attrs={"T": dtypes.int32}, shape_fn=_broadcast_args_shape,
            allowed_types={"T": INDEX})
register_op("GuaranteeConst", ["input: T"], ["output: T"], shape_fn=shape_fns.unchanged, is_stateful=True)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape of a broadcast of tensors of shapes `shape_x` and `shape_y` (TF's BroadcastArgs)."""
    return _op("BroadcastArgs", [shape_x, shape_y], None)


def guarantee_const(input, name=None):  # noqa: A002 - the TF name
    """`input`, promised constant for the life of the session (an identity here: graphrt does not
    fold it); like TF, it has no gradient."""
    return _op("GuaranteeConst", [input], name)

"""Array ops: constants and placeholders, identity, shapes, reshaping and
rearranging, slicing, gathering, stacking. Declarations and the TF1 Python
API; kernels are in array_kernels.py, gradients in array_grad.py.
"""
import builtins
import numbers

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import apply_op, constant, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from . import shape_fns

# -- declarations ---------------------------------------------------------------

INDEX = (dtypes.int32, dtypes.int64)  # shapes, axes, indices: TF accepts only these


def _const_shape(ctx):
    return TensorShape(ctx.attr("value").shape)


register_op("Const", [], ["output: dtype"], attrs={"value": None}, shape_fn=_const_shape)
register_op("Placeholder", [], ["output: dtype"], attrs={"shape": TensorShape(None)},
            shape_fn=lambda ctx: ctx.attr("shape"))
register_op("PlaceholderWithDefault", ["input: dtype"], ["output: dtype"], attrs={"shape": TensorShape(None)},
            shape_fn=lambda ctx: _merge_placeholder_default(ctx))
for _name in ("Identity", "Snapshot", "StopGradient", "PreventGradient"):
    register_op(_name, ["input: T"], ["output: T"], shape_fn=shape_fns.unchanged,
                attrs={"message": ""} if _name == "PreventGradient" else None)


def _merge_placeholder_default(ctx):
    declared, actual = ctx.attr("shape"), ctx.shape(0)
    if not declared.is_compatible_with(actual):
        raise ValueError(f"Shapes {declared.short()} and {actual.short()} are incompatible")
    return declared


def _reshape_shape(ctx):
    in_shape = ctx.shape(0)
    target = ctx.constant_shape(1)
    if target.ndims is None:
        return target
    dims = target.as_list()
    known = [d for d in dims if d is not None]
    n_in = in_shape.num_elements()
    value = ctx.constant(1)
    minus_ones = int(np.sum(np.asarray(value) == -1)) if value is not None else 0
    if minus_ones > 1:
        raise ValueError("Cannot infer multiple unknown dimensions in shape")
    if value is not None and any(int(v) < -1 for v in np.asarray(value).ravel()):
        raise ValueError(f"Size {int(np.min(value))} must be non-negative, not a negative dimension")
    if n_in is not None and len(known) == len(dims):
        n_out = int(np.prod(known)) if known else 1
        if n_out != n_in:
            raise ValueError(f"Cannot reshape a tensor with {n_in} elements to shape {dims} ({n_out} elements)")
    if n_in is not None and minus_ones == 1 and len(known) == len(dims) - 1:
        rest = int(np.prod(known)) if known else 1
        if rest == 0 or n_in % rest:
            raise ValueError(f"Cannot reshape a tensor with {n_in} elements to shape "
                             f"{[-1 if d is None else d for d in dims]}")
        dims = [n_in // rest if d is None else d for d in dims]
    return TensorShape(dims)


register_op("Reshape", ["tensor: T", "shape: Tshape"], ["output: T"], attrs={"Tshape": dtypes.int32},
            shape_fn=_reshape_shape, allowed_types={"Tshape": INDEX})


def _shape_of_shape(ctx):
    rank = ctx.shape(0).ndims
    return TensorShape([rank])


register_op("Shape", ["input: T"], ["output: out_type"], attrs={"out_type": dtypes.int32}, shape_fn=_shape_of_shape)
register_op("Size", ["input: T"], ["output: out_type"], attrs={"out_type": dtypes.int32}, shape_fn=shape_fns.scalar)
register_op("Rank", ["input: T"], ["output: int32"], shape_fn=shape_fns.scalar)
register_op("ZerosLike", ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged)
register_op("OnesLike", ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged)


def _fill_shape(ctx):
    if ctx.shape(1).ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shape(1).ndims}")
    dims = ctx.constant_shape(0)
    value = ctx.constant(0)
    if value is not None and np.any(np.asarray(value) < 0):
        raise ValueError(f"Fill dimensions must be >= 0, got {np.asarray(value).tolist()}")
    return dims


register_op("Fill", ["dims: index_type", "value: T"], ["output: T"], attrs={"index_type": dtypes.int32},
            shape_fn=_fill_shape, allowed_types={"index_type": INDEX})


def _broadcast_to_shape(ctx):
    target = ctx.constant_shape(1)
    shape_fns.broadcast_shapes(ctx.shape(0), target)  # raises if incompatible
    return target


register_op("BroadcastTo", ["input: T", "shape: Tidx"], ["output: T"], attrs={"Tidx": dtypes.int32},
            shape_fn=_broadcast_to_shape, allowed_types={"Tidx": INDEX})


def _expand_dims_shape(ctx):
    shape = ctx.shape(0)
    dim = ctx.constant(1)
    if shape.ndims is None or dim is None:
        return TensorShape(None)
    d = int(np.asarray(dim).reshape(-1)[0])
    rank = shape.ndims
    if not -rank - 1 <= d <= rank:
        raise ValueError(f"Tried to expand dim index {d} for tensor with {rank} dimensions")
    if d < 0:
        d += rank + 1
    dims = shape.as_list()
    return TensorShape(dims[:d] + [1] + dims[d:])


register_op("ExpandDims", ["input: T", "dim: Tdim"], ["output: T"], attrs={"Tdim": dtypes.int32},
            shape_fn=_expand_dims_shape, allowed_types={"Tdim": INDEX})


def _squeeze_shape(ctx):
    shape = ctx.shape(0)
    axes = ctx.attr("squeeze_dims")
    if shape.ndims is None:
        return TensorShape(None)
    rank = shape.ndims
    dims = shape.as_list()
    norm = set()
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Tried to squeeze dim index {a} for tensor with {rank} dimensions")
        a %= rank
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
        norm.add(a)
    if norm:
        return TensorShape([d for i, d in enumerate(dims) if i not in norm])
    if any(d is None for d in dims):
        return TensorShape(None)
    return TensorShape([d for d in dims if d != 1])


register_op("Squeeze", ["input: T"], ["output: T"], attrs={"squeeze_dims": []}, shape_fn=_squeeze_shape)


def _transpose_shape(ctx):
    shape = ctx.shape(0)
    perm = ctx.constant(1)
    if perm is None:
        n = ctx.shape(1)[0] if ctx.shape(1).ndims == 1 else None
        return unknown_shape(shape.ndims if shape.ndims is not None else n)
    perm = [int(p) for p in np.asarray(perm).ravel()]
    n = len(perm)
    if any(not -n <= p < n for p in perm):
        raise ValueError(f"perm dim {perm} out of range of input rank {n}")
    if shape.ndims is None:
        return unknown_shape(n)
    if n != shape.ndims:
        raise ValueError(f"Dimension must be {shape.ndims} but is {n}")
    perm = [p % n for p in perm]  # TF counts a negative entry from the end
    if sorted(perm) != list(range(n)):
        raise ValueError(f"{perm} is not a valid permutation")
    return TensorShape([shape[p] for p in perm])


for _op in ("Transpose", "ConjugateTranspose"):
    register_op(_op, ["x: T", "perm: Tperm"], ["y: T"], attrs={"Tperm": dtypes.int32},
                shape_fn=_transpose_shape, allowed_types={"Tperm": INDEX})
def _invert_permutation_shape(ctx):
    x = ctx.shape(0)
    if x.ndims is not None and x.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {x.ndims}")
    return x


register_op("InvertPermutation", ["x: T"], ["y: T"], attrs={"T": dtypes.int32}, shape_fn=_invert_permutation_shape,
            allowed_types={"T": INDEX})


def _tile_shape(ctx):
    shape = ctx.shape(0)
    mult = ctx.constant(1)
    if shape.ndims is None:
        return TensorShape(None)
    if mult is None:
        return unknown_shape(shape.ndims)
    mult = [int(m) for m in np.asarray(mult).ravel()]
    if len(mult) != shape.ndims:
        raise ValueError(f"Shape must be rank {shape.ndims} but is rank {len(mult)}")
    return TensorShape([0 if m == 0 else None if d is None else d * m for d, m in zip(shape.as_list(), mult)])


register_op("Tile", ["input: T", "multiples: Tmultiples"], ["output: T"], attrs={"Tmultiples": dtypes.int32},
            shape_fn=_tile_shape, allowed_types={"Tmultiples": INDEX})


def _concat_shape(ctx):
    n = ctx.num_inputs - 1
    axis = ctx.constant(n)
    shapes = [ctx.shape(i) for i in range(n)]
    known = [s for s in shapes if s.ndims is not None]
    if not known:
        return TensorShape(None)
    rank = known[0].ndims
    if any(s.ndims != rank for s in known):
        raise ValueError(f"Shape must be rank {rank} but is rank {next(s.ndims for s in known if s.ndims != rank)}")
    if axis is None:
        return unknown_shape(rank)
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError(f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), but got {a}")
    a %= rank
    out = []
    for d in range(rank):
        dims = [s.dim(d) for s in shapes if s.ndims is not None]
        if d == a:
            out.append(None if any(x.value is None for x in dims) or len(known) < n else sum(x.value for x in dims))
        else:
            merged = Dimension(None)
            for x in dims:
                if not merged.is_compatible_with(x):
                    raise ValueError(f"Dimension {d} in both shapes must be equal, but are {merged} and {x}")
                merged = merged.merge_with(x)
            out.append(merged.value)
    return TensorShape(out)


register_op("ConcatV2", ["values: N * T", "axis: Tidx"], ["output: T"], attrs={"Tidx": dtypes.int32},
            shape_fn=_concat_shape, allowed_types={"Tidx": INDEX})
# TF's ConcatV2 gradient slices with these offsets: a TensorFlow training graph names the op.
register_op("ConcatOffset", ["concat_dim: int32", "shape: N * shape_type"], ["offset: N * shape_type"],
            attrs={"shape_type": dtypes.int32}, allowed_types={"shape_type": INDEX},
            shape_fn=lambda ctx: [ctx.shape(i + 1) for i in range(ctx.num_inputs - 1)],
            doc="Where each input starts in a concatenation along `concat_dim`, given the inputs' shapes.")


def _split_axis(axis, rank):
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError(f"Dimension size, given by scalar input {a} must be in range [{-rank}, {rank})")
    return a % rank


def _split_shape(ctx):
    n = ctx.attr("num_split")
    axis = ctx.constant(0)
    shape = ctx.shape(1)
    if shape.ndims is None or axis is None:
        return [unknown_shape(shape.ndims)] * n
    a = _split_axis(axis, shape.ndims)
    dims = shape.as_list()
    if dims[a] is not None and dims[a] % n:
        raise ValueError(f"Dimension size must be evenly divisible by {n} but is {dims[a]}")
    dims[a] = None if dims[a] is None else dims[a] // n
    return [TensorShape(dims)] * n


register_op("Split", ["split_dim: int32", "value: T"], ["output: num_split * T"], attrs={"num_split": 1},
            shape_fn=_split_shape)


def _splitv_shape(ctx):
    n = ctx.attr("num_split")
    shape = ctx.shape(0)
    sizes = ctx.constant(1)
    axis = ctx.constant(2)
    if shape.ndims is None or axis is None:
        return [unknown_shape(shape.ndims)] * n
    a = _split_axis(axis, shape.ndims)
    out = []
    for i in range(n):
        dims = shape.as_list()
        size = None if sizes is None else int(np.asarray(sizes).ravel()[i])
        dims[a] = None if size == -1 else size  # -1: the rest, filled in below when known
        out.append(TensorShape(dims))
    if sizes is not None:
        sizes = [int(x) for x in np.asarray(sizes).ravel()]
        total = shape[a]
        if sizes.count(-1) > 1:
            raise ValueError("Only one dimensions can have a value of -1. Second one found at dimension "
                             f"{[i for i, x in enumerate(sizes) if x == -1][1]}")
        if total is not None and -1 in sizes:
            missing = sizes.index(-1)
            dims = shape.as_list()
            dims[a] = total - (sum(sizes) + 1)
            out[missing] = TensorShape(dims)
        elif total is not None and sum(sizes) != total:
            raise ValueError(f"Determined shape must either match input shape along split_dim exactly if "
                             f"fully specified, or be less than the size of the input along split_dim if not "
                             f"fully specified.  Got: {sum(sizes)}")
    return out


register_op("SplitV", ["value: T", "size_splits: Tlen", "split_dim: int32"], ["output: num_split * T"],
            attrs={"num_split": 1, "Tlen": dtypes.int32}, shape_fn=_splitv_shape, allowed_types={"Tlen": INDEX})


def _slice_shape(ctx):
    shape = ctx.shape(0)
    begin, size = ctx.constant(1), ctx.constant(2)
    if size is None:
        return unknown_shape(shape.ndims)
    size = [int(s) for s in np.asarray(size).ravel()]
    if shape.ndims is not None and len(size) != shape.ndims:
        raise ValueError(f"Shape must have rank {shape.ndims}, got size of length {len(size)}")
    out = []
    for i, s in enumerate(size):
        if s == -1:
            d = shape[i] if shape.ndims is not None else None
            b = None if begin is None else int(np.asarray(begin).ravel()[i])
            out.append(None if d is None or b is None else d - b)
        else:
            out.append(s)
    return TensorShape(out)


register_op("Slice", ["input: T", "begin: Index", "size: Index"], ["output: T"], shape_fn=_slice_shape,
            allowed_types={"Index": INDEX})

_STRIDED_ATTRS = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}


def _strided_slice_shape(ctx):
    shape = ctx.shape(0)
    b, e, s = ctx.constant(1), ctx.constant(2), ctx.constant(3)
    if shape.ndims is None or s is None:
        return TensorShape(None)
    if b is None or e is None:
        return _partial_strided_slice_shape(shape, s, {k: ctx.attr(k) for k in _STRIDED_ATTRS})
    index = strided_slice_index(b, e, s, {k: ctx.attr(k) for k in _STRIDED_ATTRS})
    dims = shape.as_list()
    if sum(1 for it in index if it is Ellipsis) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    if consumed > len(dims):
        raise ValueError(f"Index out of range using input dim {len(dims)}; input has only {len(dims)} dims")
    # Axis by axis: an unknown dimension stays unknown (its indices are checked when the step runs),
    # a known one is sliced as numpy slices it.
    result, axis = [], 0
    for item in index + (Ellipsis,) * (Ellipsis not in index):
        if item is Ellipsis:
            n = len(dims) - consumed
            result.extend(None if d is None else d for d in dims[axis:axis + n])
            axis += n
        elif item is None:
            result.append(1)
        elif isinstance(item, builtins.slice):
            d = dims[axis]
            result.append(None if d is None else len(builtins.range(d)[item]))
            axis += 1
        else:
            d = dims[axis]
            if d is not None and not -d <= item < d:
                raise ValueError(f"slice index {item} of dimension {axis} out of bounds")
            axis += 1
    return TensorShape(result)


def _partial_strided_slice_shape(shape, strides, masks):
    """Output shape when begin/end are not constant (`x[i]` with a tensor i), as TF infers it:
    shrunk axes vanish, new axes are 1, full slices (`:`, `::-1`) keep their size, the rest
    is unknown."""
    strides = np.asarray(strides).ravel().tolist()
    dims = shape.as_list()
    consumed = sum(1 for i in builtins.range(len(strides))
                   if not masks["new_axis_mask"] & (1 << i) and not masks["ellipsis_mask"] & (1 << i))
    out, axis = [], 0
    for i, st in enumerate(strides):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            n = len(dims) - consumed
            out.extend(dims[axis:axis + n])
            axis += n
        elif masks["new_axis_mask"] & bit:
            out.append(1)
        elif axis >= len(dims):
            raise ValueError(f"Index out of range using input dim {axis}; input has only {len(dims)} dims")
        elif masks["shrink_axis_mask"] & bit:
            axis += 1
        else:
            d = dims[axis]
            full = masks["begin_mask"] & bit and masks["end_mask"] & bit
            out.append(-(-d // abs(int(st))) if full and d is not None and st else None)
            axis += 1
    return TensorShape(out + dims[axis:])


def strided_slice_index(begin, end, strides, masks):
    """The numpy index tuple equivalent to a StridedSlice spec (shared with the kernel)."""
    begin = np.asarray(begin).ravel().tolist()
    end = np.asarray(end).ravel().tolist()
    strides = np.asarray(strides).ravel().tolist()
    if not (len(begin) == len(end) == len(strides)):
        raise ValueError("Expected begin, end, and strides to be 1D equal size tensors")
    index = []
    for i, (b, e, st) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            index.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            index.append(None)
        elif masks["shrink_axis_mask"] & bit:
            index.append(int(b))
        else:
            if st == 0:
                raise ValueError("strides[%d] must be non-zero" % i)
            index.append(builtins.slice(None if masks["begin_mask"] & bit else int(b),
                               None if masks["end_mask"] & bit else int(e), int(st)))
    return tuple(index)


register_op("StridedSlice", ["input: T", "begin: Index", "end: Index", "strides: Index"], ["output: T"],
            attrs=dict(_STRIDED_ATTRS), shape_fn=_strided_slice_shape, allowed_types={"Index": INDEX})
register_op("StridedSliceGrad", ["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
            ["output: T"], attrs=dict(_STRIDED_ATTRS), shape_fn=lambda ctx: ctx.constant_shape(0))


def _gather_shape(ctx):
    params, indices = ctx.shape(0), ctx.shape(1)
    axis = ctx.constant(2)
    if params.ndims is None or indices.ndims is None or axis is None:
        return TensorShape(None)
    a = int(axis)
    if not -params.ndims <= a < params.ndims:
        raise ValueError(f"Expected axis in the range [{-params.ndims}, {params.ndims}), but got {a}")
    a %= params.ndims
    p = params.as_list()
    return TensorShape(p[:a] + indices.as_list() + p[a + 1:])


register_op("GatherV2", ["params: Tparams", "indices: Tindices", "axis: Taxis"], ["output: Tparams"],
            attrs={"batch_dims": 0, "Taxis": dtypes.int32}, shape_fn=_gather_shape,
            allowed_types={"Tindices": INDEX, "Taxis": INDEX})


def _pack_shape(ctx):
    n = ctx.num_inputs
    shape = shape_fns.merge_all_inputs(ctx)
    if shape.ndims is None:
        return TensorShape(None)
    axis = ctx.attr("axis")
    rank = shape.ndims + 1
    if not -rank <= axis < rank:
        raise ValueError(f"Argument 'axis' = {axis} not in range [{-rank}, {rank})")
    axis %= rank
    dims = shape.as_list()
    return TensorShape(dims[:axis] + [n] + dims[axis:])


register_op("Pack", ["values: N * T"], ["output: T"], attrs={"axis": 0}, shape_fn=_pack_shape)


def _unpack_shape(ctx):
    shape = ctx.shape(0)
    num = ctx.attr("num")
    if shape.ndims is None:
        return [TensorShape(None)] * num
    axis = ctx.attr("axis") % shape.ndims
    dims = shape.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * num


register_op("Unpack", ["value: T"], ["output: num * T"], attrs={"num": 1, "axis": 0}, shape_fn=_unpack_shape)


def _one_hot_shape(ctx):
    indices = ctx.shape(0)
    depth = ctx.constant(1)
    d = None if depth is None else int(depth)
    axis = ctx.attr("axis")
    if axis < -1:
        raise ValueError(f"axis must be >= -1, got {axis}")
    if d is not None and d < 0:
        raise ValueError(f"depth must be non-negative, got: {d}")
    if indices.ndims is None:
        return TensorShape(None)
    dims = indices.as_list()
    if axis == -1:
        return TensorShape(dims + [d])
    return TensorShape(dims[:axis] + [d] + dims[axis:])


register_op("OneHot", ["indices: TI", "depth: int32", "on_value: T", "off_value: T"], ["output: T"],
            attrs={"axis": -1, "TI": dtypes.int64}, shape_fn=_one_hot_shape,
            allowed_types={"TI": (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64)})
register_op("Where", ["input: T"], ["index: int64"], attrs={"T": dtypes.bool},
            shape_fn=lambda ctx: TensorShape([None, ctx.shape(0).ndims]))


def _pad_shape(ctx):
    shape = ctx.shape(0)
    pads = ctx.constant(1)
    if shape.ndims is None:
        # As TF: constant paddings give the rank (one row per dimension), the sizes stay unknown.
        return TensorShape(None) if pads is None else unknown_shape(len(np.asarray(pads).reshape(-1, 2)))
    if pads is None:
        return unknown_shape(shape.ndims)
    pads = np.asarray(pads).reshape(-1, 2)
    if len(pads) != shape.ndims:
        raise ValueError(f"The first dimension of paddings must be the rank of inputs {shape.ndims}")
    return TensorShape([None if d is None else d + int(p[0]) + int(p[1]) for d, p in zip(shape.as_list(), pads)])


register_op("Pad", ["input: T", "paddings: Tpaddings"], ["output: T"], attrs={"Tpaddings": dtypes.int32},
            shape_fn=_pad_shape, allowed_types={"Tpaddings": INDEX})
register_op("PadV2", ["input: T", "paddings: Tpaddings", "constant_values: T"], ["output: T"],
            attrs={"Tpaddings": dtypes.int32}, shape_fn=_pad_shape, allowed_types={"Tpaddings": INDEX})
def _reverse_shape(ctx):
    shape, axes = ctx.shape(0), ctx.constant(1)
    if shape.ndims is not None and axes is not None:
        seen = set()
        for i, a in enumerate(int(x) for x in np.asarray(axes).ravel()):
            if not -shape.ndims <= a < shape.ndims:
                raise ValueError(f"'axis'[{i}] = {a} is out of valid range [0, {shape.ndims - 1}]")
            if a % shape.ndims in seen:
                raise ValueError(f"axis {a % shape.ndims} specified more than once.")
            seen.add(a % shape.ndims)
    return shape


register_op("ReverseV2", ["tensor: T", "axis: Tidx"], ["output: T"], attrs={"Tidx": dtypes.int32},
            shape_fn=_reverse_shape, allowed_types={"Tidx": INDEX})
register_op("MirrorPad", ["input: T", "paddings: Tpaddings"], ["output: T"],
            attrs={"Tpaddings": dtypes.int32, "mode": None}, shape_fn=_pad_shape, allowed_types={"Tpaddings": INDEX})


def _mirror_pad_grad_shape(ctx):
    padded, pads = ctx.shape(0), ctx.constant(1)
    if pads is None or padded.ndims is None:
        return unknown_shape(padded.ndims)
    return TensorShape([None if d is None else d - int(p[0]) - int(p[1]) for d, p in zip(padded.as_list(), pads)])


register_op("MirrorPadGrad", ["input: T", "paddings: Tpaddings"], ["output: T"],
            attrs={"Tpaddings": dtypes.int32, "mode": None}, shape_fn=_mirror_pad_grad_shape,
            allowed_types={"Tpaddings": INDEX})
register_op("Roll", ["input: T", "shift: Tshift", "axis: Taxis"], ["output: T"],
            attrs={"Tshift": dtypes.int32, "Taxis": dtypes.int32}, shape_fn=shape_fns.unchanged,
            allowed_types={"Tshift": INDEX, "Taxis": INDEX})


def _segment_shape(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    n = ctx.constant(2)
    if data.ndims is None or ids.ndims is None:
        return TensorShape(None)
    return TensorShape([None if n is None else int(n)] + data.as_list()[ids.ndims:])


register_op("UnsortedSegmentSum", ["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            ["output: T"], attrs={"Tnumsegments": dtypes.int32}, shape_fn=_segment_shape,
            allowed_types={"Tindices": INDEX, "Tnumsegments": INDEX})
register_op("ReducedShape", ["input_shape: int32", "axes: Tidx"], ["output: int32"],
            attrs={"Tidx": dtypes.int32}, shape_fn=lambda ctx: ctx.shape(0),
            doc="The shape of a reduction's result with keepdims=True (TF's math_ops.reduced_shape as one op).")


# -- Python API ----------------------------------------------------------------------

def placeholder(dtype, shape=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    shape = as_shape(shape)
    return apply_op("Placeholder", [], name=name or "Placeholder", dtype=dtype.base_dtype, shape=shape).outputs[0]


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    t = convert_to_tensor(input)
    return apply_op("PlaceholderWithDefault", [t], name=name or "PlaceholderWithDefault",
                    dtype=t.dtype.base_dtype, shape=as_shape(shape)).outputs[0]


def identity(input, name=None):  # noqa: A002
    return apply_op("Identity", [input], name=name or "Identity").outputs[0]


def stop_gradient(input, name=None):  # noqa: A002
    return apply_op("StopGradient", [input], name=name or "StopGradient").outputs[0]


def reshape(tensor, shape, name=None):
    return apply_op("Reshape", [tensor, _shape_arg(shape)], name=name or "Reshape").outputs[0]


def _shape_arg(shape):
    """Shape arguments: a TensorShape, a list (possibly holding scalar Tensors) or a Tensor."""
    if isinstance(shape, TensorShape):
        return [-1 if d is None else d for d in shape.as_list()]
    if isinstance(shape, (list, tuple)) and any(is_tensor_like(d) for d in shape):
        return stack([d if is_tensor_like(d) else np.int32(d) for d in shape])
    if isinstance(shape, (list, tuple)):
        return [int(d) if not isinstance(d, Dimension) else (-1 if d.value is None else d.value) for d in shape]
    return shape


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return apply_op("Shape", [input], name=name or "Shape", out_type=dtypes.as_dtype(out_type)).outputs[0]


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return apply_op("Size", [input], name=name or "Size", out_type=dtypes.as_dtype(out_type)).outputs[0]


def rank(input, name=None):  # noqa: A002
    return apply_op("Rank", [input], name=name or "Rank").outputs[0]


def _constant_fill(value, shape, dtype, name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    g = get_default_graph()
    with g.name_scope(name) as scope:
        if isinstance(shape, TensorShape):
            if not shape.is_fully_defined():
                raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
            shape = shape.as_list()
        if not is_tensor_like(shape) and not (isinstance(shape, (list, tuple)) and any(is_tensor_like(d)
                                                                                         for d in shape)):
            dims = [int(d) for d in shape] if isinstance(shape, (list, tuple)) else [int(shape)]
            if int(np.prod(dims)) < 1000:
                return constant(np.full(dims, value, dtype=dtype.np), dtype=dtype, name=scope)
        dims_t = _shape_arg(shape) if isinstance(shape, (list, tuple)) else shape
        return fill(dims_t, np.array(value, dtype=dtype.np), name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    return _constant_fill(0, shape, dtype, name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    return _constant_fill(1, shape, dtype, name or "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    t = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != t.dtype.base_dtype:
        return zeros(shape(t), dtype=dtype, name=name)
    return apply_op("ZerosLike", [t], name=name or "zeros_like").outputs[0]


def ones_like(tensor, dtype=None, name=None, optimize=True):
    t = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != t.dtype.base_dtype:
        return ones(shape(t), dtype=dtype, name=name)
    return apply_op("OnesLike", [t], name=name or "ones_like").outputs[0]


def fill(dims, value, name=None):
    return apply_op("Fill", [_shape_arg(dims) if isinstance(dims, (list, tuple)) else dims, value],
                    name=name or "Fill").outputs[0]


def broadcast_to(input, shape, name=None):  # noqa: A002
    return apply_op("BroadcastTo", [input, _shape_arg(shape)], name=name or "BroadcastTo").outputs[0]


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    if axis is None and dim is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    axis = dim if axis is None else axis
    return apply_op("ExpandDims", [input, axis], name=name or "ExpandDims").outputs[0]


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    if isinstance(axis, int):
        axis = [axis]
    return apply_op("Squeeze", [input], name=name or "Squeeze", squeeze_dims=list(axis or [])).outputs[0]


def transpose(a, perm=None, name="transpose", conjugate=False):
    with get_default_graph().name_scope(name) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            r = a.shape.ndims
            if r is not None:
                perm = np.arange(r - 1, -1, -1, dtype=np.int32)
            else:
                from .math_ops import range as range_op, subtract
                rk = rank(a)
                perm = subtract(subtract(rk, 1), range_op(0, rk, 1))
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        return apply_op(op_type, [a, perm], name=scope).outputs[0]


def invert_permutation(x, name=None):
    return apply_op("InvertPermutation", [x], name=name or "InvertPermutation").outputs[0]


def tile(input, multiples, name=None):  # noqa: A002
    return apply_op("Tile", [input, _shape_arg(multiples) if isinstance(multiples, (list, tuple)) else multiples],
                    name=name or "Tile").outputs[0]


def concat(values, axis, name="concat"):
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with get_default_graph().name_scope(name):
            convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32)
            return identity(values[0], name=name)  # TF's name: "concat/concat"
    return apply_op("ConcatV2", [list(values), axis], name=name).outputs[0]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    if isinstance(num_or_size_splits, numbers.Integral) and not isinstance(num_or_size_splits, bool):
        op = apply_op("Split", [axis, value], name=name, num_split=int(num_or_size_splits))
        return op.outputs
    sizes = num_or_size_splits
    if num is None:
        if is_tensor_like(sizes):
            n = sizes.shape[0] if sizes.shape.ndims == 1 else None
            if n is None:
                raise ValueError(f"Cannot infer num from shape {sizes.shape}")
            num = n
        else:
            num = len(sizes)
    op = apply_op("SplitV", [value, sizes, axis], name=name, num_split=int(num))
    return op.outputs


def slice(input_, begin, size, name=None):  # noqa: A001
    return apply_op("Slice", [input_, begin, size], name=name or "Slice").outputs[0]


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, name=None):
    if strides is None:
        strides = np.ones(len(begin) if not is_tensor_like(begin) else begin.shape[0], dtype=np.int32)
    return apply_op("StridedSlice", [input_, begin, end, strides], name=name or "StridedSlice",
                    begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                    new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask).outputs[0]


def _slice_helper(tensor, slice_spec):
    """Tensor.__getitem__: builds a StridedSlice from Python slices, ints, Ellipsis, newaxis."""
    if not isinstance(slice_spec, tuple):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0)
    any_tensor = False
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if s is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif s is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        elif isinstance(s, builtins.slice):
            for part, out, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                if part is None:
                    out.append(0)
                    masks[mask] |= bit
                else:
                    any_tensor |= is_tensor_like(part)
                    out.append(part)
            if s.step is None:
                strides.append(1)
            else:
                any_tensor |= is_tensor_like(s.step)
                strides.append(s.step)
        elif is_tensor_like(s) or isinstance(s, (numbers.Integral, np.integer)):
            if is_tensor_like(s):
                any_tensor = True
                begin.append(s)
                end.append(s + 1)
            else:
                begin.append(int(s))
                end.append(int(s) + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                            f"tf.int32/tf.int64 tensors are valid indices, got {s!r}")
    with get_default_graph().name_scope("strided_slice") as scope:
        if any_tensor:
            packed = []
            for vals in (begin, end, strides):
                # plain ints take the type of the tensors beside them, as TF's Pack infers it
                wide = any(is_tensor_like(v) and convert_to_tensor(v).dtype.base_dtype == dtypes.int64 for v in vals)
                dt = np.int64 if wide else np.int32
                packed.append(stack([v if is_tensor_like(v) else dt(v) for v in vals]))
            # TF casts the other specs to int64 when one holds an int64 tensor.
            if any(p.dtype.base_dtype == dtypes.int64 for p in packed):
                from .math_ops import cast
                packed = [p if p.dtype.base_dtype == dtypes.int64 else cast(p, dtypes.int64) for p in packed]
        else:
            packed = [np.array(vals, dtype=np.int32) for vals in (begin, end, strides)]
        return strided_slice(tensor, packed[0], packed[1], packed[2], name=scope, **masks)



def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    if batch_dims == 0:
        return apply_op("GatherV2", [params, indices, 0 if axis is None else axis],
                        name=name or "GatherV2").outputs[0]
    if not isinstance(batch_dims, numbers.Integral):
        raise TypeError(f"Argument `batch_dims` must be an int. Received `batch_dims` = {batch_dims} instead")
    with get_default_graph().name_scope(name or "GatherV2"):
        indices = convert_to_tensor(indices, name="indices")
        rank_i = indices.shape.ndims
        if rank_i is None:
            raise ValueError("tf.gather does not allow indices with unknown rank when batch_dims is specified.")
        if axis is None:
            axis = batch_dims  # as TF, before a negative batch_dims is counted from the end
        batch_dims = batch_dims + rank_i if batch_dims < 0 else batch_dims
        if is_tensor_like(axis):
            axis = int(_static_ints(axis, "axis", "gather with batch_dims"))
        if batch_dims != rank_i:
            return batched_gather(params, indices, batch_dims, axis)
        # One index per batch: gather with a trailing index dimension of 1, then drop it.
        params = convert_to_tensor(params, name="params")
        at = axis
        if at < 0 and params.shape.ndims is not None:
            at += params.shape.ndims
        return squeeze(batched_gather(params, expand_dims(indices, -1), batch_dims, axis), [at])


def batched_gather(params, indices, batch_dims, axis=None):
    """gather within the leading `batch_dims` dimensions that params and indices share,
    composed as TF's _batch_gather composes it: each batch position folded into the
    indices of one gather over the flattened batch dimensions (so gather's gradient
    applies). `axis` (a Python int, default batch_dims) is moved next to them first."""
    from .math_ops import cast, reduce_prod
    indices = convert_to_tensor(indices, name="indices")
    params = convert_to_tensor(params, name="params")
    rank_i, rank_p = indices.shape.ndims, params.shape.ndims
    if batch_dims < 0:
        batch_dims += rank_i
    if batch_dims < 0 or batch_dims >= rank_i:
        raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than rank(`indices`) = {rank_i}")
    if rank_p is not None and batch_dims >= rank_p:
        raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than rank(`params`) = {rank_p}")
    if axis is not None and axis != batch_dims:
        if rank_p is None:
            raise ValueError("graphrt's gather with batch_dims and an axis needs params of known rank")
        if not -rank_p <= axis < rank_p:
            raise ValueError(f"Argument `axis` = {axis} out of range [{-rank_p}, {rank_p})")
        axis %= rank_p
        if axis < batch_dims:
            raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than or equal to argument "
                             f"`axis` = {axis}")
        perm = list(range(batch_dims)) + [axis] + list(range(batch_dims, axis)) + list(range(axis + 1, rank_p))
        result = batched_gather(transpose(params, perm), indices, batch_dims)
        params_start = rank_i + axis - batch_dims
        perm = list(range(batch_dims)) + list(range(rank_i, params_start)) + list(range(batch_dims, rank_i)) + \
            list(range(params_start, rank_p - 1 + rank_i - batch_dims))
        return transpose(result, perm)
    indices_shape = shape(indices)
    params_shape = shape(params)
    index_dtype = indices.dtype.base_dtype
    batch_indices = indices
    stride = ones((), dtype=index_dtype)
    dims = cast(params_shape, index_dtype)
    for dim in range(batch_dims, 0, -1):
        stride *= dims[dim]
        positions = _range(dims[dim - 1]) * stride
        batch_indices += reshape(positions, stack([1] * (dim - 1) + [dims[dim - 1]] + [1] * (rank_i - dim)))
    outer_shape = params_shape[batch_dims + 1:]
    flat_size = reduce_prod(params_shape[:batch_dims + 1], [0])
    flat_params = reshape(params, concat([expand_dims(flat_size, 0), outer_shape], 0))
    result = reshape(gather(flat_params, reshape(batch_indices, [-1])), concat([indices_shape, outer_shape], 0))
    static = indices.shape[:batch_dims].merge_with(params.shape[:batch_dims])
    result.set_shape(static.concatenate(indices.shape[batch_dims:]).concatenate(params.shape[batch_dims + 1:]))
    return result


def _holds_tensor(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return is_tensor_like(value)


def stack(values, axis=0, name="stack"):
    values = list(values)
    if axis == 0 and not _holds_tensor(values):
        # As TF: values without tensors are one constant (an empty list a float32 one of shape [0]).
        return constant(values, name=name)
    ndims = convert_to_tensor(values[0]).shape.ndims if is_tensor_like(values[0]) else np.ndim(values[0])
    if ndims is not None and not -ndims - 1 <= axis <= ndims:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-ndims - 1}, {ndims + 1})")
    return apply_op("Pack", [values], name=name, axis=axis).outputs[0]


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError(f"Cannot infer num from shape {shape}")
        if not -shape.ndims <= axis < shape.ndims:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-shape.ndims}, {shape.ndims})")
        num = shape[axis]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {shape}")
    return apply_op("Unpack", [value], name=name, num=num, axis=axis).outputs


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    with get_default_graph().name_scope(name or "one_hot") as scope:
        on_t = None if on_value is None else convert_to_tensor(on_value, dtype=dtype, name="on_value")
        off_t = None if off_value is None else convert_to_tensor(off_value, dtype=dtype, name="off_value")
        dt = dtypes.as_dtype(dtype) if dtype is not None else (on_t.dtype if on_t is not None else
                                                                (off_t.dtype if off_t is not None else dtypes.float32))
        if on_t is None:
            on_t = convert_to_tensor(np.array(1, dtype=dt.np), name="on_value")
        if off_t is None:
            off_t = convert_to_tensor(np.array(0, dtype=dt.np), name="off_value")
        indices = convert_to_tensor(indices, name="indices")
        return apply_op("OneHot", [indices, depth, on_t, off_t], name=scope,
                        axis=-1 if axis is None else axis).outputs[0]


def where_indices(condition, name=None):
    cond = convert_to_tensor(condition)
    return apply_op("Where", [cond], name=name or "Where").outputs[0]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    mode = mode.upper()
    if mode in ("REFLECT", "SYMMETRIC"):
        # TF: reflect leaves out the edge value (paddings < size), symmetric repeats it (paddings <= size)
        return apply_op("MirrorPad", [tensor, paddings], name=name or "MirrorPad", mode=mode).outputs[0]
    if mode != "CONSTANT":
        raise ValueError(f"Unknown padding mode: {mode}")
    if constant_values != 0:
        return apply_op("PadV2", [tensor, paddings, constant_values], name=name or "PadV2").outputs[0]
    return apply_op("Pad", [tensor, paddings], name=name or "Pad").outputs[0]


def reverse(tensor, axis, name=None):
    return apply_op("ReverseV2", [tensor, axis], name=name or "ReverseV2").outputs[0]


reverse_v2 = reverse


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted along `axis` by `shift`, those past the end coming back at the start."""
    return apply_op("Roll", [input, shift, axis], name=name or "Roll").outputs[0]


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from N 1-D tensors, built as TF builds them (reshapes times ones)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"invalid keyword arguments: {', '.join(sorted(kwargs))}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    ndim = len(args)
    if not ndim:
        return []
    with get_default_graph().name_scope(name):
        ones_shape = (1,) * ndim
        outputs = [reshape(stack([x]) if convert_to_tensor(x).shape.ndims == 0 else x,
                           ones_shape[:i] + (-1,) + ones_shape[i + 1:]) for i, x in enumerate(args)]
        sizes = [size(x) for x in args]
        dt = outputs[0].dtype.base_dtype if outputs else dtypes.float32
        if indexing == "xy" and ndim > 1:
            outputs[0] = reshape(outputs[0], (1, -1) + (1,) * (ndim - 2))
            outputs[1] = reshape(outputs[1], (-1, 1) + (1,) * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        mult = ones(stack(sizes), dt)
        return [x * mult for x in outputs]  # TF's operator: ops named "mul"


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each slice of `input` along `axis` (the flattened input when None) repeated `repeats` times:
    numpy.repeat, composed of ops whose gradients exist (a gather of repeated indices)."""
    from .extra_ops import sequence_mask
    from .math_ops import cast, reduce_max
    with get_default_graph().name_scope(name or "Repeat"):
        input = convert_to_tensor(input, name="input")  # noqa: A001
        repeats = convert_to_tensor(repeats, name="repeats")
        if repeats.dtype.base_dtype not in INDEX:
            raise TypeError(f"repeats must be int32 or int64, got {repeats.dtype.base_dtype.name}")
        if repeats.shape.ndims is not None and repeats.shape.ndims > 1:
            raise ValueError(f"`repeats` must be a scalar or a 1-D tensor, got shape {repeats.shape}")
        if axis is None:
            input = reshape(input, [-1])  # noqa: A001
            axis = 0
        from ..framework.constant_value import constant_value
        count = constant_value(repeats)
        rank = input.shape.ndims
        if count is not None and np.ndim(count) == 0 and rank is not None:
            # A known scalar count: every slice repeated alike, by a tile (the result's shape is static).
            axis = axis % rank if rank else axis
            count = int(count)
            multiples = [1] * (rank + 1)
            multiples[axis + 1] = count
            tiled = tile(expand_dims(input, axis + 1), multiples)
            dims = input.shape.as_list()
            if all(d is not None for d in dims):
                return reshape(tiled, dims[:axis] + [dims[axis] * count] + dims[axis + 1:])
            full = shape(input)
            out = reshape(tiled, concat([full[:axis], [full[axis] * count], full[axis + 1:]], 0))
            out.set_shape(dims[:axis] + [None if dims[axis] is None else dims[axis] * count] + dims[axis + 1:])
            return out
        n = shape(input, out_type=repeats.dtype.base_dtype)[axis]
        counts = broadcast_to(repeats, stack([n]))
        width = reduce_max(counts)
        index_grid = tile(expand_dims(_range(n), 1), stack([1, width]))
        mask = sequence_mask(counts, width)
        indices = gather(reshape(index_grid, [-1]), reshape(where_indices(reshape(mask, [-1])), [-1]))
        return gather(input, cast(indices, dtypes.int32), axis=axis)


def _range(n):
    return apply_op("Range", [constant(0, dtype=n.dtype), n, constant(1, dtype=n.dtype)], name="Range").outputs[0]


def _blocked_dims(input, block_size, name):  # noqa: A002
    if not isinstance(block_size, numbers.Integral) or block_size < 2:
        raise ValueError(f"{name}: block_size must be an integer of at least 2, got {block_size!r}")
    input = convert_to_tensor(input, name="input")  # noqa: A001
    if input.shape.ndims is not None and input.shape.ndims != 4:
        raise ValueError(f"{name}: input must be 4-D (NHWC), got shape {input.shape}")
    dims = shape(input)
    return input, [dims[i] for i in range(4)]


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Each block_size x block_size patch of an NHWC image moved into the depth dimension, in TF's
    order (depth = (row in block * block_size + column in block) * channels + channel). Composed of
    reshapes and a transpose, so it has their gradients."""
    if data_format != "NHWC":
        raise ValueError(f"graphrt's space_to_depth supports only data_format='NHWC', got {data_format!r}")
    with get_default_graph().name_scope(name or "SpaceToDepth") as scope:
        input, (b, h, w, c) = _blocked_dims(input, block_size, "SpaceToDepth")  # noqa: A001
        static = input.shape.as_list() if input.shape.ndims == 4 else [None] * 4
        for d, what in ((static[1], "height"), (static[2], "width")):
            if d is not None and d % block_size:
                raise ValueError(f"Dimension size must be evenly divisible by {block_size} but is {d} "
                                 f"(the {what} of {input.name})")
        bs = block_size
        x = reshape(input, stack([b, h // bs, bs, w // bs, bs, c]))
        x = transpose(x, [0, 1, 3, 2, 4, 5])
        out = reshape(x, stack([b, h // bs, w // bs, c * (bs * bs)]), name=scope)
        out.set_shape([static[0], None if static[1] is None else static[1] // bs,
                       None if static[2] is None else static[2] // bs, None if static[3] is None else static[3] * bs * bs])
        return out


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of space_to_depth: depth moved back into block_size x block_size patches."""
    if data_format != "NHWC":
        raise ValueError(f"graphrt's depth_to_space supports only data_format='NHWC', got {data_format!r}")
    with get_default_graph().name_scope(name or "DepthToSpace") as scope:
        input, (b, h, w, c) = _blocked_dims(input, block_size, "DepthToSpace")  # noqa: A001
        static = input.shape.as_list() if input.shape.ndims == 4 else [None] * 4
        bs = block_size
        if static[3] is not None and static[3] % (bs * bs):
            raise ValueError(f"Dimension size must be evenly divisible by {bs * bs} but is {static[3]} "
                             f"(the depth of {input.name})")
        x = reshape(input, stack([b, h, w, bs, bs, c // (bs * bs)]))
        x = transpose(x, [0, 1, 3, 2, 4, 5])
        out = reshape(x, stack([b, h * bs, w * bs, c // (bs * bs)]), name=scope)
        out.set_shape([static[0], None if static[1] is None else static[1] * bs,
                       None if static[2] is None else static[2] * bs,
                       None if static[3] is None else static[3] // (bs * bs)])
        return out


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentSum").outputs[0]


def reduced_shape(input_shape, axes, name=None):
    return apply_op("ReducedShape", [input_shape, axes], name=name or "ReducedShape").outputs[0]


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries of `tensor` where the K-D `mask` (over dims axis..axis+K-1) is true, built
    as TF builds it: those K dims reshaped into one, then a gather on where(mask)."""
    from ..framework.constant_value import constant_value
    from .math_ops import reduce_prod
    with get_default_graph().name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        mask_shape, tensor_shape = mask.shape, tensor.shape
        ndims_mask = mask_shape.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  "
                             "E.g. shape=[None] is ok, but shape=None is not.")
        axis = 0 if axis is None else axis
        axis_value = constant_value(axis) if is_tensor_like(axis) else axis
        if axis_value is not None:
            axis = int(axis_value)
            masked = tensor_shape[axis:axis + ndims_mask]
            if not masked.is_compatible_with(mask_shape):
                raise ValueError(f"Shapes {masked} and {mask_shape} are incompatible")
        full = shape(tensor)
        leading_size = reduce_prod(full[axis:axis + ndims_mask], [0])
        tensor = reshape(tensor, concat([full[:axis], expand_dims(leading_size, 0), full[axis + ndims_mask:]], 0))
        if axis_value is not None:
            tensor.set_shape(tensor_shape[:axis].concatenate([masked.num_elements()])
                             .concatenate(tensor_shape[axis + ndims_mask:]))
        indices = squeeze(where_indices(reshape(mask, [-1])), axis=[1])
        return gather(tensor, indices, axis=axis)


newaxis = None
Tensor.__getitem__ = _slice_helper


def _static_ints(value, what, op_name):
    from ..framework.constant_value import constant_value
    v = constant_value(convert_to_tensor(value)) if is_tensor_like(value) else value
    if v is None:
        raise ValueError(f"graphrt's {op_name} needs a constant {what}")
    return np.asarray(v, dtype=np.int64)


def _block_args(input, block_shape, pairs, pairs_name, op):  # noqa: A002
    """(input tensor, block sizes, [before, after] pairs, spatial dims, input rank) of
    space_to_batch_nd / batch_to_space_nd, checked as TF checks them at build."""
    input = convert_to_tensor(input, name="input")  # noqa: A001
    block = _static_ints(block_shape, "block_shape", op).reshape(-1)
    pairs = _static_ints(pairs, pairs_name, op).reshape(-1, 2)
    m = len(block)
    if pairs.shape[0] != m or (block < 1).any() or (pairs < 0).any():
        raise ValueError(f"{op}: block_shape {block.tolist()} needs as many non-negative {pairs_name}, "
                         f"got {pairs.tolist()}")
    rank = input.shape.ndims
    if rank is None or rank < m + 1:
        raise ValueError(f"{op}: input of rank {rank} has no {m} spatial dimensions")
    return input, block, pairs, m, rank


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Spatial blocks of `input` (after padding) moved into the batch dimension: TF's
    SpaceToBatchND, composed of a pad, reshapes and a transpose (so it has their gradients)."""
    with get_default_graph().name_scope(name or "SpaceToBatchND") as scope:
        input, block, pads, m, rank = _block_args(input, block_shape, paddings, "paddings",  # noqa: A001
                                                  "space_to_batch_nd")
        padded = pad(input, [[0, 0]] + pads.tolist() + [[0, 0]] * (rank - 1 - m))
        static = padded.shape.as_list()
        for i in range(m):
            if static[1 + i] is not None and static[1 + i] % block[i]:
                raise ValueError(f"padded_shape[{i}]={static[1 + i]} is not divisible by block_shape[{i}]="
                                 f"{block[i]}")
        dims = shape(padded)
        split = [dims[0]]
        for i in range(m):
            split += [dims[1 + i] // int(block[i]), int(block[i])]
        split += [dims[k] for k in range(1 + m, rank)]
        x = reshape(padded, stack(split))
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, rank + m))
        x = transpose(x, perm)
        merged = [dims[0] * int(np.prod(block))] + [dims[1 + i] // int(block[i]) for i in range(m)] + \
            [dims[k] for k in range(1 + m, rank)]
        out = reshape(x, stack(merged), name=scope)
        out.set_shape([None if static[0] is None else static[0] * int(np.prod(block))] +
                      [None if static[1 + i] is None else static[1 + i] // int(block[i]) for i in range(m)] +
                      static[1 + m:])
        return out


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of space_to_batch_nd: batch blocks moved back into the spatial dimensions,
    then cropped (TF's BatchToSpaceND, composed)."""
    with get_default_graph().name_scope(name or "BatchToSpaceND") as scope:
        input, block, crop, m, rank = _block_args(input, block_shape, crops, "crops",  # noqa: A001
                                                  "batch_to_space_nd")
        static = input.shape.as_list()
        prod = int(np.prod(block))
        if static[0] is not None and static[0] % prod:
            raise ValueError(f"input batch dimension ({static[0]}) is not divisible by the product of "
                             f"block sizes ({prod})")
        dims = shape(input)
        x = reshape(input, stack([int(b) for b in block] + [dims[0] // prod] + [dims[k] for k in range(1, rank)]))
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(2 * m + 1, rank + m))
        x = transpose(x, perm)
        x = reshape(x, stack([dims[0] // prod] + [dims[1 + i] * int(block[i]) for i in range(m)] +
                             [dims[k] for k in range(1 + m, rank)]))
        begin = [0] + [int(c[0]) for c in crop] + [0] * (rank - 1 - m)
        full = shape(x)
        size = [-1] + [full[1 + i] - int(crop[i][0] + crop[i][1]) for i in range(m)] + [-1] * (rank - 1 - m)
        out = slice(x, begin, stack(size), name=scope)
        out.set_shape([None if static[0] is None else static[0] // prod] +
                      [None if static[1 + i] is None else static[1 + i] * int(block[i]) - int(crop[i].sum())
                       for i in range(m)] + static[1 + m:])
        return out


def space_to_batch(input, paddings, block_size, name=None):  # noqa: A002
    """TF1's 2-D space_to_batch: space_to_batch_nd with a square block."""
    return space_to_batch_nd(input, [block_size, block_size], paddings, name=name or "SpaceToBatchND")


def batch_to_space(input, crops, block_size, name=None):  # noqa: A002
    """TF1's 2-D batch_to_space: batch_to_space_nd with a square block."""
    return batch_to_space_nd(input, [block_size, block_size], crops, name=name or "BatchToSpaceND")

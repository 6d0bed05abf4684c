"""Kernels of the array ops (numpy or cupy via `ctx.xp`).

Many return views of their input (reshape, transpose, slices). That is safe
because no kernel writes into its inputs; the runtime copies a fetched
value that is a view or read-only before handing it to the user.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from .array_ops import strided_slice_index
from .math_kernels import ALL_DEVICES, SCALAR_TYPES


def _shape_list(value, node):
    flat = np.asarray(value).reshape(-1)
    return flat.tolist() if flat.dtype.kind in "iu" else [int(d) for d in flat.tolist()]


@register_kernel("Const", ALL_DEVICES, inexpensive=True)
def _const(ctx):
    value = ctx.xp.asarray(ctx.attr("value"))
    if value.ndim == 0 and ctx.xp is np and value.dtype.type in SCALAR_TYPES:
        value = value[()]  # a numpy scalar: the scalar fast paths of its readers take it as it is
    return lambda: value


@register_kernel("Placeholder", ALL_DEVICES)
def _placeholder(ctx):
    dtype, shape = ctx.attr("dtype"), ctx.attr("shape")
    name = ctx.name
    shape_text = shape.short() if shape.ndims is not None else "<unknown>"

    def unfed():
        raise errors.InvalidArgumentError(
            f"You must feed a value for placeholder tensor '{name}' with dtype {dtype.name} and shape "
            f"{shape_text}", node=name)
    return unfed


def _identity(x):
    return x


# schedule_code.py writes a call of a kernel so marked as a plain assignment
_identity.forwards_input = True


def _forward(ctx):
    return _identity


for _op in ("Identity", "Snapshot", "StopGradient", "PreventGradient", "PlaceholderWithDefault"):
    register_kernel(_op, ALL_DEVICES, inexpensive=True)(_forward)


@register_kernel("Reshape", ALL_DEVICES, host_memory=("shape",), inexpensive=True)
def _reshape(ctx):
    name = ctx.name

    def reshape(x, shape):
        dims = _shape_list(shape, name)
        try:
            return x.reshape(dims)
        except ValueError:
            known = int(np.prod([d for d in dims if d != -1])) if dims else 1
            if dims.count(-1) > 1:
                msg = f"only one input size may be -1, not both {dims.index(-1)} and " \
                      f"{dims.index(-1, dims.index(-1) + 1)}"
            elif -1 in dims:
                msg = (f"Input to reshape is a tensor with {x.size} values, but the requested shape requires "
                       f"a multiple of {known}")
            else:
                msg = (f"Input to reshape is a tensor with {x.size} values, but the requested shape has "
                       f"{known}")
            raise errors.InvalidArgumentError(msg, node=name) from None
    return reshape


@register_kernel("Shape", ALL_DEVICES, host_memory=("output",), inexpensive=True)
def _shape(ctx):
    dt = ctx.output_dtypes[0].np
    return lambda x: np.array(x.shape, dtype=dt)


@register_kernel("Size", ALL_DEVICES, host_memory=("output",), inexpensive=True)
def _size(ctx):
    dt = ctx.output_dtypes[0].np
    return lambda x: np.array(x.size, dtype=dt)


@register_kernel("Rank", ALL_DEVICES, host_memory=("output",), inexpensive=True)
def _rank(ctx):
    return lambda x: np.array(x.ndim, dtype=np.int32)


@register_kernel("ZerosLike", ALL_DEVICES)
def _zeros_like(ctx):
    xp = ctx.xp
    def zeros_like(x):
        if hasattr(x, "zeros_like"):  # a host object with zeros of its own (TF 2's TensorList in a variant)
            return x.zeros_like()
        # a string's zero is the empty string (numpy's zeros_like of bytes objects gives the int 0)
        return xp.full(x.shape, b"", dtype=object) if x.dtype == object else xp.zeros_like(x)
    return zeros_like


@register_kernel("OnesLike", ALL_DEVICES)
def _ones_like(ctx):
    return ctx.xp.ones_like


@register_kernel("Fill", ALL_DEVICES, host_memory=("dims",))
def _fill(ctx):
    xp, name = ctx.xp, ctx.name
    dt = ctx.output_dtypes[0].np

    def fill(dims, value):
        dims = _shape_list(dims, name)
        if any(d < 0 for d in dims):
            raise errors.InvalidArgumentError(f"dims must be non-negative, got {dims}", node=name)
        return xp.full(dims, value, dtype=dt)
    return fill


@register_kernel("BroadcastTo", ALL_DEVICES, host_memory=("shape",))
def _broadcast_to(ctx):
    xp, name = ctx.xp, ctx.name

    def broadcast_to(x, shape):
        dims = _shape_list(shape, name)
        try:
            return xp.broadcast_to(x, dims)
        except ValueError:
            raise errors.InvalidArgumentError(f"Incompatible shapes: {list(x.shape)} vs. {dims}", node=name) from None
    return broadcast_to


@register_kernel("ExpandDims", ALL_DEVICES, host_memory=("dim",), inexpensive=True)
def _expand_dims(ctx):
    xp, name = ctx.xp, ctx.name

    def expand_dims(x, dim):
        d = int(np.asarray(dim).reshape(-1)[0])
        if not -x.ndim - 1 <= d <= x.ndim:
            raise errors.InvalidArgumentError(f"Tried to expand dim index {d} for tensor with {x.ndim} dimensions.",
                                              node=name)
        if xp is np:  # np.expand_dims' reshape, without its six Python-level calls
            if d < 0:
                d += x.ndim + 1
            shape = x.shape
            return x.reshape(shape[:d] + (1,) + shape[d:])
        return xp.expand_dims(x, d)
    return expand_dims


@register_kernel("Squeeze", ALL_DEVICES, inexpensive=True)
def _squeeze(ctx):
    xp, name = ctx.xp, ctx.name
    axes = tuple(ctx.attr("squeeze_dims"))

    def squeeze(x):
        if axes:
            for a in axes:
                if not -x.ndim <= a < x.ndim or x.shape[a] != 1:
                    raise errors.InvalidArgumentError(
                        f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                        f"{x.shape[a] if -x.ndim <= a < x.ndim else 'out of range'}", node=name)
            return xp.squeeze(x, axis=axes)
        return xp.squeeze(x)
    return squeeze


@register_kernel("Transpose", ALL_DEVICES, host_memory=("perm",))
def _transpose(ctx):
    xp, name = ctx.xp, ctx.name
    conjugate = ctx.op_type == "ConjugateTranspose"

    def transpose(x, perm):
        p = _shape_list(perm, name)
        # TF counts a negative entry from the end
        p = [d + x.ndim if -x.ndim <= d < 0 else d for d in p]
        if sorted(p) != list(range(x.ndim)):
            raise errors.InvalidArgumentError(f"transpose expects a vector of size {x.ndim}. But input(1) is a "
                                              f"vector of size {len(p)}" if len(p) != x.ndim else
                                              f"{p} is not a valid permutation", node=name)
        y = xp.transpose(x, p)
        return xp.conj(y) if conjugate else y
    return transpose


register_kernel("ConjugateTranspose", ALL_DEVICES, host_memory=("perm",))(_transpose)


@register_kernel("InvertPermutation", ALL_DEVICES, host_memory=("x", "y"))
def _invert_permutation(ctx):
    name = ctx.name

    def invert(p):
        p = np.asarray(p)
        if p.ndim != 1:
            raise errors.InvalidArgumentError("invert_permutation expects a 1D vector.", node=name)
        # TF scans once and reports the first entry out of range or seen before
        bad = np.flatnonzero((p < 0) | (p >= len(p)))
        end = int(bad[0]) if bad.size else len(p)
        repeat = np.ones(end, dtype=bool)
        repeat[np.unique(p[:end], return_index=True)[1]] = False
        if repeat.any():
            raise errors.InvalidArgumentError(f"{p[np.argmax(repeat)]} is duplicated in the input.", node=name)
        if bad.size:
            raise errors.InvalidArgumentError(f"{p[end]} is not between 0 and {len(p)}", node=name)
        out = np.empty_like(p)
        out[p] = np.arange(len(p), dtype=p.dtype)
        return out
    return invert


@register_kernel("Tile", ALL_DEVICES, host_memory=("multiples",))
def _tile(ctx):
    xp, name = ctx.xp, ctx.name

    def tile(x, multiples):
        m = _shape_list(multiples, name)
        if len(m) != x.ndim:
            raise errors.InvalidArgumentError(f"Expected multiples argument to be a vector of length {x.ndim} but "
                                              f"got length {len(m)}", node=name)
        return xp.tile(x, m)
    return tile


@register_kernel("ConcatV2", ALL_DEVICES, host_memory=("axis",))
def _concat(ctx):
    xp, name = ctx.xp, ctx.name

    def concat(*args):
        axis = int(args[-1])
        values = args[:-1]
        rank = values[0].ndim
        if not -rank <= axis < max(rank, 1):
            raise errors.InvalidArgumentError(f"ConcatOp : Expected concatenating dimensions in the range "
                                              f"[{-rank}, {rank}), but got {axis}", node=name)
        try:
            return xp.concatenate(values, axis=axis)
        except ValueError:
            shapes = [list(v.shape) for v in values]
            raise errors.InvalidArgumentError(f"ConcatOp : Dimensions of inputs should match: shapes {shapes}",
                                              node=name) from None
    return concat


@register_kernel("ConcatOffset", "CPU", host_memory=("concat_dim", "shape", "offset"))
def _concat_offset(ctx):
    name = ctx.name

    def concat_offset(concat_dim, *shapes):
        first = np.asarray(shapes[0])
        rank = first.size
        axis = int(concat_dim)
        if not -rank <= axis < rank:
            raise errors.InvalidArgumentError(f"Concat dim is out of range: {axis} vs. {rank}", node=name)
        axis %= rank
        offsets, at = [], 0
        for i, shape in enumerate(shapes):
            shape = np.asarray(shape)
            if shape.size != rank:
                raise errors.InvalidArgumentError(f"input {i} should contain {rank} elements, but got "
                                                  f"{shape.size}", node=name)
            others = [d for d in range(rank) if d != axis]
            if not np.array_equal(shape[others], first[others]):
                raise errors.InvalidArgumentError(f"All dimensions except {axis} must match. Input {i} has shape "
                                                  f"{shape.tolist()} and doesn't match input 0 with shape "
                                                  f"{first.tolist()}.", node=name)
            offset = np.zeros(rank, dtype=shape.dtype)
            offset[axis] = at
            offsets.append(offset)
            at += int(shape[axis])
        return tuple(offsets) if len(offsets) > 1 else offsets[0]
    return concat_offset


@register_kernel("Split", ALL_DEVICES, host_memory=("split_dim",))
def _split(ctx):
    xp, name = ctx.xp, ctx.name
    n = ctx.attr("num_split")

    def split(axis, value):
        axis = int(axis)
        if value.shape[axis] % n:
            raise errors.InvalidArgumentError(f"Number of ways to split should evenly divide the split dimension, "
                                              f"but got split_dim {axis} (size = {value.shape[axis]}) and "
                                              f"num_split {n}", node=name)
        parts = tuple(xp.split(value, n, axis=axis))
        return parts if n != 1 else parts[0]  # an op of one output returns the array itself
    return split


@register_kernel("SplitV", ALL_DEVICES, host_memory=("size_splits", "split_dim"))
def _split_v(ctx):
    xp, name = ctx.xp, ctx.name

    def split_v(value, sizes, axis):
        axis = int(axis)
        sizes = _shape_list(sizes, name)
        total = value.shape[axis]
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
        if sum(sizes) != total or any(s < 0 for s in sizes):
            raise errors.InvalidArgumentError(f"Determined shape must either match input shape along split_dim "
                                              f"exactly if fully specified, or be less than the size of the input "
                                              f"along split_dim if not fully specified.  Got: {sum(sizes)}", node=name)
        bounds = np.cumsum(sizes)[:-1]
        parts = tuple(xp.split(value, bounds, axis=axis))
        return parts if len(parts) != 1 else parts[0]  # an op of one output returns the array itself
    return split_v


@register_kernel("Slice", ALL_DEVICES, host_memory=("begin", "size"))
def _slice(ctx):
    name = ctx.name

    def slice_(x, begin, size):
        b, s = _shape_list(begin, name), _shape_list(size, name)
        if len(b) != x.ndim or len(s) != x.ndim:
            raise errors.InvalidArgumentError(f"Expected begin and size arguments to be 1-D tensors of size "
                                              f"{x.ndim}, but got shapes [{len(b)}] and [{len(s)}] instead.",
                                              node=name)
        index = []
        for i, (bi, si, d) in enumerate(zip(b, s, x.shape)):
            si = d - bi if si == -1 else si
            if bi < 0 or si < 0 or bi + si > d:
                raise errors.InvalidArgumentError(f"Expected size[{i}] in [0, {d - bi}], but got {si}"
                                                  if bi >= 0 else f"Expected begin[{i}] >= 0, got {bi}", node=name)
            index.append(slice(bi, bi + si))
        return x[tuple(index)]
    return slice_


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@register_kernel("StridedSlice", ALL_DEVICES, host_memory=("begin", "end", "strides"))
def _strided_slice(ctx):
    masks = {k: ctx.attr(k) for k in _MASKS}
    name = ctx.name
    cache = {}

    def strided_slice(x, begin, end, strides):
        key = (begin.tobytes(), end.tobytes(), strides.tobytes())
        index = cache.get(key)
        if index is None:
            try:
                index = strided_slice_index(begin, end, strides, masks)
            except ValueError as e:
                raise errors.InvalidArgumentError(str(e), node=name) from None
            if len(cache) < 64:
                cache[key] = index
        try:
            return x[index]
        except IndexError:
            raise errors.InvalidArgumentError(f"slice index {index} out of bounds for shape {list(x.shape)}",
                                              node=name) from None
    return strided_slice


@register_kernel("StridedSliceGrad", ALL_DEVICES, host_memory=("shape", "begin", "end", "strides"))
def _strided_slice_grad(ctx):
    masks = {k: ctx.attr(k) for k in _MASKS}
    xp, name = ctx.xp, ctx.name

    def grad(shape, begin, end, strides, dy):
        out = xp.zeros(_shape_list(shape, name), dtype=dy.dtype)
        out[strided_slice_index(begin, end, strides, masks)] = dy
        return out
    return grad


@register_kernel("GatherV2", ALL_DEVICES, host_memory=("axis",))
def _gather(ctx):
    xp, name = ctx.xp, ctx.name

    def gather(params, indices, axis):
        axis = int(axis)
        if not -params.ndim <= axis < params.ndim:
            raise errors.InvalidArgumentError(f"Expected axis in the range [{-params.ndim}, {params.ndim}), but got "
                                              f"{axis}", node=name)
        n = params.shape[axis]
        if indices.size:
            bad = (indices < 0) | (indices >= n)
            if bad.any():
                pos = np.unravel_index(int(np.argmax(bad)), indices.shape)
                where = ",".join(str(int(p)) for p in pos)
                raise errors.InvalidArgumentError(f"indices[{where}] = {int(indices[pos])} is not in [0, {n})",
                                                  node=name)
        return xp.take(params, indices, axis=axis)
    return gather


@register_kernel("Pack", ALL_DEVICES)
def _pack(ctx):
    xp, name = ctx.xp, ctx.name
    axis = ctx.attr("axis")

    def pack(*values):
        try:
            return xp.stack(values, axis=axis)
        except ValueError:
            raise errors.InvalidArgumentError(
                f"Shapes of all inputs must match: {[list(v.shape) for v in values]}", node=name) from None
    return pack


@register_kernel("Unpack", ALL_DEVICES)
def _unpack(ctx):
    xp, name = ctx.xp, ctx.name
    num, axis = ctx.attr("num"), ctx.attr("axis")

    def unpack(value):
        if value.shape[axis] != num:
            raise errors.InvalidArgumentError(f"Input shape axis {axis} must equal {num}, got shape "
                                              f"{list(value.shape)}", node=name)
        parts = tuple(xp.moveaxis(value, axis, 0))
        return parts if num != 1 else parts[0]  # an op of one output returns the array itself
    return unpack


@register_kernel("OneHot", ALL_DEVICES, host_memory=("depth",))
def _one_hot(ctx):
    xp, name = ctx.xp, ctx.name
    axis = ctx.attr("axis")
    dt = ctx.output_dtypes[0].np

    def one_hot(indices, depth, on, off):
        depth = int(depth)
        if depth < 0:
            raise errors.InvalidArgumentError(f"depth must be non-negative, got: {depth}", node=name)
        hot = xp.asarray(indices)[..., None] == xp.arange(depth)
        out = xp.where(hot, on, off).astype(dt, copy=False)
        if axis != -1 and axis != out.ndim - 1:
            out = xp.moveaxis(out, -1, axis)
        return out
    return one_hot


@register_kernel("Where", ALL_DEVICES)
def _where(ctx):
    xp = ctx.xp
    return lambda x: xp.argwhere(x).astype(np.int64, copy=False)


@register_kernel("Pad", ALL_DEVICES, host_memory=("paddings",))
def _pad(ctx):
    xp, name = ctx.xp, ctx.name

    def pad(x, paddings, value=None):
        p = np.asarray(paddings).reshape(-1, 2)
        if len(p) != x.ndim or (p < 0).any():
            raise errors.InvalidArgumentError(f"paddings must be a [{x.ndim}, 2] non-negative matrix, got "
                                              f"{p.tolist()}", node=name)
        if x.ndim == 0:
            return x.copy()
        if value is None:  # Pad: the dtype's zero, the empty string for strings
            value = b"" if x.dtype == object else 0
        return xp.pad(x, [(int(a), int(b)) for a, b in p], constant_values=value)
    return pad


register_kernel("PadV2", ALL_DEVICES, host_memory=("paddings",))(_pad)


@register_kernel("ReverseV2", ALL_DEVICES, host_memory=("axis",))
def _reverse(ctx):
    xp = ctx.xp
    return lambda x, axis: xp.flip(x, axis=tuple(int(a) for a in np.asarray(axis).reshape(-1)))


def _mirror_pads(x, paddings, mode, name, padded=False):
    """The paddings as [(before, after)] per dimension, checked as TF's MirrorPad checks them."""
    pads = np.asarray(paddings).reshape(-1, 2) if np.size(paddings) else np.zeros((0, 2), np.int64)
    if pads.shape[0] != x.ndim:
        raise errors.InvalidArgumentError(f"The first dimension of paddings must be the rank of inputs{list(pads.shape)}"
                                          f", {list(x.shape)}", node=name)
    offset = 0 if mode == "REFLECT" else 1
    for d, (before, after) in enumerate(pads.tolist()):
        size = x.shape[d] - (before + after if padded else 0)
        if before < 0 or after < 0 or before > size - 1 + offset or after > size - 1 + offset:
            raise errors.InvalidArgumentError(
                f"paddings must be no greater than the dimension size: {before}, {after} greater than "
                f"{size - 1 + offset}", node=name)
    return [(int(a), int(b)) for a, b in pads.tolist()]


@register_kernel("MirrorPad", ("CPU",), host_memory=("paddings",))
def _mirror_pad(ctx):
    mode, name = ctx.attr("mode"), ctx.name
    np_mode = "reflect" if mode == "REFLECT" else "symmetric"
    return lambda x, paddings: np.pad(x, _mirror_pads(x, paddings, mode, name), mode=np_mode)


@register_kernel("MirrorPadGrad", ("CPU",), host_memory=("paddings",))
def _mirror_pad_grad(ctx):
    mode, name = ctx.attr("mode"), ctx.name
    np_mode = "reflect" if mode == "REFLECT" else "symmetric"

    def mirror_pad_grad(dy, paddings):
        pads = _mirror_pads(dy, paddings, mode, name, padded=True)
        out = dy
        for axis, (before, after) in enumerate(pads):
            n = out.shape[axis] - before - after
            # Each padded position's source index along this axis; their gradients add up there.
            source = np.pad(np.arange(n), (before, after), mode=np_mode)
            moved = np.moveaxis(out, axis, 0)
            folded = np.zeros((n,) + moved.shape[1:], dtype=dy.dtype)
            np.add.at(folded, source, moved)
            out = np.moveaxis(folded, 0, axis)
        return out
    return mirror_pad_grad


@register_kernel("Roll", ALL_DEVICES, host_memory=("shift", "axis"))
def _roll(ctx):
    xp, name = ctx.xp, ctx.name

    def roll(x, shift, axis):
        shift, axis = np.asarray(shift).reshape(-1), np.asarray(axis).reshape(-1)
        if shift.size != axis.size:
            raise errors.InvalidArgumentError(f"shift and axis must have the same size, got {shift.size} and "
                                              f"{axis.size}", node=name)
        rank = x.ndim
        for a in axis.tolist():
            if not -rank <= a < rank:
                raise errors.InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {rank}",
                                                  node=name)
        # Shifts along one axis add up, as in TF (numpy.roll does the same for repeated axes).
        return xp.roll(x, tuple(int(s) for s in shift.tolist()), tuple(int(a) for a in axis.tolist()))
    return roll


@register_kernel("UnsortedSegmentSum", ALL_DEVICES, host_memory=("num_segments",))
def _unsorted_segment_sum(ctx):
    xp, name = ctx.xp, ctx.name

    def segment_sum(data, ids, num_segments):
        n = int(num_segments)
        if ids.size and int(ids.max()) >= n:
            raise errors.InvalidArgumentError(f"segment_ids[{int(np.argmax(np.asarray(ids) >= n))}] = "
                                              f"{int(ids.max())} is out of range [0, {n})", node=name)
        if data.shape[:ids.ndim] != ids.shape:
            raise errors.InvalidArgumentError(f"data.shape = {list(data.shape)} does not start with "
                                              f"segment_ids.shape = {list(ids.shape)}", node=name)
        out = xp.zeros((n,) + data.shape[ids.ndim:], dtype=data.dtype)
        keep = ids >= 0  # negative ids are dropped, as in TF
        flat_ids = ids[keep]
        rows = data[keep]
        if xp is np:
            np.add.at(out, flat_ids, rows)
        else:  # cupy spells unbuffered scatter-add differently
            import cupyx
            cupyx.scatter_add(out, flat_ids, rows)
        return out
    return segment_sum


@register_kernel("ReducedShape", ALL_DEVICES, host_memory=("input_shape", "axes", "output"))
def _reduced_shape(ctx):
    name = ctx.name

    def reduced_shape(input_shape, axes):
        out = np.array(input_shape, dtype=np.int32, copy=True).reshape(-1)
        rank = len(out)
        for a in np.asarray(axes).reshape(-1).tolist():
            if not -rank <= a < max(rank, 1):
                raise errors.InvalidArgumentError(f"Invalid reduction dimension {a} for rank {rank}", node=name)
            if rank:
                out[a % rank] = 1
        return out
    return reduced_shape

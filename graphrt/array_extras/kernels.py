"""Kernels of the ops in ops.py, against numpy (and cupy where the op is plain
arithmetic on `xp`). Indices are checked on the host, as TF's CPU kernels do:
a bad index is an InvalidArgumentError naming the node."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.extra_kernels import _check_nd_indices, _segment_ids_check, unsorted_segment_reduction
from ..ops.math_kernels import ALL_DEVICES
from ..ops.sparse_training_ops import _scatter_kernel
from ..ops.state_ops import _owned_value


def _host(xp, a):
    return a if xp is np else a.get()


# -- scatters onto a tensor, and into a variable ------------------------------------------------

def _nd_target(name, indices, updates, shape):
    """The numpy index tuple of `indices` into `shape`, after TF's checks."""
    indices = np.asarray(indices)
    _check_nd_indices(name, indices, shape)
    r = indices.shape[-1]
    want = tuple(indices.shape[:-1]) + tuple(shape[r:])
    if tuple(updates.shape) != want:
        raise errors.InvalidArgumentError(f"updates must have shape {list(want)} (indices.shape[:-1] + "
                                          f"shape[indices.shape[-1]:]), got {list(updates.shape)}", node=name)
    return tuple(indices[..., k] for k in range(r))


_AT = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum}


def _apply(kind, value, idx, updates):
    """value[idx] op= updates, in place; a repeated index applies each of its updates
    (for 'update' the last one wins, as TF's CPU kernel)."""
    if not idx:  # empty index vectors each name the whole tensor
        for u in updates.reshape((-1,) + value.shape):
            if kind == "update":
                value[...] = u
            else:
                _AT[kind](value, u, out=value)
    elif kind == "update":
        value[idx] = updates
    else:
        _AT[kind].at(value, idx, updates)


def _tensor_scatter(kind):
    def factory(ctx):
        name, xp = ctx.name, ctx.xp

        def scatter(tensor, indices, updates):
            host_updates = _host(xp, updates)
            idx = _nd_target(name, indices, host_updates, tensor.shape)
            out = np.array(_host(xp, tensor), copy=True)
            _apply(kind, out, idx, host_updates)
            return xp.asarray(out)
        return scatter
    return factory


for _op_type, _kind in (("TensorScatterUpdate", "update"), ("TensorScatterAdd", "add"), ("TensorScatterSub", "sub"),
                        ("TensorScatterMin", "min"), ("TensorScatterMax", "max")):
    register_kernel(_op_type, ALL_DEVICES, host_memory=("indices",), fresh_outputs=True)(_tensor_scatter(_kind))


def _variable_scatter_nd(kind):
    def factory(ctx):
        name = ctx.name

        def scatter(ref, indices, updates):
            ref.require(name)
            value = _owned_value(ref)
            updates = np.asarray(updates)
            _apply(kind, value, _nd_target(name, indices, updates, value.shape), updates)
            return ref
        return scatter
    return factory


for _op_type, _kind in (("ScatterNdUpdate", "update"), ("ScatterNdAdd", "add"), ("ScatterNdSub", "sub")):
    register_kernel(_op_type, ("CPU",), host_memory=("indices",))(_variable_scatter_nd(_kind))


def _divide_at(xp, value, idx, rows):
    if value.dtype.kind in "iu":  # C++ integer division truncates toward zero
        for i, row in zip(idx, rows):
            value[i] = np.trunc(value[i] / row).astype(value.dtype)
    else:
        xp.divide.at(value, idx, rows)


register_kernel("ScatterMul", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: xp.multiply.at(v, i, r)))
register_kernel("ScatterDiv", ALL_DEVICES)(_scatter_kernel(_divide_at))
register_kernel("ScatterMin", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: xp.minimum.at(v, i, r)))
register_kernel("ScatterMax", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: xp.maximum.at(v, i, r)))


# -- search, counting ----------------------------------------------------------------------------

def _bound(side):
    def factory(ctx):
        name, out = ctx.name, ctx.output_dtypes[0].np

        def bound(sorted_inputs, values):
            if sorted_inputs.shape[0] != values.shape[0]:
                raise errors.InvalidArgumentError("Leading dim_size of both tensors must match.", node=name)
            result = np.empty(values.shape, dtype=out)
            for row in range(values.shape[0]):
                result[row] = np.searchsorted(sorted_inputs[row], values[row], side=side)
            return result
        return bound
    return factory


register_kernel("LowerBound", ("CPU",), fresh_outputs=True)(_bound("left"))
register_kernel("UpperBound", ("CPU",), fresh_outputs=True)(_bound("right"))


@register_kernel("UniqueWithCounts", ("CPU",), fresh_outputs=True)
def _unique_with_counts(ctx):
    name, idx_dtype = ctx.name, ctx.attr("out_idx").np

    def unique_with_counts(x):
        if x.ndim != 1:
            raise errors.InvalidArgumentError("unique expects a 1D vector.", node=name)
        if x.size == 0:
            return x.copy(), np.zeros(0, idx_dtype), np.zeros(0, idx_dtype)
        _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        order = np.argsort(first, kind="stable")  # TF lists values in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return (x[first[order]].copy(), rank[inverse.reshape(-1)].astype(idx_dtype),
                counts[order].astype(idx_dtype))
    return unique_with_counts


@register_kernel("HistogramFixedWidth", ("CPU",), host_memory=("value_range", "nbins"), fresh_outputs=True)
def _histogram_fixed_width(ctx):
    name, out = ctx.name, ctx.attr("dtype").np

    def histogram(values, value_range, nbins):
        nbins = int(nbins)
        lo, hi = value_range[0], value_range[1]
        if nbins <= 0:
            raise errors.InvalidArgumentError(f"nbins should be a positive number, but got '{nbins}'", node=name)
        if not lo < hi:
            raise errors.InvalidArgumentError(f"value_range should satisfy value_range[0] < value_range[1], but "
                                              f"got '[{lo}, {hi}]'", node=name)
        # TF's kernel: the offset from lo in the input type, the bin in double, clamped to [0, nbins - 1]
        step = (float(hi) - float(lo)) / nbins
        offset = (np.maximum(values, lo) - lo).astype(np.float64)
        bins = np.minimum(offset / step, nbins - 1).astype(np.int64).reshape(-1)
        return np.bincount(bins, minlength=nbins).astype(out)
    return histogram


@register_kernel("UnravelIndex", ("CPU",), fresh_outputs=True)
def _unravel_index(ctx):
    name = ctx.name

    def unravel(indices, dims):
        if np.any(dims <= 0):
            raise errors.InvalidArgumentError("Input dims must be > 0", node=name)
        total = int(np.prod(dims.astype(np.int64)))
        if np.any((indices < 0) | (indices >= total)):
            raise errors.InvalidArgumentError(f"index out of bounds for array with {total} elements",
                                              node=name)
        coords = np.unravel_index(indices.reshape(-1), tuple(int(d) for d in dims))
        out = np.stack(coords).astype(dims.dtype)
        return out.reshape(-1) if indices.ndim == 0 else out
    return unravel


# -- shapes, stacking, bytes ---------------------------------------------------------------------

@register_kernel("ShapeN", ALL_DEVICES, host_memory=("output",), inexpensive=True, fresh_outputs=True)
def _shape_n(ctx):
    dtype = ctx.attr("out_type").np

    def shape_n(*inputs):
        shapes = tuple(np.array(x.shape, dtype=dtype) for x in inputs)
        return shapes if len(shapes) > 1 else shapes[0]
    return shape_n


@register_kernel("ParallelConcat", ALL_DEVICES, fresh_outputs=True)
def _parallel_concat(ctx):
    xp = ctx.xp
    return lambda *values: xp.concatenate(values, axis=0)


@register_kernel("Bitcast", ("CPU",), fresh_outputs=True)
def _bitcast(ctx):
    dst = ctx.attr("type").np
    name = ctx.name

    def bitcast(x):
        src = x.dtype.itemsize
        if src > dst.itemsize:
            return np.ascontiguousarray(x).view(dst).reshape(x.shape + (src // dst.itemsize,)).copy()
        if src < dst.itemsize:
            if x.ndim < 1 or x.shape[-1] != dst.itemsize // src:
                raise errors.InvalidArgumentError(f"Cannot bitcast from {src} to {dst.itemsize}: shape "
                                                  f"{list(x.shape)}", node=name)
            return np.ascontiguousarray(x).view(dst).reshape(x.shape[:-1]).copy()
        return np.ascontiguousarray(x).view(dst).copy()
    return bitcast


@register_kernel("EnsureShape", ALL_DEVICES, inexpensive=True)
def _ensure_shape(ctx):
    name, declared = ctx.name, ctx.attr("shape")

    def ensure_shape(x):
        if not declared.is_compatible_with(x.shape):
            shown = ",".join(str(d) for d in x.shape)
            raise errors.InvalidArgumentError(f"Shape of tensor {name} [{shown}] is not compatible with expected "
                                              f"shape {declared.short()}.", node=name)
        return x
    return ensure_shape


# -- segment products ----------------------------------------------------------------------------

@register_kernel("SegmentProd", ALL_DEVICES, host_memory=("segment_ids",), fresh_outputs=True)
def _segment_prod(ctx):
    xp, name = ctx.xp, ctx.name

    def segment_prod(data, ids):
        ids = _segment_ids_check(name, data, ids)
        n = int(ids[-1]) + 1 if ids.size else 0
        host = _host(xp, data)
        out = np.ones((n,) + host.shape[1:], dtype=host.dtype)
        np.multiply.at(out, ids, host)
        return xp.asarray(out)
    return segment_prod


unsorted_segment_reduction("UnsortedSegmentProd", np.multiply, lambda dtype: 1)


@register_kernel("BroadcastArgs", ALL_DEVICES, host_memory=("s0", "s1", "r0"))
def _broadcast_args(ctx):
    name = ctx.name

    def broadcast_args(s0, s1):
        try:
            return np.asarray(np.broadcast_shapes(tuple(s0), tuple(s1)), dtype=np.asarray(s0).dtype)
        except ValueError:
            raise errors.InvalidArgumentError(f"Incompatible shapes: [{','.join(map(str, s0))}] vs. "
                                              f"[{','.join(map(str, s1))}]", node=name) from None
    return broadcast_args


@register_kernel("GuaranteeConst", ALL_DEVICES, inexpensive=True)
def _guarantee_const(ctx):
    return lambda x: x

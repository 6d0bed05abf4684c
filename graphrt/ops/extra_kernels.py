"""Kernels of the ops in extra_ops.py, against `xp` where the op is numeric
(PyFunc, Unique and the segment ops with data-dependent output sizes run
their bookkeeping on the host)."""
import traceback

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import register_kernel
from .extra_ops import lookup_py_func
from .math_kernels import ALL_DEVICES


def _index_error(name, indices, bad, shape):
    pos = np.unravel_index(int(np.argmax(bad)), bad.shape)
    where = ",".join(str(int(p)) for p in pos)
    vec = ",".join(str(int(v)) for v in np.asarray(indices)[pos])
    return errors.InvalidArgumentError(f"indices[{where}] = [{vec}] does not index into param shape "
                                       f"[{','.join(str(d) for d in shape)}]", node=name)


def _check_nd_indices(name, indices, shape):
    """Every index vector (last dim of `indices`) must lie inside `shape`."""
    r = indices.shape[-1]
    if r > len(shape):
        raise errors.InvalidArgumentError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                                          f"{list(indices.shape)} and params shape: {list(shape)}", node=name)
    if indices.size:
        limits = np.array(shape[:r], dtype=np.int64)
        host = np.asarray(indices)
        bad = np.any((host < 0) | (host >= limits), axis=-1)
        if bad.any():
            raise _index_error(name, host, bad, shape)


@register_kernel("GatherNd", ALL_DEVICES, host_memory=("indices",))
def _gather_nd(ctx):
    xp, name = ctx.xp, ctx.name

    def gather_nd(params, indices):
        _check_nd_indices(name, indices, params.shape)
        r = indices.shape[-1]
        idx = tuple(xp.asarray(indices[..., k]) for k in range(r))
        out = params[idx] if r else xp.broadcast_to(params, indices.shape[:-1] + params.shape)
        return xp.array(out, copy=True)
    return gather_nd


@register_kernel("ScatterNd", ALL_DEVICES, host_memory=("indices", "shape"))
def _scatter_nd(ctx):
    xp, name = ctx.xp, ctx.name

    def scatter_nd(indices, updates, shape):
        shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
        _check_nd_indices(name, indices, shape)
        r = indices.shape[-1]
        want = indices.shape[:-1] + shape[r:]
        if updates.shape != want:
            raise errors.InvalidArgumentError(f"updates must have shape {list(want)}, got {list(updates.shape)}",
                                              node=name)
        out = xp.zeros(shape, dtype=updates.dtype)
        idx = tuple(xp.asarray(indices[..., k]) for k in range(r))
        if xp is np:
            np.add.at(out, idx, updates)
        else:
            import cupyx
            cupyx.scatter_add(out, idx, updates)
        return out
    return scatter_nd


@register_kernel("IsNan", ALL_DEVICES)
def _is_nan(ctx):
    return ctx.xp.isnan


@register_kernel("IsInf", ALL_DEVICES)
def _is_inf(ctx):
    return ctx.xp.isinf


@register_kernel("IsFinite", ALL_DEVICES)
def _is_finite(ctx):
    return ctx.xp.isfinite


@register_kernel("DivNoNan", ALL_DEVICES, fresh_outputs=True)
def _div_no_nan(ctx):
    xp = ctx.xp

    def div_no_nan(x, y):
        zero = y == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            q = xp.true_divide(x, xp.where(zero, xp.ones_like(y), y))
        return xp.where(zero, xp.zeros_like(q), q).astype(q.dtype, copy=False)
    return div_no_nan


@register_kernel("LinSpace", ALL_DEVICES, host_memory=("num",))
def _lin_space(ctx):
    xp, name = ctx.xp, ctx.name
    dtype = ctx.output_dtypes[0].np

    def lin_space(start, stop, num):
        for value, what in ((start, "start"), (stop, "stop"), (num, "num")):
            if np.ndim(value) != 0:
                raise errors.InvalidArgumentError(f"{what} must be a scalar, not shape {list(np.shape(value))}",
                                                  node=name)
        n = int(num)
        if n <= 0:
            raise errors.InvalidArgumentError(f"Requires num > 0: {n}", node=name)
        start, stop = xp.asarray(start, dtype=dtype), xp.asarray(stop, dtype=dtype)
        if n == 1:
            return xp.reshape(start, (1,)).copy()
        step = (stop - start) / dtype.type(n - 1)
        out = start + step * xp.arange(n, dtype=dtype)
        out[-1] = stop
        return out
    return lin_space


@register_kernel("MatrixDiag", ALL_DEVICES)
def _matrix_diag(ctx):
    xp = ctx.xp

    def matrix_diag(d):
        n = d.shape[-1]
        out = xp.zeros(d.shape + (n,), dtype=d.dtype)
        idx = xp.arange(n)
        out[..., idx, idx] = d
        return out
    return matrix_diag


@register_kernel("MatrixDiagPart", ALL_DEVICES)
def _matrix_diag_part(ctx):
    xp, name = ctx.xp, ctx.name

    def matrix_diag_part(x):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"input must be at least 2-dim, received shape: {list(x.shape)}",
                                              node=name)
        return xp.array(xp.diagonal(x, axis1=-2, axis2=-1), copy=True)
    return matrix_diag_part


@register_kernel("MatrixSetDiag", ALL_DEVICES)
def _matrix_set_diag(ctx):
    xp, name = ctx.xp, ctx.name

    def matrix_set_diag(x, d):
        n = min(x.shape[-2:]) if x.ndim >= 2 else 0
        if x.ndim < 2 or d.shape != x.shape[:-2] + (n,):
            raise errors.InvalidArgumentError(f"diagonal must have shape {list(x.shape[:-2]) + [n]}, got "
                                              f"{list(d.shape)}", node=name)
        out = xp.array(x, copy=True)
        idx = xp.arange(n)
        out[..., idx, idx] = d
        return out
    return matrix_set_diag


@register_kernel("Einsum", ALL_DEVICES, fresh_outputs=True)
def _einsum(ctx):
    xp, name = ctx.xp, ctx.name
    equation = ctx.attr("equation")
    optimize = ctx.attr("N") > 2

    def einsum(*operands):
        try:
            out = xp.einsum(equation, *operands, optimize=optimize)
        except ValueError as e:
            raise errors.InvalidArgumentError(f"einsum {equation!r}: {e}", node=name) from None
        return xp.array(out, copy=True) if not isinstance(out, xp.ndarray) or out.base is not None else out
    return einsum


def _segment_ids_check(name, data, ids):
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise errors.InvalidArgumentError("segment_ids should be the same size as dimension 0 of input.",
                                          node=name)
    host = np.asarray(ids)
    if host.size and host[0] < 0:
        raise errors.InvalidArgumentError("segment ids must be >= 0", node=name)
    if host.size > 1 and np.any(np.diff(host) < 0):
        raise errors.InvalidArgumentError("segment ids are not increasing", node=name)
    return host


def _segment_kernel(op_type, reducer):
    @register_kernel(op_type, ALL_DEVICES, host_memory=("segment_ids",))
    def factory(ctx):
        xp, name = ctx.xp, ctx.name

        def segment(data, ids):
            host = _segment_ids_check(name, data, ids)
            n = int(host[-1]) + 1 if host.size else 0
            return reducer(xp, data, host, n)
        return segment
    return factory


def _segment_sum(xp, data, ids, n):
    out = xp.zeros((n,) + data.shape[1:], dtype=data.dtype)
    if xp is np:
        np.add.at(out, ids, data)
    else:  # cupy spells unbuffered scatter-add differently
        import cupyx
        cupyx.scatter_add(out, xp.asarray(ids), data)
    return out


def _segment_mean(xp, data, ids, n):
    total = _segment_sum(xp, data, ids, n)
    counts = np.bincount(ids, minlength=n).astype(np.float64)
    counts = np.maximum(counts, 1).reshape((n,) + (1,) * (data.ndim - 1))
    if data.dtype.kind in "iu":
        return (total // xp.asarray(counts.astype(data.dtype))).astype(data.dtype)
    return (total / xp.asarray(counts.astype(data.dtype))).astype(data.dtype, copy=False)


def _segment_extreme(ufunc):
    def reduce(xp, data, ids, n):
        host = np.asarray(data) if xp is np else data.get()
        fill = _lowest(host.dtype) if ufunc is np.maximum else _highest(host.dtype)
        out = np.full((n,) + host.shape[1:], fill, dtype=host.dtype)
        ufunc.at(out, ids, host)
        present = np.bincount(ids, minlength=n) > 0
        out[~present] = 0  # an empty segment is 0 (sorted segment ops)
        return xp.asarray(out)
    return reduce


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


_segment_kernel("SegmentSum", _segment_sum)
_segment_kernel("SegmentMean", _segment_mean)
_segment_kernel("SegmentMax", _segment_extreme(np.maximum))
_segment_kernel("SegmentMin", _segment_extreme(np.minimum))


def unsorted_segment_reduction(op_type, ufunc, fill_fn):
    """Registers an UnsortedSegment<op> kernel: `ufunc` folds each segment's rows into a row that starts
    as fill_fn(dtype) (what an empty segment holds)."""
    @register_kernel(op_type, ALL_DEVICES, host_memory=("segment_ids", "num_segments"))
    def factory(ctx):
        xp, name = ctx.xp, ctx.name

        def segment(data, ids, num_segments):
            n = int(num_segments)
            ids = np.asarray(ids)
            if data.shape[:ids.ndim] != ids.shape:
                raise errors.InvalidArgumentError(f"data.shape = {list(data.shape)} does not start with "
                                                  f"segment_ids.shape = {list(ids.shape)}", node=name)
            if ids.size and int(ids.max()) >= n:
                raise errors.InvalidArgumentError(f"segment_ids[{int(np.argmax(ids >= n))}] = {int(ids.max())} "
                                                  f"is out of range [0, {n})", node=name)
            host = np.asarray(data) if xp is np else data.get()
            out = np.full((n,) + host.shape[ids.ndim:], fill_fn(host.dtype), dtype=host.dtype)
            keep = ids >= 0  # negative ids are dropped
            ufunc.at(out, ids[keep], host[keep])
            return xp.asarray(out)
        return segment
    return factory


unsorted_segment_reduction("UnsortedSegmentMax", np.maximum, _lowest)
unsorted_segment_reduction("UnsortedSegmentMin", np.minimum, _highest)


@register_kernel("Unique", ("CPU",))
def _unique(ctx):
    name = ctx.name
    idx_dtype = ctx.attr("out_idx").np

    def unique(x):
        if x.ndim != 1:
            raise errors.InvalidArgumentError("unique expects a 1D vector.", node=name)
        if x.size == 0:
            return x.copy(), np.zeros(0, dtype=idx_dtype)
        _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return x[first[order]].copy(), rank[inverse.reshape(-1)].astype(idx_dtype)
    return unique


@register_kernel("IdentityN", ALL_DEVICES)
def _identity_n(ctx):
    if len(ctx.output_dtypes) == 1:
        return lambda x: x
    return lambda *xs: tuple(xs)


# -- py_func ------------------------------------------------------------------------------------

_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _type_name(dtype):
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def _to_tf_dtype(arr):
    if arr.dtype.kind in "OSU":
        return dtypes.string
    try:
        return dtypes.as_dtype(arr.dtype)
    except TypeError:
        return None


def _convert_result(value):
    if isinstance(value, (str, bytes)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    arr = np.asarray(value)
    if arr.dtype.kind in "SU":
        out = np.empty(arr.shape, dtype=object)
        for i, v in np.ndenumerate(arr):
            out[i] = v.encode() if isinstance(v, str) else bytes(v)
        return out
    if arr.dtype.kind == "O":
        out = np.empty(arr.shape, dtype=object)
        for i, v in np.ndenumerate(arr):
            out[i] = v.encode() if isinstance(v, str) else v
        return out
    return arr


_EXCEPTIONS = ((ValueError, errors.InvalidArgumentError), (TypeError, errors.InvalidArgumentError),
               (StopIteration, errors.OutOfRangeError), (MemoryError, errors.ResourceExhaustedError),
               (NotImplementedError, errors.UnimplementedError))


def _py_func_kernel(ctx):
    token, name = ctx.attr("token"), ctx.name
    tout = list(ctx.attr("Tout"))

    def call(*args):
        func = lookup_py_func(token)
        if func is None:
            raise errors.InvalidArgumentError(f"Could not find callback with key={token} in the registry.",
                                              node=name)
        args = [a if not isinstance(a, np.ndarray) or a.flags.writeable else np.array(a) for a in args]
        try:
            ret = func(*args)
        except Exception as e:  # noqa: BLE001 - the function's error becomes the op's, as in TF
            cls = next((err for exc, err in _EXCEPTIONS if isinstance(e, exc)), errors.UnknownError)
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            raise cls(f"{type(e).__name__}: {e}\n{text}", node=name) from e
        if not tout:
            return None
        values = list(ret) if isinstance(ret, (list, tuple)) else [ret]
        if len(values) != len(tout):
            raise errors.InvalidArgumentError(f"{token} returns {len(values)} values, but expects to see "
                                              f"{len(tout)} values.", node=name)
        out = []
        for i, (value, want) in enumerate(zip(values, tout)):
            arr = _convert_result(value)
            got = _to_tf_dtype(arr)
            if got != want:
                got_name = _type_name(got) if got is not None else str(arr.dtype)
                raise errors.InvalidArgumentError(f"{i}-th value returned by {token} is {got_name}, but expects "
                                                  f"{_type_name(want)}", node=name)
            out.append(arr)
        return out[0] if len(out) == 1 else tuple(out)
    return call


register_kernel("PyFunc", ("CPU",))(_py_func_kernel)
register_kernel("PyFuncStateless", ("CPU",))(_py_func_kernel)

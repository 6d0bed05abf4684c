"""Kernels of the 3-D convolution and pooling ops, MaxPoolWithArgmax and
Dilation2D, over channels-last arrays with any number of spatial dims.

Convolution is im2col as the Conv2D kernels do it: a strided view of the
padded input with one row per output position and one column per (tap,
in-channel), copied a few images at a time into a matrix multiplied by the
filter seen as [taps * in, out]; dilations are the view's tap strides, so a
dilated filter costs no extra multiplies. The filter backprop is that matrix
transposed times dy; the input backprop is dy times the filter transposed,
added back onto the input grid with one strided add per tap. Pooling and
morphology walk the taps of the window, each a strided view of the whole
batch. Never a Python loop over output positions.
"""
import functools
import itertools

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.blas import blas_kernel
from ..ops.math_kernels import ALL_DEVICES
from ..ops.nn_kernels import _blocks, _lowest
from ..ops.nn_ops import windowed_output_size

# TF's CPU MaxPool3DGrad routes a window's gradient to every input within this of the max.
_MAX_POOL3D_GRAD_TOLERANCE = 1e-5


class _Grid:
    """Window layout over the spatial dims of a channels-last batch.

    `taps[t]` is the slice tuple picking, for tap t (row-major over the window),
    the padded-input element under it for every output position; `valid[t]` says
    (as an array over the output grid) whether that element is input, not padding.
    """

    __slots__ = ("out", "before", "padded", "needs_pad", "crop", "taps", "offsets", "valid")

    def __init__(self, spatial, window, strides, rates, padding):
        self.out, self.before, padded = [], [], []
        for size, k, s, r in zip(spatial, window, strides, rates):
            extent = (k - 1) * r + 1
            out, lo, hi = windowed_output_size(size, extent, s, padding)
            self.out.append(out)
            self.before.append(lo)
            padded.append(max(size + lo + hi, (out - 1) * s + extent))
        self.padded = tuple(padded)
        self.needs_pad = self.padded != tuple(spatial) or any(self.before)
        self.crop = (slice(None), *(slice(b, b + n) for b, n in zip(self.before, spatial)), slice(None))
        self.offsets = list(itertools.product(*(range(k) for k in window)))
        self.taps, self.valid = [], []
        starts = [np.arange(o) * s - b for o, s, b in zip(self.out, strides, self.before)]
        for tap in self.offsets:
            first = [i * r for i, r in zip(tap, rates)]
            self.taps.append((slice(None), *(slice(f, f + s * (o - 1) + 1, s)
                                             for f, s, o in zip(first, strides, self.out)), slice(None)))
            pos = [st + f for st, f in zip(starts, first)]
            valid = np.ones(self.out, dtype=bool)
            for axis, (p, size) in enumerate(zip(pos, spatial)):
                shape = [1] * len(pos)
                shape[axis] = -1
                valid &= ((p >= 0) & (p < size)).reshape(shape)
            self.valid.append(valid)

    def positions(self, tap, rates, strides):
        """Per spatial dim, the input coordinate under `tap` of each output position."""
        return [np.arange(o) * s - b + i * r
                for o, s, b, i, r in zip(self.out, strides, self.before, tap, rates)]


def _grid_cache(strides, rates, padding):
    """A per-kernel cache: (spatial sizes, window) -> _Grid (a bad window is a run-time error)."""
    cache = {}

    def get(spatial, window, name):
        key = (tuple(spatial), tuple(window))
        grid = cache.get(key)
        if grid is None:
            try:
                grid = _Grid(spatial, window, strides, rates, padding)
            except ValueError as e:
                raise errors.InvalidArgumentError(str(e), node=name) from None
            cache[key] = grid
        return grid
    return get


def _pad(xp, x, grid, fill):
    """x padded to grid.padded with `fill`, or x itself when no padding is needed."""
    if not grid.needs_pad:
        return x
    out = xp.full((x.shape[0], *grid.padded, x.shape[-1]), fill, dtype=x.dtype)
    out[grid.crop] = x
    return out


def _windows(xp, xpad, grid, window, strides, rates):
    """A read-only [N, out..., window..., C] view of the windows of the padded input."""
    st = xpad.strides
    spatial = st[1:-1]
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=(xpad.shape[0], *grid.out, *window, xpad.shape[-1]),
        strides=(st[0], *(a * s for a, s in zip(spatial, strides)), *(a * r for a, r in zip(spatial, rates)),
                 st[-1]))


def _rank(x, rank, what, name):
    if x.ndim != rank:
        raise errors.InvalidArgumentError(f"{what} must be {rank}-dimensional{list(x.shape)}", node=name)


def _sizes(v, rank, what, name):
    v = v.get() if hasattr(v, "get") else v
    flat = np.asarray(v).reshape(-1)
    if flat.shape != (rank,):
        raise errors.InvalidArgumentError(f"{what} must be a {rank}-element vector, got shape "
                                          f"{list(np.shape(v))}", node=name)
    dims = tuple(int(d) for d in flat)
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(f"{what} must be non-negative, got {list(dims)}", node=name)
    return dims


def _check_shape(t, want, what, name):
    if tuple(t.shape) != tuple(want):
        raise errors.InvalidArgumentError(f"Expected {what} shape to be {list(want)}, but got {list(t.shape)}",
                                          node=name)


# -- Conv3D -------------------------------------------------------------------------------------

def _conv3d_attrs(ctx):
    strides = [int(s) for s in ctx.attr("strides")]
    dilations = [int(d) for d in ctx.attr("dilations")]
    if strides[0] != 1 or strides[4] != 1:
        raise errors.UnimplementedError("Current implementation does not yet support strides in the batch and "
                                        "depth dimensions.", node=ctx.name)
    if dilations[0] != 1 or dilations[4] != 1:
        raise errors.InvalidArgumentError("Current implementation does not yet support dilations rates in the "
                                          "batch and depth dimensions.", node=ctx.name)
    attr = ctx.attr("padding")
    padding = attr.decode() if isinstance(attr, bytes) else attr
    return strides[1:4], dilations[1:4], padding


def _check_depth(c, fc, name):
    if c != fc:
        raise errors.InvalidArgumentError(f"input and filter must have the same depth: {c} vs {fc}", node=name)


def _conv3d_kernel(factory):
    """Registers a Conv3D-family kernel factory(ctx, strides, rates, grid) on every device."""
    def make(ctx):
        strides, rates, padding = _conv3d_attrs(ctx)
        return factory(ctx, strides, rates, _grid_cache(strides, rates, padding))
    make.__name__ = factory.__name__
    return blas_kernel(make)


@register_kernel("Conv3D", ALL_DEVICES)
@_conv3d_kernel
def _conv3d(ctx, strides, rates, grid_of):
    xp, name = ctx.xp, ctx.name

    def conv3d(x, f):
        _rank(x, 5, "input", name)
        _rank(f, 5, "filter", name)
        n, c = x.shape[0], x.shape[4]
        window, (fc, o) = f.shape[:3], f.shape[3:]
        _check_depth(c, fc, name)
        grid = grid_of(x.shape[1:4], window, name)
        win = _windows(xp, _pad(xp, x, grid, 0), grid, window, strides, rates)
        k = int(np.prod(window)) * c
        f2 = f.reshape(k, o)
        out = xp.empty((n, *grid.out, o), dtype=x.dtype)
        for i, j in _blocks(xp, n, int(np.prod(grid.out)) * k * x.itemsize):
            xp.matmul(win[i:j].reshape(-1, k), f2, out=out[i:j].reshape(-1, o))
        return out
    return conv3d


@register_kernel("Conv3DBackpropInputV2", ALL_DEVICES, host_memory=("input_sizes",))
@_conv3d_kernel
def _conv3d_backprop_input(ctx, strides, rates, grid_of):
    xp, name = ctx.xp, ctx.name

    def backprop_input(input_sizes, f, dy):
        n, d, h, w, c = shape = _sizes(input_sizes, 5, "input_sizes", name)
        _rank(f, 5, "filter", name)
        _rank(dy, 5, "out_backprop", name)
        window, (fc, o) = f.shape[:3], f.shape[3:]
        _check_depth(c, fc, name)
        grid = grid_of((d, h, w), window, name)
        _check_shape(dy, (n, *grid.out, o), "out_backprop", name)
        taps = len(grid.taps)
        ft = f.reshape(taps * c, o).T
        dx = xp.empty(shape, dtype=dy.dtype)
        for i, j in _blocks(xp, n, int(np.prod(grid.out)) * taps * c * dy.itemsize):
            cols = xp.matmul(dy[i:j].reshape(-1, o), ft).reshape(j - i, *grid.out, taps, c)
            buf = xp.zeros((j - i, *grid.padded, c), dtype=dy.dtype)
            for t, tap in enumerate(grid.taps):
                buf[tap] += cols[..., t, :]
            dx[i:j] = buf[grid.crop]
        return dx
    return backprop_input


@register_kernel("Conv3DBackpropFilterV2", ALL_DEVICES, host_memory=("filter_sizes",))
@_conv3d_kernel
def _conv3d_backprop_filter(ctx, strides, rates, grid_of):
    xp, name = ctx.xp, ctx.name

    def backprop_filter(x, filter_sizes, dy):
        sizes = _sizes(filter_sizes, 5, "filter_sizes", name)
        window, (fc, o) = sizes[:3], sizes[3:]
        _rank(x, 5, "input", name)
        _rank(dy, 5, "out_backprop", name)
        n, c = x.shape[0], x.shape[4]
        _check_depth(c, fc, name)
        grid = grid_of(x.shape[1:4], window, name)
        _check_shape(dy, (n, *grid.out, o), "out_backprop", name)
        win = _windows(xp, _pad(xp, x, grid, 0), grid, window, strides, rates)
        k = int(np.prod(window)) * c
        df = xp.zeros((k, o), dtype=dy.dtype)
        for i, j in _blocks(xp, n, int(np.prod(grid.out)) * k * x.itemsize):
            df += xp.matmul(win[i:j].reshape(-1, k).T, dy[i:j].reshape(-1, o))
        return df.reshape(sizes)
    return backprop_filter


# -- MaxPool3D, AvgPool3D --------------------------------------------------------------------------

def _pool_attrs(ctx, spatial_dims=3):
    ksize = [int(k) for k in ctx.attr("ksize")]
    strides = [int(s) for s in ctx.attr("strides")]
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError("Pooling is not yet supported on the batch dimension.", node=ctx.name)
    if ksize[-1] != 1 or strides[-1] != 1:
        raise errors.UnimplementedError("Pooling is not yet supported on the depth dimension." if spatial_dims == 3
                                        else "MaxPooling supports exactly one of pooling across depth or pooling "
                                             "across width/height.", node=ctx.name)
    for i, k in enumerate(ksize):
        if k < 1:
            raise errors.InvalidArgumentError(f"Sliding window ksize for dimension {i} was zero.", node=ctx.name)
    attr = ctx.attr("padding")
    padding = attr.decode() if isinstance(attr, bytes) else attr
    window, strides = ksize[1:-1], strides[1:-1]
    return window, strides, _grid_cache(strides, [1] * spatial_dims, padding)


def _mean_scale(xp, grid, spatial, window, strides, dtype):
    """1 / (number of input elements) of each window, over the output grid (TF counts no padding)."""
    counts = []
    for o, s, b, k, size in zip(grid.out, strides, grid.before, window, spatial):
        start = np.arange(o) * s - b
        counts.append(np.minimum(start + k, size) - np.maximum(start, 0))
    inv = 1.0 / functools.reduce(np.multiply, np.ix_(*counts)).astype(np.float64)
    return xp.asarray(inv.astype(dtype)[..., None])


@register_kernel("MaxPool3D", ALL_DEVICES)
def _max_pool3d(ctx):
    xp, name = ctx.xp, ctx.name
    window, _, grid_of = _pool_attrs(ctx)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool3d(x):
        _rank(x, 5, "tensor_in", name)
        grid = grid_of(x.shape[1:4], window, name)
        xpad = _pad(xp, x, grid, lowest)
        out = xpad[grid.taps[0]].copy()
        for tap in grid.taps[1:]:
            xp.fmax(out, xpad[tap], out=out)  # TF's CPU max skips NaN
        return out
    return max_pool3d


@register_kernel("AvgPool3D", ALL_DEVICES)
def _avg_pool3d(ctx):
    xp, name = ctx.xp, ctx.name
    window, strides, grid_of = _pool_attrs(ctx)
    dtype = ctx.input_dtypes[0].np

    def avg_pool3d(x):
        _rank(x, 5, "tensor_in", name)
        grid = grid_of(x.shape[1:4], window, name)
        xpad = _pad(xp, x, grid, 0)
        out = xpad[grid.taps[0]].copy()
        for tap in grid.taps[1:]:
            out += xpad[tap]
        out *= _mean_scale(xp, grid, x.shape[1:4], window, strides, dtype)
        return out
    return avg_pool3d


@register_kernel("AvgPool3DGrad", ALL_DEVICES, host_memory=("orig_input_shape",))
def _avg_pool3d_grad(ctx):
    xp, name = ctx.xp, ctx.name
    window, strides, grid_of = _pool_attrs(ctx)
    dtype = ctx.input_dtypes[1].np

    def avg_pool3d_grad(orig_input_shape, dy):
        n, d, h, w, c = _sizes(orig_input_shape, 5, "orig_input_shape", name)
        grid = grid_of((d, h, w), window, name)
        _check_shape(dy, (n, *grid.out, c), "grad", name)
        g = dy * _mean_scale(xp, grid, (d, h, w), window, strides, dtype)
        dx = xp.zeros((n, *grid.padded, c), dtype=dy.dtype)
        for tap in grid.taps:
            dx[tap] += g
        return xp.ascontiguousarray(dx[grid.crop])
    return avg_pool3d_grad


def _check_pooled(x, y, dy, grid, name):
    want = (x.shape[0], *grid.out, x.shape[-1])
    _check_shape(y, want, "orig_output", name)
    _check_shape(dy, want, "grad", name)


@register_kernel("MaxPool3DGrad", ALL_DEVICES)
def _max_pool3d_grad(ctx):
    xp, name = ctx.xp, ctx.name
    window, _, grid_of = _pool_attrs(ctx)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool3d_grad(x, y, dy):
        _rank(x, 5, "orig_input", name)
        grid = grid_of(x.shape[1:4], window, name)
        _check_pooled(x, y, dy, grid, name)
        xpad = _pad(xp, x, grid, lowest)
        dx = xp.zeros((x.shape[0], *grid.padded, x.shape[-1]), dtype=dy.dtype)
        zero = dy.dtype.type(0)
        for tap in grid.taps:
            near = xp.abs(xpad[tap] - y) < _MAX_POOL3D_GRAD_TOLERANCE  # every near-max input, as TF's CPU
            dx[tap] += xp.where(near, dy, zero)
        return xp.ascontiguousarray(dx[grid.crop])
    return max_pool3d_grad


@register_kernel("MaxPool3DGradGrad", ALL_DEVICES)
def _max_pool3d_grad_grad(ctx):
    xp, name = ctx.xp, ctx.name
    window, _, grid_of = _pool_attrs(ctx)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool3d_grad_grad(x, y, g):
        _rank(x, 5, "orig_input", name)
        _check_shape(g, x.shape, "grad", name)
        grid = grid_of(x.shape[1:4], window, name)
        _check_shape(y, (x.shape[0], *grid.out, x.shape[-1]), "orig_output", name)
        xpad, gpad = _pad(xp, x, grid, lowest), _pad(xp, g, grid, 0)
        out = xp.zeros(y.shape, dtype=g.dtype)
        free = xp.ones(y.shape, dtype=bool)
        for tap in grid.taps:  # the first input equal to the max picks the output's grad
            m = (xpad[tap] == y) & free
            out[m] = gpad[tap][m]
            free &= ~m
        return out
    return max_pool3d_grad_grad


# -- MaxPoolWithArgmax ----------------------------------------------------------------------------

def _first_max(xp, xpad, grid):
    """Per output: the window's first valid element strictly above all before it (TF's scan:
    padding is skipped, NaN wins only as a window's first element). Returns (max, tap index)."""
    best = tap_of = None
    for t, tap in enumerate(grid.taps):
        v = xpad[tap]
        valid = xp.asarray(grid.valid[t])[None, ..., None]
        if best is None:
            best, tap_of = v.copy(), xp.zeros(v.shape, dtype=np.int64)
            unset = ~valid
            continue
        take = valid & ((best < v) | unset)
        best = xp.where(take, v, best)
        tap_of = xp.where(take, t, tap_of)
        unset = unset & ~valid
    return best, tap_of


def _tap_inputs(xp, grid, tap_of, height, width, channels, strides, rates, clip=False):
    """The flattened (y * width + x) * channels + c input index of each output's chosen tap."""
    ys = xp.stack([xp.asarray(grid.positions(off, rates, strides)[0]) for off in grid.offsets])
    xs = xp.stack([xp.asarray(grid.positions(off, rates, strides)[1]) for off in grid.offsets])
    y = ys[tap_of, xp.arange(tap_of.shape[1])[None, :, None, None]]
    x = xs[tap_of, xp.arange(tap_of.shape[2])[None, None, :, None]]
    if clip:
        y, x = xp.maximum(y, 0), xp.maximum(x, 0)
    return (y * width + x) * channels + xp.arange(channels)


@register_kernel("MaxPoolWithArgmax", ("CPU",))
def _max_pool_with_argmax(ctx):
    xp, name = ctx.xp, ctx.name
    window, strides, grid_of = _pool_attrs(ctx, spatial_dims=2)
    with_batch = bool(ctx.attr("include_batch_in_index"))
    targmax = ctx.output_dtypes[1].np

    def max_pool_with_argmax(x):
        _rank(x, 4, "input", name)
        n, h, w, c = x.shape
        grid = grid_of((h, w), window, name)
        best, tap_of = _first_max(xp, _pad(xp, x, grid, 0), grid)
        index = _tap_inputs(xp, grid, tap_of, h, w, c, strides, (1, 1))
        if with_batch:
            index = index + (xp.arange(n) * (h * w * c))[:, None, None, None]
        return best, index.astype(targmax)
    return max_pool_with_argmax


@register_kernel("MaxPoolGradWithArgmax", ("CPU",))
def _max_pool_grad_with_argmax(ctx):
    xp, name = ctx.xp, ctx.name
    window, _, grid_of = _pool_attrs(ctx, spatial_dims=2)
    with_batch = bool(ctx.attr("include_batch_in_index"))

    def max_pool_grad_with_argmax(x, dy, argmax):
        _rank(x, 4, "input", name)
        n, h, w, c = x.shape
        grid = grid_of((h, w), window, name)
        want = (n, *grid.out, c)
        _check_shape(dy, want, "grad", name)
        _check_shape(argmax, want, "argmax", name)
        index = argmax.reshape(n, -1).astype(np.int64)
        if not with_batch:
            index = index + (np.arange(n, dtype=np.int64) * (h * w * c))[:, None]
        if index.size and (index.min() < 0 or index.max() >= x.size):
            # TF's CPU kernel aborts the process here; an error is kinder.
            raise errors.InvalidArgumentError(f"Invalid argmax index: {int(index.min())}..{int(index.max())} is "
                                              f"outside [0, {x.size})", node=name)
        dx = np.zeros(x.size, dtype=dy.dtype)
        np.add.at(dx, index.ravel(), dy.ravel())
        return dx.reshape(x.shape)
    return max_pool_grad_with_argmax


# -- Dilation2D -------------------------------------------------------------------------------------

def _dilation_attrs(ctx):
    strides = [int(s) for s in ctx.attr("strides")]
    rates = [int(r) for r in ctx.attr("rates")]
    if strides[0] != 1 or strides[3] != 1:
        raise errors.UnimplementedError("Stride is only supported across spatial dimensions.", node=ctx.name)
    if rates[0] != 1 or rates[3] != 1:
        raise errors.UnimplementedError("Rate is only supported across spatial dimensions.", node=ctx.name)
    attr = ctx.attr("padding")
    padding = attr.decode() if isinstance(attr, bytes) else attr
    return strides[1:3], rates[1:3], _grid_cache(strides[1:3], rates[1:3], padding)


def _dilation_kernel(op_type):
    """Registers a Dilation2D-family kernel: body(x, f, dy, grid, best, tap_of) after the shared
    checks and the forward scan (first strictly largest input + filter, padding skipped)."""
    def register(body):
        @register_kernel(op_type, ("CPU",))
        def make(ctx):
            xp, name = ctx.xp, ctx.name
            strides, rates, grid_of = _dilation_attrs(ctx)
            lowest = _lowest(ctx.input_dtypes[0].np)
            floor = np.finfo(ctx.input_dtypes[0].np).min if lowest == -np.inf else lowest

            def kernel(x, f, *dy):
                _rank(x, 4, "input", name)
                _rank(f, 3, "filter", name)
                _check_depth(x.shape[3], f.shape[2], name)
                grid = grid_of(x.shape[1:3], f.shape[:2], name)
                if dy:
                    _check_shape(dy[0], (x.shape[0], *grid.out, x.shape[3]), "out_backprop", name)
                xpad = _pad(xp, x, grid, 0)
                kw = f.shape[1]
                floor_grid = xp.full((x.shape[0], *grid.out, x.shape[3]), floor, dtype=x.dtype)
                best, tap_of = floor_grid, xp.full(floor_grid.shape, -1, dtype=np.int64)
                for t, tap in enumerate(grid.taps):  # TF starts each window at `lowest`: nothing below wins
                    v = xpad[tap] + f[t // kw, t % kw]
                    take = xp.asarray(grid.valid[t])[None, ..., None] & (v > best)
                    best = xp.where(take, v, best)
                    tap_of = xp.where(take, t, tap_of)
                return body(xp, x, f, dy[0] if dy else None, grid, best, tap_of, strides, rates)
            return kernel
        return make
    return register


@_dilation_kernel("Dilation2D")
def _dilation2d(xp, x, f, dy, grid, best, tap_of, strides, rates):
    return best


@_dilation_kernel("Dilation2DBackpropInput")
def _dilation2d_backprop_input(xp, x, f, dy, grid, best, tap_of, strides, rates):
    # a window no sum beat `lowest` in sends its gradient to its first input element, as TF
    n, h, w, c = x.shape
    none = tap_of < 0
    index = _tap_inputs(xp, grid, xp.where(none, 0, tap_of), h, w, c, strides, rates, clip=True)
    index = index + (np.arange(n, dtype=np.int64) * (h * w * c))[:, None, None, None]
    dx = np.zeros(x.size, dtype=dy.dtype)
    np.add.at(dx, index.ravel(), dy.ravel())
    return dx.reshape(x.shape)


@_dilation_kernel("Dilation2DBackpropFilter")
def _dilation2d_backprop_filter(xp, x, f, dy, grid, best, tap_of, strides, rates):
    tap_of = xp.where(tap_of < 0, 0, tap_of)  # TF's default argmax is the filter's first tap
    zero = dy.dtype.type(0)
    df = xp.stack([xp.where(tap_of == t, dy, zero).sum(axis=(0, 1, 2)) for t in range(len(grid.taps))])
    return df.reshape(f.shape).astype(dy.dtype)

"""Kernels of the depthwise convolution ops, one multiply-add per filter tap
over the strided windows of the padded input (the window geometry is the
Conv2D kernels').

Shapes: x [N, H, W, C], filter [KH, KW, C, M], y [N, OH, OW, C*M] where
y[..., c*M + m] = sum over taps of x-window[..., c] * filter[tap, c, m].
"""
from .. import errors
from ..framework.registry import register_kernel
from ..ops.math_kernels import ALL_DEVICES
from ..ops.nn_kernels import _check_4d, _conv_attrs, _geometry_cache, _pad_input, _sizes


def _check_channels(c, fc, name):
    if c != fc:
        raise errors.InvalidArgumentError(f"input and filter must have the same depth: {c} vs {fc}", node=name)


def _check_dy(dy, want, name):
    if tuple(dy.shape) != tuple(want):
        raise errors.InvalidArgumentError(f"out_backprop has shape {list(dy.shape)}, expected {list(want)}",
                                          node=name)


@register_kernel("DepthwiseConv2dNative", ALL_DEVICES)
def _depthwise(ctx):
    xp, name = ctx.xp, ctx.name
    strides, padding = _conv_attrs(ctx)
    geometry = _geometry_cache(strides, padding)

    def depthwise(x, f):
        _check_4d(x, "input", name)
        _check_4d(f, "filter", name)
        n, h, w, c = x.shape
        kh, kw, fc, m = f.shape
        _check_channels(c, fc, name)
        geo = geometry(h, w, kh, kw, name)
        xpad = _pad_input(xp, x, geo, 0)
        out = xp.zeros((n, geo.out_h, geo.out_w, c, m), dtype=x.dtype)
        for t, tap in enumerate(geo.taps):
            out += xpad[tap][..., None] * f[t // kw, t % kw]
        return out.reshape(n, geo.out_h, geo.out_w, c * m)
    return depthwise


@register_kernel("DepthwiseConv2dNativeBackpropInput", ALL_DEVICES, host_memory=("input_sizes",))
def _depthwise_backprop_input(ctx):
    xp, name = ctx.xp, ctx.name
    strides, padding = _conv_attrs(ctx)
    geometry = _geometry_cache(strides, padding)

    def backprop_input(input_sizes, f, dy):
        n, h, w, c = _sizes(input_sizes, "input_sizes", name)
        _check_4d(f, "filter", name)
        kh, kw, fc, m = f.shape
        _check_channels(c, fc, name)
        geo = geometry(h, w, kh, kw, name)
        _check_dy(dy, (n, geo.out_h, geo.out_w, c * m), name)
        dy5 = dy.reshape(n, geo.out_h, geo.out_w, c, m)
        dx = xp.zeros((n, geo.padded[0], geo.padded[1], c), dtype=dy.dtype)
        for t, tap in enumerate(geo.taps):
            dx[tap] += (dy5 * f[t // kw, t % kw]).sum(axis=-1)
        return xp.ascontiguousarray(dx[geo.crop])
    return backprop_input


@register_kernel("DepthwiseConv2dNativeBackpropFilter", ALL_DEVICES, host_memory=("filter_sizes",))
def _depthwise_backprop_filter(ctx):
    xp, name = ctx.xp, ctx.name
    strides, padding = _conv_attrs(ctx)
    geometry = _geometry_cache(strides, padding)

    def backprop_filter(x, filter_sizes, dy):
        kh, kw, fc, m = _sizes(filter_sizes, "filter_sizes", name)
        _check_4d(x, "input", name)
        n, h, w, c = x.shape
        _check_channels(c, fc, name)
        geo = geometry(h, w, kh, kw, name)
        _check_dy(dy, (n, geo.out_h, geo.out_w, c * m), name)
        dy5 = dy.reshape(n, geo.out_h, geo.out_w, c, m)
        xpad = _pad_input(xp, x, geo, 0)
        df = xp.empty((kh * kw, c, m), dtype=dy.dtype)
        for t, tap in enumerate(geo.taps):
            df[t] = xp.einsum("nhwc,nhwcm->cm", xpad[tap], dy5)
        return df.reshape(kh, kw, c, m)
    return backprop_filter

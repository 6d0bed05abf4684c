"""Colour-space kernels with the formulas of TF's CPU kernels (colorspace_op.h,
adjust_hue_op.cc, adjust_saturation_op.cc), vectorized over pixels.

RGBToHSV and HSVToRGB compute in the input's dtype. AdjustHue and
AdjustSaturation compute in float32 (as TF does for half too), each with its
own route through hue: AdjustHue rotates hue on a [0, 6) scale between the
pixel's min and max channel; AdjustSaturation goes to HSV and back with a
sextant switch.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel


def _check_rgb(images, node):
    if images.ndim < 1 or images.shape[-1] != 3:
        raise errors.FailedPreconditionError(f"input must have 3 channels but input only has "
                                          f"{images.shape[-1] if images.ndim else 0} channels.", node=node)


def rgb_to_hsv(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    span = v - np.minimum(np.minimum(r, g), b)
    dtype = rgb.dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, span / v, dtype(0))
        norm = dtype(1) / (dtype(6) * span)
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + dtype(2) / dtype(6), norm * (r - g) + dtype(4) / dtype(6)))
    h = np.where(span > 0, h, dtype(0))
    h = np.where(h < 0, h + dtype(1), h)
    return np.stack([h, s, v], axis=-1).astype(rgb.dtype, copy=False)


def hsv_to_rgb(hsv):
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    dtype = hsv.dtype.type
    dh = h * dtype(6)
    dr = np.clip(np.abs(dh - dtype(3)) - dtype(1), 0, 1)
    dg = np.clip(dtype(2) - np.abs(dh - dtype(2)), 0, 1)
    db = np.clip(dtype(2) - np.abs(dh - dtype(4)), 0, 1)
    one_s = dtype(1) - s
    return np.stack([(one_s + s * c) * v for c in (dr, dg, db)], axis=-1).astype(hsv.dtype, copy=False)


# The six orderings of (r, g, b) as TF's rgb_to_hv_range numbers them: the hue sextant
# and which channel is max, mid and min.
_SEXTANT_CHANNELS = np.array([[0, 1, 2], [1, 0, 2], [1, 2, 0], [2, 1, 0], [2, 0, 1], [0, 2, 1]])  # max, mid, min


def adjust_hue(rgb, delta):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # TF's branch order (ties fall as its comparisons fall)
    category = np.where(r < g, np.where(b < r, 1, np.where(b > g, 3, 2)),
                        np.where(b < g, 0, np.where(b > r, 4, 5)))
    order = _SEXTANT_CHANNELS[category]
    vmax = np.take_along_axis(rgb, order[..., 0:1], -1)[..., 0]
    vmid = np.take_along_axis(rgb, order[..., 1:2], -1)[..., 0]
    vmin = np.take_along_axis(rgb, order[..., 2:3], -1)[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (vmid - vmin) / (vmax - vmin)
    increase = category % 2 == 0
    h = np.where(vmax == vmin, np.float32(0), category + np.where(increase, ratio, 1 - ratio)).astype(np.float32)
    h = h + np.float32(delta) * np.float32(6)
    h = np.mod(h, np.float32(6))  # TF adds or subtracts 6 until h is in [0, 6)
    h = np.where(h >= 6, np.float32(0), h)
    new_category = h.astype(np.int64)
    ratio = h - new_category
    ratio = np.where(new_category % 2 == 0, ratio, 1 - ratio)
    new_mid = vmin + ratio * (vmax - vmin)
    out = np.empty_like(rgb)
    new_order = _SEXTANT_CHANNELS[new_category]
    for slot, value in enumerate((vmax, new_mid, vmin)):
        np.put_along_axis(out, new_order[..., slot:slot + 1], value[..., None], -1)
    return out


def adjust_saturation(rgb, scale):
    hsv = rgb_to_hsv(rgb)  # adjust_saturation_op.cc's own rgb_to_hsv has the same formulas
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    s = np.minimum(np.float32(1), np.maximum(np.float32(0), s * np.float32(scale)))
    c = s * v
    m = v - c
    dh = h * np.float32(6)
    category = dh.astype(np.int64)
    fmodu = np.mod(dh, np.float32(2))
    x = c * (1 - np.abs(fmodu - 1))
    zero = np.zeros_like(c)
    table = {0: (c, x, zero), 1: (x, c, zero), 2: (zero, c, x), 3: (zero, x, c), 4: (x, zero, c), 5: (c, zero, x)}
    channels = []
    for i in range(3):
        channels.append(np.select([category == k for k in range(6)], [table[k][i] for k in range(6)], 0) + m)
    return np.stack(channels, axis=-1).astype(np.float32)


def _colour_kernel(fn):
    def factory(ctx):
        node = ctx.name

        def kernel(images):
            images = np.asarray(images)
            _check_rgb(images, node)
            return fn(images)
        return kernel
    return factory


register_kernel("RGBToHSV", ("CPU",), fresh_outputs=True)(_colour_kernel(rgb_to_hsv))
register_kernel("HSVToRGB", ("CPU",), fresh_outputs=True)(_colour_kernel(hsv_to_rgb))


def _adjust_kernel(fn, what):
    def factory(ctx):
        node = ctx.name

        def kernel(images, value):
            images = np.asarray(images)
            if images.ndim < 3:
                raise errors.InvalidArgumentError(f"input must be at least 3-D, got shape{list(images.shape)}",
                                                  node=node)
            if np.ndim(value) != 0:
                raise errors.InvalidArgumentError(f"{what} must be scalar: {list(np.shape(value))}", node=node)
            _check_rgb(images, node)
            return fn(images.astype(np.float32), float(value)).astype(images.dtype)
        return kernel
    return factory


register_kernel("AdjustHue", ("CPU",), fresh_outputs=True)(_adjust_kernel(adjust_hue, "delta"))
register_kernel("AdjustSaturation", ("CPU",), fresh_outputs=True)(_adjust_kernel(adjust_saturation, "scale"))

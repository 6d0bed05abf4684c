"""ExtractImagePatches: every ksize window (dilated by `rates`, stepped by
`strides`, SAME or VALID padding as convolutions) flattened into the depth
of one output pixel, in (row, col, channel) order; padding reads zeros."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from .extra_ops import patch_geometry


def extract_patches(images, ksizes, strides, rates, padding):
    batch, rows, cols, depth = images.shape
    out_r, pad_r = patch_geometry(rows, ksizes[1], strides[1], rates[1], padding)
    out_c, pad_c = patch_geometry(cols, ksizes[2], strides[2], rates[2], padding)
    # input row/column of each (output position, kernel tap); -1 where it falls in the padding
    r = (np.arange(out_r) * strides[1] - pad_r)[:, None] + np.arange(ksizes[1]) * rates[1]
    c = (np.arange(out_c) * strides[2] - pad_c)[:, None] + np.arange(ksizes[2]) * rates[2]
    r_ok, c_ok = (r >= 0) & (r < rows), (c >= 0) & (c < cols)
    padded = np.concatenate([images, np.zeros((batch, rows, 1, depth), images.dtype)], axis=2)
    padded = np.concatenate([padded, np.zeros((batch, 1, cols + 1, depth), images.dtype)], axis=1)
    r = np.where(r_ok, r, rows)  # the appended zero row / column
    c = np.where(c_ok, c, cols)
    # [batch, out_r, kr, out_c, kc, depth] -> [batch, out_r, out_c, kr, kc, depth]
    patches = padded[:, r[:, :, None, None], c[None, None, :, :]]
    patches = patches.transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(patches.reshape(batch, out_r, out_c, ksizes[1] * ksizes[2] * depth))


@register_kernel("ExtractImagePatches", ("CPU",), fresh_outputs=True)
def _extract_image_patches(ctx):
    node = ctx.name
    ksizes, strides, rates = (list(ctx.attr(a)) for a in ("ksizes", "strides", "rates"))
    padding = ctx.attr("padding")
    for what, v in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        if v[0] != 1 or v[3] != 1:
            raise errors.UnimplementedError(f"Only support {what} across space.", node=node)

    def kernel(images):
        images = np.asarray(images)
        if images.ndim != 4:
            raise errors.InvalidArgumentError(f"input must be 4-dimensional{list(images.shape)}", node=node)
        try:
            return extract_patches(images, ksizes, strides, rates, padding)
        except ValueError as e:  # a window larger than an image of unknown static size
            raise errors.InvalidArgumentError(str(e), node=node) from None
    return kernel

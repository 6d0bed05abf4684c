"""Resize kernels with TF1's sampling rules (image_resizer_state.h and the
resize_*_op.cc kernels).

The scale of a dimension is in/out, or (in-1)/(out-1) with `align_corners`.
Output pixel i samples input position i*scale (the legacy rule, default),
or (i+0.5)*scale-0.5 with `half_pixel_centers`.

Bilinear, bicubic and area resizes are separable linear maps, so each is a
pair of weight matrices (out x in), one per spatial dimension: the forward
pass is W_h . image . W_w^T and the gradient is the transpose. Bicubic
reads its weights from TF's 1024-entry coefficient table (A = -0.75, or
Keys' -0.5 with half-pixel centers, renormalized at the borders), so it
matches TF's quantized weights rather than the exact cubic. Nearest
neighbour gathers input pixels (keeping the dtype); its gradient sums the
output gradients back into the pixels they came from.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel

_TABLE_SIZE = 1024


def resize_scale(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        return np.float32((in_size - 1) / np.float32(out_size - 1))
    return np.float32(in_size / np.float32(out_size))


def _positions(out_size, scale, half_pixel):
    i = np.arange(out_size, dtype=np.float32)
    if half_pixel:
        return (i + np.float32(0.5)) * scale - np.float32(0.5)
    return i * scale


def bilinear_weights(in_size, out_size, align_corners, half_pixel):
    pos = _positions(out_size, resize_scale(in_size, out_size, align_corners), half_pixel)
    floor = np.floor(pos)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(pos), in_size - 1).astype(np.int64)
    lerp = (pos - floor).astype(np.float64)
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(w, (rows, lower), 1.0 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def _cubic_table(a):
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(np.float32), far.astype(np.float32)


_TABLES = {}


def bicubic_weights(in_size, out_size, align_corners, half_pixel):
    keys = bool(half_pixel)  # TF uses Keys' cubic (A=-0.5) with half-pixel centers
    if keys not in _TABLES:
        _TABLES[keys] = _cubic_table(-0.5 if keys else -0.75)
    near, far = _TABLES[keys]
    pos = _positions(out_size, resize_scale(in_size, out_size, align_corners), half_pixel)
    w = np.zeros((out_size, in_size))
    for o in range(out_size):
        loc = int(np.floor(pos[o]))
        offset = int(np.rint((pos[o] - loc) * _TABLE_SIZE))
        weights = [far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset]]
        taps = [loc - 1, loc, loc + 1, loc + 2]
        bounded = [min(in_size - 1, max(0, t)) for t in taps]
        if keys:
            weights = [wt if b == t else 0.0 for wt, b, t in zip(weights, bounded, taps)]
            total = sum(weights)
            if abs(total) >= 1000 * np.finfo(np.float32).tiny:
                weights = [wt / total for wt in weights]
        for b, wt in zip(bounded, weights):
            w[o, b] += wt
    return w


def area_weights(in_size, out_size, align_corners):
    scale = float(resize_scale(in_size, out_size, align_corners))
    w = np.zeros((out_size, in_size))
    for o in range(out_size):
        lo, hi = o * scale, (o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            if i < lo:
                part = scale if i + 1 > hi else i + 1 - lo
            else:
                part = hi - i if i + 1 > hi else 1.0
            w[o, min(i, in_size - 1)] += part / scale
    return w


def nearest_indices(in_size, out_size, align_corners, half_pixel):
    scale = resize_scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + np.float32(0.5)) * scale if half_pixel else i * scale
    idx = np.floor(pos + np.float32(0.5)) if align_corners else np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel else idx


def _check(images, size, node, op):
    if images.ndim != 4:
        raise errors.InvalidArgumentError(f"input must be 4-dimensional{list(images.shape)}", node=node)
    size = np.asarray(size)
    if size.shape != (2,):
        raise errors.InvalidArgumentError(f"shape_t must be 1-dimensional {list(size.shape)}", node=node)
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise errors.InvalidArgumentError(f"output dimensions must be positive", node=node)
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise errors.InvalidArgumentError(f"input image must be of non-zero size", node=node)
    return out_h, out_w


def _separable(weights_fn, half_pixel=True):
    """`half_pixel`: whether the op has a half_pixel_centers attr (ResizeArea has none)."""
    def factory(ctx):
        node, op = ctx.name, ctx.op_type
        ac, hp = bool(ctx.attr("align_corners")), half_pixel and bool(ctx.attr("half_pixel_centers"))
        if ac and hp:
            raise errors.InvalidArgumentError("If half_pixel_centers is True, align_corners must be False.", node=node)

        def resize(images, size):
            out_h, out_w = _check(images, size, node, op)
            wh = weights_fn(images.shape[1], out_h, ac, hp)
            ww = weights_fn(images.shape[2], out_w, ac, hp)
            out = np.einsum("yi,bijc,xj->byxc", wh, images.astype(np.float64), ww, optimize=True)
            return out.astype(np.float32)
        return resize
    return factory


def _separable_grad(weights_fn):
    def factory(ctx):
        node = ctx.name
        ac, hp = bool(ctx.attr("align_corners")), bool(ctx.attr("half_pixel_centers"))
        out_dtype = ctx.output_dtypes[0].np

        def grad(grads, original):
            in_h, in_w = original.shape[1], original.shape[2]
            if grads.ndim != 4:
                raise errors.InvalidArgumentError(f"input_grad must be 4-dimensional{list(grads.shape)}", node=node)
            wh = weights_fn(in_h, grads.shape[1], ac, hp)
            ww = weights_fn(in_w, grads.shape[2], ac, hp)
            return np.einsum("yi,byxc,xj->bijc", wh, grads.astype(np.float64), ww, optimize=True).astype(out_dtype)
        return grad
    return factory


register_kernel("ResizeBilinear", "CPU", host_memory=("size",))(_separable(bilinear_weights))
register_kernel("ResizeBicubic", "CPU", host_memory=("size",))(_separable(bicubic_weights))
register_kernel("ResizeArea", "CPU", host_memory=("size",))(
    _separable(lambda i, o, ac, hp: area_weights(i, o, ac), half_pixel=False))
register_kernel("ResizeBilinearGrad", "CPU")(_separable_grad(bilinear_weights))
register_kernel("ResizeBicubicGrad", "CPU")(_separable_grad(bicubic_weights))


@register_kernel("ResizeNearestNeighbor", "CPU", host_memory=("size",))
def _nearest(ctx):
    node = ctx.name
    ac, hp = bool(ctx.attr("align_corners")), bool(ctx.attr("half_pixel_centers"))
    if ac and hp:
        raise errors.InvalidArgumentError("If half_pixel_centers is True, align_corners must be False.", node=node)

    def resize(images, size):
        out_h, out_w = _check(images, size, node, "ResizeNearestNeighbor")
        rows = nearest_indices(images.shape[1], out_h, ac, hp)
        cols = nearest_indices(images.shape[2], out_w, ac, hp)
        return images[:, rows][:, :, cols]
    return resize


@register_kernel("ResizeNearestNeighborGrad", "CPU", host_memory=("size",))
def _nearest_grad(ctx):
    node = ctx.name
    ac, hp = bool(ctx.attr("align_corners")), bool(ctx.attr("half_pixel_centers"))

    def grad(grads, size):
        if grads.ndim != 4:
            raise errors.InvalidArgumentError(f"input must be 4-dimensional{list(grads.shape)}", node=node)
        in_h, in_w = int(size[0]), int(size[1])
        rows = nearest_indices(in_h, grads.shape[1], ac, hp)
        cols = nearest_indices(in_w, grads.shape[2], ac, hp)
        out = np.zeros((grads.shape[0], in_h, in_w, grads.shape[3]), dtype=grads.dtype)
        np.add.at(out, (slice(None), rows[:, None], cols[None, :]), grads)
        return out
    return grad

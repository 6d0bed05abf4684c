"""CropAndResize and its gradients with TF's sampling (crop_and_resize_op.cc).

Box b = [y1, x1, y2, x2] (normalized) samples row y of a crop of height
ch at in_y = y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (ch - 1), or at the
box's centre (y1 + y2) / 2 * (H - 1) when ch == 1; columns likewise. A
sample outside [0, H - 1] x [0, W - 1] takes `extrapolation_value`.
Bilinear interpolates the four neighbours, nearest takes the rounded
(half away from zero) one. Positions are float32, as TF computes them.

The image gradient scatters each output gradient back onto the pixels it
read; the boxes gradient differentiates the bilinear sample with respect to
the box corners (TF uses the bilinear formula for nearest as well).
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel

_F = np.float32


def _positions(lo, hi, crop, size):
    """Sample positions along one axis for one box, and whether each is inside the image."""
    idx = np.arange(crop, dtype=_F)
    if crop > 1:
        pos = _F(lo) * _F(size - 1) + idx * ((_F(hi) - _F(lo)) * _F(size - 1) / _F(crop - 1))
    else:
        pos = np.full(crop, _F(0.5) * (_F(lo) + _F(hi)) * _F(size - 1), dtype=_F)
    inside = (pos >= 0) & (pos <= size - 1)
    return pos, inside


def _neighbours(pos, size):
    low = np.clip(np.floor(pos), 0, size - 1).astype(np.int64)
    high = np.clip(np.ceil(pos), 0, size - 1).astype(np.int64)
    return low, high, (pos - np.floor(pos)).astype(_F)


def _nearest(pos, size):
    return np.clip(np.sign(pos) * np.floor(np.abs(pos) + _F(0.5)), 0, size - 1).astype(np.int64)


def _check(image_shape, boxes, box_index, node):
    batch = image_shape[0]
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise errors.InvalidArgumentError(f"boxes must be 2-D [num_boxes, 4]: {list(boxes.shape)}", node=node)
    if box_index.ndim != 1 or box_index.shape[0] != boxes.shape[0]:
        raise errors.InvalidArgumentError(f"box_index has incompatible shape: {list(box_index.shape)}", node=node)
    if np.any((box_index < 0) | (box_index >= batch)):
        raise errors.OutOfRangeError("box_index has values outside [0, batch_size)", node=node)


def _crop_size(crop_size, node):
    crop_size = np.asarray(crop_size)
    if crop_size.shape != (2,):
        raise errors.InvalidArgumentError(f"crop_size must be a 1-D tensor of 2 elements: "
                                          f"{list(crop_size.shape)}", node=node)
    ch, cw = int(crop_size[0]), int(crop_size[1])
    if ch <= 0 or cw <= 0:
        raise errors.InvalidArgumentError("crop dimensions must be positive", node=node)
    return ch, cw


def crop_and_resize(image, boxes, box_index, ch, cw, method, extrapolation):
    _, height, width, depth = image.shape
    out = np.empty((boxes.shape[0], ch, cw, depth), dtype=_F)
    for n, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_index[n]].astype(_F)
        ys, y_in = _positions(y1, y2, ch, height)
        xs, x_in = _positions(x1, x2, cw, width)
        if method == "bilinear":
            top, bottom, ylerp = _neighbours(ys, height)
            left, right, xlerp = _neighbours(xs, width)
            xl = xlerp[None, :, None]
            top_row = img[top][:, left] + (img[top][:, right] - img[top][:, left]) * xl
            bottom_row = img[bottom][:, left] + (img[bottom][:, right] - img[bottom][:, left]) * xl
            crop = top_row + (bottom_row - top_row) * ylerp[:, None, None]
        else:
            crop = img[_nearest(ys, height)][:, _nearest(xs, width)]
        inside = (y_in[:, None] & x_in[None, :])[..., None]
        out[n] = np.where(inside, crop, _F(extrapolation))
    return out


def crop_and_resize_grad_image(grads, boxes, box_index, image_size, method, dtype):
    out = np.zeros(image_size, dtype=np.float64)
    _, height, width, depth = image_size
    _, ch, cw, _ = grads.shape
    for n, (y1, x1, y2, x2) in enumerate(boxes):
        ys, y_in = _positions(y1, y2, ch, height)
        xs, x_in = _positions(x1, x2, cw, width)
        g = grads[n][y_in][:, x_in].astype(np.float64)
        ys, xs = ys[y_in], xs[x_in]
        target = out[box_index[n]]
        if method == "bilinear":
            top, bottom, ylerp = _neighbours(ys, height)
            left, right, xlerp = _neighbours(xs, width)
            yl, xl = ylerp.astype(np.float64)[:, None, None], xlerp.astype(np.float64)[None, :, None]
            for rows, wy in ((top, 1 - yl), (bottom, yl)):
                for cols, wx in ((left, 1 - xl), (right, xl)):
                    np.add.at(target, (rows[:, None], cols[None, :]), g * wy * wx)
        else:
            np.add.at(target, (_nearest(ys, height)[:, None], _nearest(xs, width)[None, :]), g)
    return out.astype(dtype)


def crop_and_resize_grad_boxes(grads, image, boxes, box_index):
    _, height, width, _ = image.shape
    _, ch, cw, _ = grads.shape
    out = np.zeros((boxes.shape[0], 4), dtype=np.float64)
    h_ratio = (height - 1) / (ch - 1) if ch > 1 else 0.0
    w_ratio = (width - 1) / (cw - 1) if cw > 1 else 0.0
    for n, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_index[n]].astype(np.float64)
        ys, y_in = _positions(y1, y2, ch, height)
        xs, x_in = _positions(x1, x2, cw, width)
        rows, cols = np.nonzero(y_in)[0], np.nonzero(x_in)[0]
        if not rows.size or not cols.size:
            continue
        top, bottom, ylerp = _neighbours(ys[rows], height)
        left, right, xlerp = _neighbours(xs[cols], width)
        yl, xl = ylerp.astype(np.float64)[:, None, None], xlerp.astype(np.float64)[None, :, None]
        tl, tr = img[top][:, left], img[top][:, right]
        bl, br = img[bottom][:, left], img[bottom][:, right]
        g = grads[n][rows][:, cols].astype(np.float64)
        dy = (g * ((1 - xl) * (bl - tl) + xl * (br - tr))).sum(axis=(1, 2))
        dx = (g * ((1 - yl) * (tr - tl) + yl * (br - bl))).sum(axis=(0, 2))
        if ch > 1:
            out[n, 0] += (dy * (height - 1 - rows * h_ratio)).sum()
            out[n, 2] += (dy * (rows * h_ratio)).sum()
        else:
            out[n, 0] += dy.sum() * 0.5 * (height - 1)
            out[n, 2] += dy.sum() * 0.5 * (height - 1)
        if cw > 1:
            out[n, 1] += (dx * (width - 1 - cols * w_ratio)).sum()
            out[n, 3] += (dx * (cols * w_ratio)).sum()
        else:
            out[n, 1] += dx.sum() * 0.5 * (width - 1)
            out[n, 3] += dx.sum() * 0.5 * (width - 1)
    return out.astype(_F)


def _method(ctx, node):
    method = ctx.attr("method")
    if method not in ("bilinear", "nearest"):
        raise errors.InvalidArgumentError("method must be 'bilinear' or 'nearest'", node=node)
    return method


def _check_image(image, node):
    if image.ndim != 4:
        raise errors.InvalidArgumentError(f"input image must be 4-D{list(image.shape)}", node=node)
    if image.shape[1] <= 0 or image.shape[2] <= 0:
        raise errors.InvalidArgumentError("image dimensions must be positive", node=node)


@register_kernel("CropAndResize", ("CPU",), host_memory=("crop_size",), fresh_outputs=True)
def _crop_and_resize(ctx):
    node = ctx.name
    method = _method(ctx, node)
    extrapolation = float(ctx.attr("extrapolation_value"))

    def kernel(image, boxes, box_index, crop_size):
        image, boxes, box_index = np.asarray(image), np.asarray(boxes), np.asarray(box_index)
        _check_image(image, node)
        _check(image.shape, boxes, box_index, node)
        ch, cw = _crop_size(crop_size, node)
        return crop_and_resize(image, boxes, box_index, ch, cw, method, extrapolation)
    return kernel


@register_kernel("CropAndResizeGradImage", ("CPU",), host_memory=("image_size",), fresh_outputs=True)
def _crop_and_resize_grad_image(ctx):
    node = ctx.name
    method = _method(ctx, node)
    dtype = ctx.output_dtypes[0].np

    def kernel(grads, boxes, box_index, image_size):
        image_size = tuple(int(d) for d in np.asarray(image_size))
        if len(image_size) != 4:
            raise errors.InvalidArgumentError("image_size must be 1-D with 4 elements", node=node)
        if image_size[1] <= 0 or image_size[2] <= 0:
            raise errors.InvalidArgumentError("image dimensions must be positive", node=node)
        grads, boxes, box_index = np.asarray(grads), np.asarray(boxes), np.asarray(box_index)
        _check(image_size, boxes, box_index, node)
        if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != image_size[3]:
            raise errors.InvalidArgumentError("image_size and grads are incompatible", node=node)
        return crop_and_resize_grad_image(grads, boxes, box_index, image_size, method, dtype)
    return kernel


@register_kernel("CropAndResizeGradBoxes", ("CPU",), fresh_outputs=True)
def _crop_and_resize_grad_boxes(ctx):
    node = ctx.name

    def kernel(grads, image, boxes, box_index):
        grads, image, boxes, box_index = (np.asarray(a) for a in (grads, image, boxes, box_index))
        _check_image(image, node)
        _check(image.shape, boxes, box_index, node)
        if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != image.shape[3]:
            raise errors.InvalidArgumentError("image, boxes and grads are incompatible", node=node)
        return crop_and_resize_grad_boxes(grads, image, boxes, box_index)
    return kernel

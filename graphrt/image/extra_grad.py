"""Gradients TF registers for the extra image ops: CropAndResize (image
through CropAndResizeGradImage for float images, boxes through
CropAndResizeGradBoxes always), RGBToHSV (TF's piecewise formula, with
div_no_nan reciprocals) and ExtractImagePatches (patches of an index image,
summed back with unsorted_segment_sum, as array_grad.py builds it)."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, constant
from ..framework.registry import register_gradient
from ..ops import array_ops, math_ops
from ..ops.extra_ops import div_no_nan


@register_gradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind, _ = op.inputs
    grad_image = None
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        if image.shape.is_fully_defined():
            size = constant(image.shape.as_list(), dtype=dtypes.int32)
        else:
            size = array_ops.shape(image)
        grad_image = apply_op("CropAndResizeGradImage", [grad, boxes, box_ind, size], name="CropAndResizeGradImage",
                              T=image.dtype.base_dtype, method=op.get_attr("method")).outputs[0]
    grad_boxes = apply_op("CropAndResizeGradBoxes", [grad, image, boxes, box_ind],
                          name="CropAndResizeGradBoxes").outputs[0]
    return [grad_image, grad_boxes, None, None]


def _reciprocal(x):
    return div_no_nan(math_ops.cast(1.0, x.dtype), x)


@register_gradient("RGBToHSV")
def _rgb_to_hsv_grad(op, grad):
    dtype = op.inputs[0].dtype.base_dtype
    rgb = [op.inputs[0][..., i] for i in range(3)]
    saturation, value = op.outputs[0][..., 1], op.outputs[0][..., 2]

    def cast(x):
        return math_ops.cast(x, dtype)

    r, g, b = rgb
    # which channel is max / min, ties resolved R > G > B as TF resolves them
    biggest = [cast((r >= b) & (r >= g)), cast((g > r) & (g >= b)), cast((b > r) & (b > g))]
    smallest = [cast((r < b) & (r < g)), cast((g <= r) & (g < b)), cast((b <= r) & (b <= g))]
    positive = [cast(c > 0) for c in rgb]
    sv = _reciprocal(math_ops.square(saturation)) * _reciprocal(math_ops.square(value))
    ds, dh = [], []
    # TF's formulas are the same for each channel up to the cyclic order (i, j, k) = (r, g, b), (g, b, r), ...
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        xi, xj, xk = rgb[i], rgb[j], rgb[k]
        ds.append(positive[i] * (
            biggest[i] * (smallest[j] * xj + smallest[k] * xk) * _reciprocal(math_ops.square(xi))
            + smallest[i] * -1 * _reciprocal(biggest[j] * xj + biggest[k] * xk)))
        terms = (
            positive[i] * biggest[i] * -1 * (xj - xk) * sv,
            positive[j] * biggest[j] * smallest[i] * (xk - xj) * _reciprocal(math_ops.square(xi - xj)),
            positive[j] * biggest[j] * smallest[k] * -1 * _reciprocal(xj - xk),
            positive[k] * biggest[k] * smallest[i] * (xk - xj) * _reciprocal(math_ops.square(xk - xi)),
            positive[k] * biggest[k] * smallest[j] * _reciprocal(xk - xj),
        )
        total = 60 * terms[0]
        for t in terms[1:]:
            total = total + 60 * t
        dh.append(total / 360)
    parts = [array_ops.stack([grad[..., c] * d[i] for i in range(3)], axis=-1)
             for c, d in ((2, biggest), (1, ds), (0, dh))]
    return [math_ops.add(math_ops.add(parts[0], parts[1]), parts[2])]


@register_gradient("ExtractImagePatches")
def _extract_image_patches_grad(op, grad):
    g = get_default_graph()
    shape_in = array_ops.shape(op.inputs[0], out_type=dtypes.int64)
    batch, rows_in, cols_in, channels = array_ops.unstack(shape_in)
    shape_out = array_ops.shape(op.outputs[0], out_type=dtypes.int64)
    rows_out, cols_out = array_ops.unstack(shape_out[1:3])
    _, ksize_r, ksize_c, _ = op.get_attr("ksizes")
    num = rows_in * cols_in
    # 1-based pixel numbers, so the zeros of the padding become segment -1 and drop out of the sum
    index = array_ops.reshape(math_ops.range(1, num + 1, dtype=dtypes.float32), array_ops.stack([1, rows_in, cols_in,
                                                                                                1]))
    with g.name_scope("ExtractImagePatches"):
        patched = apply_op("ExtractImagePatches", [index], ksizes=op.get_attr("ksizes"),
                           strides=op.get_attr("strides"), rates=op.get_attr("rates"),
                           padding=op.get_attr("padding"), name="ExtractImagePatches").outputs[0]
    patched = math_ops.cast(patched, dtypes.int64)
    expanded = array_ops.transpose(
        array_ops.reshape(grad, array_ops.stack([batch, rows_out, cols_out, ksize_r, ksize_c, channels])),
        [1, 2, 3, 4, 0, 5])
    flat = array_ops.reshape(expanded, array_ops.stack([-1, batch * channels]))
    segments = array_ops.reshape(patched, [-1]) - 1
    summed = array_ops.unsorted_segment_sum(flat, segments, num)
    summed = array_ops.reshape(summed, array_ops.stack([rows_in, cols_in, batch, channels]))
    return [array_ops.transpose(summed, [2, 0, 1, 3])]

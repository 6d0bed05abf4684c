"""Gradients of the resizes, as TF registers them (image_grad.py): bilinear and
bicubic through their *Grad ops, nearest neighbour by summing into the source
pixels; none for the size input, and none for ResizeArea (TF has none)."""
from ..framework.graph import get_default_graph
from ..framework.registry import register_gradient
from ..ops import array_ops


def _attrs(op):
    return {"align_corners": op.get_attr("align_corners"), "half_pixel_centers": op.get_attr("half_pixel_centers")}


def _grad_op(op_type, inputs, attrs, name):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        return g.create_op(op_type, inputs, attrs, name=scope).outputs[0]


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    image = op.inputs[0]
    attrs = dict(_attrs(op), T=image.dtype.base_dtype)
    return [_grad_op("ResizeBilinearGrad", [grad, image], attrs, "ResizeBilinearGrad"), None]


@register_gradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    image = op.inputs[0]
    attrs = dict(_attrs(op), T=image.dtype.base_dtype)
    return [_grad_op("ResizeBicubicGrad", [grad, image], attrs, "ResizeBicubicGrad"), None]


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_grad(op, grad):
    image = op.inputs[0]
    if image.shape[1:3].is_fully_defined():
        from ..framework.op_builder import constant
        size = constant(image.shape[1:3].as_list(), name="size")
    else:
        size = array_ops.shape(image)[1:3]
    attrs = dict(_attrs(op), T=grad.dtype.base_dtype)
    return [_grad_op("ResizeNearestNeighborGrad", [grad, size], attrs, "ResizeNearestNeighborGrad"), None]

"""Gradients of DepthwiseConv2dNative: its two backprop ops, as TF's."""
from ..framework.op_builder import apply_op
from ..framework.registry import register_gradient
from ..ops.nn_grad import _shape_of


def _attrs(op):
    return {k: op.get_attr(k) for k in ("strides", "padding", "data_format", "dilations")}


@register_gradient("DepthwiseConv2dNative")
def _depthwise_grad(op, grad):
    x, f = op.inputs
    attrs = _attrs(op)
    return [apply_op("DepthwiseConv2dNativeBackpropInput", [_shape_of(x), f, grad], **attrs).outputs[0],
            apply_op("DepthwiseConv2dNativeBackpropFilter", [x, _shape_of(f), grad], **attrs).outputs[0]]

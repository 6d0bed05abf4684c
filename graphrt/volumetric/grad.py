"""Gradients of the 3-D convolution and pooling ops, MaxPoolWithArgmax and
Dilation2D, as TF's nn_grad.py defines them."""
from ..framework.op_builder import apply_op
from ..framework.registry import register_gradient
from ..ops import array_ops
from ..ops.nn_grad import _shape_of


def _attrs(op, names):
    return {k: op.get_attr(k) for k in names}


def _conv(op):
    return _attrs(op, ("strides", "padding", "data_format", "dilations"))


def _pool(op):
    return _attrs(op, ("ksize", "strides", "padding", "data_format"))


@register_gradient("Conv3D")
def _conv3d_grad(op, grad):
    x, f = op.inputs
    return [apply_op("Conv3DBackpropInputV2", [_shape_of(x), f, grad], **_conv(op)).outputs[0],
            apply_op("Conv3DBackpropFilterV2", [x, _shape_of(f), grad], **_conv(op)).outputs[0]]


@register_gradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    return [None,
            apply_op("Conv3DBackpropFilterV2", [grad, _shape_of(f), dy], **_conv(op)).outputs[0],
            apply_op("Conv3D", [grad, f], **_conv(op)).outputs[0]]


@register_gradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    return [apply_op("Conv3DBackpropInputV2", [_shape_of(x), grad, dy], **_conv(op)).outputs[0],
            None,
            apply_op("Conv3D", [x, grad], **_conv(op)).outputs[0]]


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    return [apply_op("AvgPool3DGrad", [_shape_of(op.inputs[0]), grad], **_pool(op)).outputs[0]]


@register_gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op, grad):
    return [array_ops.stop_gradient(op.inputs[0]), apply_op("AvgPool3D", [grad], **_pool(op)).outputs[0]]


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    return [apply_op("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], **_pool(op)).outputs[0]]


@register_gradient("MaxPool3DGrad")
def _max_pool3d_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPool3DGradGrad", [x, y, grad], **_pool(op)).outputs[0]]


@register_gradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPool3DGrad", [x, y, grad], **_pool(op)).outputs[0]]


@register_gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, _argmax_grad):
    attrs = _attrs(op, ("ksize", "strides", "padding", "include_batch_in_index"))
    return [apply_op("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], **attrs).outputs[0]]


@register_gradient("Dilation2D")
def _dilation2d_grad(op, grad):
    x, f = op.inputs
    attrs = _attrs(op, ("strides", "rates", "padding"))
    return [apply_op("Dilation2DBackpropInput", [x, f, grad], **attrs).outputs[0],
            apply_op("Dilation2DBackpropFilter", [x, f, grad], **attrs).outputs[0]]

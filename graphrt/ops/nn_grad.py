"""Gradients of the nn ops (formulas as in TF's nn_grad.py).

Shape arguments of the backprop ops (input_sizes, filter_sizes,
orig_input_shape) are constants when the static shape is fully known and a
Shape op otherwise, so a graph with known shapes runs no Shape ops.
"""
from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_gradient
from . import array_ops, math_ops


not_differentiable("InTopKV2")


def _shape_of(x):
    if x.shape.is_fully_defined():
        return x.shape.as_list()
    return array_ops.shape(x)


def _is_zero(t):
    """TF's IsZero: a gradient known to be all zeros (None, ZerosLike, or a zero constant)."""
    if t is None:
        return True
    if t.op.type in ("ZerosLike", "Zeros"):
        return True
    value = constant_value(t)
    return value is not None and not value.any()


def _broadcast_mul(vec, mat):
    """vec[..., None] * mat (TF's _BroadcastMul)."""
    return array_ops.expand_dims(vec, -1) * mat


# -- activations ----------------------------------------------------------------------

@register_gradient("Relu")
def _relu_grad(op, grad):
    return [apply_op("ReluGrad", [grad, op.outputs[0]]).outputs[0]]


@register_gradient("Relu6")
def _relu6_grad(op, grad):
    return [apply_op("Relu6Grad", [grad, op.outputs[0]]).outputs[0]]


@register_gradient("Elu")
def _elu_grad(op, grad):
    return [apply_op("EluGrad", [grad, op.outputs[0]]).outputs[0]]


@register_gradient("Selu")
def _selu_grad(op, grad):
    return [apply_op("SeluGrad", [grad, op.outputs[0]]).outputs[0]]


@register_gradient("Softplus")
def _softplus_grad(op, grad):
    return [apply_op("SoftplusGrad", [grad, op.inputs[0]]).outputs[0]]


@register_gradient("Softsign")
def _softsign_grad(op, grad):
    return [apply_op("SoftsignGrad", [grad, op.inputs[0]]).outputs[0]]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [apply_op("LeakyReluGrad", [grad, op.inputs[0]], alpha=op.get_attr("alpha")).outputs[0]]


@register_gradient("ReluGrad")
def _relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("ReluGrad", [grad, x]).outputs[0], array_ops.zeros_like(x)]


@register_gradient("Relu6Grad")
def _relu6_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("Relu6Grad", [grad, x]).outputs[0], array_ops.zeros_like(x)]


@register_gradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("LeakyReluGrad", [grad, x], alpha=op.get_attr("alpha")).outputs[0],
            array_ops.zeros_like(x)]


@register_gradient("EluGrad")
def _elu_grad_grad(op, grad):
    elu_x = op.inputs[1]
    return [apply_op("EluGrad", [grad, elu_x]).outputs[0],
            math_ops.where(elu_x < 0, grad * op.inputs[0], array_ops.zeros_like(elu_x))]


@register_gradient("SeluGrad")
def _selu_grad_grad(op, grad):
    selu_x = op.inputs[1]
    return [apply_op("SeluGrad", [grad, selu_x]).outputs[0],
            math_ops.where(selu_x < 0, grad * op.inputs[0], array_ops.zeros_like(selu_x))]


@register_gradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    dy, x = op.inputs
    ddy = apply_op("SoftplusGrad", [grad, x]).outputs[0]
    d2x = grad * dy / (math_ops.exp(-x) + 2.0 + math_ops.exp(x))
    return [ddy, d2x]


# -- softmax and losses ------------------------------------------------------------------

@register_gradient("Softmax")
def _softmax_grad(op, grad):
    softmax = op.outputs[0]
    sum_channels = math_ops.reduce_sum(grad * softmax, -1, keepdims=True)
    return [(grad - sum_channels) * softmax]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    softmax = math_ops.exp(op.outputs[0])
    return [grad - math_ops.reduce_sum(grad, -1, keepdims=True) * softmax]


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_grad):
    """d loss/d logits is the backprop output (softmax - labels); d loss/d labels = -log_softmax."""
    from .nn_ops import log_softmax, softmax
    softmax_grad = op.outputs[1]
    grad = _broadcast_mul(grad_loss, softmax_grad)
    logits = op.inputs[0]
    if not _is_zero(grad_grad):
        sm = softmax(logits)
        grad += (grad_grad - math_ops.reduce_sum(grad_grad * sm, -1, keepdims=True)) * sm
    return [grad, _broadcast_mul(grad_loss, -log_softmax(logits))]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_grad):
    """d loss/d logits is the backprop output; its own gradient is softmax's (TF 2's rule)."""
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    logits = op.inputs[0]
    if not _is_zero(grad_grad):
        sm = apply_op("Softmax", [logits]).outputs[0]
        grad += (grad_grad - array_ops.squeeze(
            math_ops.matmul(array_ops.expand_dims(grad_grad, 1), array_ops.expand_dims(sm, 2)), axis=1)) * sm
    return [grad, None]


@register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    fmt = op.get_attr("data_format")
    return [grad, apply_op("BiasAddGrad", [grad], data_format=fmt).outputs[0]]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    # BiasAddGrad sums over all but the last axis; its adjoint broadcasts back
    dy = op.inputs[0]
    return [apply_op("BiasAdd", [array_ops.zeros_like(dy), grad], data_format=op.get_attr("data_format")).outputs[0]]


# -- convolution -------------------------------------------------------------------------------

def _conv_attrs(op):
    return {k: op.get_attr(k) for k in ("strides", "padding", "use_cudnn_on_gpu", "data_format", "dilations")}


@register_gradient("Conv2D")
def _conv2d_grad(op, grad):
    x, f = op.inputs
    attrs = _conv_attrs(op)
    return [apply_op("Conv2DBackpropInput", [_shape_of(x), f, grad], **attrs).outputs[0],
            apply_op("Conv2DBackpropFilter", [x, _shape_of(f), grad], **attrs).outputs[0]]


@register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    attrs = _conv_attrs(op)
    return [None,
            apply_op("Conv2DBackpropFilter", [grad, _shape_of(f), dy], **attrs).outputs[0],
            apply_op("Conv2D", [grad, f], **attrs).outputs[0]]


@register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _conv_attrs(op)
    return [apply_op("Conv2DBackpropInput", [_shape_of(x), grad, dy], **attrs).outputs[0],
            None,
            apply_op("Conv2D", [x, grad], **attrs).outputs[0]]


# -- pooling ---------------------------------------------------------------------------------------

def _pool_attrs(op):
    return {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


@register_gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], **_pool_attrs(op)).outputs[0]]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGradGrad", [x, y, grad], **_pool_attrs(op)).outputs[0]]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGrad", [x, y, grad], **_pool_attrs(op)).outputs[0]]


@register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [apply_op("AvgPoolGrad", [_shape_of(op.inputs[0]), grad], **_pool_attrs(op)).outputs[0]]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, apply_op("AvgPool", [grad], **_pool_attrs(op)).outputs[0]]


@register_gradient("TopKV2")
def _top_k_grad(op, grad, _indices_grad):
    """Each value's gradient goes back to the position it was taken from."""
    x, indices = op.inputs[0], op.outputs[1]
    depth = x.shape[-1] if x.shape.ndims is not None else None
    if depth is None:
        depth = array_ops.gather(array_ops.shape(x), array_ops.rank(x) - 1)
    onehot = array_ops.one_hot(indices, depth, dtype=grad.dtype.base_dtype)  # [..., k, n]
    return [math_ops.reduce_sum(onehot * array_ops.expand_dims(grad, -1), -2), None]


@register_gradient("LRN")
def _lrn_grad(op, grad):
    attrs = {k: op.get_attr(k) for k in ("depth_radius", "bias", "alpha", "beta")}
    return [apply_op("LRNGrad", [grad, op.inputs[0], op.outputs[0]], **attrs).outputs[0]]


def _fused_batch_norm_grad(op, *grads):
    """TF's FusedBatchNormGrad, from ordinary ops: only y's gradient counts (as in TF), and the
    statistics the forward pass used are its reserve spaces 1 and 2 (mean, biased variance)."""
    x, scale = op.inputs[0], op.inputs[1]
    dy = grads[0]
    eps = op.get_attr("epsilon")
    channels_first = op.get_attr("data_format").startswith("NC")
    if channels_first:
        x, dy = array_ops.transpose(x, [0, 2, 3, 1]), array_ops.transpose(dy, [0, 2, 3, 1])
    half = x.dtype.base_dtype.name == "float16"
    if half:
        x, dy = math_ops.cast(x, scale.dtype.base_dtype), math_ops.cast(dy, scale.dtype.base_dtype)
    axes = [0, 1, 2]
    mean, variance = op.outputs[3], op.outputs[4]
    inv = math_ops.rsqrt(variance + eps)
    xhat = (x - mean) * inv
    d_offset = math_ops.reduce_sum(dy, axes)
    d_scale = math_ops.reduce_sum(dy * xhat, axes)
    if op.get_attr("is_training"):
        count = math_ops.cast(array_ops.size(x) // array_ops.size(mean), x.dtype.base_dtype)
        dx = scale * inv / count * (count * dy - d_offset - xhat * d_scale)
    else:
        dx = dy * scale * inv
    if half:
        dx = math_ops.cast(dx, dtypes.float16)
    if channels_first:
        dx = array_ops.transpose(dx, [0, 3, 1, 2])
    return [dx, d_scale, d_offset, None, None]


for _name in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    register_gradient(_name)(_fused_batch_norm_grad)

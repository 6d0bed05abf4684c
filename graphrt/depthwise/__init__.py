"""Depthwise and separable convolutions: `tf.nn.depthwise_conv2d(_native)`,
`tf.nn.separable_conv2d` and `tf.layers.separable_conv2d`, with the
DepthwiseConv2dNative op, its kernels and gradients (NHWC, rate 1)."""
from . import ops, kernels, grad  # noqa: F401 - registers the ops, kernels and gradients
from .ops import depthwise_conv2d, depthwise_conv2d_native, separable_conv2d  # noqa: F401

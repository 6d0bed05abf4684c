"""3-D convolution and pooling (`tf.nn.conv3d`, `conv3d_transpose`,
`conv3d_backprop_filter(_v2)`, `max_pool3d`, `avg_pool3d`, NDHWC), max pooling
with argmax (`tf.nn.max_pool_with_argmax`, the indices SegNet-style unpooling
scatters to) and grayscale morphology (`tf.nn.dilation2d`, `erosion2d`): TF's
ops, numpy kernels and gradients. `layers.py` holds the `tf.layers` 3-D
convolution and pooling layers (loaded on first use by graphrt/layers.py)."""
from . import grad as _grad, kernels as _kernels  # noqa: F401 - registers kernels and gradients
from .ops import (avg_pool3d, conv3d, conv3d_backprop_filter, conv3d_backprop_filter_v2,  # noqa: F401
                  conv3d_transpose, dilation2d, erosion2d, max_pool3d, max_pool_with_argmax)

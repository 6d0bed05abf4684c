"""`tf.TensorArray`: the op declarations, their kernels and gradients, and
the Python class that builds them. Importing this package registers them."""
from . import ops, kernels, grad  # noqa: F401
from .tensor_array import TensorArray  # noqa: F401

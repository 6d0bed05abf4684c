"""`tf.manip` (TF1): the array manipulations under their other namespace."""
from .ops.array_ops import batch_to_space_nd, reshape, reverse, roll, space_to_batch_nd, tile  # noqa: F401
from .ops.extra_ops import gather_nd, scatter_nd  # noqa: F401

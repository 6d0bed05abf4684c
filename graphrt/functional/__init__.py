"""TF1's higher-order functions over the first dimension of tensors:
`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`.

Each is built as TensorFlow builds it (functional_ops.py, map_fn.py): the
elements are unstacked into TensorArrays, one `while_loop` calls `fn` per
element, and per-element results are written into TensorArrays stacked
after the loop. So their gradients are those of while_loop and TensorArray,
and they run across devices as any loop does.
"""
from .functional_ops import foldl, foldr, scan  # noqa: F401
from .map_fn import map_fn  # noqa: F401

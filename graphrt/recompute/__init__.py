"""Activation recomputation: `tf.gradients(..., checkpoints=...)` and
`tf.recompute_grad(fn)` (also `tf.contrib.layers.recompute_grad`).

    copy.py            copies a forward segment whose copies wait for their gradient
    checkpoints.py     gradients segment by segment between checkpoints; the sqrt(n) choice
    recompute_grad.py  a function whose activations are recomputed in the backward pass
"""
from .checkpoints import COLLECTION, gradients_with_checkpoints, separators, sqrt_checkpoints  # noqa: F401
from .recompute_grad import recompute_grad  # noqa: F401

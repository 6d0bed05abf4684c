"""Gradient buckets (PyTorch DDP): many small all-reduces become a few large ones.

Gradients are taken in reverse order of their variables' creation (the
last layer's gradient is ready first in backprop, so its bucket can be
reduced while earlier layers still compute). A bucket closes once it holds
at least `bucket_bytes`; a gradient never straddles two buckets, and a
dtype change starts a new bucket. `bucket_bytes=0` gives one bucket per
variable. Each bucket is flattened and concatenated on every replica,
all-reduced once, then split back and reshaped on every replica.
"""
import collections

import numpy as np

from ..ops import array_ops

Bucket = collections.namedtuple("Bucket", "indices nbytes")
Bucket.__doc__ = "Positions (into the variable list) of the gradients fused into one all-reduce, and their bytes."


def plan_buckets(shapes_and_dtypes, bucket_bytes):
    """Buckets over variables 0..n-1 given as (shape list, DType), in reverse order."""
    buckets, current, size, dtype = [], [], 0, None
    for i in reversed(range(len(shapes_and_dtypes))):
        shape, dt = shapes_and_dtypes[i]
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.size
        if current and (dt != dtype or size >= bucket_bytes):
            buckets.append(Bucket(tuple(current), size))
            current, size = [], 0
        current.append(i)
        size += nbytes
        dtype = dt
    if current:
        buckets.append(Bucket(tuple(current), size))
    return buckets


def fuse(tensors, name):
    """The tensors of one replica flattened into one (on the current device); a lone
    tensor is passed on as is, through an Identity named `name` (it shares the buffer)."""
    if len(tensors) == 1:
        return array_ops.identity(tensors[0], name=name)
    return array_ops.concat([array_ops.reshape(t, [-1]) for t in tensors], 0, name=name)


def unfuse(flat, like, name):
    """Cuts a fused tensor back into tensors shaped like `like` (on the current device)."""
    if len(like) == 1:
        return [flat]
    sizes = [int(np.prod(t.shape.as_list(), dtype=np.int64)) for t in like]
    pieces = array_ops.split(flat, sizes, axis=0, name=name)
    return [array_ops.reshape(p, t.shape.as_list()) for p, t in zip(pieces, like)]

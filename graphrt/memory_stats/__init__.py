"""Device memory as ops (TF's `tf.contrib.memory_stats`): what a device's
allocator holds when the op runs.

    with tf.device("/device:SIM:0"):
        peak = tf.memory_stats.max_bytes_in_use()      # or tf.contrib.memory_stats.MaxBytesInUse()
    sess.run(train); sess.run(peak)

`max_bytes_in_use` is the allocator's high-water mark since it was created
(or its stats were cleared), `bytes_in_use` what live tensors hold now, and
`bytes_limit` the arena size. Each reads the allocator of the device the op
is placed on: SIM and GPU devices have one; CPU tensors are numpy arrays
that no graphrt allocator hands out, so the ops fail there with
FailedPreconditionError. Per step figures are in RunMetadata.step_stats
(`DeviceStepStats.memory`, and `NodeExecStats.memory` per kernel).
"""
import contextlib

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.registry import register_kernel, register_op
from ..ops import shape_fns

_OPS = {"BytesInUse": "bytes_in_use", "MaxBytesInUse": "peak_bytes_in_use", "BytesLimit": "bytes_limit"}

for _op in _OPS:
    register_op(_op, [], ["out: int64"], shape_fn=shape_fns.scalar, is_stateful=True)


def _kernel_factory(op_type):
    field = _OPS[op_type]

    def factory(ctx):
        device = ctx.device
        stats_fn = getattr(device, "allocator_stats", None)
        name = getattr(device, "name", device)

        def kernel():
            if stats_fn is None:
                raise errors.FailedPreconditionError(
                    f"{op_type} '{ctx.name}' on {name}: tensors of this device are host arrays that no graphrt "
                    "allocator hands out, so it has no memory counters; place the op on a SIM or GPU device",
                    node=ctx.name, device=name)
            return np.asarray(getattr(stats_fn(), field) or 0, dtype=np.int64)
        return kernel
    return factory


for _op in _OPS:
    register_kernel(_op, ("CPU", "GPU"), host_memory=("out",), inexpensive=True)(_kernel_factory(_op))


def _make(op_type, device, name):
    g = get_default_graph()
    with g.device(device) if device is not None else contextlib.nullcontext():
        return g.create_op(op_type, [], {}, name=name or op_type).outputs[0]


def bytes_in_use(device=None, name=None):
    """int64 scalar: bytes the device's allocator holds when the op runs."""
    return _make("BytesInUse", device, name)


def max_bytes_in_use(device=None, name=None):
    """int64 scalar: the device allocator's peak bytes in use so far."""
    return _make("MaxBytesInUse", device, name)


def bytes_limit(device=None, name=None):
    """int64 scalar: the most the device's allocator can hand out (its arena)."""
    return _make("BytesLimit", device, name)


# TF's spellings (tf.contrib.memory_stats)
BytesInUse = bytes_in_use
MaxBytesInUse = max_bytes_in_use
BytesLimit = bytes_limit

__all__ = ["BytesInUse", "BytesLimit", "MaxBytesInUse", "bytes_in_use", "bytes_limit", "max_bytes_in_use"]

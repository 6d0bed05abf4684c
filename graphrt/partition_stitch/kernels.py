"""Host kernels of DynamicPartition and the stitches, with TF's checks and messages."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel


def _shape(a):
    return "[" + ",".join(str(d) for d in a.shape) + "]"


@register_kernel("DynamicPartition", ("CPU",), host_only=True)
def _dynamic_partition(ctx):
    n, name = ctx.attr("num_partitions"), ctx.name

    def partition(data, partitions):
        data, partitions = np.asarray(data), np.asarray(partitions)
        if data.shape[:partitions.ndim] != partitions.shape:
            raise errors.InvalidArgumentError(
                f"data.shape must start with partitions.shape, got data.shape = {_shape(data)}, "
                f"partitions.shape = {_shape(partitions)}", node=name)
        flat = partitions.reshape(-1)
        bad = np.flatnonzero((flat < 0) | (flat >= n))
        if bad.size:
            i = int(bad[0])
            at = ",".join(str(int(k)) for k in np.unravel_index(i, partitions.shape)) if partitions.ndim else ""
            raise errors.InvalidArgumentError(f"partitions[{at}] = {int(flat[i])} is not in [0, {n})", node=name)
        rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
        return tuple(rows[flat == p].copy() for p in range(n))
    return partition


def _stitch_kernel(ctx):
    name = ctx.name

    def stitch(*args):
        k = len(args) // 2
        indices = [np.asarray(i) for i in args[:k]]
        data = [np.asarray(d) for d in args[k:]]
        first = 1 + max((int(i.max()) for i in indices if i.size), default=-1)
        rest = data[0].shape[indices[0].ndim:]
        for m, (idx, d) in enumerate(zip(indices, data)):
            if d.shape[:idx.ndim] != idx.shape:
                raise errors.InvalidArgumentError(
                    f"data[{m}].shape = {_shape(d)} does not start with indices[{m}].shape = {_shape(idx)}",
                    node=name)
            if m and d.shape[idx.ndim:] != rest:
                raise errors.InvalidArgumentError(
                    f"Need data[0].shape[{indices[0].ndim}:] = [{','.join(map(str, rest))}], got "
                    f"data[{m}].shape = {_shape(d)}", node=name)
        out = np.zeros((first,) + rest, dtype=data[0].dtype)
        for idx, d in zip(indices, data):
            flat = idx.reshape(-1)
            bad = np.flatnonzero((flat < 0) | (flat >= first))
            if bad.size:
                raise errors.InvalidArgumentError(f"indices[{int(bad[0])}] is out of range", node=name)
            out[flat] = d.reshape((flat.size,) + rest)  # numpy assigns in order: the last repeat wins
        return out
    return stitch


for _op_type in ("DynamicStitch", "ParallelDynamicStitch"):
    register_kernel(_op_type, ("CPU",), host_only=True, fresh_outputs=True)(_stitch_kernel)

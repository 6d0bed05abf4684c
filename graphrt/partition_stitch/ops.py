"""Declarations and the TF1 API of DynamicPartition, DynamicStitch and
ParallelDynamicStitch (TF's data_flow_ops): op names, attrs and shape
functions as TF's."""
from ..framework.op_builder import apply_op
from ..framework.registry import register_op
from ..framework.tensor_shape import Dimension, TensorShape


def _merge_prefix(data, prefix):
    """data's leading dims merged with `prefix` (TF's MergePrefix), with TF's message on a mismatch."""
    if data.ndims is not None and data.ndims < prefix.ndims:
        raise ValueError(f"Shape must be at least rank {prefix.ndims} but is rank {data.ndims}")
    if data.ndims is None:
        return
    for a, b in zip(data.dims, prefix.dims):
        if a.value is not None and b.value is not None and a.value != b.value:
            raise ValueError(f"Dimensions must be equal, but are {a.value} and {b.value}")


def _merge(a, b):
    """TF's shape Merge, with its message."""
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    dims = []
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if x.value is not None and y.value is not None and x.value != y.value:
            raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x.value} and {y.value}. "
                             f"Shapes are {a.short()} and {b.short()}.")
        dims.append(x.value if x.value is not None else y.value)
    return TensorShape(dims)


def _partition_shape(ctx):
    data, partitions = ctx.shape(0), ctx.shape(1)
    n = ctx.attr("num_partitions")
    if partitions.ndims is None:
        return [TensorShape(None)] * n
    _merge_prefix(data, partitions)
    if data.ndims is None:
        return [TensorShape(None)] * n
    return [TensorShape([None] + data.dims[partitions.ndims:])] * n


def _stitch_shape(ctx):
    n = ctx.attr("N")
    max_index, all_constant, extra = -1, True, TensorShape(None)
    for i in range(n):
        value = ctx.constant(i)
        if value is None:
            all_constant = False
        indices, data = ctx.shape(i), ctx.shape(i + n)
        if indices.ndims is None:
            continue
        _merge_prefix(data, indices)
        rest = TensorShape(None) if data.ndims is None else TensorShape(data.dims[indices.ndims:])
        extra = _merge(extra, rest)
        if value is not None and value.size:
            max_index = max(max_index, int(value.max()))
    first = Dimension(max_index + 1 if all_constant else None)
    if extra.ndims is None:
        return TensorShape(None)
    return TensorShape([first] + extra.dims)


register_op("DynamicPartition", ["data: T", "partitions: int32"], ["outputs: num_partitions * T"],
            shape_fn=_partition_shape)
for _name in ("DynamicStitch", "ParallelDynamicStitch"):
    register_op(_name, ["indices: N * int32", "data: N * T"], ["merged: T"], shape_fn=_stitch_shape)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors: output i holds the rows of
    data whose entry in `partitions` (a prefix of data's shape) is i, in order."""
    if int(num_partitions) < 1:
        raise ValueError(f"Attr 'num_partitions' of 'DynamicPartition' Op passed {int(num_partitions)} "
                         f"less than minimum 1.")
    op = apply_op("DynamicPartition", [data, partitions], name=name or "DynamicPartition",
                  num_partitions=int(num_partitions))
    return list(op.outputs)


def _stitch(op_type, indices, data, name):
    indices, data = list(indices), list(data)
    if len(data) != len(indices):
        raise ValueError(f"List argument 'data' to '{_API[op_type]}' Op with length {len(data)} must match "
                         f"length {len(indices)} of argument 'indices'.")
    return apply_op(op_type, [indices, data], name=name or op_type).outputs[0]


_API = {"DynamicStitch": "dynamic_stitch", "ParallelDynamicStitch": "parallel_dynamic_stitch"}


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i, ...], ...] = data[m][i, ...]; where indices repeat, the last wins."""
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices, data, name=None):
    """dynamic_stitch whose choice among repeated indices is unspecified (TF's parallel kernel)."""
    return _stitch("ParallelDynamicStitch", indices, data, name)


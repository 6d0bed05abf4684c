"""TF's gradients of DynamicPartition and the stitches (data_flow_grad.py)."""
from ..framework import dtypes
from ..framework.indexed_slices import IndexedSlices
from ..framework.registry import register_gradient
from ..ops import array_ops, math_ops
from . import ops


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    """Stitches the partitions' gradients back to data's rows: the positions of
    data's rows are partitioned as data was."""
    data, partitions = op.inputs
    grads = [g if g is not None else array_ops.zeros_like(t) for g, t in zip(grads, op.outputs)]
    prefix = array_ops.shape(partitions)
    positions = array_ops.reshape(math_ops.range(math_ops.reduce_prod(prefix)), prefix)
    partitioned = ops.dynamic_partition(positions, partitions, op.get_attr("num_partitions"))
    merged = ops.parallel_dynamic_stitch(partitioned, grads)
    return [array_ops.reshape(merged, array_ops.shape(data)), None]


@register_gradient("DynamicStitch")
@register_gradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op, grad):
    """Each data row gets the gradient at its index (as TF, also rows a later repeat overwrote)."""
    k = len(op.inputs) // 2
    if isinstance(grad, IndexedSlices):
        rows = array_ops.shape(op.outputs[0])[0]
        grad = array_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    indices = [op.inputs[i] if op.inputs[i].dtype == dtypes.int32 else math_ops.cast(op.inputs[i], dtypes.int32)
               for i in range(k)]
    return [None] * k + [array_ops.gather(grad, i) for i in indices]

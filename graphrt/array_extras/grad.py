"""Gradients of the ops in ops.py, TF's formulas (array_grad.py, math_grad.py,
check_ops.py). Ops TF leaves without a gradient (the bounds, UniqueWithCounts,
HistogramFixedWidth, UnravelIndex, Bitcast, ParallelConcat) have none here
either; the variable scatters and ShapeN are not differentiable, as in TF."""
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_gradient
from ..ops import array_ops, extra_ops, math_ops
from ..ops.extra_grad import _gather_drop_negatives
from . import ops

for _name in ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub", "ScatterMul", "ScatterDiv", "ScatterMin",
              "ScatterMax", "ShapeN"):
    not_differentiable(_name)


@register_gradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, grad):
    indices = op.inputs[1]
    updates_grad = extra_ops.gather_nd(grad, indices)
    tensor_grad = ops.tensor_scatter_nd_update(array_ops.identity(grad), indices,
                                               array_ops.zeros_like(op.inputs[2], dtype=grad.dtype.base_dtype))
    return [tensor_grad, None, updates_grad]


@register_gradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op, grad):
    return [array_ops.identity(grad), None, extra_ops.gather_nd(grad, op.inputs[1])]


@register_gradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op, grad):
    return [array_ops.identity(grad), None, math_ops.negative(extra_ops.gather_nd(grad, op.inputs[1]))]


def _tensor_scatter_min_or_max_grad(op, grad):
    """Split between the tensor's element and the updates that equal the result."""
    x, indices, y = op.inputs
    output = op.outputs[0]
    dtype = grad.dtype.base_dtype
    x_indicators = math_ops.cast(math_ops.equal(x, output), dtype)
    y_indicators = math_ops.cast(math_ops.equal(y, extra_ops.gather_nd(output, indices)), dtype)
    ys_indicators = extra_ops.scatter_nd(indices, y_indicators,
                                         array_ops.shape(x, out_type=indices.dtype.base_dtype))
    indicators = x_indicators + ys_indicators  # every element is >= 1
    x_grad = grad * x_indicators / indicators
    y_grad = extra_ops.gather_nd(grad / indicators, indices) * y_indicators
    return [x_grad, None, y_grad]


register_gradient("TensorScatterMin")(_tensor_scatter_min_or_max_grad)
register_gradient("TensorScatterMax")(_tensor_scatter_min_or_max_grad)


@register_gradient("EnsureShape")
def _ensure_shape_grad(op, grad):
    return [grad]


@register_gradient("SegmentProd")
def _segment_prod_grad(op, grad):
    """Per segment: the product over the element where it has no zero; where it has one
    zero, the product of the rest for the zero and 0 elsewhere; 0 with two zeros or more."""
    data, ids = op.inputs
    is_zero = math_ops.equal(data, 0)
    num_zeros = extra_ops.segment_sum(math_ops.cast(is_zero, dtypes.int32), ids)
    grad = math_ops.where_v2(math_ops.greater(num_zeros, 1), array_ops.zeros_like(grad), grad)
    non_zero_data = math_ops.where_v2(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = ops.segment_prod(non_zero_data, ids)
    gathered_prod = array_ops.gather(op.outputs[0], ids)
    gathered_non_zero_prod = array_ops.gather(non_zero_prod, ids)
    partial = math_ops.where_v2(is_zero, gathered_non_zero_prod, gathered_prod / non_zero_data)
    return [array_ops.gather(grad, ids) * partial, None]


@register_gradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op, grad):
    """SegmentProd's gradient; rows of negative ids get 0."""
    data, ids, num_segments = op.inputs
    is_zero = math_ops.equal(data, 0)
    num_zeros = array_ops.unsorted_segment_sum(math_ops.cast(is_zero, dtypes.int32), ids, num_segments)
    grad = math_ops.where_v2(math_ops.greater(num_zeros, 1), array_ops.zeros_like(grad), grad)
    non_zero_data = math_ops.where_v2(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = ops.unsorted_segment_prod(non_zero_data, ids, num_segments)
    zero_clipped = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered_prod = array_ops.gather(op.outputs[0], zero_clipped)
    gathered_non_zero_prod = array_ops.gather(non_zero_prod, zero_clipped)
    partial = math_ops.where_v2(is_zero, gathered_non_zero_prod, gathered_prod / data)  # may hold nan/inf
    gathered_grad = _gather_drop_negatives(grad, ids, zero_clipped)[0]
    return [gathered_grad * partial, None, None]

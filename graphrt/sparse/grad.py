"""TF's gradients of the sparse ops (sparse_grad.py, and math_grad.py for the segment ops).

Gradients flow to the values (and to dense operands); indices and shapes get none.
"""
from ..framework import dtypes
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_gradient
from ..ops import array_ops, extra_ops, math_ops
from . import api
from .sparse_tensor import SparseTensor

for _op in ("SparseAddGrad", "SparseConcat", "ListDiff"):  # as TF (other ops without a gradient have none)
    not_differentiable(_op)


@register_gradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    sparse_indices, output_shape = op.inputs[0], op.inputs[1]
    values_grad = extra_ops.gather_nd(grad, sparse_indices)
    default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
    return [array_ops.zeros_like(sparse_indices), array_ops.zeros_like(output_shape), values_grad, default_grad]


@register_gradient("SparseReorder")
def _sparse_reorder_grad(op, unused_indices_grad, values_grad):
    input_indices, input_shape = op.inputs[0], op.inputs[2]
    num_entries = array_ops.shape(input_indices)[0]
    entry_indices = math_ops.range(num_entries)
    ordered = api.sparse_reorder(SparseTensor(input_indices, entry_indices, input_shape))
    inverted = array_ops.invert_permutation(ordered.values)
    return [None, array_ops.gather(values_grad, inverted), None]


@register_gradient("SparseAdd")
def _sparse_add_grad(op, *grads):
    val_grad = grads[1]
    a_grad, b_grad = apply_op("SparseAddGrad", [val_grad, op.inputs[0], op.inputs[3], op.outputs[0]],
                              name="SparseAddGrad").outputs
    a_grad.set_shape(op.inputs[1].shape)
    b_grad.set_shape(op.inputs[4].shape)
    return [None, a_grad, None, None, b_grad, None, None]


@register_gradient("SparseTensorDenseAdd")
def _sparse_tensor_dense_add_grad(op, out_grad):
    return [None, extra_ops.gather_nd(out_grad, op.inputs[0]), None, out_grad]


@register_gradient("SparseReduceSum")
def _sparse_reduce_sum_grad(op, out_grad):
    sp_indices, sp_shape = op.inputs[0], op.inputs[2]
    kept_dims = math_ops.cast(array_ops.reduced_shape(math_ops.cast(sp_shape, dtypes.int32), op.inputs[3]),
                              dtypes.int64)
    out_grad_reshaped = array_ops.reshape(out_grad, kept_dims)
    scale = math_ops.floordiv(sp_shape, kept_dims)
    return [None, extra_ops.gather_nd(out_grad_reshaped, math_ops.floordiv(sp_indices, scale)), None, None]


@register_gradient("SparseSlice")
def _sparse_slice_grad(op, *grads):
    val_grad = apply_op("SparseSliceGrad", [grads[1], op.inputs[0], op.inputs[3], op.outputs[0]],
                        name="SparseSliceGrad").outputs[0]
    val_grad.set_shape(op.inputs[1].shape)
    return [None, val_grad, None, None, None]


@register_gradient("SparseTensorDenseMatMul")
def _sparse_tensor_dense_matmul_grad(op, grad):
    a_indices, a_values, a_shape = op.inputs[:3]
    b = op.inputs[3]
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    if a_values.dtype.base_dtype != b.dtype.base_dtype:
        raise TypeError(f"SparseTensorDenseMatMul op received operands with different types: "
                        f"`{a_values.dtype.base_dtype}` and `{b.dtype.base_dtype}`.")
    b_grad = apply_op("SparseTensorDenseMatMul", [a_indices, a_values, a_shape, grad], name="SparseTensorDenseMatMul",
                      adjoint_a=not adj_a, adjoint_b=False).outputs[0]
    if adj_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = a_indices[:, 0], a_indices[:, 1]
    parts_a = array_ops.gather(grad, cols if adj_a else rows)
    parts_b = array_ops.gather(array_ops.transpose(b) if adj_b else b, rows if adj_a else cols)
    if not adj_a and not adj_b:
        a_grad = math_ops.matmul(array_ops.expand_dims(parts_a, -2), array_ops.expand_dims(parts_b, -2),
                                 adjoint_b=True)
    elif adj_a and not adj_b:
        a_grad = math_ops.matmul(array_ops.expand_dims(parts_a, -1), array_ops.expand_dims(parts_b, -1),
                                 adjoint_a=True)
    elif not adj_a and adj_b:
        a_grad = math_ops.matmul(array_ops.expand_dims(parts_a, -2), array_ops.expand_dims(parts_b, -1))
    else:
        a_grad = math_ops.matmul(array_ops.expand_dims(parts_a, -1), array_ops.expand_dims(parts_b, -2),
                                 adjoint_a=True, adjoint_b=True)
    return [None, array_ops.squeeze(a_grad, axis=[-2, -1]), None, b_grad]


def _cwise_mul_or_div_grad(op, grad, is_mul):
    x_indices, x_shape, y = op.inputs[0], op.inputs[2], op.inputs[3]
    y_shape = math_ops.cast(array_ops.shape(y), dtypes.int64)
    num_added_dims = array_ops.expand_dims(array_ops.size(x_shape) - array_ops.size(y_shape), 0)
    augmented_y_shape = array_ops.concat([array_ops.ones(num_added_dims, dtypes.int64), y_shape], 0)
    scaling = math_ops.floordiv(x_shape, augmented_y_shape)
    scaled_indices = math_ops.floordiv(x_indices, scaling)
    scaled_indices = array_ops.slice(scaled_indices, array_ops.concat([[0], num_added_dims], 0), [-1, -1])
    dense_vals = extra_ops.gather_nd(y, scaled_indices)
    if is_mul:
        dx = grad * dense_vals
        dy_val = grad * op.inputs[1]
    else:
        dx = grad / dense_vals
        dy_val = grad * (-op.inputs[1] / math_ops.square(dense_vals))
    dy = api.sparse_add(array_ops.zeros_like(y), SparseTensor(scaled_indices, dy_val, y_shape))
    return [None, dx, None, dy]


@register_gradient("SparseDenseCwiseMul")
def _sparse_dense_cwise_mul_grad(op, grad):
    return _cwise_mul_or_div_grad(op, grad, True)


@register_gradient("SparseDenseCwiseDiv")
def _sparse_dense_cwise_div_grad(op, grad):
    return _cwise_mul_or_div_grad(op, grad, False)


@register_gradient("SparseDenseCwiseAdd")
def _sparse_dense_cwise_add_grad(op, grad):
    raise NotImplementedError("Gradient for SparseDenseCwiseAdd is not implemented.")


@register_gradient("SparseSoftmax")
def _sparse_softmax_grad(op, grad):
    indices, shape = op.inputs[0], op.inputs[2]
    out_vals = op.outputs[0]
    sp_product = SparseTensor(indices, out_vals * grad, shape)
    sum_reduced = -api.sparse_reduce_sum(sp_product, [-1], keepdims=True)
    sp_sum = api.sparse_dense_cwise_add(SparseTensor(indices, grad, shape), sum_reduced)
    return [None, sp_sum.values * out_vals, None]


@register_gradient("SparseSparseMaximum")
def _sparse_sparse_maximum_grad(op, *grads):
    raise NotImplementedError("Gradient for SparseSparseMaximum is not implemented.")


@register_gradient("SparseSparseMinimum")
def _sparse_sparse_minimum_grad(op, *grads):
    raise NotImplementedError("Gradient for SparseSparseMinimum is not implemented.")


@register_gradient("SparseFillEmptyRows")
def _sparse_fill_empty_rows_grad(op, unused_indices_grad, values_grad, unused_indicator_grad, unused_map_grad):
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad", [op.outputs[3], values_grad],
                                   name="SparseFillEmptyRowsGrad").outputs
    return [None, d_values, None, d_default]


def _segment_grad(kind, with_num):
    extra = [None] * (3 if with_num else 2)

    def grad_fn(op, grad):
        data_shape = array_ops.shape(op.inputs[0])
        dim0 = data_shape[0]
        if op.get_attr("sparse_gradient"):
            values, unique = apply_op(f"SparseSegment{kind}GradV2", [grad, op.inputs[1], op.inputs[2], dim0],
                                      name=f"SparseSegment{kind}GradV2").outputs
            return [IndexedSlices(values, unique, data_shape)] + extra
        return [apply_op(f"SparseSegment{kind}Grad", [grad, op.inputs[1], op.inputs[2], dim0],
                         name=f"SparseSegment{kind}Grad").outputs[0]] + extra
    return grad_fn


for _kind in ("Sum", "Mean", "SqrtN"):
    register_gradient(f"SparseSegment{_kind}")(_segment_grad(_kind, False))
    register_gradient(f"SparseSegment{_kind}WithNumSegments")(_segment_grad(_kind, True))

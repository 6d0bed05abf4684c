"""Gradients of the array ops (as TF's array_grad.py). A gather along axis 0
(so an embedding lookup) gives its params an IndexedSlices gradient; this
module also registers how IndexedSlices become dense where an op needs that,
and their negation."""
import numpy as np

from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op, register_tensor_conversion_function
from ..framework.registry import not_differentiable, register_gradient
from . import array_ops, math_ops
from .math_grad import sum_to

for _name in ("Const", "Placeholder", "StopGradient", "Shape", "Size", "Rank", "ZerosLike", "OnesLike", "OneHot",
              "Where", "InvertPermutation", "ReducedShape", "ConcatOffset"):
    not_differentiable(_name)


def _shape_of(x):
    """x's shape as a Python list when fully known (a constant), else a Shape op."""
    if x.shape.is_fully_defined():
        return x.shape.as_list()
    return array_ops.shape(x)


@register_gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


register_gradient("Snapshot")(_identity_grad)
register_gradient("PlaceholderWithDefault")(_identity_grad)


@register_gradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')}")


@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [array_ops.reshape(grad, _shape_of(op.inputs[0])), None]


register_gradient("ExpandDims")(_reshape_grad)


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [array_ops.reshape(grad, _shape_of(op.inputs[0]))]


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    conjugate = op.type == "ConjugateTranspose"
    perm = constant_value(op.inputs[1])
    if perm is not None:
        perm = np.asarray(perm).ravel()
        inverse = np.argsort(perm % max(len(perm), 1)).astype(np.int32)
        return [array_ops.transpose(grad, inverse, conjugate=conjugate), None]
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1]), conjugate=conjugate), None]


register_gradient("ConjugateTranspose")(_transpose_grad)


@register_gradient("Tile")
def _tile_grad(op, grad):
    x, multiples = op.inputs
    mult = constant_value(multiples)
    if x.shape.is_fully_defined() and mult is not None:
        dims = x.shape.as_list()
        split = [v for m, d in zip(np.asarray(mult).tolist(), dims) for v in (m, d)]
        axes = np.arange(0, len(split), 2, dtype=np.int32)
        return [math_ops.reduce_sum(array_ops.reshape(grad, split), axis=axes), None]
    shape = array_ops.shape(x)
    split_shape = array_ops.reshape(array_ops.transpose(array_ops.stack([multiples, shape])), [-1])
    axes = math_ops.range(0, array_ops.size(split_shape), 2)
    return [math_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes), None]


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    x = op.inputs[0]
    return [sum_to(grad, x, op.outputs[0]), None]


@register_gradient("Fill")
def _fill_grad(op, grad):
    return [None, math_ops.reduce_sum(grad)]


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    axis_value = constant_value(axis)
    if isinstance(grad, IndexedSlices):
        return _concat_indexed_slices_grad(op, grad, values, axis, axis_value) + [None]
    rank = values[0].shape.ndims
    if rank is None:
        rank = grad.shape.ndims
    if axis_value is None or rank is None:
        # As TF, an axis known only when the step runs is taken modulo the rank then.
        non_neg = math_ops.floormod(axis, array_ops.rank(values[0]))
        size_splits = array_ops.stack([array_ops.gather(array_ops.shape(v), non_neg) for v in values])
        return list(array_ops.split(grad, size_splits, axis=non_neg, num=len(values))) + [None]
    axis = int(axis_value) % rank
    sizes = [v.shape[axis] for v in values]
    if all(s is not None for s in sizes):
        size_splits = np.array(sizes, dtype=np.int32)
    else:
        size_splits = array_ops.stack([array_ops.shape(v)[axis] for v in values])
    parts = array_ops.split(grad, size_splits, axis=axis, num=len(values))
    return list(parts) + [None]


def _concat_indexed_slices_grad(op, grad, values, axis, axis_value):
    """TF's IndexedSlices branch of _ConcatGradHelper: the inputs' gradients stay IndexedSlices."""
    if axis_value is None:
        raise ValueError("Can only compute IndexedSlices gradient with statically-known concat_dim")
    axis_value = int(axis_value)
    if axis_value < 0:
        rank = values[0].shape.ndims
        if rank is None:
            raise ValueError("Can only compute IndexedSlices gradient with negative concat_dim when first value "
                             "rank is statically-known.")
        axis_value %= rank
    # Known shapes are constants, as TF's shape() makes them (so the gradients keep static shapes).
    sizes = [array_ops.constant(np.array(v.shape.as_list(), np.int32)) if v.shape.is_fully_defined()
             else array_ops.shape(v) for v in values]
    out = []
    if axis_value > 0:
        # Every input keeps all the indices, with its columns of the values.
        begin = array_ops.zeros(array_ops.shape(sizes[0]), dtype=sizes[0].dtype)
        mask = array_ops.one_hot(axis_value, array_ops.shape(sizes[0])[0], dtype=sizes[0].dtype)
        for size in sizes:
            new_values = array_ops.slice(grad.values, begin, array_ops.concat([[-1], size[1:]], 0))
            out.append(IndexedSlices(new_values, grad.indices, size))
            begin = math_ops.add(begin, size * mask)
        return out
    # Along axis 0 each input gets the rows that fall in its range.
    start = array_ops.zeros([], dtype=grad.indices.dtype)
    for size in sizes:
        size_axis = array_ops.gather(size, 0)
        if size_axis.dtype != grad.indices.dtype:
            size_axis = math_ops.cast(size_axis, grad.indices.dtype)
        end = start + size_axis
        selected = array_ops.squeeze(array_ops.where_indices(
            math_ops.logical_and(grad.indices >= start, grad.indices < end)), axis=[1])
        out.append(IndexedSlices(array_ops.gather(grad.values, selected),
                                 array_ops.gather(grad.indices, selected) - start, size))
        start = end
    return out


@register_gradient("Split")
def _split_grad(op, *grads):
    grads = [g if g is not None else array_ops.zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [None, array_ops.concat(grads, op.inputs[0])]


@register_gradient("SplitV")
def _split_v_grad(op, *grads):
    grads = [g if g is not None else array_ops.zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [array_ops.concat(grads, op.inputs[2]), None, None]


@register_gradient("Slice")
def _slice_grad(op, grad):
    x, begin, size = op.inputs
    b = constant_value(begin)
    if x.shape.is_fully_defined() and b is not None and grad.shape.is_fully_defined():
        b = np.asarray(b).reshape(-1)
        before = b
        after = np.array(x.shape.as_list()) - b - np.array(grad.shape.as_list())
        pads = np.stack([before, after], axis=1).astype(np.int32)
        return [array_ops.pad(grad, pads), None, None]
    shape = array_ops.shape(x)
    before = array_ops.reshape(begin, [-1, 1])
    after = array_ops.reshape(shape - begin - array_ops.shape(grad), [-1, 1])
    return [array_ops.pad(grad, array_ops.concat([before, after], 1)), None, None]


@register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    attrs = {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                         "shrink_axis_mask")}
    shape = _shape_of(x)
    out = apply_op("StridedSliceGrad", [shape, begin, end, strides, grad], **attrs).outputs[0]
    return [out, None, None, None]


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    """StridedSliceGrad scatters dy into zeros; its gradient w.r.t. dy slices the same
    way (needed for second derivatives, e.g. hessians of x[i] * x[j])."""
    _, begin, end, strides, _ = op.inputs
    attrs = {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                         "shrink_axis_mask")}
    return [None, None, None, None, array_ops.strided_slice(grad, begin, end, strides, **attrs)]


@register_gradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis_t = op.inputs
    axis = constant_value(axis_t)
    if axis is None:
        raise ValueError(f"The gradient of gather ({op.name}) needs a constant axis")
    written = int(axis)
    rank = params.shape.ndims
    if rank is None:
        raise ValueError(f"The gradient of gather ({op.name}) needs params of known rank")
    axis = written % rank
    ind_rank = indices.shape.ndims
    if ind_rank is None:
        raise ValueError(f"The gradient of gather ({op.name}) needs indices of known rank")
    if written != 0:  # as TF: IndexedSlices only for an axis written as 0 (axis=-rank gives a dense gradient)
        # move the gathered axis to the front, scatter, move it back
        perm = [axis] + [i for i in range(rank) if i != axis]
        moved_grad_perm = list(range(axis, axis + ind_rank)) + list(range(axis)) + \
            list(range(axis + ind_rank, rank + ind_rank - 1))
        grad = array_ops.transpose(grad, np.array(moved_grad_perm, dtype=np.int32))
        params_t = array_ops.transpose(params, np.array(perm, dtype=np.int32))
        dense = _scatter_rows(grad, indices, params_t, ind_rank)
        inverse = np.argsort(perm).astype(np.int32)
        return [array_ops.transpose(dense, inverse), None, None]
    # Along axis 0 the gradient is the gathered rows themselves, as IndexedSlices (TF's _GatherV2Grad).
    with get_default_graph().colocate_with(params):
        params_shape = array_ops.shape(params)
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    values = array_ops.reshape(grad, array_ops.concat([indices_size, params_shape[1:]], 0))
    return [IndexedSlices(values, array_ops.reshape(indices, indices_size), params_shape), None, None]


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    """The dense tensor of an IndexedSlices: its rows summed into zeros (TF's conversion)."""
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices with dtype "
                         f"{value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {value!r}")
    dense = array_ops.unsorted_segment_sum(value.values, value.indices, value.dense_shape[0], name=name)
    # TF's shape inference evaluates a constant dense_shape: the dense tensor's shape is static then.
    known = constant_value(value.dense_shape)
    if known is not None:
        dense.set_shape(np.asarray(known).tolist())
    return dense


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def _negate_indexed_slices(slices):
    """`-slices`: the same rows negated (TF's IndexedSlices.__neg__)."""
    return IndexedSlices(math_ops.negative(slices.values), slices.indices, slices.dense_shape)


# The framework's IndexedSlices makes no ops; the ops layer gives it its operator (as for Tensor's).
IndexedSlices.__neg__ = _negate_indexed_slices


def _scatter_rows(grad, indices, params, ind_rank):
    """Sums the rows of grad (one per index) into a zero tensor shaped like params."""
    params_shape = _shape_of(params)
    if isinstance(params_shape, list):
        rows = params_shape[0]
        inner = params_shape[1:]
        flat_grad = array_ops.reshape(grad, [-1] + inner)
    else:
        rows = params_shape[0]
        flat_grad = array_ops.reshape(grad, array_ops.concat([[-1], params_shape[1:]], 0))
    flat_ind = array_ops.reshape(indices, [-1]) if ind_rank != 1 else indices
    return math_ops.cast(array_ops.unsorted_segment_sum(flat_grad, flat_ind, rows), grad.dtype.base_dtype)


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    ids = op.inputs[1]
    safe = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(grad, safe)
    valid = math_ops.greater_equal(ids, array_ops.zeros_like(ids))
    if gathered.shape.ndims is not None and ids.shape.ndims is not None:
        extra = gathered.shape.ndims - ids.shape.ndims
        for _ in range(extra):
            valid = array_ops.expand_dims(valid, -1)
    return [math_ops.where_v2(valid, gathered, array_ops.zeros_like(gathered)), None, None]


@register_gradient("Pack")
def _pack_grad(op, grad):
    return array_ops.unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    grads = [g if g is not None else array_ops.zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [array_ops.stack(grads, axis=op.get_attr("axis"))]


@register_gradient("Pad")
def _pad_grad(op, grad):
    x, paddings = op.inputs[:2]
    begin = array_ops.reshape(array_ops.slice(paddings, [0, 0], [-1, 1]), [-1])
    return [array_ops.slice(grad, begin, _shape_of(x)), None]


@register_gradient("PadV2")
def _pad_v2_grad(op, grad):
    return _pad_grad(op, grad)[:1] + [None, None]  # constant_values gets no gradient (as TF)


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [apply_op("MirrorPadGrad", [grad, op.inputs[1]], mode=op.get_attr("mode")).outputs[0], None]


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [apply_op("MirrorPad", [grad, op.inputs[1]], mode=op.get_attr("mode")).outputs[0], None]


@register_gradient("Roll")
def _roll_grad(op, grad):
    return [array_ops.roll(grad, -op.inputs[1], op.inputs[2]), None, None]


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [array_ops.reverse(grad, op.inputs[1]), None]


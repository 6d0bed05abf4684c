"""`tf.sparse.bincount`: counts of each value as a SparseTensor (TF's DenseCountSparseOutput and
SparseCountSparseOutput ops).

Over all values (`axis=0`), or per row of a matrix (`axis=-1`): one entry per
value that occurs, its count (or the sum of its `weights`, or 1 with
`binary_output`). The dense shape's last dimension is the largest value + 1,
at least `minlength`, at most `maxlength` (larger values are not counted).
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from .sparse_tensor import SparseTensor

_ATTRS = {"minlength": -1, "maxlength": -1, "binary_output": False}
_INDEX = {dtypes.int32, dtypes.int64}
_OUT = {dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64}
_OUTPUTS = ["output_indices: int64", "output_values: output_type", "output_dense_shape: int64"]
register_op("DenseCountSparseOutput", ["values: T", "weights: output_type"], _OUTPUTS, attrs=dict(_ATTRS),
            shape_fn=lambda ctx: [TensorShape([None, ctx.shape(0).ndims]), TensorShape([None]),
                                  TensorShape([ctx.shape(0).ndims])],
            allowed_types={"T": _INDEX, "output_type": _OUT})
register_op("SparseCountSparseOutput", ["indices: int64", "values: T", "dense_shape: int64", "weights: output_type"],
            _OUTPUTS, attrs=dict(_ATTRS),
            shape_fn=lambda ctx: [TensorShape([None, None]), TensorShape([None]), TensorShape([None])],
            allowed_types={"T": _INDEX, "output_type": _OUT})
not_differentiable("DenseCountSparseOutput")
not_differentiable("SparseCountSparseOutput")


def _count(name, rows, values, weights, n_rows, batched, minlength, maxlength, binary, out_dtype):
    if values.size and values.min() < 0:
        raise errors.InvalidArgumentError("Input values must all be non-negative", node=name)
    if weights.size and weights.shape != values.shape:
        raise errors.InvalidArgumentError(f"Weights and values must have the same shape. Weight shape: "
                                          f"{list(weights.shape)}; values shape: {list(values.shape)}", node=name)
    keep = values < maxlength if maxlength >= 0 else np.ones(values.shape, bool)
    largest = int(values.max()) + 1 if values.size else 0
    width = max(largest, minlength if minlength >= 0 else 0)
    if maxlength >= 0:
        width = min(width, maxlength)
    totals = {}
    for i in np.flatnonzero(keep):
        key = (int(rows[i]), int(values[i]))
        add = 1 if binary or not weights.size else weights[i]
        totals[key] = add if binary else totals.get(key, 0) + add
    keys = sorted(totals)
    if batched:
        indices = np.array(keys, np.int64).reshape(-1, 2)
        shape = [n_rows, width]
    else:
        indices = np.array([[v] for _, v in keys], np.int64).reshape(-1, 1)
        shape = [width]
    counts = np.array([totals[k] for k in keys], dtype=out_dtype.np)
    return indices, counts, np.array(shape, np.int64)


@register_kernel("DenseCountSparseOutput", "CPU")
def _dense_count(ctx):
    name, out = ctx.name, ctx.attr("output_type")
    minlength, maxlength, binary = ctx.attr("minlength"), ctx.attr("maxlength"), ctx.attr("binary_output")

    def count(values, weights):
        values, weights = np.asarray(values), np.asarray(weights)
        if values.ndim not in (1, 2):
            raise errors.InvalidArgumentError(f"Input must be a 1 or 2-dimensional tensor. Got: {values.ndim}",
                                              node=name)
        batched = values.ndim == 2
        rows = np.repeat(np.arange(values.shape[0]), values.shape[1]) if batched else np.zeros(values.size, int)
        return _count(name, rows, values.ravel(), weights.ravel(), values.shape[0] if batched else 1, batched,
                      minlength, maxlength, binary, out)
    return count


@register_kernel("SparseCountSparseOutput", "CPU")
def _sparse_count(ctx):
    name, out = ctx.name, ctx.attr("output_type")
    minlength, maxlength, binary = ctx.attr("minlength"), ctx.attr("maxlength"), ctx.attr("binary_output")

    def count(indices, values, dense_shape, weights):
        indices, values, weights = np.asarray(indices), np.asarray(values), np.asarray(weights)
        batched = len(dense_shape) == 2
        rows = indices[:, 0] if batched else np.zeros(values.size, int)
        return _count(name, rows, values, weights, int(dense_shape[0]) if batched else 1, batched, minlength,
                      maxlength, binary, out)
    return count


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False, name=None):
    """Counts of each value of `values` (a Tensor or SparseTensor of ints) as a SparseTensor."""
    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
    g = get_default_graph()
    with g.name_scope(name or "count"):
        sparse = isinstance(values, SparseTensor)
        if not sparse:
            values = convert_to_tensor(values, name="values")
            if axis == 0:
                from ..ops import array_ops
                values = array_ops.reshape(values, [-1])
        out_type = values.dtype.base_dtype if weights is None else convert_to_tensor(weights).dtype.base_dtype
        weights = convert_to_tensor([] if weights is None else weights, dtype=out_type, name="weights")
        attrs = dict(minlength=-1 if minlength is None else int(minlength),
                     maxlength=-1 if maxlength is None else int(maxlength), binary_output=bool(binary_output),
                     output_type=out_type)
        if sparse:
            indices, flat = values.indices, values.values
            shape = values.dense_shape
            if axis == 0:
                from ..ops import array_ops, math_ops
                indices = array_ops.reshape(math_ops.range(array_ops.size(flat, out_type=dtypes.int64)), [-1, 1])
                shape = array_ops.reshape(array_ops.size(flat, out_type=dtypes.int64), [1])
                weights_values = weights.values if isinstance(weights, SparseTensor) else weights
                op = apply_op("SparseCountSparseOutput", [indices, flat, shape, weights_values], **attrs)
            else:
                op = apply_op("SparseCountSparseOutput", [indices, flat, shape, weights], **attrs)
        else:
            op = apply_op("DenseCountSparseOutput", [values, weights], **attrs)
        return SparseTensor(*op.outputs)

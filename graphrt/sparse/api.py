"""The TF1 API of sparse tensors (TF's sparse_ops.py): `tf.sparse_*` and `tf.sparse.*`.

Each function builds TF's ops under TF's name scopes and wraps the results
into SparseTensors, with the static shapes TF's Python works out.
"""
import numbers

import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value, constant_value_as_shape
from ..framework.graph import Tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op, constant, convert_to_tensor, is_tensor_like
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, control_ops, extra_ops, math_ops
from . import ops as _ops  # noqa: F401 - declares the ops
from .sparse_tensor import SparseTensor, SparseTensorValue


def _convert_to_sparse_tensor(sp_input):
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input


def _convert_to_sparse_tensors(sp_inputs):
    if isinstance(sp_inputs, (list, tuple)):
        return [_convert_to_sparse_tensor(s) for s in sp_inputs]
    raise TypeError("Inputs must be a list or tuple.")


def _scope(name, default):
    return get_default_graph().name_scope(name or default)


def _outputs(op_type, inputs, name=None, **attrs):
    return apply_op(op_type, inputs, name=name or op_type, **attrs).outputs


def _make_int64_tensor(value, name):
    if isinstance(value, numbers.Integral):
        return convert_to_tensor(value, name=name, dtype=dtypes.int64)
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be an integer value")
    return value if value.dtype == dtypes.int64 else math_ops.cast(value, dtypes.int64)


# -- making and unmaking ------------------------------------------------------------------

def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of placeholders, fed with a SparseTensorValue or an (indices, values, shape) triple."""
    shape_name = f"{name}/shape" if name is not None else None
    if shape is None:
        rank = None
        dense_shape = array_ops.placeholder(dtypes.int64, shape=[rank], name=shape_name)
        dense_shape_default = constant_value_as_shape(dense_shape)
    else:
        if isinstance(shape, Tensor):
            rank = shape.shape[0]
            dense_shape_default = constant_value_as_shape(shape)
        else:
            shape = list(shape.as_list() if isinstance(shape, TensorShape) else shape)
            rank = len(shape)
            dense_shape_default = TensorShape([None if d == -1 else d for d in shape])
            shape = convert_to_tensor([-1 if d is None else d for d in shape], dtype=dtypes.int64,
                                      name=f"{name}/shape_default" if name is not None else None)
        dense_shape = array_ops.placeholder_with_default(shape, shape=shape.shape, name=shape_name)
    result = SparseTensor(
        values=array_ops.placeholder(dtype, shape=[None], name=f"{name}/values" if name is not None else None),
        indices=array_ops.placeholder(dtypes.int64, shape=[None, rank],
                                      name=f"{name}/indices" if name is not None else None),
        dense_shape=dense_shape)
    result.set_shape(dense_shape_default)
    return result


def from_dense(tensor, name=None):
    with _scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor)
        indices = array_ops.where_indices(math_ops.not_equal(tensor, array_ops.zeros_like(tensor)))
        values = extra_ops.gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=dtypes.int64)
        return SparseTensor(indices, values, shape)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True, name=None):
    return _outputs("SparseToDense", [sparse_indices, output_shape, sparse_values, default_value], name,
                    validate_indices=bool(validate_indices))[0]


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    if default_value is None:
        default_value = array_ops.zeros([], dtype=sp_input.dtype)
    return _outputs("SparseToDense", [sp_input.indices, sp_input.dense_shape, sp_input.values, default_value],
                    name, validate_indices=bool(validate_indices))[0]


def sparse_eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    with _scope(name, "eye"):
        num_rows = _make_int64_tensor(num_rows, "num_rows")
        num_columns = num_rows if num_columns is None else _make_int64_tensor(num_columns, "num_columns")
        diag_size = math_ops.minimum(num_rows, num_columns)
        diag_range = math_ops.range(diag_size, dtype=dtypes.int64)
        return SparseTensor(indices=array_ops.stack([diag_range, diag_range], axis=1),
                            values=array_ops.ones(diag_size, dtype=dtype),
                            dense_shape=[num_rows, num_columns])


# -- reorder, reshape, slice, concat, split, transpose --------------------------------------

def sparse_reorder(sp_input, name=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    indices, values = _outputs("SparseReorder", [sp_input.indices, sp_input.values, sp_input.dense_shape], name)
    if sp_input.shape.is_fully_defined():
        return SparseTensor(indices, values, sp_input.shape.as_list())
    out = SparseTensor(indices, values, array_ops.identity(sp_input.dense_shape))
    out.set_shape(sp_input.shape)
    return out


def sparse_reshape(sp_input, shape, name=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    shape = math_ops.cast(shape, dtypes.int64)
    with _scope(name, "SparseReshape") as scope:
        indices, reshaped_shape = _outputs("SparseReshape", [sp_input.indices, sp_input.dense_shape, shape], scope)
        target = constant_value_as_shape(shape)
        target = target.as_list() if target.ndims is not None else None
        if target is not None and sp_input.shape.is_fully_defined():
            by_user = constant_value(shape)
            if by_user is not None and sum(int(d) == -1 for d in by_user) > 1:
                raise ValueError(f"At most one dimension can be inferred (-1). Found: {by_user}")
            original = list(target)
            in_size = int(np.prod(sp_input.shape.as_list()))
            implied = sum(d is None for d in target)
            if implied == 1 and 0 not in target:
                at = original.index(None)
                target[at] = int(in_size // np.prod(original[:at] + original[at + 1:]))
            if implied == 0 or (implied == 1 and 0 not in target):
                size = int(np.prod(target))
                if size != in_size:
                    raise ValueError(f"Cannot reshape a tensor with {in_size} elements to shape {original} "
                                     f"({size} elements).")
                reshaped_shape = constant(target, dtype=dtypes.int64)
        return SparseTensor(indices, array_ops.identity(sp_input.values), reshaped_shape)


def sparse_slice(sp_input, start, size, name=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    start = convert_to_tensor(start, dtypes.int64)
    size = convert_to_tensor(size, dtypes.int64)
    with _scope(name, "SparseSlice") as scope:
        return SparseTensor(*_outputs("SparseSlice", [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                                      start, size], scope))


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    if concat_dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
        axis = concat_dim
    sp_inputs = _convert_to_sparse_tensors(sp_inputs)
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    inds = [s.indices for s in sp_inputs]
    vals = [s.values for s in sp_inputs]
    shapes = [s.dense_shape for s in sp_inputs]
    if expand_nonconcat_dim:
        max_shape = math_ops.reduce_max(array_ops.concat([array_ops.reshape(s, [1, -1]) for s in shapes], 0), 0)
        shapes = [array_ops.concat([max_shape[:axis], s[-1:] if axis == -1 else s[axis:axis + 1],
                                    [] if axis == -1 else max_shape[axis + 1:]], 0) for s in shapes]
    indices, values, shape = _outputs("SparseConcat", [inds, vals, shapes], name, concat_dim=int(axis))
    input_shapes = [s.shape for s in sp_inputs]
    if all(s.ndims is not None for s in input_shapes):
        if expand_nonconcat_dim:
            static = [None if any(s[d] is None for s in input_shapes) else max(s[d] for s in input_shapes)
                      for d in range(input_shapes[0].ndims)]
        else:
            static = input_shapes[0].as_list()
        dims = [s[axis] for s in input_shapes]
        static[axis] = None if None in dims else sum(dims)
        static = TensorShape(static)
    else:
        static = TensorShape(None)
    if all(s.is_fully_defined() for s in input_shapes):
        return SparseTensor(indices, values, convert_to_tensor(static.as_list(), dtype=dtypes.int64))
    out = SparseTensor(indices, values, shape)
    out.set_shape(static)
    return out


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None, split_dim=None):
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None:
        axis = split_dim
    if axis is None:
        raise ValueError("axis is required")
    sp_input = _convert_to_sparse_tensor(sp_input)
    split_dim = axis if is_tensor_like(axis) else convert_to_tensor(axis, dtype=dtypes.int64, name="split_dim")
    outs = _outputs("SparseSplit", [split_dim, sp_input.indices, sp_input.values, sp_input.dense_shape], name,
                    num_split=int(num_split))
    k = int(num_split)
    return [SparseTensor(outs[i], outs[k + i], outs[2 * k + i]) for i in range(k)]


def sparse_transpose(sp_input, perm=None, name=None):
    with _scope(name, "SparseTranspose"):
        if perm is None:
            if sp_input.shape.ndims is not None:
                rank = sp_input.shape.ndims
                perm = (rank - 1) - np.arange(0, rank, 1)
            else:
                rank = array_ops.size(sp_input.dense_shape)
                perm = (rank - 1) - math_ops.range(0, rank, 1)
        transposed_indices = array_ops.transpose(array_ops.gather(array_ops.transpose(sp_input.indices), perm))
        perm_ = constant_value(convert_to_tensor(perm))
        if perm_ is not None and sp_input.shape.is_fully_defined():
            old = sp_input.shape.as_list()
            new_shape = [old[int(p)] for p in perm_]
        else:
            new_shape = array_ops.gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(transposed_indices, sp_input.values, new_shape))


def sparse_expand_dims(sp_input, axis=None, name=None):
    rank = sp_input.dense_shape.shape[0]
    if rank is None:
        rank = array_ops.shape(sp_input.dense_shape)[0]
    axis = -1 if axis is None else axis
    with _scope(name, "expand_dims"):
        if isinstance(axis, numbers.Integral):
            axis = convert_to_tensor(axis, name="axis", dtype=dtypes.int32)
        elif not isinstance(axis, Tensor):
            raise TypeError("axis must be an integer value in range [-rank(sp_input) - 1, rank(sp_input)]")
        axis = math_ops.where_v2(axis >= 0, axis, axis + rank + 1)
        column_size = array_ops.shape(sp_input.indices)[0]
        new_index = array_ops.zeros(array_ops.stack([column_size, 1]), dtype=dtypes.int64)
        before = array_ops.slice(sp_input.indices, array_ops.stack([0, axis]), array_ops.stack([-1, axis]))
        after = array_ops.slice(sp_input.indices, array_ops.stack([0, axis]), [-1, -1])
        indices = array_ops.concat([before, new_index, after], axis=1)
        shape_before = array_ops.slice(sp_input.dense_shape, array_ops.expand_dims(0, 0),
                                       array_ops.expand_dims(axis, 0))
        shape_after = array_ops.slice(sp_input.dense_shape, array_ops.expand_dims(axis, 0), [-1])
        new_shape = convert_to_tensor([1], name="new_shape", dtype=dtypes.int64)
        shape = array_ops.concat([shape_before, new_shape, shape_after], axis=0)
        return SparseTensor(indices=indices, values=sp_input.values, dense_shape=shape)


# -- arithmetic -------------------------------------------------------------------------------

def sparse_add(a, b, threshold=None, thresh=None):
    """SparseTensor + SparseTensor (SparseAdd, entries of a sum with |sum| < threshold dropped), or
    SparseTensor + dense (SparseTensorDenseAdd, a dense result)."""
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    sparse_classes = (SparseTensor, SparseTensorValue)
    if not any(isinstance(x, sparse_classes) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if all(isinstance(x, sparse_classes) for x in (a, b)):
        a, b = _convert_to_sparse_tensor(a), _convert_to_sparse_tensor(b)
        real = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(
            a.values.dtype.base_dtype, a.values.dtype.base_dtype)
        threshold = convert_to_tensor(threshold, dtype=real, name="threshold")
        indices, values, shape = _outputs("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                                        b.dense_shape, threshold])
        a.shape.assert_is_compatible_with(b.shape)
        static = a.shape.merge_with(b.shape)
        if static.is_fully_defined():
            shape = static.as_list()
        return SparseTensor(indices, values, shape)
    if isinstance(b, sparse_classes):
        a, b = b, a
    a = _convert_to_sparse_tensor(a)
    return _outputs("SparseTensorDenseAdd", [a.indices, a.values, a.dense_shape, b])[0]


def sparse_dense_cwise_add(sp_t, dense_t):
    result = _outputs("SparseDenseCwiseAdd", [sp_t.indices, sp_t.values, sp_t.dense_shape, dense_t])[0]
    return SparseTensor(sp_t.indices, result, sp_t.dense_shape)


def _binary_operator(op_type, scope_name, truediv=False):
    """`sp_x <op> y`: the dense y broadcast to the sparse x, read at its entries (TF's override)."""
    def operator(sp_x, y):
        with _scope(None, scope_name) as scope:
            values = sp_x.values
            y = convert_to_tensor(y, dtype=values.dtype.base_dtype, name="y")
            if truediv and values.dtype.base_dtype in (dtypes.int8, dtypes.int16, dtypes.uint8, dtypes.uint16,
                                                       dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64):
                wide = dtypes.float32 if values.dtype.size <= 2 else dtypes.float64
                values, y = math_ops.cast(values, wide), math_ops.cast(y, wide)
            out = _outputs(op_type, [sp_x.indices, values, sp_x.dense_shape, y], scope)[0]
            return SparseTensor(sp_x.indices, out, sp_x.dense_shape)
    return operator


SparseTensor.__mul__ = _binary_operator("SparseDenseCwiseMul", "mul")
SparseTensor.__truediv__ = _binary_operator("SparseDenseCwiseDiv", "truediv", truediv=True)
SparseTensor.__div__ = _binary_operator("SparseDenseCwiseDiv", "div")


def sparse_maximum(sp_a, sp_b, name=None):
    return _sparse_sparse("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None):
    return _sparse_sparse("SparseSparseMinimum", sp_a, sp_b, name)


def _sparse_sparse(op_type, sp_a, sp_b, name):
    with _scope(name, op_type) as scope:
        indices, values = _outputs(op_type, [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices,
                                             sp_b.values, sp_b.dense_shape], scope)
    return SparseTensor(indices, values, sp_a.dense_shape)


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """sp_a @ b with a dense result; a sparse `b` makes it transpose(b' @ sp_a'), as TF."""
    if isinstance(b, (SparseTensor, SparseTensorValue)):
        if adjoint_a != adjoint_b:
            return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a, adjoint_b))
        return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a=not adjoint_a,
                                                              adjoint_b=not adjoint_b))
    sp_a = _convert_to_sparse_tensor(sp_a)
    with _scope(name, "SparseTensorDenseMatMul"):
        b = convert_to_tensor(b, name="b")
        return _outputs("SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, sp_a.dense_shape, b], None,
                        adjoint_a=bool(adjoint_a), adjoint_b=bool(adjoint_b))[0]


def sparse_softmax(sp_input, name=None):
    with _scope(name, "SparseSoftmax"):
        out = _outputs("SparseSoftmax", [sp_input.indices, sp_input.values, sp_input.dense_shape])[0]
        return SparseTensor(sp_input.indices, out, sp_input.dense_shape)


# -- reductions ----------------------------------------------------------------------------------

def _reduction_axes(sp_input, axis):
    if axis is not None:
        return axis
    if sp_input.shape.ndims:
        return constant(np.arange(sp_input.shape.ndims, dtype=np.int32))
    return math_ops.range(0, array_ops.size(sp_input.dense_shape))


def _keep(keepdims, keep_dims):
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    value = keepdims if keepdims is not None else keep_dims
    return bool(value) if value is not None else False


def _axis(axis, reduction_axes):
    if axis is not None and reduction_axes is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_axes'")
    return axis if axis is not None else reduction_axes


def _reduce(op_type, sp_input, axis, keepdims, name=None):
    return _outputs(op_type, [sp_input.indices, sp_input.values, sp_input.dense_shape,
                              _reduction_axes(sp_input, axis)], name, keep_dims=keepdims)


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    return _reduce("SparseReduceSum", sp_input, _axis(axis, reduction_axes), _keep(keepdims, keep_dims))[0]


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    return _reduce("SparseReduceMax", sp_input, _axis(axis, reduction_axes), _keep(keepdims, keep_dims))[0]


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    return SparseTensor(*_reduce("SparseReduceSumSparse", sp_input, _axis(axis, reduction_axes),
                                 _keep(keepdims, keep_dims)))


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    return SparseTensor(*_reduce("SparseReduceMaxSparse", sp_input, _axis(axis, reduction_axes),
                                 _keep(keepdims, keep_dims)))


# -- retain, fill, reset, merge, indicator, mask -------------------------------------------------

def sparse_retain(sp_input, to_retain):
    sp_input = _convert_to_sparse_tensor(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape
    retain_shape.assert_has_rank(1)
    if sp_input.values.shape.ndims is not None:
        sp_input.values.shape.dim(0).merge_with(retain_shape.dim(0))
    where_true = array_ops.reshape(array_ops.where_indices(to_retain), [-1])
    new_indices = array_ops.gather(sp_input.indices, where_true)
    new_values = array_ops.gather(sp_input.values, where_true)
    return SparseTensor(new_indices, new_values, array_ops.identity(sp_input.dense_shape))


def sparse_reset_shape(sp_input, new_shape=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    in_indices = array_ops.identity(sp_input.indices)
    in_values = array_ops.identity(sp_input.values)
    in_shape = array_ops.identity(sp_input.dense_shape)
    if new_shape is None:
        dim_low_bound = math_ops.reduce_max(in_indices, axis=0)
        output_shape = math_ops.maximum(constant(0, dtype=dtypes.int64),
                                        math_ops.add(dim_low_bound, array_ops.ones_like(in_shape)))
    else:
        output_shape = convert_to_tensor(new_shape)
        output_shape.shape.assert_has_rank(1)
        output_shape = math_ops.cast(output_shape, dtypes.int64)
        if output_shape.shape.ndims is not None:
            output_shape.shape.dim(0).merge_with(in_shape.shape.dim(0))
        output_const = constant_value(output_shape)
        if output_const is not None and sp_input.shape.is_fully_defined():
            in_const = np.array(sp_input.shape.as_list())
            if not np.all(in_const <= output_const):
                raise ValueError(f"Requested new_shape should have dimension sizes >= sp_input.shape.  Found "
                                 f"new_shape ({in_const}), sp_input.shape ({output_const}).")
            output_shape = output_const
        else:
            output_shape = control_ops.with_dependencies(
                [extra_ops.assert_equal(array_ops.shape(in_shape), array_ops.shape(output_shape))], output_shape)
            output_shape = control_ops.with_dependencies([extra_ops.assert_less_equal(in_shape, output_shape)],
                                                         output_shape)
    return SparseTensor(in_indices, in_values, output_shape)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """(the input with [row, 0, ...] = default_value in each empty row, the empty-row indicator)."""
    sp_input = _convert_to_sparse_tensor(sp_input)
    with _scope(name, "SparseFillEmptyRows"):
        default_value = convert_to_tensor(default_value, dtype=sp_input.values.dtype)
        indices, values, empty_rows, _ = _outputs("SparseFillEmptyRows", [sp_input.indices, sp_input.values,
                                                                          sp_input.dense_shape, default_value])
        return SparseTensor(indices, values, sp_input.dense_shape), empty_rows


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    if isinstance(sp_ids, (SparseTensor, SparseTensorValue)):
        sp_ids = [sp_ids]
        if not (isinstance(vocab_size, Tensor) or isinstance(vocab_size, numbers.Integral)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found {type(vocab_size)}")
        vocab_size = [vocab_size]
    else:
        if not isinstance(sp_ids, (list, tuple)):
            raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found {type(sp_ids)}")
        if not isinstance(vocab_size, (list, tuple)):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found {type(vocab_size)}")
        for dim in vocab_size:
            if not (isinstance(dim, Tensor) or isinstance(dim, numbers.Integral)):
                raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found {type(dim)}")
    if len(sp_ids) != len(vocab_size):
        raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    with _scope(name, "SparseMerge"):
        sp_ids = [_convert_to_sparse_tensor(s) for s in sp_ids]
        sp_values = _convert_to_sparse_tensor(sp_values)
        ids = []
        for s in sp_ids:
            ids_dim = s.values if s.dtype == dtypes.int64 else math_ops.cast(s.values, dtypes.int64)
            ids.append(array_ops.expand_dims(ids_dim, axis=1))
        vocab_size = [math_ops.cast(x, dtypes.int64) for x in vocab_size]
        new_indices = array_ops.concat([sp_ids[0].indices[:, :-1]] + ids, 1)
        new_shape = array_ops.concat([sp_ids[0].dense_shape[:-1], array_ops.stack(vocab_size)], 0)
        result = SparseTensor(new_indices, sp_values.values, new_shape)
        if already_sorted:
            return result
        ordered = sparse_reorder(result)
        return SparseTensor(ordered.indices, ordered.values, new_shape)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    sp_input = _convert_to_sparse_tensor(sp_input)
    with _scope(name, "SparseToIndicator") as scope:
        num_entries = array_ops.shape(sp_input.indices)[0]
        new_values = array_ops.fill(array_ops.expand_dims(num_entries, 0), True)
        sp_values = SparseTensor(sp_input.indices, new_values, sp_input.dense_shape)
        sp_new = sparse_merge(sp_input, sp_values, vocab_size, scope)
        return sparse_tensor_to_dense(sp_new, default_value=False, validate_indices=False, name=scope)


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices `a` without the slices at `mask_indices` (TF's array_ops.sparse_mask)."""
    with _scope(name, "sparse_mask") as scope:
        indices = a.indices
        out_indices, to_gather = _outputs("ListDiff", [indices, mask_indices], None)
        out_values = array_ops.gather(a.values, to_gather, name=scope)
        return IndexedSlices(out_values, out_indices, a.dense_shape)


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    return _outputs("ListDiff", [x, y], name, out_idx=dtypes.as_dtype(index_dtype))


# -- segment reductions over dense data --------------------------------------------------------------

def _segment(kind):
    def reduce(data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False):
        if num_segments is not None:
            return _outputs(f"SparseSegment{kind}WithNumSegments", [data, indices, segment_ids, num_segments],
                            name, sparse_gradient=bool(sparse_gradient))[0]
        return _outputs(f"SparseSegment{kind}", [data, indices, segment_ids], name,
                        sparse_gradient=bool(sparse_gradient))[0]
    reduce.__name__ = {"Sum": "sparse_segment_sum", "Mean": "sparse_segment_mean",
                       "SqrtN": "sparse_segment_sqrt_n"}[kind]
    return reduce


sparse_segment_sum = _segment("Sum")
sparse_segment_mean = _segment("Mean")
sparse_segment_sqrt_n = _segment("SqrtN")

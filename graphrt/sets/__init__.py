"""`tf.sets`: TF's set operations over the last dimension of dense tensors and SparseTensors
(`size`, `intersection`, `union`, `difference`, and TF1's `set_*` names), each result a
SparseTensor. `ops.py` declares the ops, `kernels.py` runs them; not differentiable, as in TF.
"""
from ..framework.op_builder import apply_op
from ..sparse.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from . import kernels as _kernels  # noqa: F401 - registers the kernels
from .ops import SET_TYPES


def _valid_types():
    return "frozenset({" + ", ".join(f"tf.{t.name}" for t in SET_TYPES) + "})"


def _dtype(dtype):
    return f"<dtype: '{dtype.name}'>"  # as TF prints a DType in its messages


def set_size(a, validate_indices=True):
    """The number of distinct values in each set (last dimension) of SparseTensor `a`, as int32."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in SET_TYPES:
        raise TypeError(f"Invalid dtype `{_dtype(a.values.dtype)}` not in supported dtypes: `{_valid_types()}`.")
    return apply_op("SetSize", [a.indices, a.values, a.dense_shape], name="SetSize",
                    validate_indices=bool(validate_indices)).outputs[0]


def _convert(a, b):
    """a, b as tensors or SparseTensors of one set dtype; a sparse `a` with a dense `b` is swapped."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    if a.dtype.base_dtype not in SET_TYPES:
        raise TypeError(f"'a' has invalid dtype `{_dtype(a.dtype)}` not in supported dtypes: `{_valid_types()}`.")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {_dtype(a.dtype)} vs {_dtype(b.dtype)}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a, b, operation, validate_indices):
    attrs = {"set_operation": operation, "validate_indices": bool(validate_indices)}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please flip the order of your "
                             "inputs.")
        op = apply_op("SparseToSparseSetOperation", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                                     b.dense_shape], name="SparseToSparseSetOperation", **attrs)
    elif isinstance(b, SparseTensor):
        op = apply_op("DenseToSparseSetOperation", [a, b.indices, b.values, b.dense_shape],
                      name="DenseToSparseSetOperation", **attrs)
    else:
        op = apply_op("DenseToDenseSetOperation", [a, b], name="DenseToDenseSetOperation", **attrs)
    return SparseTensor(*op.outputs)


def set_intersection(a, b, validate_indices=True):
    """The values in both `a`'s and `b`'s set of each group (a SparseTensor, sorted per group)."""
    a, b, _ = _convert(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """`a - b` (or `b - a` when aminusb is False) per group."""
    a, b, flipped = _convert(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_union(a, b, validate_indices=True):
    """The values in `a`'s or `b`'s set of each group."""
    a, b, _ = _convert(a, b)
    return _set_operation(a, b, "union", validate_indices)


size = set_size
intersection = set_intersection
difference = set_difference
union = set_union

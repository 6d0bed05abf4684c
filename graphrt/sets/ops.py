"""Declarations of TF's set ops (SetSize, DenseToDense-, DenseToSparse-, SparseToSparseSetOperation),
with TF's shape functions: dense operands of rank >= 2 whose group dimensions (all but the last)
merge, sparse operands whose ranks agree; the result is a SparseTensor of the operands' rank.
"""
from ..framework import dtypes
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

SET_TYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.string)
_OPERATIONS = ("a-b", "b-a", "intersection", "union")


def _at_least_2(shape):
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims}")
    return shape


def _sparse_rank(ctx, i):
    """The rank of the sparse operand at inputs i, i+1, i+2 (indices columns and shape length agree)."""
    indices, values, shape = ctx.shape(i), ctx.shape(i + 1), ctx.shape(i + 2)
    for s, rank in ((indices, 2), (values, 1), (shape, 1)):
        if s.ndims is not None and s.ndims != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {s.ndims}")
    rank = shape[0] if shape.ndims else None
    columns = indices[1] if indices.ndims else None
    return _merge_rank(rank, columns)


def _merge_rank(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimension must be {a} but is {b}")
    return a if a is not None else b


def _dims(dims):
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _result(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _dense_dense_shape(ctx):
    a, b = _at_least_2(ctx.shape(0)), _at_least_2(ctx.shape(1))
    if a.ndims is not None and b.ndims is not None:
        groups_a, groups_b = a.as_list()[:-1], b.as_list()[:a.ndims - 1]
        for d, (x, y) in enumerate(zip(groups_a, groups_b)):
            if x is not None and y is not None and x != y:
                raise ValueError(f"Dimension {d} in both shapes must be equal, but are {x} and {y}. Shapes are "
                                 f"{_dims(groups_a)} and {_dims(groups_b)}.")
    return _result(a.ndims if a.ndims is not None else b.ndims)


def _dense_sparse_shape(ctx):
    a = _at_least_2(ctx.shape(0))
    return _result(_merge_rank(a.ndims, _sparse_rank(ctx, 1)))


def _sparse_sparse_shape(ctx):
    return _result(_merge_rank(_sparse_rank(ctx, 0), _sparse_rank(ctx, 3)))


def _set_size_shape(ctx):
    _sparse_rank(ctx, 0)
    return TensorShape(None)


_ATTRS = {"set_operation": "", "validate_indices": True}
_TYPES = {"T": SET_TYPES}
_SP = ["{}_indices: int64", "{}_values: T", "{}_shape: int64"]
_OUT = ["result_indices: int64", "result_values: T", "result_shape: int64"]

register_op("SetSize", [s.format("set") for s in _SP], ["size: int32"], attrs={"validate_indices": True},
            shape_fn=_set_size_shape, allowed_types=_TYPES)
register_op("DenseToDenseSetOperation", ["set1: T", "set2: T"], _OUT, attrs=_ATTRS, shape_fn=_dense_dense_shape,
            allowed_types=_TYPES)
register_op("DenseToSparseSetOperation", ["set1: T"] + [s.format("set2") for s in _SP], _OUT, attrs=_ATTRS,
            shape_fn=_dense_sparse_shape, allowed_types=_TYPES)
register_op("SparseToSparseSetOperation", [s.format("set1") for s in _SP] + [s.format("set2") for s in _SP], _OUT,
            attrs=_ATTRS, shape_fn=_sparse_sparse_shape, allowed_types=_TYPES)
for _name in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation", "SparseToSparseSetOperation"):
    not_differentiable(_name)

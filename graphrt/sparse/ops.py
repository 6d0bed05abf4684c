"""Declarations of the sparse ops (TF's op names, inputs, attrs and shape functions).

A sparse operand is three inputs (indices int64 [N, rank], values [N],
dense_shape int64 [rank]); `api.py` wraps them into SparseTensors. The
shape functions check what TF's check at graph build (ranks, equal dims).
"""
from ..framework import dtypes
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops.shape_fns import dims_with_rank, merge_dims

INDEX = (dtypes.int32, dtypes.int64)
REAL = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
        dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
NUMBER = REAL + (dtypes.complex64, dtypes.complex128)
FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)


# -- shape functions -------------------------------------------------------------------

def _sparse(ctx, i):
    """(nnz, rank) of the sparse operand at inputs i, i+1, i+2 (checked as TF checks them)."""
    n, rank = dims_with_rank(ctx, i, 2)
    (nv,) = dims_with_rank(ctx, i + 1, 1)
    (rs,) = dims_with_rank(ctx, i + 2, 1)
    return merge_dims(n, nv), merge_dims(rank, rs)


def _sparse_out(nnz, rank):
    return [TensorShape([nnz, rank]), TensorShape([nnz]), TensorShape([rank])]


def _sparse_to_dense_shape(ctx):
    dims_with_rank(ctx, 3, 0)
    return ctx.constant_shape(1)


def _reorder_shape(ctx):
    n, rank = _sparse(ctx, 0)
    return [TensorShape([n, rank]), TensorShape([n])]


def _reshape_shape(ctx):
    n, _ = dims_with_rank(ctx, 0, 2)
    dims_with_rank(ctx, 1, 1)
    (r,) = dims_with_rank(ctx, 2, 1)
    return [TensorShape([n, r]), TensorShape([r])]


def _slice_shape(ctx):
    _, rank = _sparse(ctx, 0)
    dims_with_rank(ctx, 3, 1)
    dims_with_rank(ctx, 4, 1)
    return _sparse_out(None, rank)


def _values_grad_shape(ctx):
    n, _ = dims_with_rank(ctx, 1, 2)
    return TensorShape([n])


def _concat_shape(ctx):
    k = ctx.attr("N")
    rank, total = None, 0
    for j in range(k):
        n, _ = dims_with_rank(ctx, j, 2)
        dims_with_rank(ctx, k + j, 1)
        (r,) = dims_with_rank(ctx, 2 * k + j, 1)
        rank = merge_dims(rank, r)
        total = None if total is None or n is None else total + n
    return _sparse_out(total, rank)


def _add_shape(ctx):
    _, ra = _sparse(ctx, 0)
    _, rb = _sparse(ctx, 3)
    dims_with_rank(ctx, 6, 0)
    return _sparse_out(None, merge_dims(ra, rb))


def _add_grad_shape(ctx):
    dims_with_rank(ctx, 0, 1)
    na, _ = dims_with_rank(ctx, 1, 2)
    nb, _ = dims_with_rank(ctx, 2, 2)
    dims_with_rank(ctx, 3, 2)
    return [TensorShape([na]), TensorShape([nb])]


def _reduce_shape(ctx):
    """Known when dense_shape and the axes are constants, as TF's SparseReduceShapeFn."""
    _sparse(ctx, 0)
    shape, axes = ctx.constant(2), ctx.constant(3)
    if shape is None or axes is None:
        return TensorShape(None)
    rank = len(shape)
    reduced = set()
    for a in [int(a) for a in (axes.ravel() if hasattr(axes, "ravel") else [axes])]:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a}, for input with {rank} dimensions.")
        reduced.add(a % rank)
    keep = ctx.attr("keep_dims")
    return TensorShape([1 if i in reduced else int(d) for i, d in enumerate(shape) if keep or i not in reduced])


def _reduce_sparse_shape(ctx):
    _sparse(ctx, 0)
    return _sparse_out(None, None)


def _matmul_shape(ctx):
    dims_with_rank(ctx, 0, 2)
    dims_with_rank(ctx, 1, 1)
    dims_with_rank(ctx, 2, 1)
    b = dims_with_rank(ctx, 3, 2)
    shape = ctx.constant_shape(2)
    if shape.ndims is not None and shape.ndims != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {shape.ndims}")
    a = shape.as_list() if shape.ndims is not None else [None, None]
    adj_a, adj_b = ctx.attr("adjoint_a"), ctx.attr("adjoint_b")
    m, ka = (a[1], a[0]) if adj_a else (a[0], a[1])
    kb, n = (b[1], b[0]) if adj_b else (b[0], b[1])
    merge_dims(ka, kb)
    return TensorShape([m, n])


def _values_shape(ctx):
    n, _ = _sparse(ctx, 0)
    return TensorShape([n])


def _fill_empty_rows_shape(ctx):
    n, rank = _sparse(ctx, 0)
    dims_with_rank(ctx, 3, 0)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([None]), TensorShape([n])]


def _fill_empty_rows_grad_shape(ctx):
    (n,) = dims_with_rank(ctx, 0, 1)
    dims_with_rank(ctx, 1, 1)
    return [TensorShape([n]), TensorShape([])]


def _split_shape(ctx):
    dims_with_rank(ctx, 0, 0)
    _, rank = _sparse(ctx, 1)
    k = ctx.attr("num_split")
    return [TensorShape([None, rank])] * k + [TensorShape([None])] * k + [TensorShape([rank])] * k


def _sparse_sparse_shape(ctx):
    _, ra = _sparse(ctx, 0)
    _, rb = _sparse(ctx, 3)
    rank = merge_dims(ra, rb)
    return [TensorShape([None, rank]), TensorShape([None])]


def _segment_shape(ctx, num_segments=None):
    data = ctx.shape(0)
    (ni,) = dims_with_rank(ctx, 1, 1)
    (ns,) = dims_with_rank(ctx, 2, 1)
    if ni is not None and ns is not None and ni != ns:
        raise ValueError(f"Dimension 0 in both shapes must be equal, but are {ni} and {ns}. "
                         f"Shapes are [{ni}] and [{ns}].")
    if data.ndims is None:
        return TensorShape(None)
    if data.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.ndims}")
    return TensorShape([num_segments]).concatenate(data[1:])


def _segment_num_shape(ctx):
    dims_with_rank(ctx, 3, 0)
    n = ctx.constant(3)
    return _segment_shape(ctx, None if n is None else int(n))


def _segment_grad_shape(ctx):
    n = ctx.constant(3)
    grad = ctx.shape(0)
    rest = grad[1:] if grad.ndims is not None else TensorShape(None)
    return TensorShape([None if n is None else int(n)]).concatenate(rest)


def _segment_grad_v2_shape(ctx):
    grad = ctx.shape(0)
    rest = grad[1:] if grad.ndims is not None else TensorShape(None)
    return [TensorShape([None]).concatenate(rest), TensorShape([None])]


def _dense_add_shape(ctx):
    return ctx.shape(3)


def _list_diff_shape(ctx):
    dims_with_rank(ctx, 0, 1)
    dims_with_rank(ctx, 1, 1)
    return [TensorShape([None]), TensorShape([None])]


# -- declarations ----------------------------------------------------------------------

SP = ["indices: int64", "values: T", "shape: int64"]

register_op("SparseToDense", ["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
                              "default_value: T"], ["dense: T"], attrs={"validate_indices": True},
            shape_fn=_sparse_to_dense_shape, allowed_types={"Tindices": INDEX})
register_op("SparseReorder", ["input_indices: int64", "input_values: T", "input_shape: int64"],
            ["output_indices: int64", "output_values: T"], shape_fn=_reorder_shape)
register_op("SparseReshape", ["input_indices: int64", "input_shape: int64", "new_shape: int64"],
            ["output_indices: int64", "output_shape: int64"], shape_fn=_reshape_shape)
register_op("SparseSlice", SP + ["start: int64", "size: int64"],
            ["output_indices: int64", "output_values: T", "output_shape: int64"], shape_fn=_slice_shape)
register_op("SparseSliceGrad", ["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
                                "output_indices: int64"], ["val_grad: T"], shape_fn=_values_grad_shape,
            allowed_types={"T": NUMBER})
register_op("SparseConcat", ["indices: N * int64", "values: N * T", "shapes: N * int64"],
            ["output_indices: int64", "output_values: T", "output_shape: int64"], attrs={"concat_dim": 0},
            shape_fn=_concat_shape)
register_op("SparseAdd", ["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64", "b_values: T",
                          "b_shape: int64", "thresh: Treal"],
            ["sum_indices: int64", "sum_values: T", "sum_shape: int64"], shape_fn=_add_shape,
            allowed_types={"T": NUMBER, "Treal": REAL})
register_op("SparseAddGrad", ["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
                              "sum_indices: int64"], ["a_val_grad: T", "b_val_grad: T"], shape_fn=_add_grad_shape,
            allowed_types={"T": NUMBER})
for _op, _types in (("SparseReduceSum", NUMBER), ("SparseReduceMax", REAL)):
    register_op(_op, ["input_indices: int64", "input_values: T", "input_shape: int64",
                      "reduction_axes: int32"], ["output: T"], attrs={"keep_dims": False},
                shape_fn=_reduce_shape, allowed_types={"T": _types})
    register_op(_op + "Sparse", ["input_indices: int64", "input_values: T", "input_shape: int64",
                                 "reduction_axes: int32"],
                ["output_indices: int64", "output_values: T", "output_shape: int64"], attrs={"keep_dims": False},
                shape_fn=_reduce_sparse_shape, allowed_types={"T": _types})
register_op("SparseTensorDenseMatMul", ["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
            ["product: T"], attrs={"Tindices": dtypes.int64, "adjoint_a": False, "adjoint_b": False},
            shape_fn=_matmul_shape, allowed_types={"Tindices": INDEX})
register_op("SparseSoftmax", ["sp_indices: int64", "sp_values: T", "sp_shape: int64"], ["output: T"],
            shape_fn=_values_shape, allowed_types={"T": FLOAT})
register_op("SparseFillEmptyRows", ["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
            ["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"], shape_fn=_fill_empty_rows_shape)
register_op("SparseFillEmptyRowsGrad", ["reverse_index_map: int64", "grad_values: T"],
            ["d_values: T", "d_default_value: T"], shape_fn=_fill_empty_rows_grad_shape)
register_op("SparseSplit", ["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
            ["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"], shape_fn=_split_shape)
for _op in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(_op, ["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64", "b_values: T",
                      "b_shape: int64"], ["output_indices: int64", "output_values: T"],
                shape_fn=_sparse_sparse_shape, allowed_types={"T": REAL})
_SEGMENT_ATTRS = {"Tidx": dtypes.int32, "Tsegmentids": dtypes.int32}
_SEGMENT_TYPES = {"T": FLOAT, "Tidx": INDEX, "Tsegmentids": INDEX, "Tnumsegments": INDEX}
for _op in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"):
    _types = dict(_SEGMENT_TYPES, T=REAL if _op == "SparseSegmentSum" else FLOAT)
    register_op(_op, ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"], ["output: T"],
                attrs=dict(_SEGMENT_ATTRS, sparse_gradient=False), shape_fn=_segment_shape, allowed_types=_types)
    register_op(_op + "WithNumSegments", ["data: T", "indices: Tidx", "segment_ids: Tsegmentids",
                                          "num_segments: Tnumsegments"], ["output: T"],
                attrs=dict(_SEGMENT_ATTRS, Tnumsegments=dtypes.int32, sparse_gradient=False),
                shape_fn=_segment_num_shape, allowed_types=_types)
    register_op(_op + "Grad", ["grad: T", "indices: Tidx", "segment_ids: Tsegmentids", "output_dim0: int32"],
                ["output: T"], attrs=dict(_SEGMENT_ATTRS), shape_fn=_segment_grad_shape, allowed_types=_types)
    register_op(_op + "GradV2", ["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                                 "dense_output_dim0: int32"], ["output: T", "sorted_unique_indices: Tidx"],
                attrs=dict(_SEGMENT_ATTRS), shape_fn=_segment_grad_v2_shape, allowed_types=_types)
for _op in ("SparseDenseCwiseMul", "SparseDenseCwiseDiv", "SparseDenseCwiseAdd"):
    register_op(_op, ["sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"], ["output: T"],
                shape_fn=_values_shape, allowed_types={"T": NUMBER})
register_op("SparseTensorDenseAdd", ["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
            ["output: T"], shape_fn=_dense_add_shape, allowed_types={"T": NUMBER, "Tindices": INDEX})
register_op("ListDiff", ["x: T", "y: T"], ["out: T", "idx: out_idx"], attrs={"out_idx": dtypes.int32},
            shape_fn=_list_diff_shape, allowed_types={"out_idx": INDEX})

"""Sparse tensors: `tf.SparseTensor` and `tf.sparse` (this package is the namespace), with TF's
ops (SparseToDense, SparseReorder, SparseAdd, SparseTensorDenseMatMul, SparseSegmentSum, ...),
numpy kernels and TF's gradients.

`sparse_tensor.py` the composite (and how Session.run fetches and feeds it), `ops.py` the
declarations, `kernels.py` the kernels, `grad.py` the gradients, `api.py` the TF1 functions,
`embedding.py` the sparse embedding lookups; `cross.py` (SparseCross: `tf.sparse.cross*`),
`serialization.py` ((de)serializing SparseTensors), `sparse_matmul.py` and `bincount.py` each hold one op
family's declarations, kernel and API. Importing registers them all.
"""
from .sparse_tensor import (SparseTensor, SparseTensorValue, convert_to_tensor_or_sparse_tensor,  # noqa: F401
                            is_sparse)
from . import ops as _ops, kernels as _kernels, grad as _grad  # noqa: F401 - registers ops, kernels, gradients
from .api import (from_dense, setdiff1d, sparse_add, sparse_concat, sparse_eye, sparse_expand_dims,  # noqa: F401
                  sparse_fill_empty_rows, sparse_mask, sparse_maximum, sparse_merge, sparse_minimum,
                  sparse_placeholder, sparse_reduce_max, sparse_reduce_max_sparse, sparse_reduce_sum,
                  sparse_reduce_sum_sparse, sparse_reorder, sparse_reset_shape, sparse_reshape, sparse_retain,
                  sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum, sparse_slice, sparse_softmax,
                  sparse_split, sparse_tensor_dense_matmul, sparse_tensor_to_dense, sparse_to_dense,
                  sparse_to_indicator, sparse_transpose)
from .embedding import embedding_lookup_sparse, safe_embedding_lookup_sparse  # noqa: F401
from .cross import sparse_cross, sparse_cross_hashed
from .serialization import deserialize_many_sparse, serialize_many_sparse, serialize_sparse
from .sparse_matmul import sparse_matmul
from .bincount import bincount  # noqa: F401 - tf.sparse.bincount

# The tf.sparse names
add = sparse_add
concat = sparse_concat
cross = sparse_cross
cross_hashed = sparse_cross_hashed
expand_dims = sparse_expand_dims
eye = sparse_eye
fill_empty_rows = sparse_fill_empty_rows
mask = sparse_mask
matmul = sparse_dense_matmul = sparse_tensor_dense_matmul
maximum = sparse_maximum
merge = sparse_merge
minimum = sparse_minimum
placeholder = sparse_placeholder
reduce_max = sparse_reduce_max
reduce_max_sparse = sparse_reduce_max_sparse
reduce_sum = sparse_reduce_sum
reduce_sum_sparse = sparse_reduce_sum_sparse
reorder = sparse_reorder
reset_shape = sparse_reset_shape
reshape = sparse_reshape
retain = sparse_retain
segment_mean = sparse_segment_mean
segment_sqrt_n = sparse_segment_sqrt_n
segment_sum = sparse_segment_sum
slice = sparse_slice  # noqa: A001 - the TF name
softmax = sparse_softmax
split = sparse_split
to_dense = sparse_tensor_to_dense
to_indicator = sparse_to_indicator
transpose = sparse_transpose

# The TF1 top-level names (`from .sparse import *` in graphrt/__init__.py)
__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor", "deserialize_many_sparse",
           "serialize_many_sparse", "serialize_sparse", "setdiff1d", "sparse_matmul", "sparse_add",
           "sparse_concat", "sparse_fill_empty_rows", "sparse_mask", "sparse_maximum", "sparse_merge",
           "sparse_minimum", "sparse_placeholder", "sparse_reduce_max", "sparse_reduce_max_sparse",
           "sparse_reduce_sum", "sparse_reduce_sum_sparse", "sparse_reorder", "sparse_reset_shape",
           "sparse_reshape", "sparse_retain", "sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_segment_sum",
           "sparse_slice", "sparse_softmax", "sparse_split", "sparse_tensor_dense_matmul", "sparse_tensor_to_dense",
           "sparse_to_dense", "sparse_to_indicator", "sparse_transpose"]

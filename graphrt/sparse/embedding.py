"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`, built as TF
builds them (embedding_ops.py): without weights a SparseSegment{Sum,Mean,SqrtN} over the
params (its gradient an IndexedSlices), with weights a gather, a product and segment sums.
Sharded params (a list of several) go through embedding_lookup's "mod"/"div" routing.
"""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..embedding import embedding_lookup
from ..ops import array_ops, extra_ops, math_ops
from ..ops.partitioned_variable import PartitionedVariable
from . import api
from .sparse_tensor import SparseTensor


def _single_params(params):
    """One table as itself; a list of shards (or a partitioned variable's parts) as a list (a list
    of one is that one)."""
    if isinstance(params, PartitionedVariable):
        params = list(params)
    if isinstance(params, (list, tuple)):
        return params[0] if len(params) == 1 else list(params)
    return params


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None, combiner=None,
                            max_norm=None, allow_fast_lookup=False):
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    params = _single_params(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    ignore_weights = sp_weights is None
    if not ignore_weights:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor,got {type(sp_weights)}")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    with get_default_graph().name_scope(name or "embedding_lookup_sparse") as scope:
        segment_ids = convert_to_tensor(sp_ids.indices[:, 0], name="segment_ids")
        return _lookup(params, segment_ids, sp_weights, sp_ids.values, combiner, ignore_weights, max_norm,
                       partition_strategy, scope)


def _lookup(params, segment_ids, sp_weights, ids, combiner, ignore_weights, max_norm, partition_strategy, name):
    if not isinstance(params, list):
        params = params if hasattr(params, "dtype") else convert_to_tensor(params, name="params")
    if ignore_weights and max_norm is None and not isinstance(params, list):
        # TF's fast path: one sparse segment reduction over the params, a sparse gradient.
        if segment_ids.dtype not in (dtypes.int32, dtypes.int64):
            segment_ids = math_ops.cast(segment_ids, dtypes.int32)
        reduce = {"sum": api.sparse_segment_sum, "mean": api.sparse_segment_mean,
                  "sqrtn": api.sparse_segment_sqrt_n}[combiner]
        return reduce(params, ids, segment_ids, name=name, sparse_gradient=True)
    ids, idx = extra_ops.unique(ids)
    embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
    if ignore_weights:
        reduce = {"sum": api.sparse_segment_sum, "mean": api.sparse_segment_mean,
                  "sqrtn": api.sparse_segment_sqrt_n}[combiner]
        return reduce(embeddings, idx, segment_ids, name=name)
    if segment_ids.dtype != dtypes.int32:
        segment_ids = math_ops.cast(segment_ids, dtypes.int32)
    weights = sp_weights.values
    embeddings = array_ops.gather(embeddings, idx)
    original_dtype = embeddings.dtype
    if embeddings.dtype == dtypes.float16:
        embeddings = math_ops.cast(embeddings, dtypes.float32)
    if weights.dtype != embeddings.dtype:
        weights = math_ops.cast(weights, embeddings.dtype)
    ones_shape = array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0)
    weights_shape = array_ops.shape(weights)
    ones = array_ops.ones(ones_shape, dtype=weights_shape.dtype)
    bcast_weights_shape = array_ops.concat([weights_shape, ones], 0)
    orig_weights_shape = weights.shape
    weights = array_ops.reshape(weights, bcast_weights_shape)
    if embeddings.shape.ndims is not None:
        weights.set_shape(orig_weights_shape.concatenate([1] * (embeddings.shape.ndims - 1)))
    embeddings *= weights
    if combiner == "sum":
        embeddings = extra_ops.segment_sum(embeddings, segment_ids, name=name)
    elif combiner == "mean":
        embeddings = extra_ops.segment_sum(embeddings, segment_ids)
        weight_sum = extra_ops.segment_sum(weights, segment_ids)
        embeddings = extra_ops.div_no_nan(embeddings, weight_sum, name=name)
    else:
        embeddings = extra_ops.segment_sum(embeddings, segment_ids)
        weight_sum = extra_ops.segment_sum(math_ops.pow(weights, 2), segment_ids)
        embeddings = extra_ops.div_no_nan(embeddings, math_ops.sqrt(weight_sum), name=name)
    if embeddings.dtype != original_dtype:
        embeddings = math_ops.cast(embeddings, original_dtype)
    return embeddings


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, name=None, partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False):
    """embedding_lookup_sparse after dropping ids < 0 (and weights <= 0 unless summing); an empty
    row gives zeros, or the embedding of default_id. Any rank of ids: the last dim is the bag."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if isinstance(embedding_weights, (list, tuple)) and len(embedding_weights) < 1:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    shards = _single_params(embedding_weights)
    shards = shards if isinstance(shards, list) else [shards]
    shards = [w if hasattr(w, "dtype") and dtype in (None, w.dtype.base_dtype) else convert_to_tensor(w, dtype=dtype)
              for w in shards]
    if len({w.dtype.base_dtype for w in shards}) > 1:
        raise ValueError(f"All embedding_weights shards must have the same dtype, got "
                         f"{[w.dtype.name for w in shards]}")
    weights = shards[0] if len(shards) == 1 else shards
    with get_default_graph().name_scope(name or "embedding_lookup") as scope:
        original_shape = sparse_ids.dense_shape
        original_rank_dim = sparse_ids.dense_shape.shape[0]
        original_rank = array_ops.size(original_shape) if original_rank_dim is None else original_rank_dim
        sparse_ids = api.sparse_reshape(sparse_ids, array_ops.stack([
            math_ops.reduce_prod(array_ops.slice(original_shape, [0], [original_rank - 1])),
            array_ops.gather(original_shape, original_rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune_invalid_ids(sparse_ids, sparse_weights)
        if combiner != "sum":
            sparse_ids, sparse_weights = _prune_invalid_weights(sparse_ids, sparse_weights)
        sparse_ids, is_row_empty = api.sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = api.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(weights, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            is_row_empty = array_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                                          array_ops.stack([1, array_ops.shape(result)[1]]))
            result = math_ops.where(is_row_empty, array_ops.zeros_like(result), result, name=scope)
        final = array_ops.reshape(result, array_ops.concat([
            array_ops.slice(math_ops.cast(original_shape, dtypes.int32), [0], [original_rank - 1]),
            array_ops.slice(array_ops.shape(result), [1], [-1])], 0))
        outer = None if original_rank_dim is None else original_rank_dim - 1
        final.set_shape(TensorShape([None] * outer if outer is not None else None).concatenate(result.shape[1:]))
        return final


def _prune_invalid_ids(sparse_ids, sparse_weights):
    is_id_valid = math_ops.greater_equal(sparse_ids.values, 0)
    if sparse_weights is not None:
        is_id_valid = math_ops.logical_and(is_id_valid,
                                           array_ops.ones_like(sparse_weights.values, dtype=dtypes.bool))
    sparse_ids = api.sparse_retain(sparse_ids, is_id_valid)
    if sparse_weights is not None:
        sparse_weights = api.sparse_retain(sparse_weights, is_id_valid)
    return sparse_ids, sparse_weights


def _prune_invalid_weights(sparse_ids, sparse_weights):
    if sparse_weights is not None:
        is_weights_valid = math_ops.greater(sparse_weights.values, 0)
        sparse_ids = api.sparse_retain(sparse_ids, is_weights_valid)
        sparse_weights = api.sparse_retain(sparse_weights, is_weights_valid)
    return sparse_ids, sparse_weights

"""embedding_lookup over one table or its shards (see the package docstring)."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops
from ..ops.clip_ops import clip_by_norm
from ..ops.partitioned_variable import PartitionedVariable
from ..partition_stitch import dynamic_partition, parallel_dynamic_stitch


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """The rows of `params` for each id, shaped ids.shape + a row's shape. `params` is one
    tensor or variable, or a list of shards of one table (a partitioned variable is the list of
    its parts): id i is in shard i % n ("mod") or in
    the shard whose run of consecutive ids holds it ("div": the first (total % n) shards hold
    one row more). With `max_norm`, each row is clipped to that l2-norm."""
    shards = list(params) if isinstance(params, (list, tuple, PartitionedVariable)) else [params]
    if not shards:
        raise ValueError("Need at least one param")
    g = get_default_graph()
    with g.name_scope(name or "embedding_lookup") as scope:
        # tensors and variables as they are (a variable's gather has a sparse gradient); arrays once
        shards = [s if hasattr(s, "op") else convert_to_tensor(s, name="params") for s in shards]
        if len(shards) == 1:
            with g.colocate_with(_op_of(shards[0])):
                result = _clip(array_ops.gather(shards[0], ids, name=scope), ids, max_norm)
                return array_ops.identity(result)
        ids = convert_to_tensor(ids, name="ids")
        n = len(shards)
        flat_ids = array_ops.reshape(ids, [-1])
        original_indices = math_ops.range(array_ops.size(flat_ids))
        if partition_strategy == "mod":
            assignments = flat_ids % n
            new_ids = flat_ids // n
        elif partition_strategy == "div":
            assignments, new_ids = _div_assignments(shards, flat_ids, n)
        else:
            raise ValueError(f"Unrecognized partition strategy: {partition_strategy}. Must be one of either `mod` "
                             f"or `div`.")
        assignments = math_ops.cast(assignments, dtypes.int32)
        gather_ids = dynamic_partition(new_ids, assignments, n)
        positions = dynamic_partition(original_indices, assignments, n)
        rows = []
        for shard, shard_ids in zip(shards, gather_ids):
            with g.colocate_with(_op_of(shard)):
                rows.append(_clip(array_ops.gather(shard, shard_ids), shard_ids, max_norm))
        result = parallel_dynamic_stitch(positions, rows, name=scope)
        row_shape = _static_shape(shards[0])[1:]
        for shard in shards[1:]:
            row_shape = row_shape.merge_with(_static_shape(shard)[1:])
        if row_shape.is_fully_defined():
            row_dims = convert_to_tensor(row_shape.as_list(), dtype=dtypes.int32)
        else:
            with g.colocate_with(_op_of(shards[0])):
                row_dims = array_ops.shape(shards[0])[1:]
        result = array_ops.reshape(result, array_ops.concat([array_ops.shape(ids), row_dims], 0))
        result.set_shape(ids.shape.concatenate(row_shape))
        return result


def _div_assignments(shards, flat_ids, n):
    """(shard of each id, its row in the shard) for "div": runs of consecutive ids per shard."""
    rows = [_static_shape(s)[0] if _static_shape(s).ndims else None for s in shards]
    if None not in rows:
        num_ids = convert_to_tensor(sum(rows), dtype=flat_ids.dtype)
    else:
        sizes = [array_ops.shape(s)[0] for s in shards]
        num_ids = math_ops.reduce_sum(math_ops.cast(array_ops.stack(sizes), flat_ids.dtype))
    per_shard = num_ids // n
    extras = num_ids % n
    assignments = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    in_long_shard = math_ops.cast(assignments < extras, flat_ids.dtype)
    new_ids = (in_long_shard * (flat_ids % (per_shard + 1)) +
               (1 - in_long_shard) * ((flat_ids - extras) % per_shard))
    return assignments, new_ids


def _clip(rows, ids, max_norm):
    """`rows` (ids.shape + a row's shape) with each row clipped to l2-norm `max_norm`, as TF's."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = convert_to_tensor(ids).shape.ndims, rows.shape.ndims
    if ids_rank is None or rows_rank is None:
        raise NotImplementedError("embedding_lookup(max_norm=...) needs ids and params of known rank")
    return clip_by_norm(rows, max_norm, axes=list(range(ids_rank, rows_rank)))


def _op_of(shard):
    return shard.op


def _static_shape(shard):
    return TensorShape(shard.get_shape())

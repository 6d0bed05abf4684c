"""TF1's partitioners (`tf.fixed_size_partitioner`, `tf.variable_axis_size_partitioner`,
`tf.min_max_variable_partitioner`) and `tf.create_partitioned_variables`.

A partitioner is called as `partitioner(shape=TensorShape, dtype=DType)` and
answers how many parts each axis gets; `get_variable(partitioner=...)`
(ops/variable_scope.py) creates the parts (ops/partitioned_variable.py).
"""
import math

from .framework import dtypes
from .framework.tensor_shape import TensorShape
from .ops import variable_scope


def fixed_size_partitioner(num_shards, axis=0):
    """`num_shards` parts along `axis` (fewer when the axis is shorter)."""

    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis].value)
        return partitions
    return _partitioner


def _element_bytes(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype == dtypes.string else dtype.size


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """Parts along `axis` of at most `max_shard_bytes` each where one axis allows it (at most
    one part per index of the axis, and at most `max_shards` parts)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        # TF's words, its missing space included
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
                         f"max_shard_bytes is {max_shard_bytes} andbytes_per_string_element is "
                         f"{bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        length = shape.dims[axis].value
        bytes_per_index = shape.num_elements() / length * _element_bytes(dtype, bytes_per_string_element)
        indices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_index))
        shards = int(math.ceil(length / indices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * shape.ndims
        partitions[axis] = shards
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """As many parts along `axis` as keep each at least `min_slice_size` bytes, at most
    `max_partitions` (and at most the axis's length)."""

    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.dims[axis].value, max_partitions,
                                      int(math.ceil(total_bytes / min_slice_size))))
        return partitions
    return _partitioner


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32, trainable=True,
                                 collections=None, name=None, reuse=None):
    """TF1's older form: the parts of a variable of `shape` cut as `slicing` says, as a list
    (named `<name or PartitionedVariable>/part_<i>`)."""
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the length: shape: "
                         f"{shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope.variable_scope(name, "PartitionedVariable", reuse=reuse):
        scope = variable_scope.get_variable_scope()
        store = variable_scope._get_default_variable_store()
        whole = store._get_partitioned_variable(
            scope.name, lambda **unused: list(slicing), shape=shape, dtype=dtype, initializer=initializer,
            reuse=scope.reuse, trainable=trainable, collections=collections)
        return list(whole)

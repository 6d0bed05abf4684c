"""Dense columns (TF's feature_column_v2 classes, with TF1's `_` protocol): numbers,
bucketized numbers (also categorical), indicators (multi-hot) and embeddings of a
categorical column, and embeddings that share one variable (TF1's
`_SharedEmbeddingColumn`, found through a graph collection).
"""
import collections
import math

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, extra_ops, math_ops
from ..ops.variables import truncated_normal_initializer
from ..ops.variable_scope import get_variable
from ..records.parsing import FixedLenFeature
from ..sparse import api as sparse_api
from ..sparse.embedding import safe_embedding_lookup_sparse
from ..sparse.sparse_tensor import SparseTensor
from .base import _CategoricalColumn, _DenseColumn, assert_key_is_string
from .categorical import WeightedCategoricalColumn
from .ops import bucketize


class NumericColumn(_DenseColumn, collections.namedtuple("NumericColumn",
                                                         ("key", "shape", "default_value", "dtype", "normalizer_fn"))):

    name = property(lambda self: self.key)
    _variable_shape = property(lambda self: TensorShape(self.shape))
    _parse_example_spec = property(lambda self: {self.key: FixedLenFeature(self.shape, self.dtype,
                                                                            self.default_value)})

    def _transform_feature(self, inputs):
        input_tensor = inputs.get(self.key)
        if isinstance(input_tensor, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. SparseTensor is not "
                             f"supported. key: {self.key}")
        if self.normalizer_fn is not None:
            input_tensor = self.normalizer_fn(input_tensor)
        return math_ops.cast(input_tensor, dtypes.float32)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return inputs.get(self)


class BucketizedColumn(_DenseColumn, _CategoricalColumn,
                       collections.namedtuple("BucketizedColumn", ("source_column", "boundaries"))):
    """Dense: one-hot buckets per element; categorical: element i's bucket + i * (buckets)."""

    name = property(lambda self: f"{self.source_column.name}_bucketized")
    _parse_example_spec = property(lambda self: self.source_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,)))
    _num_buckets = property(lambda self: (len(self.boundaries) + 1) * self.source_column.shape[0])

    def _transform_feature(self, inputs):
        return bucketize(inputs.get(self.source_column), boundaries=self.boundaries)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return array_ops.one_hot(math_ops.cast(inputs.get(self), dtypes.int64), depth=len(self.boundaries) + 1,
                                 on_value=1., off_value=0.)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        input_tensor = inputs.get(self)
        batch_size = array_ops.shape(input_tensor)[0]
        source_dimension = self.source_column.shape[0]
        i1 = array_ops.reshape(array_ops.tile(array_ops.expand_dims(math_ops.range(0, batch_size), 1),
                                              [1, source_dimension]), (-1,))
        i2 = array_ops.tile(math_ops.range(0, source_dimension), [batch_size])
        bucket_indices = array_ops.reshape(input_tensor, (-1,)) + (len(self.boundaries) + 1) * i2
        indices = math_ops.cast(array_ops.transpose(array_ops.stack((i1, i2))), dtypes.int64)
        dense_shape = math_ops.cast(array_ops.stack([batch_size, source_dimension]), dtypes.int64)
        return self.IdWeightPair(SparseTensor(indices=indices, values=bucket_indices, dense_shape=dense_shape), None)


class IndicatorColumn(_DenseColumn, collections.namedtuple("IndicatorColumn", ("categorical_column",))):
    """Multi-hot: per row, the count of each id (or the sum of its weights)."""

    name = property(lambda self: f"{self.categorical_column.name}_indicator")
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([1, self.categorical_column._num_buckets]))

    def _transform_feature(self, inputs):
        id_tensor, weight_tensor = self.categorical_column._get_sparse_tensors(inputs)
        size = self._variable_shape[-1]
        if weight_tensor is not None:
            weighted = sparse_api.sparse_merge(sp_ids=id_tensor, sp_values=weight_tensor, vocab_size=int(size))
            weighted = sparse_api.sparse_slice(weighted, [0, 0], weighted.dense_shape)
            return extra_ops.scatter_nd(weighted.indices, weighted.values, weighted.dense_shape)
        dense_ids = sparse_api.sparse_tensor_to_dense(id_tensor, default_value=-1)
        one_hot = array_ops.one_hot(dense_ids, depth=size, on_value=1.0, off_value=0.0)
        return math_ops.reduce_sum(one_hot, axis=[-2])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return inputs.get(self)


def _lookup(column, weights, sparse_tensors):
    return safe_embedding_lookup_sparse(weights, sparse_tensors.id_tensor, sparse_tensors.weight_tensor,
                                        combiner=column.combiner, name=f"{column.name}_weights",
                                        max_norm=column.max_norm)


class EmbeddingColumn(_DenseColumn, collections.namedtuple(
        "EmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
                            "tensor_name_in_ckpt", "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """The combined embeddings (`embedding_weights`, [num_buckets, dimension]) of a row's ids."""

    name = property(lambda self: f"{self.categorical_column.name}_embedding")
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([self.dimension]))

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        sparse_tensors = self.categorical_column._get_sparse_tensors(inputs, weight_collections, trainable)
        if weight_collections and "variables" not in weight_collections:
            weight_collections.append("variables")
        weights = get_variable(name="embedding_weights",
                               shape=(self.categorical_column._num_buckets, self.dimension), dtype=dtypes.float32,
                               initializer=self.initializer, trainable=self.trainable and trainable,
                               collections=weight_collections)
        return _lookup(self, weights, sparse_tensors)


class _SharedEmbeddingColumn(_DenseColumn, collections.namedtuple(
        "_SharedEmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer",
                                   "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
                                   "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """An embedding whose variable the first column of the group creates (under the
    group's scope name) and puts in the graph collection named after the group."""

    name = property(lambda self: f"{self.categorical_column.name}_shared_embedding")
    _var_scope_name = property(lambda self: self.shared_embedding_collection_name)
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([self.dimension]))

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        g = get_default_graph()
        with g.name_scope(self.name):
            sparse_tensors = self.categorical_column._get_sparse_tensors(inputs, weight_collections, trainable)
            shape = (self.categorical_column._num_buckets, self.dimension)
            shared = g.get_collection(self.shared_embedding_collection_name)
            if shared:
                if len(shared) > 1:
                    raise ValueError(f"Collection {shared} can only contain one variable. Suggested fix A: Choose a "
                                     "unique name for this collection. Suggested fix B: Do not add any variables to "
                                     "this collection. The feature_column library already adds a variable under "
                                     "the hood.")
                weights = shared[0]
                if weights.get_shape() != shape:
                    raise ValueError(f"Shared embedding collection {self.shared_embedding_collection_name} contains "
                                     f"variable {weights.name} of unexpected shape {weights.get_shape()}. Expected "
                                     f"shape is {shape}. Suggested fix A: Choose a unique name for this collection. "
                                     "Suggested fix B: Do not add any variables to this collection. The "
                                     "feature_column library already adds a variable under the hood.")
            else:
                weights = get_variable(name="embedding_weights", shape=shape, dtype=dtypes.float32,
                                       initializer=self.initializer, trainable=self.trainable and trainable,
                                       collections=weight_collections)
                g.add_to_collection(self.shared_embedding_collection_name, weights)
            return _lookup(self, weights, sparse_tensors)


# -- constructors (TF's checks and messages) -----------------------------------------------------

def _check_shape(shape, key):
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    for dimension in shape:
        if not isinstance(dimension, int):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if dimension < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    return shape


def _flatten(value):
    return [x for v in value for x in _flatten(v)] if isinstance(value, (list, tuple)) else [value]


def _nested_tuple(value):
    return tuple(_nested_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def _shape_of(value):
    if not isinstance(value, (list, tuple)):
        return ()
    inner = {_shape_of(v) for v in value}
    return (len(value),) + inner.pop() if len(inner) == 1 else (len(value), None)


def _check_default_value(shape, default_value, dtype, key):
    """TF's fc_utils.check_default_value: a number fills `shape`; a nested list must have `shape`."""
    if default_value is None:
        return None
    if isinstance(default_value, int) or (isinstance(default_value, float) and dtype.is_floating):
        filled = default_value
        for dim in reversed(shape):
            filled = tuple(filled for _ in range(dim))
        return filled
    if callable(getattr(default_value, "tolist", None)):
        default_value = default_value.tolist()
    if isinstance(default_value, (list, tuple)):
        if _shape_of(default_value) != tuple(shape):
            raise ValueError(f"The shape of default_value must be equal to given shape. default_value: "
                             f"{default_value}, shape: {shape}, key: {key}")
        flat = _flatten(default_value)
        if all(isinstance(v, int) for v in flat) or (any(isinstance(v, float) for v in flat) and dtype.is_floating):
            return _nested_tuple(default_value)
    raise TypeError(f"default_value must be compatible with dtype. default_value: {default_value}, dtype: {dtype}, "
                    f"key: {key}")


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    shape = _check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    default_value = _check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    assert_key_is_string(key)
    return NumericColumn(key, shape=shape, default_value=default_value, dtype=dtype, normalizer_fn=normalizer_fn)


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries:
        raise ValueError("boundaries must not be empty.")
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def indicator_column(categorical_column):
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: {categorical_column}")
    return IndicatorColumn(categorical_column)


def _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt, initializer, message):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if ckpt_to_load_from is not None:
        raise NotImplementedError("graphrt's embedding columns do not load from checkpoints (ckpt_to_load_from)")
    if initializer is not None and not callable(initializer):
        raise ValueError(message)
    return initializer or truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    initializer = _check_embedding_args(
        dimension, ckpt_to_load_from, tensor_name_in_ckpt, initializer,
        f"initializer must be callable if specified. Embedding of column_name: {categorical_column.name}")
    return EmbeddingColumn(categorical_column=categorical_column, dimension=dimension, combiner=combiner,
                           initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
                           tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable,
                           use_safe_embedding_lookup=use_safe_embedding_lookup)


def _unweighted(column):
    while isinstance(column, WeightedCategoricalColumn):
        column = column.categorical_column
    return column


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                             max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    initializer = _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt, initializer,
                                        "initializer must be callable if specified.")
    sorted_columns = sorted(categorical_columns, key=lambda x: x.name)
    c0 = sorted_columns[0]
    num_buckets = c0._num_buckets
    if not isinstance(c0, _CategoricalColumn):
        raise ValueError(f"All categorical_columns must be subclasses of _CategoricalColumn. Given: {c0}, of type: "
                         f"{type(c0)}")
    c0 = _unweighted(c0)
    for c in sorted_columns[1:]:
        c = _unweighted(c)
        if not isinstance(c, type(c0)):
            raise ValueError("To use shared_embedding_column, all categorical_columns must have the same type, or be "
                             "weighted_categorical_column or sequence column of the same type. Given column: "
                             f"{c0} of type: {type(c0)} does not match given column: {c} of type: {type(c)}")
        if num_buckets != c._num_buckets:
            raise ValueError("To use shared_embedding_column, all categorical_columns must have the same number of "
                             f"buckets. ven column: {c0} with buckets: {num_buckets} does  not match column: {c} "
                             f"with buckets: {c._num_buckets}")
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in sorted_columns) + "_shared_embedding"
    return [_SharedEmbeddingColumn(categorical_column=column, initializer=initializer, dimension=dimension,
                                   combiner=combiner, shared_embedding_collection_name=shared_embedding_collection_name,
                                   ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
                                   max_norm=max_norm, trainable=trainable,
                                   use_safe_embedding_lookup=use_safe_embedding_lookup)
            for column in categorical_columns]

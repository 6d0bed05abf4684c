"""Categorical columns (TF's feature_column_v2 classes, with TF1's `_` protocol):
ids by hashing, by vocabulary (list or file, with OOV buckets), by identity,
weighted ids, and hashed crosses. Each transforms its raw feature into a
SparseTensor of int64 ids in [0, num_buckets).
"""
import collections

import numpy as np

from ..framework import dtypes
from ..lookup.tables import index_table_from_file, index_table_from_tensor
from ..ops import array_ops, math_ops
from ..ops.variable_scope import init_scope
from ..records.parsing import VarLenFeature
from ..sparse.cross import sparse_cross_hashed
from ..sparse.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from ..strings import ops as string_ops
from .base import (_CategoricalColumn, _FeatureColumn, assert_key_is_string, assert_string_or_int,
                   to_sparse_input_and_drop_ignore_values)


def _check_compatible(column, input_tensor):
    if column.dtype.is_integer != input_tensor.dtype.is_integer:
        raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {column.key}, "
                         f"column dtype: {column.dtype}, tensor dtype: {input_tensor.dtype}")
    assert_string_or_int(input_tensor.dtype, prefix=f"column_name: {column.key} input_tensor")


class HashedCategoricalColumn(_CategoricalColumn,
                              collections.namedtuple("HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: self.hash_bucket_size)
    _parse_example_spec = property(lambda self: {self.key: VarLenFeature(self.dtype)})

    def _transform_feature(self, inputs):
        input_tensor = to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        if not isinstance(input_tensor, SparseTensor):
            raise ValueError("SparseColumn input must be a SparseTensor.")
        assert_string_or_int(input_tensor.dtype, prefix=f"column_name: {self.key} input_tensor")
        if self.dtype.is_integer != input_tensor.dtype.is_integer:
            raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {self.key}, "
                             f"column dtype: {self.dtype}, tensor dtype: {input_tensor.dtype}")
        values = input_tensor.values if self.dtype == dtypes.string else string_ops.as_string(input_tensor.values)
        ids = string_ops.to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(input_tensor.indices, ids, input_tensor.dense_shape)


class _TableColumn(_CategoricalColumn):
    """Ids by a lookup table built once per transformation (`_make_table`)."""

    name = property(lambda self: self.key)
    _parse_example_spec = property(lambda self: {self.key: VarLenFeature(self.dtype)})

    def _transform_feature(self, inputs):
        input_tensor = to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        _check_compatible(self, input_tensor)
        key_dtype = self.dtype
        if input_tensor.dtype.is_integer:
            key_dtype = dtypes.int64
            input_tensor = SparseTensor(input_tensor.indices, math_ops.cast(input_tensor.values, dtypes.int64),
                                        input_tensor.dense_shape)
        with init_scope():  # TF lifts tables out of control flow
            table = self._make_table(key_dtype, f"{self.key}_lookup")
        return table.lookup(input_tensor)


class VocabularyListCategoricalColumn(
        _TableColumn, collections.namedtuple("VocabularyListCategoricalColumn",
                                             ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):

    _num_buckets = property(lambda self: len(self.vocabulary_list) + self.num_oov_buckets)

    def _make_table(self, key_dtype, name):
        return index_table_from_tensor(vocabulary_list=tuple(self.vocabulary_list), default_value=self.default_value,
                                       num_oov_buckets=self.num_oov_buckets, dtype=key_dtype, name=name)


class VocabularyFileCategoricalColumn(
        _TableColumn, collections.namedtuple("VocabularyFileCategoricalColumn",
                                             ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
                                              "default_value", "file_format"))):

    _num_buckets = property(lambda self: self.vocabulary_size + self.num_oov_buckets)

    def _make_table(self, key_dtype, name):
        return index_table_from_file(vocabulary_file=self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
                                     vocab_size=self.vocabulary_size, default_value=self.default_value,
                                     key_dtype=key_dtype, name=name)


class IdentityCategoricalColumn(
        _CategoricalColumn, collections.namedtuple("IdentityCategoricalColumn",
                                                   ("key", "number_buckets", "default_value"))):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: self.number_buckets)
    _parse_example_spec = property(lambda self: {self.key: VarLenFeature(dtypes.int64)})

    def _transform_feature(self, inputs):
        input_tensor = to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        if not input_tensor.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {input_tensor.dtype}")
        values = input_tensor.values
        if values.dtype != dtypes.int64:
            values = math_ops.cast(values, dtypes.int64, name="values")
        if self.default_value is not None:
            num_buckets = math_ops.cast(self.num_buckets, dtypes.int64, name="num_buckets")
            zero = math_ops.cast(0, dtypes.int64, name="zero")
            out_of_range = math_ops.logical_or(values < zero, values >= num_buckets, name="out_of_range")
            defaults = array_ops.fill(array_ops.shape(values), math_ops.cast(self.default_value, dtypes.int64),
                                      name="default_values")
            values = math_ops.where_v2(out_of_range, defaults, values)
        return SparseTensor(input_tensor.indices, values, input_tensor.dense_shape)


class WeightedCategoricalColumn(
        _CategoricalColumn, collections.namedtuple("WeightedCategoricalColumn",
                                                   ("categorical_column", "weight_feature_key", "dtype"))):

    name = property(lambda self: f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}")
    _num_buckets = property(lambda self: self.categorical_column._num_buckets)

    @property
    def _parse_example_spec(self):
        config = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists for "
                             f"{self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    def _transform_feature(self, inputs):
        weight_tensor = inputs.get(self.weight_feature_key)
        if weight_tensor is None:
            raise ValueError(f"Missing weights {self.weight_feature_key}.")
        weight_tensor = convert_to_tensor_or_sparse_tensor(weight_tensor)
        if self.dtype != weight_tensor.dtype.base_dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got {weight_tensor.dtype}.")
        if not isinstance(weight_tensor, SparseTensor):
            weight_tensor = to_sparse_input_and_drop_ignore_values(weight_tensor, ignore_value=0.0)
        if not weight_tensor.dtype.is_floating:
            weight_tensor = SparseTensor(weight_tensor.indices, math_ops.cast(weight_tensor.values, dtypes.float32),
                                         weight_tensor.dense_shape)
        return inputs.get(self.categorical_column), weight_tensor

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return self.IdWeightPair(*inputs.get(self))


def _leaf_keys(cross):
    keys = []
    for k in cross.keys:
        keys.extend(_leaf_keys(k) if isinstance(k, CrossedColumn) else [k])
    return keys


class CrossedColumn(_CategoricalColumn,
                    collections.namedtuple("CrossedColumn", ("keys", "hash_bucket_size", "hash_key"))):

    _num_buckets = property(lambda self: self.hash_bucket_size)

    @property
    def name(self):
        return "_X_".join(sorted(k.name if isinstance(k, _FeatureColumn) else k for k in _leaf_keys(self)))

    @property
    def _parse_example_spec(self):
        config = {}
        for key in self.keys:
            config.update(key._parse_example_spec if isinstance(key, _FeatureColumn)
                          else {key: VarLenFeature(dtypes.string)})
        return config

    def _transform_feature(self, inputs):
        feature_tensors = []
        for key in _leaf_keys(self):
            if isinstance(key, str):
                feature_tensors.append(inputs.get(key))
            elif isinstance(key, _CategoricalColumn):
                ids_and_weights = key._get_sparse_tensors(inputs)
                if ids_and_weights.weight_tensor is not None:
                    raise ValueError("crossed_column does not support weight_tensor, but the given column "
                                     f"populates weight_tensor. Given column: {key.name}")
                feature_tensors.append(ids_and_weights.id_tensor)
            else:
                raise ValueError(f"Unsupported column type. Given: {key}")
        return sparse_cross_hashed(inputs=feature_tensors, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)


# -- constructors (TF's checks and messages) -----------------------------------------------------

def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    assert_key_is_string(key)
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    return HashedCategoricalColumn(key, hash_bucket_size, dtype)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0,
                                            default_value=None, dtype=dtypes.string):
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        try:
            with open(vocabulary_file, "rb") as f:
                vocabulary_size = sum(1 for _ in f)
        except FileNotFoundError:
            raise ValueError(f"vocabulary_file in {key} does not exist.") from None
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyFileCategoricalColumn(key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
                                           num_oov_buckets=num_oov_buckets or 0,
                                           default_value=-1 if default_value is None else default_value,
                                           dtype=dtype, file_format=None)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    array = np.array(vocabulary_list)
    vocabulary_dtype = dtypes.string if array.dtype.kind in "USO" else dtypes.as_dtype(array.dtype)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    assert_string_or_int(vocabulary_dtype, prefix=f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    elif dtypes.as_dtype(dtype).is_integer != vocabulary_dtype.is_integer:
        raise ValueError(f"dtype {dtypes.as_dtype(dtype)} and vocabulary dtype {vocabulary_dtype} do not match, "
                         f"column_name: {key}")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyListCategoricalColumn(key=key, vocabulary_list=tuple(vocabulary_list), dtype=dtype,
                                           default_value=default_value, num_oov_buckets=num_oov_buckets)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    assert_key_is_string(key)
    return IdentityCategoricalColumn(key=key, number_buckets=num_buckets, default_value=default_value)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column=categorical_column, weight_feature_key=weight_feature_key,
                                     dtype=dtype)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, _CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or categorical column except "
                             f"HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             "crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {key}")
    return CrossedColumn(keys=tuple(keys), hash_bucket_size=hash_bucket_size, hash_key=hash_key)

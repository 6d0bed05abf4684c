"""TF1's `input_layer` (the concatenated dense tensors of columns), `linear_model`
(a weighted sum of columns plus a bias, categorical columns as multi-hot) and
`make_parse_example_spec`.

Columns are built in the order of their names, each under a variable scope named
after it (`input_layer/<column>/...`, `linear_model/<column>/weights`,
`linear_model/bias_weights`), as TF names them.
"""
import collections.abc

from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..ops import array_ops, math_ops, nn_ops
from ..ops.variable_scope import get_variable, get_variable_scope, variable_scope
from ..ops.variables import zeros_initializer
from ..sparse import api as sparse_api
from ..sparse.embedding import safe_embedding_lookup_sparse
from .base import _CategoricalColumn, _DenseColumn, _FeatureColumn, _LazyBuilder


def _normalize_feature_columns(feature_columns):
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, collections.abc.Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given (type {type(column)}): "
                             f"{column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {column} and {by_name[column.name]}. "
                             "This usually means that these columns refer to same base feature. Either one must be "
                             "discarded or a duplicated but renamed item must be inserted in features dict.")
        by_name[column.name] = column
    return list(feature_columns)


def _weight_collections(weight_collections):
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _verify_static_batch_size_equality(tensors, columns):
    expected, first = None, None
    for tensor, column in zip(tensors, columns):
        size = tensor.shape[0] if tensor.shape.ndims else None
        size = getattr(size, "value", size)
        if size is None:
            continue
        if expected is None:
            expected, first = size, column
        elif expected != size:
            raise ValueError("Batch size (first dimension) of each feature must be same. Batch size of columns "
                             f"({first.name}, {column.name}): ({expected}, {size})")


def _flat_dense(column, builder, weight_collections, trainable):
    """The column's dense tensor as [batch, elements]."""
    tensor = column._get_dense_tensor(builder, weight_collections=weight_collections, trainable=trainable)
    num_elements = column._variable_shape.num_elements()
    flat = array_ops.reshape(tensor, shape=array_ops.stack([array_ops.shape(tensor)[0], num_elements]))
    if tensor.shape.ndims:  # TF's reshape infers the batch dimension from the shape tensor
        flat.set_shape([tensor.shape[0], num_elements])
    return flat


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """[batch, sum of the columns' sizes]: each dense column's tensor, flattened, in the order of their names."""
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a categorical column with "
                             f"an embedding_column or indicator_column. Given: {column}")
    weight_collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="input_layer"):
        builder = _LazyBuilder(features)
        outputs, ordered = [], []
        for column in sorted(feature_columns, key=lambda x: x.name):
            ordered.append(column)
            with variable_scope(None, default_name=column._var_scope_name):
                output = _flat_dense(column, builder, weight_collections, trainable)
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_default_graph().get_collection(
                        GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _verify_static_batch_size_equality(outputs, ordered)
        return array_ops.concat(outputs, 1)


def _categorical_weighted_sum(column, builder, sparse_combiner, weight_collections, trainable, weight):
    id_tensor, weight_tensor = column._get_sparse_tensors(builder, weight_collections=weight_collections,
                                                          trainable=trainable)
    id_tensor = _to_2d(id_tensor)
    if weight_tensor is not None:
        weight_tensor = _to_2d(weight_tensor)
    return safe_embedding_lookup_sparse(weight, id_tensor, sparse_weights=weight_tensor, combiner=sparse_combiner,
                                        name="weighted_sum")


def _to_2d(sp):
    """[batch, -1]: a row's ids in all its dimensions form one bag."""
    return sparse_api.sparse_reshape(sp, array_ops.stack([sp.dense_shape[0], math_ops.cast(-1, dtypes.int64)]))


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None, trainable=True,
                 cols_to_vars=None):
    """[batch, units]: the sum of each column times its `weights` (zeros at first) plus `bias_weights`."""
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, (_DenseColumn, _CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or _CategoricalColumn. "
                             f"Given: {column}")
    weight_collections = _weight_collections(weight_collections)
    columns = sorted(feature_columns, key=lambda x: x.name)
    # As TF's Keras-style _LinearModel: the model's and the columns' scope names are made unique
    # where linear_model is called (a second model's column `word` is `linear_model_1/word_1`).
    with variable_scope(None, default_name="linear_model") as scope:
        model_name = scope.name.rsplit("/", 1)[-1]
    scope_names = []
    for column in columns:
        with variable_scope(None, default_name=column._var_scope_name) as scope:
            scope_names.append(scope.name.rsplit("/", 1)[-1])
    with variable_scope(model_name):
        builder = _LazyBuilder(features)
        weighted_sums, ordered = [], []
        for column, scope_name in zip(columns, scope_names):
            ordered.append(column)
            with variable_scope(scope_name) as scope:
                # A categorical column's weights are a row per id; a dense one's a row per element.
                rows = column._num_buckets if isinstance(column, _CategoricalColumn) else \
                    column._variable_shape.num_elements()
                weight = get_variable("weights", shape=[rows, units], initializer=zeros_initializer(),
                                      trainable=trainable, collections=weight_collections)
                if isinstance(column, _CategoricalColumn):
                    weighted_sums.append(_categorical_weighted_sum(column, builder, sparse_combiner,
                                                                   weight_collections, trainable, weight))
                else:
                    dense = _flat_dense(column, builder, weight_collections, trainable)
                    weighted_sums.append(math_ops.matmul(dense, weight, name="weighted_sum"))
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES,
                                                                              scope=scope.name)
        _verify_static_batch_size_equality(weighted_sums, ordered)
        predictions_no_bias = math_ops.add_n(weighted_sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], initializer=zeros_initializer(), trainable=trainable,
                            collections=weight_collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return nn_ops.bias_add(predictions_no_bias, bias, name="weighted_sum")


def make_parse_example_spec(feature_columns):
    """{feature key: FixedLenFeature or VarLenFeature} for `tf.parse_example`, from every column."""
    result = {}
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: {column}")
        config = column._parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} and "
                                 f"{result[key]}")
        result.update(config)
    return result

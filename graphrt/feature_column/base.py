"""What every feature column shares (TF1's `_FeatureColumn`, `_DenseColumn`,
`_CategoricalColumn` protocol of feature_column.py) and `_LazyBuilder`, the cache
of transformed features one `input_layer` or `linear_model` call shares, so that a
feature used by several columns is transformed once.
"""
import collections

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..ops import array_ops, control_flow_ops, extra_ops, math_ops
from ..sparse import api as sparse_api
from ..sparse.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor


class _FeatureColumn:
    """A column: `name`, how it transforms the raw features (`_transform_feature`), how
    they are parsed from Examples (`_parse_example_spec`)."""

    @property
    def _var_scope_name(self):
        return self.name

    @property
    def parse_example_spec(self):
        return self._parse_example_spec


class _DenseColumn(_FeatureColumn):
    """A column `input_layer` takes: `_get_dense_tensor` of shape [batch] + `_variable_shape`."""

    @property
    def variable_shape(self):
        return self._variable_shape


class _CategoricalColumn(_FeatureColumn):
    """A column of ids: `_get_sparse_tensors` gives an IdWeightPair of SparseTensors
    (weights None: all 1), ids in [0, `_num_buckets`)."""

    IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])

    @property
    def num_buckets(self):
        return self._num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return self.IdWeightPair(inputs.get(self), None)


class _LazyBuilder:
    """`get(key)`: a raw feature by its string key (rank 1 expanded to rank 2), or a
    column's transformed feature, each built once."""

    def __init__(self, features):
        self._features = features.copy()
        self._feature_tensors = {}

    def get(self, key):
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = self._get_raw_feature_as_tensor(key)
            self._feature_tensors[key] = tensor
            return tensor
        if isinstance(key, str):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        if not isinstance(key, _FeatureColumn):
            raise TypeError(f'"key" must be either a "str" or "_FeatureColumn". Provided: {key}')
        transformed = key._transform_feature(self)
        if transformed is None:
            raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = transformed
        return transformed

    def _get_raw_feature_as_tensor(self, key):
        tensor = convert_to_tensor_or_sparse_tensor(self._features[key])

        def expand_dims(t):
            if isinstance(t, SparseTensor):
                return sparse_api.sparse_reshape(t, array_ops.stack([t.dense_shape[0], math_ops.cast(1, dtypes.int64)]))
            return array_ops.expand_dims(t, -1)

        rank = tensor.get_shape().ndims
        if rank is not None:
            if rank == 0:
                raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {tensor}")
            return tensor if rank != 1 else expand_dims(tensor)
        with get_default_graph().control_dependencies([extra_ops.assert_positive(
                array_ops.rank(tensor), message=f"Feature (key: {key}) cannot have rank 0. Given: {tensor}")]):
            return control_flow_ops.cond(math_ops.equal(1, array_ops.rank(tensor)),
                                         lambda: expand_dims(tensor), lambda: tensor)


def to_sparse_input_and_drop_ignore_values(input_tensor, ignore_value=None):
    """A dense feature as a SparseTensor of its cells other than `ignore_value` ('' for
    strings, -1 for integers, 0 for floats by default); a SparseTensor as it is."""
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with get_default_graph().name_scope("to_sparse_input"):
        if ignore_value is None:
            if input_tensor.dtype == dtypes.string:
                ignore_value = ""
            elif input_tensor.dtype.is_integer:
                ignore_value = -1  # -1 means a missing feature
            else:
                ignore_value = input_tensor.dtype.as_numpy_dtype()
        ignore_value = math_ops.cast(ignore_value, input_tensor.dtype, name="ignore_value")
        indices = array_ops.where_indices(math_ops.not_equal(input_tensor, ignore_value), name="indices")
        return SparseTensor(indices=indices, values=extra_ops.gather_nd(input_tensor, indices, name="values"),
                            dense_shape=array_ops.shape(input_tensor, out_type=dtypes.int64, name="dense_shape"))


def assert_string_or_int(dtype, prefix):
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def assert_key_is_string(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")

"""`tf.SparseTensor`: a dense tensor of shape `dense_shape` that is zero except at
`indices` (int64 [N, rank]), where it holds `values` ([N]). To the runtime it is
its three tensors: ops take and return them separately, `Session.run` fetches
and feeds them together (registered below) and gradients flow to `values`.
"""
import collections

from ..framework import dtypes
from ..framework.default_session import run_with_default
from ..framework.graph import Tensor, get_default_graph, graph_of
from ..framework.op_builder import convert_to_tensor
from ..framework.session_run_conversions import register_session_run_conversion_functions
from ..framework.constant_value import constant_value_as_shape
from ..framework.tensor_shape import as_shape
from ..ops import array_ops, math_ops

# What Session.run gives for a fetched SparseTensor (numpy arrays).
SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """Represents a sparse tensor as its `indices`, `values` and `dense_shape` tensors."""

    @classmethod
    def from_value(cls, sparse_tensor_value):
        if not is_sparse(sparse_tensor_value):
            raise TypeError(f"Argument sparse_tensor_value={sparse_tensor_value} "
                            "is neither a SparseTensor nor SparseTensorValue.")
        return SparseTensor(indices=sparse_tensor_value.indices, values=sparse_tensor_value.values,
                            dense_shape=sparse_tensor_value.dense_shape)

    def __init__(self, indices, values, dense_shape):
        g = graph_of([indices, values, dense_shape], get_default_graph())
        with g.as_default(), g.name_scope("SparseTensor"):
            indices = convert_to_tensor(indices, name="indices", dtype=dtypes.int64)
            values = convert_to_tensor(values, name="values")
            dense_shape = _shape_tensor(dense_shape)
        self._indices = indices
        self._values = values
        self._dense_shape = dense_shape
        self._dense_shape_default = constant_value_as_shape(dense_shape)
        indices_shape = indices.shape.with_rank(2)
        values_shape = values.shape.with_rank(1)
        dense_shape_shape = dense_shape.shape.with_rank(1)
        indices_shape.dim(0).merge_with(values_shape.dim(0))
        indices_shape.dim(1).merge_with(dense_shape_shape.dim(0))

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    op = property(lambda self: self._values.op, doc="The op that produces `values`.")
    graph = property(lambda self: self._indices.graph)
    dtype = property(lambda self: self._values.dtype)
    shape = property(lambda self: self._dense_shape_default, doc="The static shape of the dense tensor.")

    def get_shape(self):
        return self._dense_shape_default

    def set_shape(self, shape):
        self._dense_shape_default = self._dense_shape_default.merge_with(as_shape(shape))

    def with_values(self, new_values):
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def eval(self, feed_dict=None, session=None):
        return run_with_default(self, feed_dict, session, "eval")

    def consumers(self):
        return sorted({c for t in (self._indices, self._values, self._dense_shape) for c in t.consumers()},
                      key=lambda op: op.name)

    def __repr__(self):
        return f"SparseTensor(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"


def _shape_tensor(dense_shape):
    """dense_shape as an int64 vector; a list holding tensors is packed (TF's autopacking)."""
    if isinstance(dense_shape, (list, tuple)) and any(isinstance(d, Tensor) for d in dense_shape):
        dims = [d if not isinstance(d, Tensor) or d.dtype.base_dtype == dtypes.int64 else math_ops.cast(d, dtypes.int64)
                for d in dense_shape]
        return array_ops.stack([convert_to_tensor(d, dtype=dtypes.int64) for d in dims], name="dense_shape")
    return convert_to_tensor(dense_shape, name="dense_shape", dtype=dtypes.int64)


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor for a SparseTensor(Value), else a Tensor (TF's RuntimeError on a dtype mismatch)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and dtype.base_dtype != value.dtype.base_dtype:
            raise RuntimeError(f"Sparse dtype mismatch. Requested: {dtype.name},  Actual: {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def _fetch(sparse):
    return [sparse.indices, sparse.values, sparse.dense_shape], lambda vals: SparseTensorValue(*vals)


def _feed(sparse, value):
    """A SparseTensorValue or an (indices, values, dense_shape) triple feeds the three tensors."""
    return list(zip([sparse.indices, sparse.values, sparse.dense_shape], value))


register_session_run_conversion_functions(SparseTensor, _fetch, _feed)

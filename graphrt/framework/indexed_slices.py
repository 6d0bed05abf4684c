"""`tf.IndexedSlices`: a sparse gradient, the rows `values` of a dense tensor
of shape `dense_shape` at the row numbers `indices` (an index may repeat: its
rows add up). The gradient of a gather (so of embedding_lookup) is one, so an
optimizer updates only the rows a step looked up. Where an op needs a dense
tensor the slices are summed into one, and `-slices` negates the rows (the
ops layer registers that conversion and installs `__neg__`, as TF's math_ops
overloads Tensor's operators: framework code makes no ops).

    IndexedSlices(values=[[1., 1.]], indices=[2], dense_shape=[4, 2])
      ~ [[0, 0], [0, 0], [1, 1], [0, 0]]
"""
import collections

# What Session.run gives for a fetched IndexedSlices (numpy arrays).
IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """Rows `values[i]` at row `indices[i]` of a tensor of shape `dense_shape`."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    device = property(lambda self: self._values.device)

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        """The dense shape as far as it is known statically (rows unknown unless dense_shape is constant)."""
        from .constant_value import constant_value
        from .tensor_shape import TensorShape
        inner = self._values.shape.dims[1:] if self._values.shape.ndims else None
        known = constant_value(self._dense_shape) if self._dense_shape is not None else None
        if known is not None:
            return TensorShape([int(d) for d in known])
        return TensorShape(None) if inner is None else TensorShape([None]).concatenate(TensorShape(inner))

    def get_shape(self):
        return self.shape

    def __repr__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape.name}"
        return f"IndexedSlices(indices={self._indices.name}, values={self._values.name}{shape})"

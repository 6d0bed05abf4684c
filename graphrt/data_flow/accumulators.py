"""`tf.ConditionalAccumulator` and `tf.SparseConditionalAccumulator`.

    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="grad_w")
    apply = acc.apply_grad(grad, local_step=step)   # dropped if step < acc's global step
    mean = acc.take_grad(num_required=2)            # waits for 2 gradients, then resets

Placed on a ps task with a `shared_name`, one accumulator is shared by
every worker's graph (SyncReplicasOptimizer aggregates through them).
"""
from ..framework import dtypes as dtypes_lib
from ..framework.graph import get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape, unknown_shape

from . import accumulator_ops, accumulator_kernels  # noqa: F401 - registers the ops and kernels


class ConditionalAccumulatorBase:
    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = as_shape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def __repr__(self):
        return f"<{type(self).__name__} '{self._accumulator_ref.op.name}' {self._dtype.name}{self._shape}>"

    def _op(self, op_type, inputs, name, attrs=None, dtypes=None):
        g = self._accumulator_ref.graph
        with g.as_default(), g.name_scope(name) as scope:
            inputs = [convert_to_tensor(v, dtype=d) for v, d in zip(inputs, dtypes or [])]
            with g.colocate_with(self._accumulator_ref.op):
                return g.create_op(op_type, [self._accumulator_ref] + inputs, attrs or {}, name=scope)

    def num_accumulated(self, name=None):
        """The number of gradients accumulated since the last take (an int32 scalar)."""
        return self._op("ResourceAccumulatorNumAccumulated", [], name or f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """Sets the accumulator's global step; gradients with an older local_step are dropped."""
        return self._op("ResourceAccumulatorSetGlobalStep", [new_global_step], name or f"{self._name}_SetGlobalStep",
                        dtypes=[dtypes_lib.int64])


def _make(op_type, dtype, shape, shared_name, name, reduction_type):
    g = get_default_graph()
    attrs = {"dtype": dtype, "shape": as_shape(shape) if shape is not None else unknown_shape(),
             "container": "", "shared_name": shared_name or "", "reduction_type": reduction_type}
    with g.name_scope(name) as scope:
        return g.create_op(op_type, [], attrs, name=scope).outputs[0]


def _check_reduction(reduction_type):
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(f"reduction_type must be 'MEAN' or 'SUM', got {reduction_type!r}")


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one shape; see the module docstring."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator", reduction_type="MEAN"):
        dtype = dtypes_lib.as_dtype(dtype).base_dtype
        _check_reduction(reduction_type)
        ref = _make("ResourceConditionalAccumulator", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds `grad` if `local_step` is not older than the accumulator's global step."""
        g = self._accumulator_ref.graph
        with g.as_default():
            grad = convert_to_tensor(grad, dtype=self._dtype, name="grad")
        grad.shape.assert_is_compatible_with(self._shape)
        return self._op("ResourceAccumulatorApplyGradient", [local_step, grad], name or f"{self._name}_ApplyGrad",
                        {"dtype": self._dtype}, dtypes=[dtypes_lib.int64, self._dtype])

    def take_grad(self, num_required, name=None):
        """Waits until `num_required` gradients are in; returns their mean (or sum), resets the
        accumulator and advances its global step by one."""
        op = self._op("ResourceAccumulatorTakeGradient", [num_required], name or f"{self._name}_TakeGrad",
                      {"dtype": self._dtype}, dtypes=[dtypes_lib.int32])
        out = op.outputs[0]
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates IndexedSlices gradients row by row; the mean of a row divides by the
    number of gradients that had it."""

    def __init__(self, dtype, shape=None, shared_name=None, name="sparse_conditional_accumulator",
                 reduction_type="MEAN"):
        dtype = dtypes_lib.as_dtype(dtype).base_dtype
        _check_reduction(reduction_type)
        ref = _make("SparseConditionalAccumulator", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step,
                               name=name or f"{self._name}_ApplyGrad")

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds the gradient (rows `grad_values` at `grad_indices`) unless `local_step` is stale."""
        g = self._accumulator_ref.graph
        known = grad_shape is not None
        with g.as_default():
            values = convert_to_tensor(grad_values, dtype=self._dtype, name="grad_values")
            shape = grad_shape if known else convert_to_tensor([], dtype=dtypes_lib.int64)
        return self._op("SparseAccumulatorApplyGradient", [local_step, grad_indices, values, shape],
                        name or f"{self._name}_ApplyGrad", {"dtype": self._dtype, "has_known_shape": known},
                        dtypes=[dtypes_lib.int64, dtypes_lib.int64, self._dtype, dtypes_lib.int64])

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the averaged gradient, indices sorted."""
        op = self._op("SparseAccumulatorTakeGradient", [num_required], name or f"{self._name}_TakeGrad",
                      {"dtype": self._dtype}, dtypes=[dtypes_lib.int32])
        indices, values, shape = op.outputs
        indices.set_shape([None])
        values.set_shape(TensorShape([None]).concatenate(self._shape[1:] if self._shape.ndims else unknown_shape()))
        shape.set_shape([self._shape.ndims] if self._shape.ndims is not None else [None])
        return indices, values, shape

    def take_indexed_slices_grad(self, num_required, name=None):
        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, shape)

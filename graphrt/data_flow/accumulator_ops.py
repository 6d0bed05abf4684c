"""Conditional accumulator op declarations.

The dense ops are TF's resource variants (ResourceConditionalAccumulator,
ResourceAccumulatorApplyGradient, ...). TF has no resource variant of the
sparse accumulator: graphrt keeps TF's sparse op names
(SparseConditionalAccumulator, SparseAccumulatorApplyGradient, ...) with a
`resource` handle in place of TF's `Ref(string)`, like its queues.
"""
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_SCALAR = TensorShape([])
_ACC_ATTRS = {"dtype": REQUIRED, "shape": TensorShape(None), "container": "", "shared_name": "",
              "reduction_type": "MEAN"}


def _scalar(ctx):
    return _SCALAR


register_op("ResourceConditionalAccumulator", [], ["handle: resource"], attrs=_ACC_ATTRS, shape_fn=_scalar,
            is_stateful=True)
register_op("ResourceAccumulatorApplyGradient", ["handle: resource", "local_step: int64", "gradient: dtype"], [],
            attrs={"dtype": REQUIRED}, is_stateful=True)
register_op("ResourceAccumulatorTakeGradient", ["handle: resource", "num_required: int32"], ["average: dtype"],
            attrs={"dtype": REQUIRED}, is_stateful=True)
register_op("ResourceAccumulatorNumAccumulated", ["handle: resource"], ["num_accumulated: int32"],
            shape_fn=_scalar, is_stateful=True)
register_op("ResourceAccumulatorSetGlobalStep", ["handle: resource", "new_global_step: int64"], [],
            is_stateful=True)

register_op("SparseConditionalAccumulator", [], ["handle: resource"], attrs=_ACC_ATTRS, shape_fn=_scalar,
            is_stateful=True)
register_op("SparseAccumulatorApplyGradient",
            ["handle: resource", "local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
             "gradient_shape: int64"], [], attrs={"dtype": REQUIRED, "has_known_shape": False}, is_stateful=True)
register_op("SparseAccumulatorTakeGradient", ["handle: resource", "num_required: int32"],
            ["indices: int64", "values: dtype", "shape: int64"], attrs={"dtype": REQUIRED}, is_stateful=True)

for _name in ("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient", "ResourceAccumulatorTakeGradient",
              "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep", "SparseConditionalAccumulator",
              "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"):
    not_differentiable(_name)

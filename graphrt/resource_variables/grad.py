"""Gradients through resource variables: a read passes its gradient to the handle (so
`tf.gradients(loss, v)` of a ResourceVariable is the gradient of its reads), a gather gives
IndexedSlices over the variable's rows, as TensorFlow's do."""
from ..framework import dtypes
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_gradient
from ..ops import array_ops

for _name in ("VarHandleOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp",
              "VariableShape", "DestroyResourceOp"):
    not_differentiable(_name)


@register_gradient("ReadVariableOp")
def _read_grad(op, grad):
    return [grad]


@register_gradient("ResourceGather")
def _gather_grad(op, grad):
    handle, indices = op.inputs
    params_shape = apply_op("VariableShape", [handle], out_type=dtypes.int64).outputs[0]
    size = array_ops.expand_dims(array_ops.size(indices, out_type=dtypes.int64), 0)
    values = array_ops.reshape(grad, array_ops.concat([size, params_shape[1:]], 0))
    return [IndexedSlices(values, array_ops.reshape(indices, size), params_shape), None]

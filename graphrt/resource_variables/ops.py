"""The resource variable ops, with TensorFlow's names, inputs and attrs."""
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import REQUIRED, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns

register_op("VarHandleOp", [], ["resource: resource"],
            attrs={"container": "", "shared_name": "", "debug_name": "", "dtype": REQUIRED,
                   "shape": TensorShape(None), "allowed_devices": []},
            shape_fn=shape_fns.scalar, is_stateful=True,
            doc="A handle to the variable `shared_name` of its device (created on first use).")
register_op("ReadVariableOp", ["resource: resource"], ["value: dtype"], attrs={"dtype": REQUIRED},
            shape_fn=lambda ctx: _declared_shape(ctx), is_stateful=True,
            doc="A snapshot of the variable's current value.")
register_op("AssignVariableOp", ["resource: resource", "value: dtype"], [],
            attrs={"validate_shape": False}, is_stateful=True, doc="Replaces the variable's value.")
for _name in ("AssignAddVariableOp", "AssignSubVariableOp"):
    register_op(_name, ["resource: resource", "value: dtype"], [], is_stateful=True)
register_op("VarIsInitializedOp", ["resource: resource"], ["is_initialized: bool"], shape_fn=shape_fns.scalar,
            is_stateful=True)
register_op("VariableShape", ["input: resource"], ["output: out_type"], attrs={"out_type": dtypes.int32},
            shape_fn=lambda ctx: TensorShape([None]), is_stateful=True)
register_op("DestroyResourceOp", ["resource: resource"], [], attrs={"ignore_lookup_error": True}, is_stateful=True)
register_op("ResourceGather", ["resource: resource", "indices: Tindices"], ["output: dtype"],
            attrs={"batch_dims": 0, "validate_indices": True, "dtype": REQUIRED},
            shape_fn=lambda ctx: _gather_shape(ctx), is_stateful=True,
            allowed_types={"Tindices": {dtypes.int32, dtypes.int64}})


def _declared_shape(ctx):
    """A read has the shape its handle's VarHandleOp declares, when the handle comes straight from one."""
    handle = ctx.op.inputs[0].op
    if handle.type == "VarHandleOp":
        return handle.get_attr("shape")
    return TensorShape(None)


def _gather_shape(ctx):
    params = _declared_shape(ctx)
    if params.ndims is None or ctx.attr("batch_dims"):
        return TensorShape(None)
    return ctx.shape(1).concatenate(params[1:])


def var_handle_op(dtype, shape, shared_name, name=None, container=""):
    return apply_op("VarHandleOp", [], name=name or "VarHandleOp", dtype=dtypes.as_dtype(dtype).base_dtype,
                    shape=TensorShape(shape), shared_name=shared_name, container=container).outputs[0]


def read_variable_op(handle, dtype, name=None):
    return apply_op("ReadVariableOp", [handle], name=name or "ReadVariableOp",
                    dtype=dtypes.as_dtype(dtype).base_dtype).outputs[0]

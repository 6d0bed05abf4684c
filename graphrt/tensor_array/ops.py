"""The TensorArray op declarations (TF1's `*V3` data-flow ops).

Every op takes the array's `handle` (a `resource`: the per-step state the
TensorArrayV3 kernel made) and a float scalar `flow`. The flow carries no
data: it orders the ops on one array (each write's `flow_out` is the next
op's `flow_in`) and is what gradients follow, so a while loop carries an
array as its flow and a gradient reaches a write through it.
"""
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape, as_shape

_HANDLE_SHAPE = TensorShape([2])  # TF's shape for a TensorArray handle
_SCALAR = TensorShape([])


def _scalar_input(ctx, i, what):
    shape = ctx.shape(i)
    if shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {shape.ndims} ({what})")


def _create_shape(ctx):
    _scalar_input(ctx, 0, "size")
    return [_HANDLE_SHAPE, _SCALAR]


def _flow_out_shape(ctx):
    return _SCALAR


def _write_shape(ctx):
    _scalar_input(ctx, 1, "index")
    return _SCALAR


def _read_shape(ctx):
    _scalar_input(ctx, 1, "index")
    return TensorShape(None)  # the Python TensorArray sets the element shape it knows


def _gather_shape(ctx):
    indices = ctx.shape(1)
    if indices.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {indices.ndims} (indices)")
    element = as_shape(ctx.attr("element_shape"))
    n = indices[0] if indices.ndims == 1 else None
    return TensorShape([n]).concatenate(element)


def _concat_shape(ctx):
    return [TensorShape([None]).concatenate(as_shape(ctx.attr("element_shape_except0"))), TensorShape([None])]


def _grad_shape(ctx):
    return [_HANDLE_SHAPE, _SCALAR]


_ARRAY_ATTRS = {"dtype": REQUIRED, "element_shape": TensorShape(None), "dynamic_size": False,
                "clear_after_read": True, "identical_element_shapes": False, "tensor_array_name": ""}
register_op("TensorArrayV3", ["size: int32"], ["handle: resource", "flow: float32"], attrs=_ARRAY_ATTRS,
            shape_fn=_create_shape, is_stateful=True)
register_op("TensorArrayWriteV3", ["handle: resource", "index: int32", "value: T", "flow_in: float32"],
            ["flow_out: float32"], shape_fn=_write_shape, is_stateful=True)
register_op("TensorArrayReadV3", ["handle: resource", "index: int32", "flow_in: float32"], ["value: dtype"],
            shape_fn=_read_shape, is_stateful=True)
register_op("TensorArrayGatherV3", ["handle: resource", "indices: int32", "flow_in: float32"], ["value: dtype"],
            attrs={"element_shape": TensorShape(None)}, shape_fn=_gather_shape, is_stateful=True)
register_op("TensorArrayScatterV3", ["handle: resource", "indices: int32", "value: T", "flow_in: float32"],
            ["flow_out: float32"], shape_fn=_flow_out_shape, is_stateful=True)
register_op("TensorArrayConcatV3", ["handle: resource", "flow_in: float32"], ["value: dtype", "lengths: int64"],
            attrs={"element_shape_except0": TensorShape(None)}, shape_fn=_concat_shape, is_stateful=True)
register_op("TensorArraySplitV3", ["handle: resource", "value: T", "lengths: int64", "flow_in: float32"],
            ["flow_out: float32"], shape_fn=_flow_out_shape, is_stateful=True)
register_op("TensorArraySizeV3", ["handle: resource", "flow_in: float32"], ["size: int32"],
            shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("TensorArrayGradV3", ["handle: resource", "flow_in: float32"], ["grad_handle: resource",
                                                                           "flow_out: float32"],
            attrs={"source": REQUIRED}, shape_fn=_grad_shape, is_stateful=True)
register_op("TensorArrayCloseV3", ["handle: resource"], [], is_stateful=True)

for _name in ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3"):
    not_differentiable(_name)

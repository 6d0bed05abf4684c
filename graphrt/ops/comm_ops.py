"""Ops that move tensors between a partition and the outside world.

`_Send`/`_Recv` are inserted by the partitioner on every cross-device edge;
`_Arg`/`_Retval` carry a step's feeds and fetches (TF's function
convention). Their kernels belong to the runtime, which owns the step's
rendezvous and call frame.
"""
from ..framework.op_categories import CALL_FRAME_OPS, TRANSFER_OPS
from ..framework.registry import not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_TRANSFER_ATTRS = {"tensor_name": "", "send_device": "", "send_device_incarnation": 0, "recv_device": "",
                   "client_terminated": False}

register_op("_Send", ["tensor: T"], [], attrs=dict(_TRANSFER_ATTRS), is_stateful=True)
register_op("_Recv", [], ["tensor: tensor_type"], attrs=dict(_TRANSFER_ATTRS), is_stateful=True,
            shape_fn=lambda ctx: TensorShape(None))
register_op("_Arg", [], ["output: T"], attrs={"index": 0}, is_stateful=True,
            shape_fn=lambda ctx: TensorShape(None))
register_op("_Retval", ["input: T"], [], attrs={"index": 0}, is_stateful=True)

for _name in sorted(TRANSFER_OPS | CALL_FRAME_OPS):
    not_differentiable(_name)

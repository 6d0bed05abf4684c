"""Queue op declarations (TF1's `*V2` queue ops, which take a `resource` handle).

A queue op (FIFOQueueV2, ...) outputs the handle of a queue living in its
device's resource manager; every op taking the handle is placed with it.
Enqueue and dequeue ops take the element's components as a list whose
dtypes are an attr (`Tcomponents`, `component_types`).
"""
from ..framework.registry import REQUIRED, not_differentiable, register_op
from ..framework.tensor_shape import TensorShape

_SCALAR = TensorShape([])


def _handle_shape(ctx):
    return _SCALAR


def _unknown_components(ctx):
    # TF's shape functions read the shapes from the handle's resource data; the
    # Python QueueBase sets the static shapes it knows (as TF's does too)
    return [TensorShape(None) for _ in ctx.attr("component_types")]


_QUEUE_ATTRS = {"component_types": REQUIRED, "shapes": [], "capacity": -1, "container": "", "shared_name": ""}
register_op("FIFOQueueV2", [], ["handle: resource"], attrs=_QUEUE_ATTRS, shape_fn=_handle_shape,
            is_stateful=True)
register_op("PaddingFIFOQueueV2", [], ["handle: resource"], attrs=_QUEUE_ATTRS, shape_fn=_handle_shape,
            is_stateful=True)
register_op("RandomShuffleQueueV2", [], ["handle: resource"],
            attrs=dict(_QUEUE_ATTRS, min_after_dequeue=0, seed=0, seed2=0), shape_fn=_handle_shape,
            is_stateful=True)
# Its elements are (int64 priority, components...): the attrs name only the components after the priority.
register_op("PriorityQueueV2", [], ["handle: resource"], attrs=dict(_QUEUE_ATTRS, component_types=[], shapes=REQUIRED),
            shape_fn=_handle_shape, is_stateful=True)
register_op("QueueEnqueueV2", ["handle: resource", "components: Tcomponents"], [],
            attrs={"Tcomponents": REQUIRED, "timeout_ms": -1}, is_stateful=True)
register_op("QueueEnqueueManyV2", ["handle: resource", "components: Tcomponents"], [],
            attrs={"Tcomponents": REQUIRED, "timeout_ms": -1}, is_stateful=True)
register_op("QueueDequeueV2", ["handle: resource"], ["components: component_types"],
            attrs={"component_types": REQUIRED, "timeout_ms": -1}, shape_fn=_unknown_components,
            is_stateful=True)
register_op("QueueDequeueManyV2", ["handle: resource", "n: int32"], ["components: component_types"],
            attrs={"component_types": REQUIRED, "timeout_ms": -1}, shape_fn=_unknown_components,
            is_stateful=True)
register_op("QueueDequeueUpToV2", ["handle: resource", "n: int32"], ["components: component_types"],
            attrs={"component_types": REQUIRED, "timeout_ms": -1}, shape_fn=_unknown_components,
            is_stateful=True)
register_op("QueueCloseV2", ["handle: resource"], [], attrs={"cancel_pending_enqueues": False}, is_stateful=True)
register_op("QueueSizeV2", ["handle: resource"], ["size: int32"], shape_fn=lambda ctx: _SCALAR, is_stateful=True)
register_op("QueueIsClosedV2", ["handle: resource"], ["is_closed: bool"], shape_fn=lambda ctx: _SCALAR,
            is_stateful=True)

for _name in ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
              "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2",
              "QueueIsClosedV2"):
    not_differentiable(_name)

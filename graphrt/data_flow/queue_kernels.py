"""Queue kernels (host CPU only, as TF's).

The queue op looks its queue up in the device's resource manager (making
it on first use): under `shared_name` when given, so every node and
session on the device naming it shares one queue; otherwise under the
node's name, so each run of the graph (whatever the fetches) sees the same
queue, named `_<n>_<node>` as TF names it.

Enqueue and dequeue are ASYNC kernels: they return at once and call `done`
when the queue serves them, so a waiting dequeue holds no executor thread.
The step's abort callback ends the wait on its deadline, cancellation or
failure (queue_state.py).
"""
import itertools

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import ASYNC, register_kernel
from ..framework.tensor_shape import TensorShape
from .queue_state import PaddingQueueState, PriorityQueueState, QueueState, RandomShuffleQueueState

_queue_ids = itertools.count()  # TF's resource-manager counter for unshared names
_PRIVATE = "_graphrt_queues"     # the container of queues without a shared name


def _queue_factory(state_cls, kind):
    def factory(ctx):
        types = list(ctx.attr("component_types"))
        shapes = list(ctx.attr("shapes") or [])
        if kind == "PriorityQueue":  # the priority comes first, an int64 scalar
            types = [dtypes.int64] + types
            shapes = [TensorShape([])] + shapes if shapes else shapes
        capacity = ctx.attr("capacity")
        min_after = ctx.attr("min_after_dequeue", 0)
        shared = ctx.attr("shared_name")
        container = ctx.attr("container") if shared else _PRIVATE
        key = shared or ctx.name
        node = ctx.name
        if shapes and len(shapes) != len(types):
            raise errors.InvalidArgumentError(f"All shapes must be fully defined, or none: got {len(shapes)} "
                                              f"shapes for {len(types)} components", node=node)
        if kind == "FIFOQueue" and any(not s.is_fully_defined() for s in shapes):
            raise errors.InvalidArgumentError(f"FIFOQueue '{key}': all shapes must be fully defined (a "
                                              f"PaddingFIFOQueue takes partial shapes)", node=node)
        seed = None
        if kind == "RandomShuffleQueue" and (ctx.attr("seed") or ctx.attr("seed2")):
            seed = (ctx.attr("seed"), ctx.attr("seed2"))
        resources = ctx.device.resources

        def create():
            name = shared or f"_{next(_queue_ids)}_{node}"
            return state_cls(name, types, shapes, capacity, min_after, seed)

        def queue():
            state = resources.lookup_or_create(container, key, create)
            if shared:
                state.check_compatible(kind, types, shapes, capacity, node)
            return state
        return queue
    return factory


register_kernel("FIFOQueueV2", "CPU", inexpensive=True, host_only=True)(_queue_factory(QueueState, "FIFOQueue"))
register_kernel("PaddingFIFOQueueV2", "CPU", inexpensive=True, host_only=True)(
    _queue_factory(PaddingQueueState, "PaddingFIFOQueue"))
register_kernel("RandomShuffleQueueV2", "CPU", inexpensive=True, host_only=True)(
    _queue_factory(RandomShuffleQueueState, "RandomShuffleQueue"))
register_kernel("PriorityQueueV2", "CPU", inexpensive=True, host_only=True)(
    _queue_factory(PriorityQueueState, "PriorityQueue"))


@register_kernel("QueueEnqueueV2", "CPU", kind=ASYNC, inexpensive=True, host_only=True)
def _enqueue(ctx):
    node = ctx.name

    def enqueue(step, args, done):
        queue, values = args[0], args[1:]
        queue.check_element(values, node)
        queue.enqueue([tuple(np.array(v, copy=True) for v in values)], done, node, step)
    return enqueue


@register_kernel("QueueEnqueueManyV2", "CPU", kind=ASYNC, inexpensive=True, host_only=True)
def _enqueue_many(ctx):
    node = ctx.name

    def enqueue_many(step, args, done):
        queue, values = args[0], [np.asarray(v) for v in args[1:]]
        queue.check_element(values, node, batched=True)
        sizes = {v.shape[0] for v in values}
        if len(sizes) > 1:
            raise errors.InvalidArgumentError(
                f"Shape mismatch in tuple component 1. Expected [{values[0].shape[0]},...], got "
                f"{list(values[1].shape)}: every component of enqueue_many must have the same first dimension",
                node=node)
        n = sizes.pop() if sizes else 0
        # v[i, ...] keeps a string element an object array (v[i] would be bare bytes, and np.array of
        # that a fixed-width b'...' array, which fetches as numpy.bytes_ where TF gives bytes)
        queue.enqueue([tuple(v[i, ...].copy() for v in values) for i in range(n)], done, node, step)
    return enqueue_many


def _dequeue_done(done, n_out):
    """Adapts the queue's done(err, element) to the executor's (one output is not a tuple)."""
    if n_out == 1:
        return lambda err, value: done(err) if err is not None else done(None, value[0])
    return lambda err, value: done(err) if err is not None else done(None, tuple(value))


@register_kernel("QueueDequeueV2", "CPU", kind=ASYNC, inexpensive=True, host_only=True)
def _dequeue(ctx):
    node, n_out = ctx.name, len(ctx.output_dtypes)

    def dequeue(step, args, done):
        args[0].dequeue(1, False, _dequeue_done(done, n_out), node, step, batch=False)
    return dequeue


def _dequeue_many_factory(up_to):
    def factory(ctx):
        node, n_out = ctx.name, len(ctx.output_dtypes)

        def dequeue_many(step, args, done):
            queue, n = args[0], int(args[1])
            if n < 0:
                raise errors.InvalidArgumentError(f"Dequeue{'UpTo' if up_to else 'Many'} requested {n} < 0 "
                                                  f"elements", node=node)
            queue.validate_batch_dequeue(node)
            queue.dequeue(n, up_to, _dequeue_done(done, n_out), node, step)
        return dequeue_many
    return factory


register_kernel("QueueDequeueManyV2", "CPU", kind=ASYNC, inexpensive=True, host_only=True,
                host_memory=("n",))(_dequeue_many_factory(False))
register_kernel("QueueDequeueUpToV2", "CPU", kind=ASYNC, inexpensive=True, host_only=True,
                host_memory=("n",))(_dequeue_many_factory(True))


@register_kernel("QueueCloseV2", "CPU", inexpensive=True, host_only=True)
def _close(ctx):
    cancel = bool(ctx.attr("cancel_pending_enqueues"))
    return lambda queue: queue.close(cancel)


@register_kernel("QueueSizeV2", "CPU", inexpensive=True, host_only=True)
def _size(ctx):
    return lambda queue: np.array(queue.size(), dtype=np.int32)


@register_kernel("QueueIsClosedV2", "CPU", inexpensive=True, host_only=True)
def _is_closed(ctx):
    return lambda queue: np.array(queue.closed)

"""Infeed kernels: they pass batches through the device's infeed (`Device.infeed()`:
the TransferManager's InfeedQueue of an accelerator's executor, a
HostInfeedQueue on a CPU).

Both kernels run on the device the infeed belongs to and take the step
(kind STEP): they are synchronous, so a compiled loop runs a dequeue in its
body (on a SIM device, inline on the compute stream, as a device waits for
its infeed). A wait for room or for a batch registers a step abort
callback: the step's deadline, its cancellation (Session.close) or a
failure elsewhere ends the wait with the step's error, and the queue is
left as it was (a dequeue that was aborted took nothing). A batch whose
dtypes or shapes differ from what the dequeue declares is taken off the
queue and reported (InvalidArgumentError naming the node and device).
"""
import threading

import numpy as np

from .. import errors
from ..framework.registry import STEP, register_kernel

DEVICE_TYPES = ("CPU", "SIM")  # GPU: cuda tensors would need the cupy kernels' stream events (not done)


def _spec(dtypes, shapes):
    return [(np.dtype(d.as_numpy_dtype), tuple(s.as_list())) for d, s in zip(dtypes, shapes)]


def _describe(spec):
    return ", ".join(f"{d.name}{list(s)}" for d, s in spec)


def _check_ordinal(ctx):
    ordinal = ctx.attr("device_ordinal", -1)
    if ordinal not in (-1, ctx.device.index):
        raise errors.InvalidArgumentError(
            f"{ctx.op_type} '{ctx.name}': device_ordinal {ordinal} names another device than {ctx.device.name}, "
            "where it runs; graphrt's infeed ops run on the device they feed (place them with tf.device)",
            node=ctx.name, device=ctx.device.name)


def _wait(step, queue, wait, what):
    """Runs `wait(stop)` (a wait on `queue`) so that the step's first error ends it."""
    stop = threading.Event()

    def abort(err):
        stop.set()
        queue.wake()

    token = step.add_abort_callback(abort, what)
    try:
        return wait(stop)
    except errors.CancelledError:
        if stop.is_set() and step.error is not None:
            raise step.error from None  # the abort's cause is the step's error, reported already
        raise
    finally:
        step.remove_abort_callback(token)


def _check_batch(values, spec, op, node, device, problem):
    """InvalidArgumentError naming the op and device unless `values` have `spec`'s dtypes and shapes;
    `problem` says what differs, with {got} and {spec}."""
    got = [(np.dtype(v.dtype), tuple(v.shape)) for v in values]
    if got != spec:
        raise errors.InvalidArgumentError(
            f"{op} '{node}' on {device.name}: " + problem.format(got=_describe(got), spec=_describe(spec)),
            node=node, device=device.name)


def _enqueue_factory(ctx):
    device, node, op = ctx.device, ctx.name, ctx.op_type
    _check_ordinal(ctx)
    if op == "InfeedEnqueue":
        dtypes, shapes = [ctx.attr("dtype")], [ctx.attr("shape")]
    else:
        dtypes, shapes = ctx.attr("dtypes"), ctx.attr("shapes")
    spec = _spec(dtypes, shapes)
    on_host = device.device_type == "CPU"

    def enqueue(step, *inputs):
        _check_batch(inputs, spec, op, node, device, "inputs are {got}, but its shapes attr says {spec}")
        queue = device.infeed()
        # On an accelerator float inputs arrive in device memory already (copied on receipt) and are
        # queued as they are; numpy ones are int32/string tensors, which stay on the host there.
        keep = () if on_host else tuple(k for k, v in enumerate(inputs) if isinstance(v, np.ndarray))
        _wait(step, queue, lambda stop: queue.put(tuple(inputs), stop=stop, keep_on_host=keep),
              lambda: f"{node} ({op}) on {device.name}: putting a batch into a full infeed "
                      f"({len(queue)} of {queue.capacity})")
        return None
    return enqueue


def _dequeue_factory(ctx):
    device, node, op = ctx.device, ctx.name, ctx.op_type
    if op == "InfeedDequeue":
        dtypes, shapes = [ctx.attr("dtype")], [ctx.attr("shape")]
    else:
        dtypes, shapes = ctx.attr("dtypes"), ctx.attr("shapes")
    spec = _spec(dtypes, shapes)
    for s in shapes:
        if not s.is_fully_defined():
            raise errors.InvalidArgumentError(f"{op} '{node}': shape {s} is not fully defined", node=node,
                                              device=device.name)
    what = f"{node} ({op}) on {device.name}: waiting for a batch from the infeed"

    def dequeue(step):
        queue = device.infeed()
        item = queue.get_nowait()
        if item is None:
            item = _wait(step, queue, lambda stop: queue.get(stop=stop), what)
        _check_batch(item, spec, op, node, device,
                     "the infeed's next batch is {got}, but the op dequeues {spec}; the batch is dropped")
        return item[0] if len(item) == 1 else item
    return dequeue


def _enqueue_many_factory(ctx):
    """_InfeedEnqueueMany: `num_batches` batches (their components one after the other) put at once;
    the infeed grows to hold them, so a loop of the same step that takes them can run after it."""
    device, node = ctx.device, ctx.name
    spec = _spec(ctx.attr("dtypes"), ctx.attr("shapes"))
    n, count = len(spec), ctx.attr("num_batches")
    on_host = device.device_type == "CPU"

    def enqueue_many(step, *inputs):
        batches = [tuple(inputs[i * n:(i + 1) * n]) for i in range(count)]
        for b in batches:
            _check_batch(b, spec, "_InfeedEnqueueMany", node, device,
                         "a batch is {got}, but its shapes attr says {spec}")
        queue = device.infeed()
        queue.make_room(count)
        # If the step fails (the loop, a deadline), the batches it put and did not take are taken back:
        # the next run's loop must not start with them. (Called at most once, with the step's error.)
        tag = object()
        step.add_abort_callback(lambda err: queue.discard(tag))
        keep = () if on_host else tuple(k for k, v in enumerate(batches[0]) if isinstance(v, np.ndarray))

        def put_all(stop):
            for b in batches:
                queue.put(b, stop=stop, keep_on_host=keep, tag=tag)
        _wait(step, queue, put_all, lambda: f"{node} (_InfeedEnqueueMany) on {device.name}: putting {count} "
                                            f"batches into the infeed ({len(queue)} of {queue.capacity})")
        return None
    return enqueue_many


register_kernel("_InfeedEnqueueMany", DEVICE_TYPES, kind=STEP, inexpensive=True)(_enqueue_many_factory)
for _op in ("InfeedEnqueue", "InfeedEnqueueTuple"):
    register_kernel(_op, DEVICE_TYPES, kind=STEP, inexpensive=True)(_enqueue_factory)
for _op in ("InfeedDequeue", "InfeedDequeueTuple"):
    register_kernel(_op, DEVICE_TYPES, kind=STEP, inexpensive=True)(_dequeue_factory)

"""Ops that exist only for tests: a kernel that blocks until its step is
aborted (to make a step hang on purpose) and one that always fails.

Tests synchronise with a blocking kernel through `blocking_events(name)`:
events set when the node `name` starts blocking and when it returns."""
import threading
import time

from graphrt import errors
from graphrt.framework import registry
from graphrt.framework.op_builder import apply_op
from graphrt.ops import shape_fns

if "TestBlockUntilAborted" not in registry.registered_ops():
    registry.register_op("TestBlockUntilAborted", ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged,
                         is_stateful=True)
    registry.register_op("TestFail", ["x: T"], ["y: T"], attrs={"message": "boom"}, shape_fn=shape_fns.unchanged,
                         is_stateful=True)

    @registry.register_kernel("TestBlockUntilAborted", ("CPU",), kind=registry.STEP)
    def _block(ctx):
        name = ctx.name

        def block(step, x):
            events = _events(name)
            events.thread = threading.current_thread()
            events.started.set()
            try:
                deadline = time.monotonic() + 30  # a test bug must not hang the suite
                while step.error is None and time.monotonic() < deadline:
                    time.sleep(0.005)
                events.released_by_abort = step.error is not None
                raise errors.mark_derived(errors.CancelledError("released by the step's abort"))
            finally:
                events.returned.set()
        return block

    @registry.register_kernel("TestFail", ("CPU",))
    def _fail(ctx):
        message = ctx.attr("message")

        def fail(x):
            raise errors.InvalidArgumentError(message)
        return fail


class BlockingEvents:
    """A TestBlockUntilAborted node's run: `started` and `returned` events, the thread it
    ran on, and whether the step's abort released it."""

    def __init__(self):
        self.started = threading.Event()
        self.returned = threading.Event()
        self.thread = None
        self.released_by_abort = False  # not by the kernel's own 30 s limit


_EVENTS = {}
_EVENTS_LOCK = threading.Lock()


def _events(name):
    with _EVENTS_LOCK:
        return _EVENTS.setdefault(name, BlockingEvents())


def blocking_events(name):
    """Fresh BlockingEvents for the next run of the TestBlockUntilAborted node `name`."""
    with _EVENTS_LOCK:
        _EVENTS[name] = BlockingEvents()
        return _EVENTS[name]


def block_until_aborted(x, name=None):
    return apply_op("TestBlockUntilAborted", [x], name=name).outputs[0]


def fail(x, message="boom", name=None):
    return apply_op("TestFail", [x], name=name, message=message).outputs[0]

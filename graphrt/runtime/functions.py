"""Running graph functions (TF's FunctionLibraryRuntime, the small part).

`instantiate(fdef, device)` builds a GraphExecutor for the function's body
on `device`, once; calling the instance runs one call frame: `_Arg` nodes
read the arguments, `_Retval` nodes write the results. A call runs inline
on the calling thread (the kernel that calls it), so a call costs no thread
hand-off. The first error of the body is raised as the call's error.

A call made while a kernel runs inside `calls_from(step)` ends when that
step is aborted (its deadline, a failure elsewhere): a body waiting on a
queue does not outlive the step that asked for it.
"""
import contextlib
import threading

from .. import errors
from ..framework.graph_def import GraphDef
from ..framework.registry import STEP, register_kernel
from .graph_executor import GraphExecutor
from .step import Step

CALL_TIMEOUT_S = 300.0  # only asynchronous kernels in a body can keep a call waiting
_calling = threading.local()  # .step: the step of the kernel calling functions on this thread


@contextlib.contextmanager
def calls_from(step):
    """Function calls made inside, on this thread, are aborted with `step`."""
    saved = getattr(_calling, "step", None)
    _calling.step = step
    try:
        yield
    finally:
        _calling.step = saved


class FunctionInstance:
    """One function made runnable on one device."""

    def __init__(self, fdef, device):
        self.fdef = fdef
        self.device = device
        nodes = []
        for n in fdef.node:
            n = n.copy()
            n.device = device.name
            nodes.append(n)
        self._executor = GraphExecutor(GraphDef(nodes), device)
        self._calls = 0
        self._lock = threading.Lock()

    def __call__(self, args):
        """The results (a list) of calling the function with `args` (arrays or host objects)."""
        fdef = self.fdef
        if len(args) != len(fdef.input_types):
            raise errors.InvalidArgumentError(f"Function {fdef.name} takes {len(fdef.input_types)} arguments, "
                                              f"got {len(args)}", node=fdef.name)
        with self._lock:
            self._calls += 1
            step_id = self._calls
        step = Step(step_id, None, list(args), len(fdef.output_types), 1)
        parent = getattr(_calling, "step", None)
        token = parent.add_abort_callback(step.abort) if parent is not None else None
        try:
            self._executor.run_async(step, inline=True)
            if not step.wait(CALL_TIMEOUT_S):
                err = errors.DeadlineExceededError(f"Function {fdef.name} did not finish in {CALL_TIMEOUT_S} s "
                                                   f"on {self.device.name}", node=fdef.name, device=self.device.name)
                step.abort(err)
                raise err
        finally:
            if token is not None:
                parent.remove_abort_callback(token)
        if step.error is not None:
            raise step.error
        return step.retvals

    def __repr__(self):
        return f"<FunctionInstance {self.fdef.name} on {self.device.name}>"


def instantiate(fdef, device):
    """A callable instance of `fdef` on `device` (InvalidArgument if the body cannot run there)."""
    return FunctionInstance(fdef, device)


@register_kernel("PartitionedCall", ("CPU",), kind=STEP, host_only=True)  # (bodies run on host devices)
@register_kernel("StatefulPartitionedCall", ("CPU",), kind=STEP, host_only=True)
def _call(ctx):
    """A call op: its function, instantiated on the op's device when the kernel is built."""
    instance = instantiate(ctx.attr("f"), ctx.device)
    single = len(ctx.output_dtypes) == 1

    def call(step, *args):
        with calls_from(step):
            results = instance(list(args))
        return results[0] if single else tuple(results)
    return call

"""`tf.count_up_to(ref, limit)` (op CountUpTo): increments an integer variable
and returns its old value, or fails with OutOfRangeError once it reached
`limit`. Input producers count their epochs with it (`limit_epochs`)."""
import numpy as np

from .. import errors
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op

register_op("CountUpTo", ["ref: Ref(T)"], ["output: T"], attrs={"limit": 0},
            shape_fn=lambda ctx: ctx.shape(0), is_stateful=True)
not_differentiable("CountUpTo")


@register_kernel("CountUpTo", "CPU", host_only=True)
def _count_up_to(ctx):
    limit, node = int(ctx.attr("limit")), ctx.name

    def count_up_to(state):
        with state.lock:
            value = state.require(node)
            if np.ndim(value) != 0:
                raise errors.InvalidArgumentError(f"input is not a scalar: {list(np.shape(value))}", node=node)
            old = np.array(value, copy=True)
            if int(old) >= limit:
                raise errors.OutOfRangeError(f"Reached limit of {limit}", node=node)
            state.value = old + old.dtype.type(1)  # a new array: readers of the old value keep it
            return old
    return count_up_to


def count_up_to(ref, limit, name=None):
    """Increments `ref` (an int32/int64 variable) until it reaches `limit`; returns the value before."""
    return apply_op("CountUpTo", [ref], name=name or "CountUpTo", limit=int(limit)).outputs[0]

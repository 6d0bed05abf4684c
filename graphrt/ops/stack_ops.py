"""Stacks: how a gradient while loop gets the forward loop's values back.

The forward loop pushes a value each iteration (`StackPush`), the gradient
loop pops them in reverse (`StackPop`). As in TF1's original stack ops the
handle is a `Ref(string)`: a reference to per-step state, so the placer
keeps a stack and every op using it on one device (ref edges colocate).
A `Stack` node makes a new, empty stack each time it runs, that is once per
step (or per iteration of the loop it is in), so nothing leaks across steps.
"""
import threading

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from . import shape_fns
from .math_kernels import ALL_DEVICES

register_op("Stack", [], ["handle: Ref(string)"], attrs={"elem_type": dtypes.float32, "stack_name": ""},
            shape_fn=lambda ctx: TensorShape([2]), is_stateful=True)
register_op("StackPush", ["handle: Ref(string)", "elem: T"], ["output: T"], attrs={"swap_memory": False},
            shape_fn=lambda ctx: ctx.shape(1), is_stateful=True)
register_op("StackPop", ["handle: Ref(string)"], ["elem: elem_type"], shape_fn=shape_fns.unknown, is_stateful=True)
for _name in ("Stack", "StackPush", "StackPop"):
    not_differentiable(_name)


class StackState:
    """The values pushed so far in this step. `read()` is what a ref consumer
    that wants a value gets: the stack itself (it is its own handle)."""

    __slots__ = ("name", "items", "lock")

    def __init__(self, name):
        self.name = name
        self.items = []
        self.lock = threading.Lock()

    def read(self, reader=None):
        return self

    def __repr__(self):
        return f"<StackState {self.name}: {len(self.items)} items>"


def stack(elem_type, stack_name="", name="Stack"):
    return apply_op("Stack", [], name=name, elem_type=dtypes.as_dtype(elem_type).base_dtype,
                    stack_name=stack_name).outputs[0]


def stack_push(handle, elem, swap_memory=False, name="StackPush"):
    return apply_op("StackPush", [handle, elem], name=name, swap_memory=bool(swap_memory)).outputs[0]


def stack_pop(handle, elem_type, name="StackPop"):
    return apply_op("StackPop", [handle], name=name, elem_type=dtypes.as_dtype(elem_type).base_dtype).outputs[0]


@register_kernel("Stack", ALL_DEVICES, inexpensive=True)
def _stack(ctx):
    name = ctx.attr("stack_name") or ctx.name
    return lambda: StackState(name)


@register_kernel("StackPush", ALL_DEVICES, inexpensive=True)
def _stack_push(ctx):
    xp = ctx.xp

    def push(state, elem):
        if getattr(elem, "base", None) is not None:
            # A view (on an accelerator: of device memory that is freed and
            # reused once its tensor dies): the stack keeps its own copy.
            elem = xp.array(elem, copy=True)
        with state.lock:
            state.items.append(elem)
        return elem
    return push


@register_kernel("StackPop", ALL_DEVICES, inexpensive=True)
def _stack_pop(ctx):
    name = ctx.name

    def pop(state):
        with state.lock:
            if not state.items:
                raise errors.InvalidArgumentError(f"Calling Pop() when the stack is empty: {state.name}", node=name)
            return state.items.pop()
    return pop

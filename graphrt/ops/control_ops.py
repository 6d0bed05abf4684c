"""Control ops that need no frames: NoOp, group, tuple, Print, Assert,
CheckNumerics, Timestamp. (cond and while_loop live in control_flow_ops.py.)"""
import sys
import time

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import Operation, Tensor, get_default_graph, graph_of
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import not_differentiable, register_gradient, register_kernel, register_op
from . import nest, shape_fns
from .math_kernels import ALL_DEVICES

register_op("NoOp", [], [])
register_op("Print", ["input: T", "data: N * U"], ["output: T"],
            attrs={"message": "", "first_n": -1, "summarize": 3, "U": dtypes.float32},
            shape_fn=shape_fns.unchanged, is_stateful=True)
# TF's signature: `data` is a list of tensors of any types (T: list(type)), as GraphDefs name it
register_op("Assert", ["condition: bool", "data: T"], [], attrs={"summarize": 3, "T": []}, is_stateful=True)
register_op("CheckNumerics", ["tensor: T"], ["output: T"], attrs={"message": ""}, shape_fn=shape_fns.unchanged)
register_op("Timestamp", [], ["ts: float64"], shape_fn=shape_fns.scalar, is_stateful=True)
not_differentiable("NoOp")
not_differentiable("Assert")


@register_kernel("NoOp", ALL_DEVICES, inexpensive=True)
def _no_op(ctx):
    return lambda: None


@register_kernel("Print", ("CPU",))
def _print(ctx):
    message, first_n, summarize = ctx.attr("message"), ctx.attr("first_n"), ctx.attr("summarize")
    count = [0]

    def print_(x, *data):
        if first_n < 0 or count[0] < first_n:
            count[0] += 1
            parts = [np.array2string(np.asarray(d).ravel()[:summarize], separator=" ") for d in data]
            sys.stderr.write(message + "".join(parts) + "\n")
        return x
    return print_


@register_kernel("Assert", ("CPU",), host_memory=("condition",))
def _assert(ctx):
    name, summarize = ctx.name, ctx.attr("summarize")

    def part(d):
        if isinstance(d, (bytes, np.bytes_)):
            return repr(d)
        arr = np.asarray(d)
        if arr.dtype.kind == "O":  # strings: their text, as TF prints them
            items = [x.decode(errors="replace") if isinstance(x, bytes) else str(x) for x in arr.ravel()[:summarize]]
            return "[" + " ".join(items) + "]"
        return np.array2string(arr.ravel()[:summarize], separator=" ")

    def assert_(cond, *data):
        if not np.all(cond):
            parts = ", ".join(part(d) for d in data)
            raise errors.InvalidArgumentError(f"assertion failed: [{parts}]", node=name)
    return assert_


@register_kernel("Timestamp", ("CPU",))
def _timestamp(ctx):
    return lambda: np.float64(time.time())


@register_kernel("CheckNumerics", ALL_DEVICES)
def _check_numerics(ctx):
    name, message = ctx.name, ctx.attr("message")
    xp = ctx.xp

    def check(x):
        if not xp.all(xp.isfinite(x)):
            kind = "NaN" if xp.any(xp.isnan(x)) else "Inf"
            raise errors.InvalidArgumentError(f"{message} : Tensor had {kind} values", node=name)
        return x
    return check


@register_gradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return [grad]


def no_op(name=None):
    return apply_op("NoOp", [], name=name or "NoOp")


def _as_op(x):
    if hasattr(x, "_as_graph_element") and not isinstance(x, (Tensor, Operation)):
        x = x._as_graph_element()
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise TypeError(f"Expected an Operation or Tensor, got {x!r}")


def group(*inputs, **kwargs):
    """A NoOp that runs after all `inputs` (TF groups them per device first; one
    NoOp is enough here because control edges cross devices on their own)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs))
    # Any nesting of lists, tuples and dicts, as TF's nest.flatten; a None is a TypeError.
    ops = [_as_op(x) for x in nest.flatten(inputs)]
    g = graph_of(ops)
    with g.as_default(), g.name_scope(name or "group_deps") as scope:
        with g.control_dependencies(ops):
            return no_op(name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - the TF name
    """Tensors that are each available only after all of `tensors` are computed."""
    g = graph_of([t for t in tensors if t is not None])
    with g.as_default(), g.name_scope(name or "tuple"):
        tensors = [t if t is None or isinstance(t, (Tensor, Operation)) else convert_to_tensor(t) for t in tensors]
        gating_ops = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        for c in control_inputs or []:
            if not isinstance(c, (Tensor, Operation)):
                raise TypeError(f"'control_inputs' must only contain Operation or Tensor. Received: {type(c)}")
            gating_ops.append(_as_op(c))
        if not gating_ops:
            raise ValueError(f"'tensors' must have at least one Tensor. Received: {tensors}.")
        # TF's names: a `group_deps` gate, and each tensor gated by `with_dependencies`.
        gate = group(*dict.fromkeys(gating_ops))
        out = []
        for t in tensors:
            if isinstance(t, Tensor):
                out.append(with_dependencies([gate], t))
            elif isinstance(t, Operation):
                with g.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(None)
        return out


def with_dependencies(dependencies, output_tensor, name=None):
    from .array_ops import identity
    g = get_default_graph()
    with g.name_scope(name or "control_dependency") as scope:
        with g.control_dependencies(dependencies):
            return identity(convert_to_tensor(output_tensor), name=scope)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - the TF name
    return apply_op("Print", [input_, list(data)], name=name or "Print", message=message or "",
                    first_n=-1 if first_n is None else first_n, summarize=3 if summarize is None else summarize,
                    U=convert_to_tensor(data[0]).dtype.base_dtype if data else dtypes.float32).outputs[0]


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - the TF name
    data = [convert_to_tensor(d) for d in data]
    if not data:
        raise ValueError("Attr 'T' of 'Assert' Op passed list of length 0 less than minimum 1.")
    condition = convert_to_tensor(condition, dtype=dtypes.bool)
    g = graph_of([condition] + data)
    # T is a list of dtypes (TF's `T: list(type)`), so a message can mix strings and numbers;
    # apply_op infers one dtype per type attr, so the op is created directly.
    attrs = {"summarize": summarize or 3, "T": [d.dtype.base_dtype for d in data]}
    with g.as_default(), g.name_scope(name or "Assert") as scope:
        return g.create_op("Assert", [condition] + data, attrs, name=scope)


def timestamp(name=None):
    """Seconds since the epoch, a float64 scalar, read when the op runs."""
    return apply_op("Timestamp", [], name=name or "Timestamp").outputs[0]


def check_numerics(tensor, message, name=None):
    return apply_op("CheckNumerics", [tensor], name=name or "CheckNumerics", message=message).outputs[0]

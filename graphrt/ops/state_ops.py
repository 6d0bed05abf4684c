"""Stateful ops: VariableV2 and the ops that update it (Assign*, Apply*).

A variable's value lives in a `VariableState` held by its device's resource
manager, so every executor of a session sees the same variable. Its output
is a *ref*: consumers that take a value get a read-only snapshot view of
the current array; update kernels get the state itself.

Updates happen in place only when nothing else holds the array (checked
with the reference count, as TF forwards a buffer whose refcount is one);
otherwise they replace it. So a value a user fetched, or a read still
waiting in the executor, is never changed under them.
"""
import sys
import threading

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from . import shape_fns
from . import blas
from .math_kernels import ALL_DEVICES

# -- declarations ---------------------------------------------------------------

register_op("VariableV2", [], ["ref: Ref(dtype)"], attrs={"shape": TensorShape(None), "container": "",
                                                         "shared_name": ""},
            shape_fn=lambda ctx: ctx.attr("shape"), is_stateful=True)
register_op("Assign", ["ref: Ref(T)", "value: T"], ["output_ref: Ref(T)"],
            attrs={"validate_shape": True, "use_locking": True},
            shape_fn=lambda ctx: ctx.shape(1) if ctx.attr("validate_shape") is False else _merge_assign(ctx),
            is_stateful=True)
for _name in ("AssignAdd", "AssignSub"):
    register_op(_name, ["ref: Ref(T)", "value: T"], ["output_ref: Ref(T)"], attrs={"use_locking": False},
                shape_fn=lambda ctx: _merge_assign(ctx), is_stateful=True)
register_op("IsVariableInitialized", ["ref: Ref(dtype)"], ["is_initialized: bool"], shape_fn=shape_fns.scalar,
            is_stateful=True)
register_op("ApplyGradientDescent", ["var: Ref(T)", "alpha: T", "delta: T"], ["out: Ref(T)"],
            attrs={"use_locking": False}, shape_fn=shape_fns.unchanged, is_stateful=True)
register_op("ApplyMomentum", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "momentum: T"], ["out: Ref(T)"],
            attrs={"use_locking": False, "use_nesterov": False}, shape_fn=shape_fns.unchanged, is_stateful=True)
register_op("ApplyAdam", ["var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T", "beta2_power: T", "lr: T",
                          "beta1: T", "beta2: T", "epsilon: T", "grad: T"], ["out: Ref(T)"],
            attrs={"use_locking": False, "use_nesterov": False}, shape_fn=shape_fns.unchanged, is_stateful=True)

for _name in ("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized", "ApplyGradientDescent",
              "ApplyMomentum", "ApplyAdam"):
    not_differentiable(_name)


def _merge_assign(ctx):
    ref, value = ctx.shape(0), ctx.shape(1)
    if not ref.is_compatible_with(value):
        raise ValueError(f"Shapes must be equal rank, but are {ref.ndims} and {value.ndims}"
                         if ref.ndims != value.ndims else f"Dimension mismatch: {ref.short()} vs {value.short()}")
    return ref.merge_with(value)


# -- Python API ---------------------------------------------------------------------

def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    return apply_op("VariableV2", [], name=name, shape=TensorShape(shape), dtype=dtypes.as_dtype(dtype).base_dtype,
                    container=container, shared_name=shared_name).outputs[0]


def _ref(x):
    return x._ref() if hasattr(x, "_ref") else x


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    return apply_op("Assign", [_ref(ref), value], name=name or "Assign",
                    validate_shape=True if validate_shape is None else validate_shape,
                    use_locking=True if use_locking is None else use_locking).outputs[0]


def assign_add(ref, value, use_locking=None, name=None):
    return apply_op("AssignAdd", [_ref(ref), value], name=name or "AssignAdd",
                    use_locking=bool(use_locking)).outputs[0]


def assign_sub(ref, value, use_locking=None, name=None):
    return apply_op("AssignSub", [_ref(ref), value], name=name or "AssignSub",
                    use_locking=bool(use_locking)).outputs[0]


def is_variable_initialized(ref, name=None):
    return apply_op("IsVariableInitialized", [_ref(ref)], name=name or "IsVariableInitialized").outputs[0]


# -- kernels ------------------------------------------------------------------------

class _Probe:
    pass


def _baseline_refcount():
    probe = _Probe()
    probe.value = np.zeros(1)
    return sys.getrefcount(probe.value)


_EXCLUSIVE_REFS = _baseline_refcount()  # references to `state.value` when only the state holds it


class VariableState:
    """The storage of one variable on one device."""

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None
        self.lock = threading.Lock()

    def read(self, reader=None):
        """A read-only view of the current value; FailedPrecondition if uninitialized."""
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(f"Attempting to use uninitialized value {self.name}",
                                                 node=reader or self.name)
        if isinstance(value, np.ndarray):
            view = value.view()
            view.flags.writeable = False
            return view
        return value

    def exclusive(self):
        """True when nothing but this state references the value (safe to update in place)."""
        value = self.value
        return (isinstance(value, np.ndarray) and value.flags.writeable and value.base is None
                and sys.getrefcount(self.value) <= _EXCLUSIVE_REFS + 1)

    def require(self, reader):
        if self.value is None:
            raise errors.FailedPreconditionError(f"Attempting to use uninitialized value {self.name}", node=reader)
        return self.value

    def __repr__(self):
        shape = "uninitialized" if self.value is None else f"{self.value.dtype}{list(np.shape(self.value))}"
        return f"<VariableState {self.name} {shape}>"


def owned(value, xp=np):
    """A private copy of `value` for a variable to hold. The assigned array may be
    another node's output that is also fetched (or consumed) in the same step, so
    the variable never takes it over: mutating a fetched array must not change a
    variable, and an in-place update of the variable must not change a fetched array."""
    return xp.array(value, copy=True)


@register_kernel("VariableV2", ALL_DEVICES, inexpensive=True)
def _variable(ctx):
    shared = ctx.attr("shared_name") or ctx.name
    state = ctx.device.resources.lookup_or_create(
        ctx.attr("container"), shared, lambda: VariableState(shared, ctx.attr("dtype"), ctx.attr("shape")))

    def variable():
        return state
    variable.fixed_output = True  # untimed schedules start with its state in a register, as a constant
    return variable


@register_kernel("IsVariableInitialized", ALL_DEVICES, host_memory=("is_initialized",))
def _is_initialized(ctx):
    return lambda state: np.array(state.value is not None)


@register_kernel("Assign", ALL_DEVICES)
def _assign(ctx):
    validate = ctx.attr("validate_shape")
    name = ctx.name
    xp = ctx.xp

    def assign(state, value):
        shape = state.shape
        if validate and shape.ndims is not None and shape.is_fully_defined() and \
                tuple(shape.as_list()) != tuple(np.shape(value)):
            raise errors.InvalidArgumentError(
                f"Assign requires shapes of both tensors to match. lhs shape= {shape.as_list()} rhs shape= "
                f"{list(np.shape(value))}", node=name)
        if validate and state.value is not None and np.shape(state.value) != np.shape(value):
            raise errors.InvalidArgumentError(
                f"Assign requires shapes of both tensors to match. lhs shape= {list(np.shape(state.value))} "
                f"rhs shape= {list(np.shape(value))}", node=name)
        state.value = owned(value, xp)
        return state
    return assign


def update_in_place_or_replace(state, delta, inplace, outofplace):
    """`state.value op= delta`: in place when the state owns its array exclusively, else replaced
    (a snapshot someone still holds keeps the old array)."""
    if state.exclusive():
        inplace(state.value, delta)
    else:
        state.value = outofplace(state.value, delta)


def _update_kernel(op_type, inplace, outofplace):
    """AssignAdd/Sub on a ref variable."""
    @register_kernel(op_type, ALL_DEVICES)
    def factory(ctx):
        name = ctx.name

        def update(state, delta):
            current = state.require(name)
            if np.shape(delta) != np.shape(current):
                raise errors.InvalidArgumentError(
                    f"Must have updates.shape = ref.shape: {list(np.shape(delta))} vs {list(np.shape(current))}",
                    node=name)
            del current
            update_in_place_or_replace(state, delta, inplace, outofplace)
            return state
        return update
    return factory


_update_kernel("AssignAdd", lambda v, d: np.add(v, d, out=v), np.add)
_update_kernel("AssignSub", lambda v, d: np.subtract(v, d, out=v), np.subtract)


def _owned_value(state):
    """The variable's array, ready to be updated in place: itself when nothing
    else references it, else a copy that replaces it (readers keep the old one)."""
    if not state.exclusive():
        state.value = state.value.copy()
    return state.value


def _add_scaled(state, alpha, x):
    """var += alpha * x, with one fused BLAS pass where possible."""
    value = _owned_value(state)
    if not blas.axpy(alpha, x, value):
        value += x * alpha


@register_kernel("ApplyGradientDescent", ALL_DEVICES)
def _apply_gradient_descent(ctx):
    name = ctx.name

    def apply(state, alpha, delta):
        state.require(name)
        _add_scaled(state, -alpha, delta)
        return state
    return blas.on_blas_team(ctx, apply)


@register_kernel("ApplyMomentum", ALL_DEVICES)
def _apply_momentum(ctx):
    name = ctx.name
    nesterov = ctx.attr("use_nesterov")

    def apply(var, accum, lr, grad, momentum):
        var.require(name)
        accum.require(name)
        acc = _owned_value(accum)
        acc *= momentum
        if not blas.axpy(1.0, grad, acc):
            acc += grad
        if nesterov:  # one subtraction of TF's sum, so half precision rounds as TF's does
            _owned_value(var)[...] -= grad * lr + acc * momentum * lr
        else:
            _add_scaled(var, -lr, acc)
        return var
    return blas.on_blas_team(ctx, apply)


@register_kernel("ApplyAdam", ALL_DEVICES)
def _apply_adam(ctx):
    name = ctx.name
    nesterov = ctx.attr("use_nesterov")

    def apply(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        for s in (var, m, v):
            s.require(name)
        one = np.ones((), dtype=grad.dtype)
        lr_t = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
        m.value = m.value + (grad - m.value) * (one - beta1)
        v.value = v.value + (grad * grad - v.value) * (one - beta2)
        if nesterov:
            step = (m.value * beta1 + grad * (one - beta1)) * lr_t / (np.sqrt(v.value) + epsilon)
        else:
            step = m.value * lr_t / (np.sqrt(v.value) + epsilon)
        _add_scaled(var, -1.0, step)
        return var
    return apply  # mostly numpy's elementwise passes, not BLAS

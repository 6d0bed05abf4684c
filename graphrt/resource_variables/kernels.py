"""Kernels of the resource variable ops. A handle is the variable's `VariableState` itself
(ops/state_ops.py), looked up in its device's resources, so reads and updates share the
copy-on-write rules of ref variables: a snapshot a step still holds is never changed under it."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.math_kernels import ALL_DEVICES
from ..ops.state_ops import VariableState, owned, update_in_place_or_replace

_KEY = "VarHandleOp:{}"  # resource variables and ref variables of one name are different resources


def _missing(state, node):
    return errors.FailedPreconditionError(
        f"Could not find variable {state.name}. This could mean that the variable has been deleted. In TF1, it can "
        f"also mean the variable is uninitialized. Debug info: container=localhost, status error message=Resource "
        f"localhost/{state.name}/N10tensorflow3VarE does not exist.", node=node)


def current(state, node):
    """The variable's array; FailedPrecondition (TF's message) while it has none."""
    if state.value is None:
        raise _missing(state, node)
    return state.value


@register_kernel("VarHandleOp", ALL_DEVICES, inexpensive=True)
def _var_handle(ctx):
    shared = ctx.attr("shared_name") or ctx.name
    state = ctx.device.resources.lookup_or_create(
        ctx.attr("container"), _KEY.format(shared), lambda: VariableState(shared, ctx.attr("dtype"),
                                                                          ctx.attr("shape")))

    def handle():
        return state
    handle.fixed_output = True  # untimed schedules start with the state in a register, as a constant
    return handle


@register_kernel("ReadVariableOp", ALL_DEVICES)
def _read(ctx):
    name, dtype = ctx.name, ctx.attr("dtype")

    def read(state):
        if state.value is None:
            raise _missing(state, name)
        if state.dtype.base_dtype != dtype.base_dtype:
            raise errors.InvalidArgumentError(f"Trying to read variable {state.name} with wrong dtype. Expected "
                                              f"{state.dtype.base_dtype.name} got {dtype.name}", node=name)
        return state.read(name)
    return read


def _check_dtype(state, value, name):
    have = np.asarray(value).dtype
    if state.dtype.base_dtype.np != have and not (state.dtype.base_dtype.name == "string" and have.kind in "OSU"):
        from ..framework import dtypes
        try:
            got = dtypes.as_dtype(have).name
        except TypeError:
            got = str(have)
        raise errors.InvalidArgumentError(f"Trying to assign variable with wrong dtype. Expected "
                                          f"{state.dtype.base_dtype.name} got {got}", node=name)


@register_kernel("AssignVariableOp", ALL_DEVICES)
def _assign(ctx):
    name, xp, validate = ctx.name, ctx.xp, ctx.attr("validate_shape")

    def assign(state, value):
        _check_dtype(state, value, name)
        if validate and state.value is not None and np.shape(state.value) != np.shape(value):
            raise errors.InvalidArgumentError(
                f"Trying to assign to variable with tensor with wrong shape. Expected "
                f"{list(np.shape(state.value))} got {list(np.shape(value))}", node=name)
        state.value = owned(value, xp)
    return assign


def _update_kernel(op_type, inplace, outofplace):
    @register_kernel(op_type, ALL_DEVICES)
    def factory(ctx):
        name = ctx.name

        def update(state, delta):
            value = current(state, name)
            if np.shape(delta) != np.shape(value):
                raise errors.InvalidArgumentError(
                    f"Cannot update variable with shape {list(np.shape(value))} using a Tensor with shape "
                    f"{list(np.shape(delta))}, shapes must be equal.", node=name)
            del value
            update_in_place_or_replace(state, delta, inplace, outofplace)
        return update
    return factory


_update_kernel("AssignAddVariableOp", lambda v, d: np.add(v, d, out=v), np.add)
_update_kernel("AssignSubVariableOp", lambda v, d: np.subtract(v, d, out=v), np.subtract)


@register_kernel("VarIsInitializedOp", ALL_DEVICES, host_memory=("is_initialized",))
def _is_initialized(ctx):
    return lambda state: np.array(state.value is not None)


@register_kernel("VariableShape", ALL_DEVICES, host_memory=("output",))
def _variable_shape(ctx):
    name, out = ctx.name, ctx.attr("out_type").np
    return lambda state: np.array(np.shape(current(state, name)), dtype=out)


@register_kernel("DestroyResourceOp", ALL_DEVICES)
def _destroy(ctx):
    name, ignore = ctx.name, ctx.attr("ignore_lookup_error")

    def destroy(state):
        if state.value is None and not ignore:
            raise errors.NotFoundError(f"Resource localhost/{state.name}/N10tensorflow3VarE does not exist.",
                                       node=name)
        state.value = None  # later reads fail as reads of a deleted variable do
    return destroy


@register_kernel("ResourceGather", ALL_DEVICES, host_memory=("indices",))
def _gather(ctx):
    name, xp, batch_dims = ctx.name, ctx.xp, ctx.attr("batch_dims")

    def gather(state, indices):
        params = current(state, name)
        if batch_dims:
            raise errors.UnimplementedError(f"ResourceGather {name}: batch_dims={batch_dims} is not supported",
                                            node=name)
        idx = np.asarray(indices)
        n = params.shape[0] if np.ndim(params) else 0
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            first = np.flatnonzero(bad.ravel())[0]
            where = ",".join(str(i) for i in np.unravel_index(first, idx.shape)) if idx.ndim else ""
            raise errors.InvalidArgumentError(f"indices[{where}] = {int(idx.ravel()[first])} is not in [0, {n})",
                                              node=name)
        return xp.take(params, idx, axis=0)
    return gather


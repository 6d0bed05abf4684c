"""Row-wise updates of a variable, for sparse (IndexedSlices) gradients:
ScatterAdd/ScatterSub/ScatterUpdate and the optimizers' SparseApplyMomentum,
SparseApplyAdagrad and SparseApply(Centered)RMSProp (TF's state_ops and
training_ops). Each touches only
the rows named by `indices`; a repeated index in a scatter adds up (TF's
semantics), as numpy's ufunc.at does.

    SparseApplyMomentum: accum[i] = accum[i] * momentum + grad;  var[i] -= lr * accum[i]
                         (nesterov: var[i] -= lr * grad + lr * momentum * accum[i])
    SparseApplyAdagrad:  accum[i] += grad^2;  var[i] -= lr * grad / sqrt(accum[i])
    SparseApplyRMSProp:  ms[i] = ms[i] * rho + grad^2 * (1 - rho)
                         mom[i] = mom[i] * momentum + lr * grad / sqrt(ms[i] + epsilon);  var[i] -= mom[i]
                         (centered: also mg[i] = mg[i] * rho + grad * (1 - rho), and the
                          denominator is sqrt(ms[i] + epsilon - mg[i]^2))
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_kernel, register_op
from .math_kernels import ALL_DEVICES
from .state_ops import _owned_value, _ref

INDEX = (dtypes.int32, dtypes.int64)


def _scatter_shape(ctx):
    ref, indices, updates = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if None not in (ref.ndims, indices.ndims, updates.ndims):
        want = indices.concatenate(ref.dims[1:]) if ref.ndims else None
        if want is None or not updates.is_compatible_with(want):
            raise ValueError(f"Shapes of updates {updates} and indices {indices} do not fit ref {ref}: updates "
                             f"must have shape indices.shape + ref.shape[1:]")
    return ref


def _sparse_apply_shape(n_slots, grad_input):
    def fn(ctx):
        var, grad, indices = ctx.shape(0), ctx.shape(grad_input), ctx.shape(grad_input + 1)
        for i in range(1, 1 + n_slots):
            if not var.is_compatible_with(ctx.shape(i)):
                raise ValueError(f"var and slot {i} shapes differ: {var} vs {ctx.shape(i)}")
        if indices.ndims not in (None, 1):
            raise ValueError(f"indices must be a vector, got shape {indices}")
        return var
    return fn


for _name in ("ScatterAdd", "ScatterSub", "ScatterUpdate"):
    register_op(_name, ["ref: Ref(T)", "indices: Tindices", "updates: T"], ["output_ref: Ref(T)"],
                attrs={"use_locking": _name == "ScatterUpdate"}, shape_fn=_scatter_shape,
                allowed_types={"Tindices": INDEX}, is_stateful=True)
    not_differentiable(_name)
register_op("SparseApplyMomentum", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices",
                                    "momentum: T"], ["out: Ref(T)"],
            attrs={"use_locking": False, "use_nesterov": False}, shape_fn=_sparse_apply_shape(1, 3),
            allowed_types={"Tindices": INDEX}, is_stateful=True)
register_op("SparseApplyAdagrad", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices"],
            ["out: Ref(T)"], attrs={"use_locking": False, "update_slots": True},
            shape_fn=_sparse_apply_shape(1, 3), allowed_types={"Tindices": INDEX}, is_stateful=True)
register_op("SparseApplyRMSProp", ["var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T", "momentum: T",
                                   "epsilon: T", "grad: T", "indices: Tindices"], ["out: Ref(T)"],
            attrs={"use_locking": False}, shape_fn=_sparse_apply_shape(2, 7), allowed_types={"Tindices": INDEX},
            is_stateful=True)
register_op("SparseApplyCenteredRMSProp", ["var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T",
                                           "rho: T", "momentum: T", "epsilon: T", "grad: T", "indices: Tindices"],
            ["out: Ref(T)"], attrs={"use_locking": False}, shape_fn=_sparse_apply_shape(3, 8),
            allowed_types={"Tindices": INDEX}, is_stateful=True)
for _name in ("SparseApplyMomentum", "SparseApplyAdagrad", "SparseApplyRMSProp", "SparseApplyCenteredRMSProp"):
    not_differentiable(_name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i]] += updates[i] (repeated indices add up); returns ref."""
    return apply_op("ScatterAdd", [_ref(ref), indices, updates], name=name or "ScatterAdd",
                    use_locking=bool(use_locking)).outputs[0]


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i]] -= updates[i] (repeated indices add up); returns ref."""
    return apply_op("ScatterSub", [_ref(ref), indices, updates], name=name or "ScatterSub",
                    use_locking=bool(use_locking)).outputs[0]


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i]] = updates[i]; returns ref."""
    return apply_op("ScatterUpdate", [_ref(ref), indices, updates], name=name or "ScatterUpdate",
                    use_locking=bool(use_locking)).outputs[0]


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False, use_nesterov=False,
                          name=None):
    return apply_op("SparseApplyMomentum", [_ref(var), _ref(accum), lr, grad, indices, momentum],
                    name=name or "SparseApplyMomentum", use_locking=bool(use_locking),
                    use_nesterov=bool(use_nesterov)).outputs[0]


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, update_slots=True, name=None):
    return apply_op("SparseApplyAdagrad", [_ref(var), _ref(accum), lr, grad, indices],
                    name=name or "SparseApplyAdagrad", use_locking=bool(use_locking),
                    update_slots=bool(update_slots)).outputs[0]


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices, use_locking=False, name=None):
    return apply_op("SparseApplyRMSProp", [_ref(var), _ref(ms), _ref(mom), lr, rho, momentum, epsilon, grad, indices],
                    name=name or "SparseApplyRMSProp", use_locking=bool(use_locking)).outputs[0]


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices, use_locking=False,
                                   name=None):
    return apply_op("SparseApplyCenteredRMSProp", [_ref(var), _ref(mg), _ref(ms), _ref(mom), lr, rho, momentum,
                                                   epsilon, grad, indices],
                    name=name or "SparseApplyCenteredRMSProp", use_locking=bool(use_locking)).outputs[0]


# -- kernels ----------------------------------------------------------------------------------

def _check_rows(name, value, indices, rows):
    """indices must be valid rows of `value`; `rows` (updates or grad) one per index."""
    indices = np.asarray(indices).reshape(-1)
    n = value.shape[0] if value.ndim else 0
    bad = indices[(indices < 0) | (indices >= n)]
    if bad.size:
        raise errors.InvalidArgumentError(f"indices[{int(np.flatnonzero((indices < 0) | (indices >= n))[0])}] = "
                                          f"{int(bad[0])} is not in [0, {n})", node=name)
    want = (len(indices),) + tuple(value.shape[1:])
    if tuple(rows.shape) != want and rows.size != int(np.prod(want)):
        raise errors.InvalidArgumentError(f"updates has shape {list(rows.shape)}, expected {list(want)} "
                                          f"(indices.shape + var.shape[1:])", node=name)
    return indices, rows.reshape(want)


def _scatter_kernel(update):
    def factory(ctx):
        name, xp = ctx.name, ctx.xp

        def scatter(ref, indices, updates):
            ref.require(name)
            value = _owned_value(ref)
            idx, rows = _check_rows(name, value, indices, xp.asarray(updates))
            update(xp, value, idx, rows)
            return ref
        return scatter
    return factory


register_kernel("ScatterAdd", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: xp.add.at(v, i, r)))
register_kernel("ScatterSub", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: xp.subtract.at(v, i, r)))
register_kernel("ScatterUpdate", ALL_DEVICES)(_scatter_kernel(lambda xp, v, i, r: v.__setitem__(i, r)))


@register_kernel("SparseApplyMomentum", ALL_DEVICES)
def _sparse_apply_momentum(ctx):
    name, nesterov = ctx.name, ctx.attr("use_nesterov")

    def apply(var, accum, lr, grad, indices, momentum):
        var.require(name)
        accum.require(name)
        value, acc = _owned_value(var), _owned_value(accum)
        idx, rows = _check_rows(name, value, indices, grad)
        for i, row in zip(idx, rows):  # sequential, as TF: a repeated index sees the earlier update
            acc[i] = acc[i] * momentum + row
            value[i] -= (row * lr + acc[i] * momentum * lr) if nesterov else acc[i] * lr
        return var
    return apply


@register_kernel("SparseApplyAdagrad", ALL_DEVICES)
def _sparse_apply_adagrad(ctx):
    name, xp, update_slots = ctx.name, ctx.xp, ctx.attr("update_slots")

    def apply(var, accum, lr, grad, indices):
        var.require(name)
        accum.require(name)
        value = _owned_value(var)
        acc = _owned_value(accum) if update_slots else accum.value
        idx, rows = _check_rows(name, value, indices, grad)
        for i, row in zip(idx, rows):
            if update_slots:
                acc[i] += row * row
            value[i] -= row * lr / xp.sqrt(acc[i])
        return var
    return apply


def _sparse_rms_prop_kernel(centered):
    def factory(ctx):
        name, xp = ctx.name, ctx.xp

        def apply(var, *args):
            slots, (lr, rho, momentum, epsilon, grad, indices) = args[:2 + centered], args[2 + centered:]
            for ref in (var,) + slots:
                ref.require(name)
            value = _owned_value(var)
            mg, ms, mom = ((None,) if not centered else ()) + tuple(_owned_value(r) for r in slots)
            idx, rows = _check_rows(name, value, indices, grad)
            for i, row in zip(idx, rows):  # only the rows with a gradient: the others keep their slots
                ms[i] = ms[i] * rho + row * row * (1 - rho)
                denom = ms[i] + epsilon
                if centered:
                    mg[i] = mg[i] * rho + row * (1 - rho)
                    denom = denom - mg[i] * mg[i]
                mom[i] = mom[i] * momentum + lr * row / xp.sqrt(denom)
                value[i] -= mom[i]
            return var
        return apply
    return factory


register_kernel("SparseApplyRMSProp", ALL_DEVICES)(_sparse_rms_prop_kernel(False))
register_kernel("SparseApplyCenteredRMSProp", ALL_DEVICES)(_sparse_rms_prop_kernel(True))

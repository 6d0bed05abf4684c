"""Kernels of update_ops.py, with TF's arithmetic (training_ops.cc). Each rule
updates var and its slots in place; the dense kernel applies it to whole
arrays, the sparse one to the rows named by `indices`:

    Adadelta:  accum = rho * accum + (1 - rho) * g^2
               update = sqrt(accum_update + eps) / sqrt(accum + eps) * g;  var -= lr * update
               accum_update = rho * accum_update + (1 - rho) * update^2
    Ftrl:      (V2: g' = g + 2 * l2_shrinkage * var, else g' = g)
               new_accum = accum + g^2
               linear += g' - (new_accum^-p - accum^-p) / lr * var
               var = (l1 * sign(linear) - linear) / (new_accum^-p / lr + 2 * l2)  if |linear| > l1 else 0
               accum = new_accum
    ProximalAdagrad:          accum += g^2;  rate = lr / sqrt(accum);  then the proximal step
    ProximalGradientDescent:  rate = alpha;  then the proximal step
               prox = var - rate * g
               var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)   (l1 > 0)
               var = prox / (1 + rate * l2)                                      (otherwise)
    AdagradDA: g_acc += g;  gg_acc += g^2;  t = global_step
               var = -lr * sign(g_acc) * max(|g_acc| - t * l1, 0) / (l2 * t * lr + sqrt(gg_acc))  (l1 > 0)
               var = -lr * g_acc / (l2 * t * lr + sqrt(gg_acc))                                     (otherwise)
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.math_kernels import ALL_DEVICES
from ..ops.sparse_training_ops import _check_rows
from ..ops.state_ops import _owned_value
from ..ops.training_ops import _check


def adadelta(xp, var, accum, accum_update, lr, rho, epsilon, grad):
    accum *= rho
    accum += grad * grad * (1 - rho)
    update = xp.sqrt(accum_update + epsilon) / xp.sqrt(accum + epsilon) * grad
    var -= update * lr
    accum_update *= rho
    accum_update += update * update * (1 - rho)


def ftrl(xp, var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=None):
    shrunk = grad if l2_shrinkage is None else grad + 2 * l2_shrinkage * var
    new_accum = accum + grad * grad
    if lr_power == -0.5:  # TF's special case: square roots, not powers
        now, before = xp.sqrt(new_accum), xp.sqrt(accum)
    else:
        now, before = new_accum ** -lr_power, accum ** -lr_power
    linear += shrunk - (now - before) / lr * var
    y = now / lr + 2 * l2
    var[...] = xp.where(xp.abs(linear) > l1, (l1 * xp.sign(linear) - linear) / y, 0)
    accum[...] = new_accum


def ftrl_v2(xp, var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
    ftrl(xp, var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage)


def _proximal_step(xp, var, prox, rate, l1, l2):
    if l1 > 0:
        var[...] = xp.sign(prox) * xp.maximum(xp.abs(prox) - rate * l1, 0) / (1 + rate * l2)
    else:
        var[...] = prox / (1 + rate * l2)


def proximal_adagrad(xp, var, accum, lr, l1, l2, grad):
    accum += grad * grad
    rate = lr / xp.sqrt(accum)
    _proximal_step(xp, var, var - grad * rate, rate, l1, l2)


def proximal_gradient_descent(xp, var, alpha, l1, l2, delta):
    _proximal_step(xp, var, var - delta * alpha, alpha, l1, l2)


def adagrad_da(xp, var, g_acc, gg_acc, grad, lr, l1, l2, global_step):
    g_acc += grad
    gg_acc += grad * grad
    t = var.dtype.type(global_step)
    denom = l2 * t * lr + xp.sqrt(gg_acc)
    if l1 > 0:
        var[...] = -lr * xp.sign(g_acc) * xp.maximum(xp.abs(g_acc) - t * l1, 0) / denom
    else:
        var[...] = -lr * g_acc / denom


def _check_slots(name, refs, slot_names):
    shape = refs[0].require(name).shape
    for slot_name, state in zip(slot_names, refs[1:]):
        if state.require(name).shape != shape:
            raise errors.InvalidArgumentError(f"var and {slot_name} do not have the same shape"
                                              f"{list(shape)} {list(state.value.shape)}", node=name)


def _register(op, rule, slot_names, grad):
    n_refs = 1 + len(slot_names)

    @register_kernel(f"Apply{op}", ALL_DEVICES)
    def dense(ctx):
        name, xp = ctx.name, ctx.xp

        def apply(*inputs):
            refs = inputs[:n_refs]
            _check(name, refs[0], inputs[grad], list(zip(slot_names, refs[1:])))
            rule(xp, *[_owned_value(r) for r in refs], *inputs[n_refs:])
            return refs[0]
        return apply

    @register_kernel(f"SparseApply{op}", ALL_DEVICES)
    def sparse(ctx):
        name, xp = ctx.name, ctx.xp

        def apply(*inputs):
            refs = inputs[:n_refs]
            _check_slots(name, refs, slot_names)
            arrays = [_owned_value(r) for r in refs]
            idx, rows = _check_rows(name, arrays[0], inputs[grad + 1], xp.asarray(inputs[grad]))
            others = list(inputs[n_refs:grad]) + [rows] + list(inputs[grad + 2:])
            at = grad - n_refs
            if len(np.unique(idx)) == len(idx):  # the optimizers' case (indices deduplicated): all rows at once
                parts = [a[idx] for a in arrays]
                rule(xp, *parts, *others)
                for a, part in zip(arrays, parts):
                    a[idx] = part
                return refs[0]
            for i, row in zip(idx, rows):  # sequential, as TF: a repeated index sees the earlier update
                others[at] = row
                rule(xp, *[a[i:i + 1] for a in arrays], *others)
            return refs[0]
        return apply


_register("Adadelta", adadelta, ["accum", "accum_update"], 6)
_register("Ftrl", ftrl, ["accum", "linear"], 3)
_register("FtrlV2", ftrl_v2, ["accum", "linear"], 3)
_register("ProximalAdagrad", proximal_adagrad, ["accum"], 5)
_register("ProximalGradientDescent", proximal_gradient_descent, [], 4)
_register("AdagradDA", adagrad_da, ["gradient_accumulator", "gradient_squared_accumulator"], 3)

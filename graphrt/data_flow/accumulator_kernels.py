"""Conditional accumulator kernels (host CPU only, as the queues').

The accumulator lives in its device's resource manager, under
`shared_name` when given (every worker's graph naming it shares one: the
SyncReplicasOptimizer's accumulators on a ps task), else under the node's
name. TakeGradient is ASYNC: a wait holds no executor thread and the
step's abort ends it (accumulator_state.py).
"""
import itertools

import numpy as np

from ..framework.registry import ASYNC, register_kernel
from .accumulator_state import AccumulatorState, SparseAccumulatorState

_ids = itertools.count()
_PRIVATE = "_graphrt_accumulators"


def _factory(state_cls):
    def factory(ctx):
        dtype, shape = ctx.attr("dtype"), ctx.attr("shape")
        reduction = ctx.attr("reduction_type", "MEAN")
        shared = ctx.attr("shared_name")
        container = ctx.attr("container") if shared else _PRIVATE
        key, node = shared or ctx.name, ctx.name
        resources = ctx.device.resources

        def create():
            return state_cls(shared or f"_{next(_ids)}_{node}", dtype, shape, reduction)

        def accumulator():
            state = resources.lookup_or_create(container, key, create)
            if shared:
                state.check_compatible(state_cls.kind, dtype, shape, reduction, node)
            return state
        return accumulator
    return factory


register_kernel("ResourceConditionalAccumulator", "CPU", inexpensive=True, host_only=True)(_factory(AccumulatorState))
register_kernel("SparseConditionalAccumulator", "CPU", inexpensive=True, host_only=True)(
    _factory(SparseAccumulatorState))


@register_kernel("ResourceAccumulatorApplyGradient", "CPU", inexpensive=True, host_only=True)
def _apply(ctx):
    node = ctx.name
    return lambda acc, local_step, grad: acc.apply_grad(int(local_step), grad, node) and None


@register_kernel("SparseAccumulatorApplyGradient", "CPU", inexpensive=True, host_only=True)
def _sparse_apply(ctx):
    node, known = ctx.name, bool(ctx.attr("has_known_shape"))

    def apply(acc, local_step, indices, values, shape):
        acc.apply_grad(int(local_step), (indices, values, shape if known else None), node)
    return apply


def _take_factory(n_out):
    def factory(ctx):
        node = ctx.name

        def take(step, args, done):
            acc, n = args[0], int(args[1])
            acc.take_grad(n, lambda err, value: done(err) if err is not None else done(None, value), node, step)
        return take
    return factory


register_kernel("ResourceAccumulatorTakeGradient", "CPU", kind=ASYNC, inexpensive=True, host_only=True,
                host_memory=("num_required",))(_take_factory(1))
register_kernel("SparseAccumulatorTakeGradient", "CPU", kind=ASYNC, inexpensive=True, host_only=True,
                host_memory=("num_required",))(_take_factory(3))


@register_kernel("ResourceAccumulatorNumAccumulated", "CPU", inexpensive=True, host_only=True)
def _num_accumulated(ctx):
    return lambda acc: np.array(acc.counter, dtype=np.int32)


@register_kernel("ResourceAccumulatorSetGlobalStep", "CPU", inexpensive=True, host_only=True)
def _set_global_step(ctx):
    return lambda acc, step: acc.set_global_step(int(step))

"""`tf.recompute_grad(fn)` (TF1: `tf.contrib.layers.recompute_grad`): a
function whose intermediate activations are not kept for the backward pass.

The wrapped function runs `fn` as usual, then passes its outputs, its
arguments and the tensors it closed over (variable reads among them)
through one IdentityN whose gradient is overridden. The gradient walk
stops at that IdentityN: none of fn's own ops is differentiated, so none
of its activations outlives the forward pass. The overridden gradient
copies fn's ops (copy.py) from arguments that wait for the incoming
gradients, and differentiates the copies.

Variables created inside fn are created once (the copies read the same
variables). Random ops inside fn are not recomputed: their first draw is
reused, so the gradients match the forward pass.
"""
import functools
import itertools
import re

from ..framework import registry
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, extra_ops, nest
from . import copy as copy_lib

_GRADIENT = "_RecomputeGrad"
_ids = itertools.count()


def recompute_grad(fn, use_data_dep=None, tupleize_grads=False):
    """Decorates `fn(*tensors) -> tensor or nested tensors` so that its forward
    pass is recomputed during the backward pass instead of stored."""
    del use_data_dep, tupleize_grads  # TF1's knobs for its own implementation; nothing to choose here

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        g = get_default_graph()
        args = [convert_to_tensor(a) for a in args]
        start = len(g._ops)
        outputs = fn(*args, **kwargs)
        flat = [convert_to_tensor(t) for t in nest.flatten(outputs)]
        block = _block_ops(g._ops[start:], args, flat)
        block_set = set(block)
        arg_set = set(args)
        captured = []
        for op in block:
            for t in op.inputs:
                if t.op not in block_set and t not in arg_set and t not in captured and \
                        t.dtype.base_dtype.is_trainable and not t.dtype.is_ref_dtype:
                    captured.append(t)
        key = f"recompute_{next(_ids)}"
        g._recompute_fns = getattr(g, "_recompute_fns", {})
        with g.gradient_override_map({"IdentityN": _GRADIENT}):
            out = extra_ops.identity_n(flat + args + captured, name=_scope_name(fn))
        g._recompute_fns[out[0].op.name] = (block, args, captured, flat)
        return nest.pack_sequence_as(outputs, out[:len(flat)])

    return wrapped


def _scope_name(fn):
    name = re.sub(r"[^A-Za-z0-9_.-]", "", getattr(fn, "__name__", "")).lstrip("_.-")
    return f"{name or 'fn'}_recompute"


def _block_ops(new_ops, args, outputs):
    """Ops of fn on a path from its arguments to its outputs (the ones to recompute)."""
    new_set = set(new_ops)
    reached, stack = set(), [c for a in args for c in a.consumers() if c in new_set]
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        stack.extend(c for t in op.outputs for c in t.consumers() if c in new_set)
    between, stack = set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op in between or op not in reached or op.op_def.is_stateful:
            continue
        between.add(op)
        stack.extend(t.op for t in op.inputs)
    return sorted(between, key=lambda op: op._id)


@registry.register_gradient(_GRADIENT)
def _recompute_grad(op, *grads):
    from ..gradients import gradients
    block, args, captured, flat = op.graph._recompute_fns[op.name]
    out_grads = list(grads[:len(flat)])
    wait = [copy_lib.control_op(gr) for gr in out_grads]
    with op.graph.control_dependencies([w for w in wait if w is not None]):
        fresh = [array_ops.identity(a) for a in args]
    mapping = copy_lib.copy_ops(block, dict(zip(args, fresh)), wait)
    copied = [mapping.get(t, t) for t in flat]
    wrt = fresh + captured
    diffable = [i for i, t in enumerate(copied) if isinstance(t, Tensor) and t.dtype.base_dtype.is_trainable]
    in_grads = gradients([copied[i] for i in diffable], wrt, grad_ys=[out_grads[i] for i in diffable],
                                       stop_gradients=fresh) if wrt and diffable else [None] * len(wrt)
    return [None] * len(flat) + list(in_grads)

"""`tf.gradients(ys, xs, checkpoints=...)`: gradients that keep only some
activations and recompute the rest (Chen et al. 2016, "Training Deep Nets
with Sublinear Memory Cost").

The forward ops between xs and ys are cut at the checkpoint tensors into
segments. The segments are differentiated one at a time, from the last to
the first: a segment is copied (copy.py), its copies wait for the gradient
of the segment's output, and `gradients` of the copies gives the gradients
of the checkpoints that feed the segment and of the xs it uses. So during
the backward pass only the checkpoints and one recomputed segment are
alive, instead of every activation.

Which ops are recomputed: every op on the forward path except the xs
themselves, variable reads (ops whose inputs all come from xs) and
stateful ops (a recomputed random op would draw other numbers); those are
used as they are.

`checkpoints` is a list of tensors, "collection" (the graph collection
"checkpoints", as the gradient-checkpointing library of OpenAI spells it),
or "sqrt": about sqrt(n) of the n tensors that cut the forward path in two
(every path from xs to ys passes through them), evenly spaced.
"""
import math

from .. import errors
from ..framework.graph import Tensor, graph_of
from . import copy as copy_lib

COLLECTION = "checkpoints"


def gradients_with_checkpoints(ys, xs, grad_ys, checkpoints, name="gradients", **kwargs):
    """d(sum ys)/dx for each x, recomputing forward segments between checkpoints."""
    from ..gradients import _sum, gradients
    g = graph_of(ys + xs)
    fwd = forward_ops(ys, xs)
    recomputable = _recomputable(fwd, {x.op for x in xs})
    chosen = resolve_checkpoints(checkpoints, g, ys, xs, fwd, recomputable)
    # An intermediate x is a checkpoint: its gradient is the sum of what its consumers' segments send it.
    chosen = _ordered(set(chosen) | {x for x in xs if x.op in recomputable} - set(ys))
    chosen_set = set(chosen)
    received = {}   # checkpoint -> gradients from the segments it feeds
    x_grads = {x: [] for x in xs if x not in chosen_set}
    with g.as_default(), g.name_scope(name):
        previous = []
        targets = [(list(ys), list(grad_ys), [y.op for y in ys])] + [([c], None, []) for c in reversed(chosen)]
        for outs, out_grads, after in targets:
            if out_grads is None:  # a checkpoint: every segment it feeds is done
                out_grads = [_sum(received.get(outs[0]))]
            if all(gr is None for gr in out_grads) and outs[0] not in ys:
                continue  # nothing downstream of this checkpoint reaches ys
            segment = _segment(outs, recomputable, chosen_set)
            boundary = _ordered({t for op in segment for t in op.inputs if t in chosen_set})
            # Wait for the previous segment's gradients too: its recomputed activations are then freed
            # before these are made, so one segment is alive at a time.
            wait = [copy_lib.control_op(gr) for gr in out_grads + previous] + after
            mapping = copy_lib.copy_ops(segment, {}, wait)
            wrt = boundary + list(x_grads)
            if not wrt:
                continue
            grads = gradients([mapping.get(t, t) for t in outs], wrt, grad_ys=out_grads,
                                            stop_gradients=boundary, name="segment", **kwargs)
            previous = [gr for gr in grads if gr is not None]
            for t, gr in zip(wrt, grads):
                if gr is None:
                    continue
                (received.setdefault(t, []) if t in chosen_set else x_grads[t]).append(gr)
        return [_sum(received.get(x) if x in chosen_set else x_grads[x]) for x in xs]


def forward_ops(ys, xs):
    """Ops on a path (through floating tensors) from some x to some y, by creation order."""
    reached, stack = set(), [x.op for x in xs]
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            if t.dtype.base_dtype.is_trainable:
                stack.extend(t.consumers())
    between, stack = set(), [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in between or op not in reached:
            continue
        between.add(op)
        stack.extend(t.op for t in op.inputs)
    return sorted(between, key=lambda op: op._id)


def _recomputable(fwd, x_ops):
    fwd_set = set(fwd)
    keep = set()
    for op in fwd:
        on_path = [t for t in op.inputs if t.op in fwd_set]
        if not on_path or op.op_def.is_stateful:
            keep.add(op)  # an x fed by nothing on the path, a random op: used as it is
        elif op not in x_ops and all(t.op in x_ops and t.op in keep for t in on_path):
            keep.add(op)  # a variable read
    return {op for op in fwd if op not in keep}


def _ordered(tensors):
    return sorted(tensors, key=lambda t: (t.op._id, t.value_index))


def _segment(outs, recomputable, chosen):
    """The recomputable ops the outs depend on without passing through a checkpoint."""
    seen, stack = set(), [t.op for t in outs]
    while stack:
        op = stack.pop()
        if op in seen or op not in recomputable:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs if t not in chosen)
    return sorted(seen, key=lambda op: op._id)


def resolve_checkpoints(checkpoints, g, ys, xs, fwd, recomputable):
    """The checkpoint tensors asked for, checked to be on the forward path."""
    if isinstance(checkpoints, str):
        if checkpoints == "sqrt":
            return sqrt_checkpoints(fwd, recomputable, ys)
        if checkpoints == "collection":
            tensors = g.get_collection(COLLECTION)
        else:
            raise errors.InvalidArgumentError(
                f"checkpoints must be 'sqrt', 'collection' or a list of tensors, got {checkpoints!r}")
    elif isinstance(checkpoints, Tensor):
        tensors = [checkpoints]
    else:
        tensors = list(checkpoints)
    fwd_set = set(fwd)
    out = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise errors.InvalidArgumentError(f"checkpoints must be tensors, got {t!r}")
        if t.op not in fwd_set or t in xs and t.op not in recomputable:
            raise errors.InvalidArgumentError(
                f"Checkpoint {t.name} is not on the forward path from "
                f"{[x.name for x in xs][:4]} to {[y.name for y in ys][:4]}", node=t.op.name)
        if t.op in recomputable and t not in ys:
            out.append(t)
    return out


def separators(fwd, recomputable, ys):
    """Tensors every forward path goes through: nothing computed before them
    is used after them (variable reads and feeds aside)."""
    order = [op for op in fwd if op in recomputable]
    position = {op: i for i, op in enumerate(order)}
    out, reach = [], 0
    y_ops = {y.op for y in ys}
    for i, op in enumerate(order):
        outputs = [t for t in op.outputs if t.dtype.base_dtype.is_trainable]
        if reach <= i and len(op.outputs) == 1 and outputs and op not in y_ops:
            out.append(outputs[0])
        last = max((position[c] for t in op.outputs for c in t.consumers() if c in position), default=i)
        reach = max(reach, last)
    return out


def sqrt_checkpoints(fwd, recomputable, ys):
    """Every ceil(sqrt(n))-th of the n separators."""
    candidates = separators(fwd, recomputable, ys)
    if not candidates:
        return []
    step = max(1, math.ceil(math.sqrt(len(candidates))))
    return candidates[step - 1::step]

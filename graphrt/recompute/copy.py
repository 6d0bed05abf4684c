"""Copying a forward segment of the graph so the backward pass can recompute it.

The copies are ordinary ops with the same type, attrs, device and gradient
override as the originals. Inputs produced inside the segment are rewired
to the copies; every other input (a checkpoint, a variable read, a feed) is
used as it is. The first copies wait, through control inputs, for the
gradients that need them: without that wait the executor would run the
recomputation during the forward pass, and the copies would be as alive as
the activations they replace.
"""
from .. import errors
from ..framework.indexed_slices import IndexedSlices


def control_op(value):
    """The op to wait for before recomputing for `value` (a gradient)."""
    if value is None:
        return None
    if isinstance(value, IndexedSlices):
        return value.values.op
    return getattr(value, "op", None)


def copy_ops(ops, replacements, wait_for=(), scope="recompute"):
    """Copies `ops` (in topological order) with `replacements` (tensor -> tensor)
    applied to their inputs; returns the mapping original tensor -> copy.

    Copies with no copied data input get `wait_for` (ops) as control inputs.
    """
    if not ops:
        return dict(replacements)
    g = ops[0].graph
    mapping = dict(replacements)
    copied = set()
    wait_for = [op for op in wait_for if op is not None]
    with g.name_scope(scope):
        for op in ops:
            if op._control_flow_context is not None:
                raise errors.InvalidArgumentError(
                    f"Cannot recompute '{op.name}' ({op.type}): it is inside a tf.cond or tf.while_loop; put a "
                    "checkpoint after the loop or keep the loop outside the recomputed function", node=op.name)
            inputs = [mapping.get(t, t) for t in op.inputs]
            has_copied_input = any(t.op in copied for t in inputs)
            controls = [c for c in op.control_inputs]
            if not has_copied_input:
                controls = controls + wait_for
            attrs = {k: v for k, v in op.attrs.items()}
            new = g.create_op(op.type, inputs, attrs, name=op.name, control_inputs=controls,
                              output_dtypes=[t.dtype for t in op.outputs])
            new._device = op._device
            new._gradient_op_type = op._gradient_op_type
            for old_t, new_t in zip(op.outputs, new.outputs):
                new_t.set_shape(old_t.shape)
                mapping[old_t] = new_t
            copied.add(new)
    return mapping

"""Small predicates over control-flow ops and contexts (TF1's control_flow_util).

A *context* is the CondContext or WhileContext an op was created in (its
`_control_flow_context`); None means top level. These helpers answer the
questions the cond/while builders and the gradient code keep asking: is
this op a loop's Switch or a cond's, which while loop is it in, where do
its outputs live.
"""

from ..framework.op_categories import ENTER_OPS, EXIT_OPS, MERGE_OPS, SWITCH_OPS


def is_switch(op):
    return op.type in SWITCH_OPS


def is_merge(op):
    return op.type in MERGE_OPS


def is_loop_enter(op):
    return op.type in ENTER_OPS


def is_loop_exit(op):
    return op.type in EXIT_OPS


def is_loop_constant_enter(op):
    """An Enter of a loop invariant: its value is the same in every iteration."""
    return is_loop_enter(op) and bool(op.get_attr("is_constant"))


def is_cond_switch(op):
    """A Switch belongs to a cond iff every consumer of its outputs is in a cond context.

    Switch ops sit in the context *around* the cond they split for, so the
    consumers decide (an Enter consumer counts with its outer context)."""
    if not is_switch(op) or not op.outputs:
        return False
    for t in op.outputs:
        for consumer in t.consumers():
            ctxt = consumer._control_flow_context
            if is_loop_enter(consumer) and ctxt is not None:
                ctxt = ctxt.outer_context
            if ctxt is None or not ctxt.is_cond_context():
                return False
    return True


def is_loop_switch(op):
    """The Switch of a while loop variable (as opposed to a cond's Switch inside a loop)."""
    if not is_switch(op):
        return False
    ctxt = op._control_flow_context
    return ctxt is not None and ctxt.is_while_context() and not is_cond_switch(op)


def get_while_context(op):
    """The innermost while loop `op` is in, or None."""
    ctxt = op._control_flow_context
    return ctxt.get_while_context() if ctxt is not None else None


def get_output_context(op):
    """The context of `op`'s outputs: an Exit's outputs are in its loop's outer context."""
    ctxt = op._control_flow_context
    if ctxt is not None and is_loop_exit(op):
        ctxt = ctxt.outer_context
    return ctxt


def get_loop_constant_enter(value):
    """The constant Enter `value` comes from through Identity/Switch ops, or None."""
    op = value.op
    while op.type in ("Identity", "RefIdentity", "Switch", "RefSwitch"):
        op = op.inputs[0].op
    return op if is_loop_constant_enter(op) else None


def is_containing_context(ctxt, maybe_containing):
    """True if `maybe_containing` is `ctxt` or one of its outer contexts (None contains all)."""
    while ctxt is not maybe_containing:
        if ctxt is None:
            return False
        ctxt = ctxt.outer_context
    return True


def op_in_context(op, ctxt):
    return is_containing_context(op._control_flow_context, ctxt)


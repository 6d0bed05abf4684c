"""Gradients of the control-flow ops (TF1's control_flow_grad).

cond: the gradient of a Merge is a Switch of the incoming gradient on the
same predicate (each branch gets it only when it ran); the gradient of a
cond's Switch is a Merge of the gradients of its two sides (the untaken
side contributes zeros made on that side, see control_flow_state.zeros_like).

while: the gradient loop mirrors the forward one. An Exit's gradient enters
the gradient loop (`b_exit`); a loop Switch's gradient is a Merge
(`b_switch`) whose second input, the NextIteration of the gradient flowing
back through the body, is wired when the walk reaches that Switch the second
time; a Merge's gradient is a Switch on the gradient loop's pivot; the
gradient of a loop variable's Enter is an Exit of the gradient loop, and of
a loop invariant's Enter the sum over iterations (an accumulator loop).
"""
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.registry import not_differentiable, register_gradient
from . import math_ops
from . import control_flow_ops as cf
from . import control_flow_util as util


@register_gradient("Switch")
def _switch_grad(op, *grad):
    graph = get_default_graph()
    op_ctxt = op._control_flow_context
    grad_ctxt = graph._get_control_flow_context()
    if op_ctxt is not None and op_ctxt.is_while_context():
        merge_grad = grad_ctxt.grad_state.switch_map.get(op)
        if merge_grad is not None:
            # Second visit: the gradient that went around the body closes the gradient loop.
            if grad[1] is not None:
                cf.add_next_and_back_edge(merge_grad, grad[1], enforce_shape_invariant=False)
            return None, None
        if grad[0] is not None:
            # First visit, from the Exit side: grad[0] feeds both Merge inputs until the back edge exists.
            merge_grad = cf.merge([grad[0], grad[0]], name="b_switch")[0]
            grad_ctxt.grad_state.switch_map[op] = merge_grad
            return merge_grad, None
        return None, None  # an output that does not reach ys through the Exit
    if op_ctxt is not None and op_ctxt.is_cond_context():
        zero_grad = grad[1 - op_ctxt.branch]
        if zero_grad is None:
            return None, None
        return cf.merge(list(grad), name="cond_grad")[0], None
    false_grad = cf.switch(grad[0], op.inputs[1])[0]
    true_grad = cf.switch(grad[1], op.inputs[1])[1]
    return cf.merge([false_grad, true_grad])[0], None


register_gradient("RefSwitch")(_switch_grad)


@register_gradient("Merge")
def _merge_grad(op, grad, _):
    input_op = op.inputs[0].op
    graph = get_default_graph()
    op_ctxt = util.get_output_context(input_op)
    grad_ctxt = graph._get_control_flow_context()
    if op_ctxt is not None and op_ctxt.is_while_context():
        return cf._switch_ref_or_tensor(grad, grad_ctxt.pivot)
    if op_ctxt is not None and op_ctxt.is_cond_context():
        pred = op_ctxt.pred
        if grad_ctxt is not None and grad_ctxt.grad_state is not None:
            # A cond inside a loop: the gradient needs the predicate of the matching forward iteration.
            grad_state = grad_ctxt.grad_state
            real_pred = grad_state.history_map.get(pred.name)
            if real_pred is None:
                grad_ctxt = grad_state.grad_context
                grad_ctxt.exit()
                try:
                    history_pred = grad_state.add_forward_accumulator(pred)
                finally:
                    grad_ctxt.enter()
                real_pred = grad_state.add_backprop_accumulated_value(history_pred, pred)
                grad_state.history_map[pred.name] = real_pred
            pred = real_pred
        return cf._switch_ref_or_tensor(grad, pred, name="cond_grad")
    num_inputs = len(op.inputs)
    conds = [math_ops.equal(op.outputs[1], i) for i in range(num_inputs)]
    return [cf._switch_ref_or_tensor(grad, conds[i])[1] for i in range(num_inputs)]


@register_gradient("Exit")
def _exit_grad(op, grad):
    graph = get_default_graph()
    op_ctxt = op._control_flow_context
    grad_ctxt = graph._get_control_flow_context()
    if not grad_ctxt.back_prop:
        return None  # back_prop=False: no gradient through this loop
    if op_ctxt.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    if not isinstance(grad, Tensor):
        # Sparse gradients (IndexedSlices) go through the gradient loop dense; densified
        # outside it, where the slices were made, so the conversion reads no outer tensor
        # from inside the loop's frame.
        graph._set_control_flow_context(grad_ctxt.outer_context)
        try:
            grad = convert_to_tensor(grad)
        finally:
            graph._set_control_flow_context(grad_ctxt)
    grad_ctxt.add_name(grad.name)
    grad_ctxt.enter()
    try:
        result = cf._enter(grad, grad_ctxt.name, is_constant=False,
                           parallel_iterations=grad_ctxt.parallel_iterations, name="b_exit")
    finally:
        grad_ctxt.exit()
    grad_ctxt.loop_enters.append(result)
    return result


@register_gradient("NextIteration")
def _next_iteration_grad(op, grad):
    return grad


@register_gradient("Enter")
def _enter_grad(op, grad):
    graph = get_default_graph()
    grad_ctxt = graph._get_control_flow_context()
    if grad_ctxt is None or not grad_ctxt.back_prop or grad_ctxt.grad_state is None:
        return grad
    if op.get_attr("is_constant"):
        # A loop invariant: its gradient is the sum of every iteration's.
        return grad_ctxt.add_backprop_accumulator(op, grad)
    result = cf.exit(grad)
    grad_ctxt.loop_exits.append(result)
    grad_ctxt.exit_result([result])
    return result


register_gradient("RefEnter")(_enter_grad)
not_differentiable("LoopCond")
not_differentiable("ControlTrigger")

"""Symbolic reverse-mode differentiation: `gradients(ys, xs)` adds gradient
ops to the graph and returns d(sum ys)/dx for each x (None where x does not
reach any y).

The walk follows TF1: only ops on a data path from some x to some y are
visited; each op waits until every consumer on such a path has handed it a
gradient (multiple gradients for one tensor are summed with AddN); its
registered gradient function then builds the input gradients inside the
name scope `gradients/<op>_grad`. Integer tensors carry no gradient.

Control flow (ops/control_flow_state.py): through a cond, the gradients of
Switch and Merge route each gradient along the branch that ran. Through a
while loop, a ControlFlowState builds one gradient while loop per forward
loop; each gradient op is created inside the matching gradient loop, and
forward values it reads come from stacks the forward loop fills. A loop's
Switch is visited twice (from its Exit, then from the body's back edge)
and a loop's Exits are processed together once they are all ready.
"""
import collections

from .framework import dtypes
from .framework import function, registry
from .framework.graph import Tensor, graph_of
from .framework.indexed_slices import IndexedSlices
from .framework.op_builder import convert_to_tensor, is_tensor_like
from .ops import array_ops, control_flow_state, math_ops
from .ops import control_flow_util as util


def _as_tensor_list(values, as_ref=False):
    if values is None:
        return []
    if not isinstance(values, (list, tuple)):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif is_tensor_like(v):
            out.append(convert_to_tensor(v, as_ref=as_ref))
        else:
            raise TypeError(f"gradients expects Tensors or Variables, got {v!r}")
    return out


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, checkpoints=None, unconnected_gradients="none"):
    """Symbolic partial derivatives of sum(ys) with respect to each x in xs.

    `checkpoints` ("sqrt", "collection" or a list of tensors) keeps only those
    activations and recomputes the others in the backward pass (recompute/).
    `unconnected_gradients` ("none" or "zero", or tf.UnconnectedGradients) is
    what an x that ys do not depend on gets: None, or zeros of its shape."""
    unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
    if unconnected not in ("none", "zero"):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
    ys = _as_tensor_list(ys)
    xs = _as_tensor_list(xs, as_ref=True)
    stop_tensors = _as_tensor_list(stop_gradients)
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    g = graph_of(ys + xs)
    if checkpoints is not None:
        if stop_gradients:
            raise ValueError("gradients: checkpoints and stop_gradients cannot be combined")
        from .recompute import gradients_with_checkpoints
        return gradients_with_checkpoints(ys, xs, grad_ys, checkpoints, name=name,
                                          colocate_gradients_with_ops=colocate_gradients_with_ops,
                                          aggregation_method=aggregation_method)
    with g.as_default(), g.name_scope(name):
        grad_ys = _default_grad_ys(ys, grad_ys)
        to_ops = [y.op for y in ys]
        from_ops = [x.op for x in xs]
        reachable_to_ops, pending, loop_state = _pending_count(to_ops, from_ops, colocate_gradients_with_ops)
        grads = {}
        for y, gy in zip(ys, grad_ys):
            _set_grad(grads, y, gy)
        queue = collections.deque()
        to_ops_set = set()
        for op in to_ops:
            if pending[op] == 0 and op not in to_ops_set and op in reachable_to_ops:
                to_ops_set.add(op)
                queue.append(op)
        if loop_state is not None:
            for y in loop_state.process_unused_loop_exits(pending, to_ops_set):
                if y.dtype.base_dtype.is_trainable:
                    _set_grad(grads, y, loop_state.zeros_like_for_exit(y))
                    queue.append(y.op)
        stop_ops = _stop_ops(from_ops, {t.op for t in stop_tensors}, pending)
        while queue:
            op = queue.popleft()
            _process_op(g, op, grads, loop_state, stop_ops, colocate_gradients_with_ops, from_ops, xs)
            _update_pending_and_enqueue_ready(grads, op, queue, pending, loop_state)
        if loop_state is not None:
            loop_state.post_processing()
        out = [_get_grad(grads, x) for x in xs]
        if unconnected == "zero":
            out = [array_ops.zeros_like(x) if gx is None else gx for gx, x in zip(out, xs)]
        return out


def _process_op(g, op, grads, loop_state, stop_ops, colocate, from_ops, xs):
    """Builds the gradients of `op`'s inputs from those of its outputs. Inside a
    while loop the ops go into that loop's gradient loop (loop_state says which)."""
    if loop_state is not None:
        loop_state.enter_grad_while_context(op, before=True)
    try:
        out_grads = _aggregated_grads(grads, op, loop_state)
    finally:
        if loop_state is not None:
            loop_state.exit_grad_while_context(op, before=True)
    has_out_grads = any(gr is not None for gr in out_grads)
    grad_fn = None
    if has_out_grads and op not in stop_ops and op.inputs:
        grad_fn = registry.get_gradient_function(op._gradient_op_type or op.type)
        if grad_fn is registry.NO_GRADIENT:
            grad_fn = None
        elif grad_fn is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
    if loop_state is not None:
        loop_state.enter_grad_while_context(op, before=False)
    try:
        if util.is_switch(op) and op._control_flow_context is not None and \
                op._control_flow_context.is_while_context() and \
                op._control_flow_context is g._get_control_flow_context():
            raise TypeError(f"Cannot compute gradient inside while loop with respect to op '{op.name}'. We do not "
                            "support taking the gradient wrt or through the initial value of a loop variable. "
                            "Gradients can be computed through loop invariants or wrt the input parameters to "
                            "the loop body.")
        if grad_fn is not None:
            for i, (gr, t) in enumerate(zip(out_grads, op.outputs)):
                if gr is None and t.dtype.base_dtype.is_trainable:
                    # dC/d(output i) is 0; in control flow the zeros must live where the output does.
                    out_grads[i] = loop_state.zeros_like(op, i) if loop_state is not None else \
                        control_flow_state.zeros_like(op, i)
            in_grads = _call_grad_fn(g, op, grad_fn, out_grads, colocate)
        else:
            in_grads = [None] * len(op.inputs)
        for t, gin in zip(op.inputs, in_grads):
            if gin is not None and _is_variable_handle(t):
                _set_grad(grads, t, gin)  # a resource variable's gradient: the variable's shape, not the handle's
            elif gin is not None and t.dtype.base_dtype.is_trainable:
                if isinstance(gin, Tensor):
                    try:
                        gin.set_shape(t.shape)
                    except ValueError:
                        raise ValueError(f"Incompatible shapes between op input and calculated input gradient. "
                                         f"Forward operation: {op.name}. Input: {t.name}. Original input shape: "
                                         f"{t.shape}. Calculated input gradient shape: {gin.shape}") from None
                _set_grad(grads, t, gin)
    finally:
        if loop_state is not None:
            loop_state.exit_grad_while_context(op, before=False)


def _call_grad_fn(g, op, grad_fn, out_grads, colocate):
    with g.name_scope(f"{op.name}_grad"):
        if colocate:
            with g.colocate_with(op, ignore_existing=True):
                in_grads = grad_fn(op, *out_grads)
        else:
            in_grads = grad_fn(op, *out_grads)
    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(op.inputs):
        raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.node_def} do not match num inputs "
                         f"{len(op.inputs)}")
    for t, gin in zip(op.inputs, in_grads):
        if gin is not None and isinstance(gin, Tensor) and t.dtype.base_dtype.is_trainable and \
                gin.dtype.base_dtype != t.dtype.base_dtype:
            raise ValueError(f"Gradient type {gin.dtype.base_dtype.name} generated for op {op.name} does not "
                             f"match input type {t.dtype.base_dtype.name}")
    return in_grads


def _default_grad_ys(ys, grad_ys):
    out = []
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None:
            # An integer y gets ones too (TF): it only reaches an x that is y itself, since the
            # walk from xs follows floating tensors only; every other x gets None.
            if y.dtype.base_dtype.is_complex:
                raise TypeError(f"Gradients of complex tensors ({y}) must set grad_ys (y.dtype = "
                                f"{y.dtype.base_dtype.name})")
            if y.shape.is_fully_defined() and y.shape.num_elements() <= 1000:
                import numpy as np
                gy = convert_to_tensor(np.ones(y.shape.as_list(), dtype=y.dtype.base_dtype.np), name=f"grad_ys_{i}")
            else:
                gy = array_ops.fill(array_ops.shape(y), convert_to_tensor(1, dtype=y.dtype.base_dtype,
                                                                          name=f"grad_ys_{i}"))
        else:
            try:
                gy = convert_to_tensor(gy, dtype=y.dtype.base_dtype)
            except ValueError as e:
                # TF takes grad_y as given and its first gradient op rejects the dtype.
                raise TypeError(str(e)) from None
        out.append(gy)
    return out


def _is_backpropagatable(t):
    return t.dtype.base_dtype.is_trainable or _is_variable_handle(t)


def _is_variable_handle(t):
    """A resource variable's handle: its reads' gradients flow to it (TF counts resources as
    trainable; here only variable handles are, so queue and array handles stay out of the way)."""
    return t.dtype.base_dtype == dtypes.resource and t.op.type == "VarHandleOp"


def _pending_count(to_ops, from_ops, colocate):
    """(to_ops reachable from from_ops, op -> number of consumers on the path, loop state).

    The path follows floating tensors only: an integer tensor carries no gradient."""
    reached = set()
    stack = list(from_ops)
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            if _is_backpropagatable(t):
                stack.extend(t.consumers())
    reachable_to_ops = {op for op in to_ops if op in reached}
    between, between_list = set(), []
    queue = collections.deque(to_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            between.add(op)
            between_list.append(op)
            reached.discard(op)
            queue.extend(t.op for t in op.inputs)
    loop_state = control_flow_state.maybe_create_control_flow_state(between_list, between, colocate)
    pending = collections.defaultdict(int)
    for op in between_list:
        for t in op.inputs:
            if t.op in between:
                pending[t.op] += 1
    return reachable_to_ops, pending, loop_state


def _stop_ops(from_ops, stop_gradient_ops, pending):
    """xs fed by nothing on the path stop there; so do the user's stop_gradients."""
    stop = {op for op in from_ops if all(pending[t.op] <= 0 for t in op.inputs)}
    stop.update(stop_gradient_ops)
    return stop


def _set_grad(grads, t, grad):
    op_grads = grads.get(t.op)
    if op_grads is None:
        op_grads = grads[t.op] = [[] for _ in t.op.outputs]
    t_grads = op_grads[t.value_index]
    if isinstance(t_grads, list):
        t_grads.append(grad)
    else:
        # A loop Switch is visited twice; its second gradient replaces the first.
        op_grads[t.value_index] = grad


def _get_grads(grads, op):
    return grads[op] if op in grads else [[] for _ in op.outputs]


def _aggregated_grads(grads, op, loop_state):
    """Sums each output's gradients (AddN) in place; returns the per-output list."""
    out_grads = _get_grads(grads, op)
    for i, out_grad in enumerate(out_grads):
        if loop_state is not None and isinstance(out_grad, Tensor):
            continue  # a loop Switch on its second visit: already aggregated
        out_grads[i] = _sum(out_grad)
    return out_grads


def _sum(values):
    if isinstance(values, (Tensor, IndexedSlices)) or values is None:
        return values
    values = [v for v in values if v is not None]
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    if all(isinstance(v, IndexedSlices) for v in values):
        # Sparse stays sparse: the rows of every gradient, one after the other (TF1); int32
        # indices become int64 when the others are (ids of a lookup and of a sparse lookup).
        indices = [v.indices for v in values]
        if len({i.dtype.base_dtype for i in indices}) > 1:
            indices = [math_ops.cast(i, dtypes.int64) if i.dtype.base_dtype == dtypes.int32 else i for i in indices]
        return IndexedSlices(array_ops.concat([v.values for v in values], 0),
                             array_ops.concat(indices, 0), values[0].dense_shape)
    return math_ops.add_n([convert_to_tensor(v) for v in values])


def _get_grad(grads, t):
    op_grads = grads.get(t.op)
    if not op_grads:
        return None
    return _sum(op_grads[t.value_index])


def _has_any_not_none_grads(grads, op):
    for out_grad in _get_grads(grads, op):
        if isinstance(out_grad, Tensor):
            return True
        if out_grad and any(gr is not None for gr in out_grad):
            return True
    return False


def _update_pending_and_enqueue_ready(grads, op, queue, pending, loop_state):
    """Decrements the pending counts of `op`'s inputs and queues those now ready.
    A loop Switch is ready as soon as its Exit side is done (its body side
    comes back later); a loop's Exits are processed together, once all are ready."""
    for t in op.inputs:
        src = t.op
        pending[src] -= 1
        ready = pending[src] == 0
        if loop_state is not None and not ready:
            ready = pending[src] > 0 and util.is_loop_switch(src)
        if not ready:
            continue
        if util.is_loop_exit(src):
            grad_state = loop_state.get_grad_state(src, before=False)
            grad_state.deferred_exits.append(t)
            grad_state.pending_exits_count -= 1
            if grad_state.pending_exits_count == 0:
                has_not_none_grad = False
                for y in grad_state.deferred_exits:
                    if _has_any_not_none_grads(grads, y.op):
                        has_not_none_grad = True
                        queue.append(y.op)
                    else:
                        grad_state.unused_exits.append(y)
                if has_not_none_grad:
                    for y in grad_state.unused_exits:
                        if y.dtype.base_dtype.is_trainable:
                            _set_grad(grads, y, loop_state.zeros_like_for_exit(y))
                        queue.append(y.op)
                else:
                    for y in grad_state.unused_exits:
                        queue.append(y.op)
        else:
            queue.append(src)


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """Second derivatives of sum(ys) for each x, shaped x.shape + x.shape: as TF builds
    them, one row per loop iteration (so shapes known only at run time work), and a
    ValueError where a first or second derivative is None. `name` is unused, as in TF.
    (TF collects the rows in a TensorArray; here they are concatenated, as this layer
    sits below tensor_array/.)"""
    from .framework.tensor_shape import TensorShape
    from .ops.control_flow_ops import while_loop
    xs = _as_tensor_list(xs, as_ref=True)
    kwargs = {"colocate_gradients_with_ops": colocate_gradients_with_ops, "gate_gradients": gate_gradients,
              "aggregation_method": aggregation_method}
    out = []
    for grad, x in zip(gradients(ys, xs, **kwargs), xs):
        if grad is None:
            raise ValueError("None values not supported.")
        grad = array_ops.reshape(grad, [-1])
        n = array_ops.size(x)
        shape = array_ops.shape(x)

        def body(j, rows, grad=grad, x=x):
            row = gradients(grad[j], x)[0]
            if row is None:
                raise ValueError("None values not supported.")
            return j + 1, array_ops.concat([rows, array_ops.expand_dims(row, 0)], 0)
        rows = array_ops.zeros(array_ops.concat([[0], shape], 0), dtype=x.dtype.base_dtype)
        _, hessian = while_loop(lambda j, _: j < n, body, [convert_to_tensor(0), rows],
                                shape_invariants=[TensorShape([]), TensorShape(None)])
        out.append(array_ops.reshape(hessian, array_ops.concat((shape, shape), 0)))
    return out


# -- the gradient of a graph-function call (framework/function.py) --------------------

def _call_grad(op, *grads):
    """The gradient of a call: the function's own gradient if Defun was given one,
    else a call of the body's symbolic gradient function (built once per function)."""
    fdef = op.get_attr("f")
    defined = getattr(fdef, "defined", None)
    if defined is not None and defined.python_grad_func is not None:
        return defined.python_grad_func(op, *grads)
    grads = [array_ops.zeros_like(t) if g is None else g for t, g in zip(op.outputs, grads)]
    if defined is not None and defined._grad_func is not None:
        result = defined._grad_func(*(list(op.inputs) + grads))
        return list(result) if isinstance(result, (list, tuple)) else [result]
    gdef = getattr(fdef, "gradient", None)
    if gdef is None:
        gdef = fdef.gradient = _gradient_function(fdef)
    outs = function.call_function(gdef, list(op.inputs) + grads, name=f"{op.name}_grad").outputs
    return list(outs)


def _gradient_function(fdef):
    """A function (args..., output grads...) -> input grads: the body imported again
    and differentiated with tf.gradients."""
    body = fdef.graph
    if body is None:
        raise LookupError(f"No gradient defined for function {fdef.name}: its body was not built in this process")
    args = body.inputs + [p for _, p in body.captures]
    grad_graph = function.FuncGraph(function.unique_function_name(f"{fdef.name}_grad"), body.outer_graph)
    with grad_graph.as_default():
        new_args = [grad_graph.add_input(t.dtype, t.shape, name="x") for t in args]
        dys = [grad_graph.add_input(t.dtype, t.shape, name="dy") for t in body.outputs]
        mapping = {id(t): a for t, a in zip(args, new_args)}
        copies = {}
        arg_ops = {t.op for t in args}
        with grad_graph.name_scope("forward"):
            for op in body.get_operations():  # the body again, on the new inputs
                if op in arg_ops:
                    continue
                new = grad_graph.create_op(op.type, [mapping[id(t)] for t in op.inputs], dict(op._attrs),
                                           name=op.name, control_inputs=[copies[c] for c in op.control_inputs])
                copies[op] = new
                mapping.update((id(t), n) for t, n in zip(op.outputs, new.outputs))
        outs = [mapping[id(t)] for t in body.outputs]
        grads = gradients(list(outs), new_args, grad_ys=dys) if outs else [None] * len(new_args)
        grads = [array_ops.zeros_like(a) if g is None else g for a, g in zip(new_args, grads)]
    return grad_graph.to_function_def(grads)


registry.register_gradient("PartitionedCall")(_call_grad)
registry.register_gradient("StatefulPartitionedCall")(_call_grad)

"""cond, case and while_loop, built as TensorFlow 1.x builds them.

The graph gets the same primitive ops TF1 puts there, so partition graphs
look like TF's:

    Switch(data, pred) -> (output_false, output_true)  one output live, the other dead
    Merge(inputs)      -> (output, value_index)        forwards the first live input
    Enter(data)        -> output in the child frame    `frame_name`, `is_constant`,
                                                        `parallel_iterations`
    Exit(data)         -> output in the parent frame
    NextIteration(data)-> output in the next iteration
    LoopCond(pred)     -> pred                          the loop's pivot

`cond(pred, true_fn, false_fn)`: `cond/Switch(pred, pred)` gives the two
pivots `cond/switch_t` and `cond/switch_f`; each branch is built inside a
CondContext, which routes every tensor the branch reads from outside
through a Switch on `cond/pred_id` (`cond/mul/Switch`) and makes ops without
inputs depend on the pivot; the branch results meet in `cond/Merge`.

`while_loop(cond, body, loop_vars)`: each loop variable enters the frame
(`while/Enter`), meets its next value in `while/Merge`, is split by
`while/Switch` on `while/LoopCond` into the body (`while/Identity`) and the
result (`while/Exit`); the body's value goes back to the Merge through
`while/NextIteration`. A WhileContext routes outside tensors into the loop
through constant Enters (loop invariants).

The contexts are also what gradients use (control_flow_state.py,
control_flow_grad.py): a gradient while loop replays the forward loop's
iterations in reverse, reading the forward values from stacks.
"""
import contextlib

from ..framework import dtypes
from ..framework.graph import GraphKeys, Operation, Tensor, get_default_graph, graph_of
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import REQUIRED, register_op
from ..framework.tensor_shape import TensorShape, as_shape
from . import array_ops, math_ops, nest, shape_fns
from . import control_flow_util as util

# -- declarations -----------------------------------------------------------------------


def _switch_shape(ctx):
    pred = ctx.shape(1)
    if pred.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {pred.ndims}")
    data = ctx.shape(0)
    return [data, data]


def _merge_shape(ctx):
    """Dimensions the inputs agree on; the rest unknown."""
    dims = None
    for i in range(ctx.num_inputs):
        shape = ctx.shape(i)
        if shape.ndims is None:
            return [TensorShape(None), TensorShape([])]
        if dims is None:
            dims = shape.as_list()
        elif len(dims) != shape.ndims:
            return [TensorShape(None), TensorShape([])]
        else:
            dims = [a if a == b else None for a, b in zip(dims, shape.as_list())]
    return [TensorShape(dims), TensorShape([])]


def _loop_cond_shape(ctx):
    shape = ctx.shape(0)
    if shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {shape.ndims}")
    return TensorShape([])


_ENTER_ATTRS = {"frame_name": REQUIRED, "is_constant": False, "parallel_iterations": 10}
register_op("Switch", ["data: T", "pred: bool"], ["output_false: T", "output_true: T"], shape_fn=_switch_shape)
register_op("RefSwitch", ["data: Ref(T)", "pred: bool"], ["output_false: Ref(T)", "output_true: Ref(T)"],
            shape_fn=_switch_shape)
register_op("Merge", ["inputs: N * T"], ["output: T", "value_index: int32"], shape_fn=_merge_shape)
register_op("Enter", ["data: T"], ["output: T"], attrs=dict(_ENTER_ATTRS), shape_fn=shape_fns.unchanged)
register_op("RefEnter", ["data: Ref(T)"], ["output: Ref(T)"], attrs=dict(_ENTER_ATTRS),
            shape_fn=shape_fns.unchanged)
register_op("Exit", ["data: T"], ["output: T"], shape_fn=shape_fns.unchanged)
register_op("NextIteration", ["data: T"], ["output: T"], shape_fn=shape_fns.unchanged)
register_op("LoopCond", ["input: bool"], ["output: bool"], shape_fn=_loop_cond_shape)
register_op("ControlTrigger", [], [])

# -- the primitive ops ----------------------------------------------------------------------


def switch(data, pred, dtype=None, name=None):
    """(output_false, output_true): `data` on the side `pred` selects; the other side is dead."""
    data = convert_to_tensor(data, dtype=dtype, as_ref=True)
    op_type = "RefSwitch" if data.dtype.is_ref_dtype else "Switch"
    op = apply_op(op_type, [data, pred], name=name or "Switch")
    return op.outputs[0], op.outputs[1]


def _switch_ref_or_tensor(data, pred, name="Switch"):
    """A Switch colocated with its data, so the untaken side dies where the value is."""
    data = convert_to_tensor(data, as_ref=True)
    g = data.graph
    with g.colocate_with(data.op, ignore_existing=True):
        return switch(data, pred, name=name)


def merge(inputs, name=None):
    """(output, value_index): the first of `inputs` that is live."""
    if any(i is None for i in inputs):
        raise ValueError("At least one of the merge inputs is None: %s" % (inputs,))
    inputs = [convert_to_tensor(i) for i in inputs]
    op = apply_op("Merge", [inputs], name=name or "Merge")
    return op.outputs[0], op.outputs[1]


def _enter(data, frame_name, is_constant=False, parallel_iterations=10, use_ref=True, use_input_shape=True,
           name="Enter"):
    data = convert_to_tensor(data, as_ref=True)
    attrs = dict(frame_name=frame_name, is_constant=bool(is_constant), parallel_iterations=int(parallel_iterations))
    if data.dtype.is_ref_dtype and use_ref:
        # A ref (variable, stack) must stay on its device: the RefEnter goes with it.
        with data.graph.colocate_with(data.op, ignore_existing=True):
            out = apply_op("RefEnter", [data], name=name, **attrs).outputs[0]
    else:
        out = apply_op("Enter", [data], name=name, **attrs).outputs[0]
    if not use_input_shape:
        out._shape = TensorShape(None)
    return out


def exit(data, name="Exit"):  # noqa: A001 - the TF name
    return apply_op("Exit", [convert_to_tensor(data)], name=name).outputs[0]


def _next_iteration(data, name="NextIteration"):
    return apply_op("NextIteration", [convert_to_tensor(data)], name=name).outputs[0]


def loop_cond(input, name=None):  # noqa: A002
    return apply_op("LoopCond", [input], name=name or "LoopCond").outputs[0]


def control_trigger(name=None):
    """A no-op that is never dead: it runs even when its inputs are."""
    return apply_op("ControlTrigger", [], name=name or "ControlTrigger")


@contextlib.contextmanager
def _helper_scope(graph):
    """Creates the plumbing ops (Switch, Enter) of a context: outside every
    context and control-dependency block; the caller assigns their context."""
    saved = graph._control_flow_context
    graph._control_flow_context = None
    try:
        with graph.control_dependencies(None):
            yield
    finally:
        graph._control_flow_context = saved


# A TensorArray crosses a cond or a while loop as its flow (TF1's
# _convert_tensorarray_to_flow): any value with `flow` and `_with_flow(flow)`.
def _is_flow_carrier(v):
    return hasattr(v, "_with_flow") and hasattr(v, "flow")


def _to_flows(flat_values):
    return [v.flow if _is_flow_carrier(v) else v for v in flat_values]


def _from_flows(flat_templates, flat_values):
    return [t._with_flow(v) if _is_flow_carrier(t) else v for t, v in zip(flat_templates, flat_values)]


def _shape_less_than_or_equal(shape1, shape2):
    if shape2.ndims is None:
        return True
    if shape1.ndims != shape2.ndims:
        return False
    return all(d2 is None or d1 == d2 for d1, d2 in zip(shape1.as_list(), shape2.as_list()))


# -- contexts -------------------------------------------------------------------------------

class ControlFlowContext:
    """Where an op is in cond/while structure. Entering a context makes it the
    graph's current one, so every op created meanwhile is passed to `add_op`."""

    def __init__(self):
        self._graph = get_default_graph()
        self._outer_context = self._graph._get_control_flow_context()
        self._context_stack = []
        self._values = set()          # names of the tensors visible in this context
        self._external_values = {}    # outside tensor name -> the tensor to use inside

    @property
    def outer_context(self):
        return self._outer_context

    @property
    def grad_state(self):
        while_ctxt = self.get_while_context()
        return None if while_ctxt is None else while_ctxt.grad_state

    @property
    def back_prop(self):
        while_ctxt = self.get_while_context()
        return False if while_ctxt is None else while_ctxt.back_prop

    def is_while_context(self):
        return False

    def is_cond_context(self):
        return False

    def get_while_context(self):
        return self._outer_context.get_while_context() if self._outer_context is not None else None

    def get_control_pivot(self):
        return None

    def add_name(self, name):
        self._values.add(name)

    def enter(self):
        g = self._graph
        self._context_stack.append(g._get_control_flow_context())
        g._set_control_flow_context(self)

    def exit(self):
        self._graph._set_control_flow_context(self._context_stack.pop())

    def exit_result(self, result):
        """Makes `result` (tensors produced here) visible to the outer context."""
        if self._outer_context is not None:
            for t in nest.flatten(result):
                if isinstance(t, Tensor):
                    self._outer_context.add_name(t.name)

    def _remove_external_control_edges(self, op):
        """Drops control inputs from outside the enclosing while loop; returns
        (internal, external) control inputs."""
        while_ctxt = self.get_while_context()
        if while_ctxt is None:
            return list(op.control_inputs), []
        internal, external = [], []
        for c in op.control_inputs:
            ctxt = util.get_output_context(c)
            if ctxt is not None and ctxt.get_while_context() is while_ctxt:
                internal.append(c)
            else:
                external.append(c)
        if len(internal) != len(op.control_inputs):
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external


class CondContext(ControlFlowContext):
    """One branch of a cond: ops here run only when `pred` selects `branch`."""

    def __init__(self, pred, pivot, branch):
        super().__init__()
        self._pred = pred        # cond/pred_id
        self._pivot = pivot      # cond/switch_t or cond/switch_f
        self._branch = branch    # 1 for the true branch, 0 for the false one
        self._values.add(pred.name)
        self._external_values[pred.name] = pred
        self._values.add(pivot.name)
        pivot.op._set_control_flow_context(self)

    @property
    def pred(self):
        return self._pred

    @property
    def pivot(self):
        return self._pivot

    @property
    def branch(self):
        return self._branch

    def is_cond_context(self):
        return True

    def get_control_pivot(self):
        return self._pivot

    def add_value(self, val):
        """The tensor to use inside this branch for `val`: `val` itself if it was
        made here, else a Switch of it on the predicate (made once per value)."""
        if val.name in self._values:
            return self._external_values.get(val.name, val)
        result = val
        self._values.add(val.name)
        if self._outer_context is not None:
            result = self._outer_context.add_value(val)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with _helper_scope(self._graph):
            result = _switch_ref_or_tensor(result, self._pred)[self._branch]
        result.op._set_control_flow_context(self)
        ctxt = self
        while ctxt is not None:
            ctxt._values.add(result.name)
            ctxt = ctxt._outer_context
        self._external_values[val.name] = result
        return result

    def add_op(self, op):
        self._add_op_internal(op)

    def _add_op_internal(self, op):
        if not op.inputs:
            self._remove_external_control_edges(op)
            # An op without inputs (a constant) would run on both branches; the
            # pivot makes it run (and be dead) with this branch.
            if not any(util.op_in_context(c, self) for c in op.control_inputs):
                op._add_control_input(self._pivot.op)
        else:
            for index, x in enumerate(op.inputs):
                real_x = self.add_value(x)
                if real_x is not x:
                    op._update_input(index, real_x)
            self._remove_external_control_edges(op)
        names = [t.name for t in op.outputs]
        ctxt = self
        while ctxt is not None:
            ctxt._values.update(names)
            ctxt = ctxt._outer_context

    def _process_output_tensor(self, val):
        """A branch result: a tensor from outside the branch (`lambda: x`) goes through a Switch too."""
        if val.name not in self._values:
            self._values.add(val.name)
            real_val = val
            if self._outer_context is not None:
                real_val = self._outer_context.add_value(val)
                self._values.add(real_val.name)
                self._external_values[real_val.name] = real_val
            with _helper_scope(self._graph):
                real_val = _switch_ref_or_tensor(real_val, self._pred)[self._branch]
            real_val.op._set_control_flow_context(self)
            self._external_values[val.name] = real_val
            return real_val
        return self._external_values.get(val.name, val)

    def _build_cond_tensor(self, v):
        if isinstance(v, Operation):
            from .control_ops import with_dependencies
            return with_dependencies([v], self._pivot)  # the pivot stands in for an op result
        return self._process_output_tensor(convert_to_tensor(v.flow if _is_flow_carrier(v) else v))

    def build_cond_branch(self, fn):
        original = fn()
        if original is None:
            return None, None
        result = nest.map_structure(self._build_cond_tensor, original)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return original, result

    def __repr__(self):
        return f"<CondContext {self._pred.name} branch={self._branch}>"


class WhileContext(ControlFlowContext):
    """The body and condition of one while loop (one frame at run time)."""

    def __init__(self, maximum_iterations=None, parallel_iterations=10, back_prop=True, swap_memory=False,
                 name="while_context", grad_state=None):
        super().__init__()
        self._name = self._graph.unique_name(name)
        self._maximum_iterations = maximum_iterations
        self._parallel_iterations = parallel_iterations
        self._back_prop = back_prop
        self._swap_memory = swap_memory
        self._pivot_for_pred = None   # the first Merge: ops of the condition hang off it
        self._pivot_for_body = None   # the first Identity: ops of the body hang off it
        self._pivot = None            # the LoopCond
        self._loop_exits = []
        self._loop_enters = []
        self._grad_state = grad_state

    # -- properties ----------------------------------------------------------------------
    @property
    def name(self):
        """The frame name (the Enter ops' `frame_name` attr)."""
        return self._name

    @property
    def maximum_iterations(self):
        return self._maximum_iterations

    @property
    def parallel_iterations(self):
        return self._parallel_iterations

    @property
    def back_prop(self):
        return self._back_prop

    @property
    def swap_memory(self):
        return self._swap_memory

    @property
    def pivot(self):
        return self._pivot

    @property
    def loop_enters(self):
        return self._loop_enters

    @property
    def loop_exits(self):
        return self._loop_exits

    @property
    def grad_state(self):
        return self._grad_state

    def is_while_context(self):
        return True

    def get_while_context(self):
        return self

    def get_control_pivot(self):
        return self._pivot_for_body if self._pivot_for_body is not None else self._pivot_for_pred

    # -- values and ops ------------------------------------------------------------------
    def add_value(self, val):
        """The tensor to use inside the loop for `val`: itself if made here; a
        forward value read by a gradient loop comes from an accumulator; any other
        outside value enters as a loop invariant (constant Enter), once."""
        if val.name in self._values or val.op._control_flow_context is self:
            actual = self._external_values.get(val.name)
            return val if actual is None else actual
        self._values.add(val.name)
        grad_ctxt = self._graph._get_control_flow_context()
        grad_ctxt = grad_ctxt.get_while_context() if grad_ctxt is not None else None
        if grad_ctxt is not None and grad_ctxt.grad_state is not None:
            forward_ctxt = util.get_while_context(val.op)
            if util.is_loop_exit(val.op):
                forward_ctxt = forward_ctxt.outer_context
                if forward_ctxt is not None:
                    forward_ctxt = forward_ctxt.get_while_context()
            if forward_ctxt is grad_ctxt.grad_state.forward_context:
                real_val = grad_ctxt.grad_state.get_real_value(val)
                self._external_values[val.name] = real_val
                return real_val
        result = val
        if self._outer_context is not None:
            result = self._outer_context.add_value(val)
        with _helper_scope(self._graph):
            enter = _enter(result, self._name, is_constant=True, parallel_iterations=self._parallel_iterations)
        self._fix_control_inputs_and_context([enter])
        self._values.add(enter.name)
        self._external_values[val.name] = enter
        return enter

    def add_op(self, op):
        # A shape read by a gradient loop is taken in the forward loop, so the
        # accumulator stores the small shape, not the tensor (as TF does).
        if op.type in ("Shape", "Size", "Rank") and op.inputs:
            grad_ctxt = self._graph._get_control_flow_context()
            grad_ctxt = grad_ctxt.get_while_context() if grad_ctxt is not None else None
            if grad_ctxt is not None and grad_ctxt.grad_state is not None:
                if util.get_while_context(op.inputs[0].op) is grad_ctxt.grad_state.forward_context:
                    input_ctxt = op.inputs[0].op._control_flow_context
                    op._set_control_flow_context(input_ctxt)
                    input_ctxt._add_op_internal(op)
                    return
        self._add_op_internal(op)

    def _add_op_internal(self, op):
        if not op.inputs:
            internal, external_inputs = self._remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.get_control_pivot().op)
        else:
            for index, x in enumerate(op.inputs):
                real_x = self.add_value(x)
                if real_x is not x:
                    op._update_input(index, real_x)
            _, external_inputs = self._remove_external_control_edges(op)
            self._maybe_add_control_dependency(op)
        for t in op.outputs:
            self._values.add(t.name)
        if external_inputs:
            # A control input from outside the loop becomes a data input entering it.
            g = self._graph
            with g.control_dependencies(None):
                self.enter()
                try:
                    pulled = [array_ops.identity(c.outputs[0]).op for c in external_inputs if c.outputs]
                finally:
                    self.exit()
            op._add_control_inputs(pulled)

    def _maybe_add_control_dependency(self, op):
        """An op reading only loop invariants would run once, not per iteration: tie it to the pivot."""
        if op.control_inputs:
            return
        if all(util.is_loop_constant_enter(x.op) for x in op.inputs):
            op._add_control_input(self.get_control_pivot().op)

    def _fix_control_inputs_and_context(self, enters):
        """Assigns new Enter ops to this loop and keeps the control dependencies
        the user put around the loop that belong to enclosing contexts."""
        g = self._graph
        for e in enters:
            inp_op = e.op.inputs[0].op
            keep = []
            for c in g._control_dependencies_for_inputs([inp_op]):
                c_ctxt = util.get_output_context(c)
                outer = self._outer_context
                outer_while = outer.get_while_context() if outer is not None else None
                ok = True
                while outer is not c_ctxt:
                    if outer is None or outer is outer_while:
                        ok = False
                        break
                    outer = outer.outer_context
                if ok:
                    keep.append(c)
            e.op._set_control_flow_context(self)
            e.op._add_control_inputs(keep)
            for controller in g._control_stack:
                controller.created.add(e.op)

    def _initialize_values(self, values):
        self._values = {t.name for t in values}

    # -- building -------------------------------------------------------------------------
    def build_loop(self, pred, body, loop_vars, shape_invariants, return_same_structure=False):
        original_loop_vars = loop_vars
        flat_templates = nest.flatten(loop_vars)
        flat = [convert_to_tensor(v) for v in _to_flows(flat_templates)]
        if shape_invariants is None:
            invariants = [t.shape for t in flat]
        else:
            invariants = [TensorShape([]) if _is_flow_carrier(v) else as_shape(s)
                          for v, s in zip(flat_templates, nest.flatten(shape_invariants))]
        self.enter()
        try:
            original_body_result, exit_vars = self._build_loop(pred, body, original_loop_vars, flat, invariants)
        finally:
            self.exit()
        packed = nest.pack_sequence_as(original_body_result, _from_flows(flat_templates, exit_vars))
        if return_same_structure:
            return packed
        return packed[0] if len(exit_vars) == 1 else packed

    def _build_loop(self, pred, body, original_loop_vars, loop_vars, shape_invariants):
        g = self._graph
        self._initialize_values(loop_vars)
        real_vars = loop_vars
        if self._outer_context is not None:
            real_vars = [self._outer_context.add_value(x) for x in loop_vars]
        with _helper_scope(g):
            enter_vars = [_enter(x, self._name, is_constant=False, parallel_iterations=self._parallel_iterations,
                                 use_input_shape=False) for x in real_vars]
        # An Enter fed by an outer loop's invariant would run once per outer
        # frame, not per outer iteration: tie it to the outer pivot.
        outer, control_pivot = self._outer_context, None
        while outer is not None and control_pivot is None:
            control_pivot = outer.get_control_pivot()
            outer = outer.outer_context
        if control_pivot is not None:
            for var in enter_vars:
                if util.is_loop_constant_enter(var.op.inputs[0].op):
                    var.op._add_control_input(control_pivot.op)
        for inp, var, shape in zip(real_vars, enter_vars, shape_invariants):
            if not _shape_less_than_or_equal(inp.shape, shape):
                raise ValueError(f"The shape invariant specified for {inp.name} is not compatible with the initial "
                                 f"shape of the loop variable. It enters the loop with shape {inp.shape}, but the "
                                 f"specified shape invariant is {shape}.")
            var.set_shape(shape)
        self._fix_control_inputs_and_context(enter_vars)
        self._initialize_values(enter_vars)
        self._loop_enters = enter_vars

        merge_vars = [merge([x, x])[0] for x in enter_vars]
        self._pivot_for_pred = merge_vars[0]
        flat_templates = nest.flatten(original_loop_vars)
        packed_vars = nest.pack_sequence_as(original_loop_vars, _from_flows(flat_templates, merge_vars))
        c = convert_to_tensor(pred(*_as_args(packed_vars)))
        if c.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"Input 'input' of 'LoopCond' Op has type {c.dtype.base_dtype.name} that does not "
                            "match expected type of bool.")
        if c.shape.ndims not in (None, 0):
            raise ValueError(f"The loop condition must return a scalar bool tensor, got {c!r}")
        self._pivot = loop_cond(c, name="LoopCond")
        switch_vars = [_switch_ref_or_tensor(x, self._pivot) for x in merge_vars]

        vars_for_body = [array_ops.identity(x[1], name="Identity") for x in switch_vars]
        self._pivot_for_body = vars_for_body[0]
        packed_vars_for_body = nest.pack_sequence_as(original_loop_vars, _from_flows(flat_templates, vars_for_body))
        body_result = body(*_as_args(packed_vars_for_body))
        if not nest.is_sequence(body_result):
            body_result = [body_result]
        try:
            nest.assert_same_structure(list(_as_args(packed_vars_for_body)), list(body_result))
        except ValueError as e:
            raise ValueError(f"The while_loop body must return the same structure as loop_vars: {e}") from None
        result = [convert_to_tensor(v) for v in _to_flows(nest.flatten(body_result))]
        if len(merge_vars) != len(result):
            raise ValueError(f"Number of inputs and outputs of body must match loop_vars: {len(merge_vars)}, "
                             f"{len(result)}")
        for m, v in zip(merge_vars, result):
            add_next_and_back_edge(m, v)
        exit_vars = [exit(x[0]) for x in switch_vars]
        self._loop_exits = exit_vars
        self.exit_result(exit_vars)
        return body_result, exit_vars

    # -- gradient support ------------------------------------------------------------------
    def add_forward_loop_counter(self, outer_grad_state):
        """A counter of this loop's iterations, added after the fact: returns
        (its Exit: the iteration count, its NextIteration: the forward index)."""
        n = convert_to_tensor(0, dtype=dtypes.int32, name="f_count")
        if outer_grad_state is not None:
            # The pushes of run i of this inner loop come before those of run i+1.
            outer_add_op = outer_grad_state.forward_index.op.inputs[0].op
            n.op._add_control_input(outer_add_op)
        self.enter()
        try:
            self.add_name(n.name)
            enter_n = _enter(n, self._name, is_constant=False, parallel_iterations=self._parallel_iterations,
                             name="f_count")
            self._loop_enters.append(enter_n)
            merge_n = merge([enter_n, enter_n])[0]
            switch_n = switch(merge_n, self._pivot)
            index = math_ops.add(switch_n[1], 1)
            next_n = _next_iteration(index)
            merge_n.op._update_input(1, next_n)
            total_iterations = exit(switch_n[0], name="f_count")
            self._loop_exits.append(total_iterations)
            self.exit_result([total_iterations])
        finally:
            self.exit()
        return total_iterations, next_n

    def add_backprop_loop_counter(self, count, outer_grad_state):
        """The gradient loop's counter: counts `count` down to 0; its LoopCond is this loop's pivot."""
        one = convert_to_tensor(1, dtype=dtypes.int32, name="b_count")
        self.enter()
        try:
            self.add_name(count.name)
            enter_count = _enter(count, self._name, is_constant=False,
                                 parallel_iterations=self._parallel_iterations, name="b_count")
            self._loop_enters.append(enter_count)
            merge_count = merge([enter_count, enter_count])[0]
            self._pivot_for_pred = merge_count
            pred = math_ops.greater_equal(merge_count, one)
            self._pivot = loop_cond(pred, name="b_count")
            switch_count = switch(merge_count, self._pivot)
            index = math_ops.subtract(switch_count[1], one)
            self._pivot_for_body = index
            next_count = _next_iteration(index)
            merge_count.op._update_input(1, next_count)
            final_zero = exit(switch_count[0], name="b_count")
            self._loop_exits.append(final_zero)
            if outer_grad_state is not None:
                # The pops of run i of this inner gradient loop come before those of run i+1.
                outer_grad_state.grad_sync._add_control_input(final_zero.op)
            self.exit_result([final_zero])
        finally:
            self.exit()
        return next_count

    def add_backprop_accumulator(self, op, grad):
        """The gradient of a loop invariant: the sum of its per-iteration gradients,
        accumulated by a small loop in this gradient loop."""
        self.exit()
        try:
            shape = grad.shape
            if shape.is_fully_defined():
                if self._outer_context is not None:
                    self._outer_context.enter()
                try:
                    acc = array_ops.zeros(shape.as_list(), grad.dtype.base_dtype, name="b_acc")
                finally:
                    if self._outer_context is not None:
                        self._outer_context.exit()
            else:
                value = op.inputs[0]
                outer = self._outer_context
                if isinstance(outer, WhileContext) and outer.grad_state is not None:
                    forward_ctxt = self.grad_state.forward_context
                    forward_ctxt.outer_context.enter()
                    try:
                        zeros_shape = array_ops.shape(value)
                    finally:
                        forward_ctxt.outer_context.exit()
                    outer_grad_state = self.grad_state.outer_grad_state
                    history_zeros_shape = outer_grad_state.add_forward_accumulator(zeros_shape)
                    outer.enter()
                    try:
                        real_shape = outer_grad_state.add_backprop_accumulated_value(history_zeros_shape,
                                                                                     zeros_shape)
                        acc = array_ops.zeros(real_shape, grad.dtype.base_dtype)
                    finally:
                        outer.exit()
                else:
                    if outer is not None:
                        outer.enter()
                    try:
                        acc = array_ops.zeros(array_ops.shape(value), grad.dtype.base_dtype)
                    finally:
                        if outer is not None:
                            outer.exit()
        finally:
            self.enter()
        self.add_name(acc.name)
        enter_acc = _enter(acc, self._name, is_constant=False, parallel_iterations=self._parallel_iterations,
                           name="b_acc")
        self._loop_enters.append(enter_acc)
        merge_acc = merge([enter_acc, enter_acc], name="b_acc")[0]
        switch_acc_false, switch_acc_true = switch(merge_acc, self._pivot)
        add_acc = math_ops.add(switch_acc_true, grad)
        next_acc = _next_iteration(add_acc)
        merge_acc.op._update_input(1, next_acc)
        result_acc = exit(switch_acc_false, name="b_acc")
        self._loop_exits.append(result_acc)
        self.exit_result([result_acc])
        return result_acc

    def __repr__(self):
        return f"<WhileContext {self._name} parallel_iterations={self._parallel_iterations}>"


def _as_args(packed):
    """Loop variables are passed to cond/body as separate arguments (as TF's `body(*loop_vars)`)."""
    return list(packed) if isinstance(packed, (list, tuple)) else [packed]


def add_next_and_back_edge(m, v, enforce_shape_invariant=True):
    """Closes a loop: NextIteration(v) becomes the Merge's second input. A body
    that changes a loop variable's dtype (TypeError) or shape (ValueError) is an error naming it."""
    v = convert_to_tensor(v)
    if enforce_shape_invariant:
        input_t = m.op.inputs[0].op.inputs[0] if util.is_loop_enter(m.op.inputs[0].op) else m
        if v.dtype.base_dtype != m.dtype.base_dtype:
            raise TypeError(f"Loop var {input_t.name} enters the loop with type <dtype: '{m.dtype.base_dtype.name}'> "
                            f"but has type <dtype: '{v.dtype.base_dtype.name}'> after 1 iteration. {input_t.name} "
                            "type should remain constant.")
        if not _shape_less_than_or_equal(v.shape, m.shape):
            raise ValueError(f"Input tensor '{input_t.name}' enters the loop with shape {m.shape}, but has shape "
                             f"{v.shape} after one iteration. To allow the shape to vary across iterations, use "
                             f"the `shape_invariants` argument of tf.while_loop to specify a less-specific shape.")
    v = _next_iteration(v)
    m.op._update_input(1, v)
    return v


# -- the public API ---------------------------------------------------------------------------

def _unpack_if_singleton(x):
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return x[0]
    return x



def _check_same_branch_results(orig_t, orig_f, res_t, res_f):
    """TypeError, worded as TF 2's, unless both branches return the same structure (sequence types
    included) of the same dtypes."""
    try:
        nest.assert_same_structure(orig_t, orig_f)
        details = _sequence_type_mismatch(orig_t, orig_f)
    except ValueError as e:
        details = str(e)
    if details is None:
        for x, y in zip(nest.flatten(res_t), nest.flatten(res_f)):
            if x.dtype.base_dtype != y.dtype.base_dtype:
                details = f"{x!r} and {y!r} have different types"
                break
    if details is not None:
        raise TypeError(f"true_fn and false_fn arguments to tf.cond must have the same number, type, and overall "
                        f"structure of return values.\n\ntrue_fn output: {orig_t!r}\nfalse_fn output: {orig_f!r}"
                        f"\n\nError details:\n{details}")


def _sequence_type_mismatch(a, b):
    if not nest.is_sequence(a):
        return None
    if type(a) is not type(b):
        return (f"The two structures don't have the same sequence type. First structure has type "
                f"{type(a)}, while second structure has type {type(b)}.")
    pairs = ((a[k], b[k]) for k in sorted(a)) if isinstance(a, dict) else zip(a, b)
    for x, y in pairs:
        found = _sequence_type_mismatch(x, y)
        if found is not None:
            return found
    return None

def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`, as a graph: only the taken branch runs."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    g = graph_of([pred] if is_tensor_like(pred) else [])
    with g.as_default(), g.name_scope(name or "cond"):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got {pred.dtype.name}: {pred!r}")
        p_2, p_1 = switch(pred, pred)
        pivot_1 = array_ops.identity(p_1, name="switch_t")
        pivot_2 = array_ops.identity(p_2, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")

        context_t = CondContext(pred, pivot_1, branch=1)
        context_t.enter()
        try:
            orig_res_t, res_t = context_t.build_cond_branch(true_fn)
            if orig_res_t is None:
                raise ValueError("true_fn must have a return value.")
            context_t.exit_result(res_t)
        finally:
            context_t.exit()
        context_f = CondContext(pred, pivot_2, branch=0)
        context_f.enter()
        try:
            orig_res_f, res_f = context_f.build_cond_branch(false_fn)
            if orig_res_f is None:
                raise ValueError("false_fn must have a return value.")
            context_f.exit_result(res_f)
        finally:
            context_f.exit()

        if not strict:
            orig_res_t = _unpack_if_singleton(orig_res_t)
            orig_res_f = _unpack_if_singleton(orig_res_f)
        _check_same_branch_results(orig_res_t, orig_res_f, res_t, res_f)
        if not res_t:
            raise ValueError("true_fn and false_fn must return at least one result.")
        res_t_flat = nest.flatten(res_t)
        res_f_flat = nest.flatten(res_f)
        merges = [merge(pair)[0] for pair in zip(res_f_flat, res_t_flat)]
        if context_t.outer_context is None:
            g.add_to_collection(GraphKeys.COND_CONTEXT, context_t)
            g.add_to_collection(GraphKeys.COND_CONTEXT, context_f)
        merges = nest.pack_sequence_as(orig_res_t, _from_flows(nest.flatten(orig_res_t), merges))
        if not strict:
            merges = _unpack_if_singleton(merges)
        return merges


def _assert_at_most_n_true(predicates, n, msg):
    from .control_ops import Assert
    preds_c = array_ops.stack(list(predicates), name="preds_c")
    num_true = math_ops.reduce_sum(math_ops.cast(preds_c, dtypes.int32), name="num_true_conds")
    condition = math_ops.less_equal(num_true, convert_to_tensor(n, name="n_true_conds"))
    names = ", ".join(p.name for p in predicates)
    return Assert(condition, [f"{msg}: more than {n} conditions ({names}) evaluated as True"],
                  summarize=len(predicates))


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate (nested conds, as TF1 builds
    them); `default` when none is true. With `exclusive`, more than one true
    predicate is an error at run time; so is none without a `default` (the last
    function runs then, guarded by asserts)."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}")
    if isinstance(pred_fn_pairs, dict):
        # TF orders an unordered dict by predicate name, so the graph is deterministic.
        pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    else:
        pairs = list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if not pairs:
        raise ValueError("not enough values to unpack (expected 2, got 0)")
    g = graph_of([p for p, _ in pairs])
    with g.as_default(), g.name_scope(name or "case"):
        if default is None:
            *pairs, (last_pred, last_fn) = pairs
            others = [p for p, _ in pairs]

            def default():
                k = len(others)
                checks = [_assert_at_most_n_true(others, 0, "Implementation error: selected default action "
                                                 f"#{k} was called, but some of other predicates are True")] \
                    if others else []
                from .control_ops import Assert
                checks.append(Assert(last_pred, ["Input error: None of conditions evaluated as True:"]))
                with g.control_dependencies(checks):
                    return last_fn()
        fn = default
        for pred, action in reversed(pairs):
            fn = (lambda p, a, f: lambda: cond(p, a, f, strict=strict))(pred, action, fn)
        if exclusive:
            with g.control_dependencies([_assert_at_most_n_true([p for p, _ in pairs], 1,
                                                                "Input error: exclusive=True")]):
                return fn()
        return fn()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats `body` while `cond` is true, as one loop in the graph (a frame at
    run time). Returns the loop variables' final values, structured like `loop_vars`."""
    if loop_vars is None or (isinstance(loop_vars, (list, tuple, dict)) and not loop_vars):
        raise ValueError("No loop variables provided")
    if not isinstance(loop_vars, (list, tuple, dict)):
        loop_vars = [loop_vars]  # a single tensor; the result is unpacked again
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    flat = [v for v in nest.flatten(loop_vars) if is_tensor_like(v)]
    g = graph_of(flat)
    with g.as_default(), g.name_scope(name or "while"):
        try_to_pack = isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError(f"maximum_iterations must be a scalar, saw shape: {maximum_iterations.shape}")
            counter = convert_to_tensor(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            orig_cond, orig_body = cond, body
            if try_to_pack:
                loop_vars = (counter, loop_vars[0])
                cond = lambda i, lv: math_ops.logical_and(i < maximum_iterations, orig_cond(lv))  # noqa: E731
                body = lambda i, lv: (i + 1, orig_body(lv))  # noqa: E731
            else:
                loop_vars = (counter, loop_vars)
                cond = lambda i, lv: math_ops.logical_and(  # noqa: E731
                    i < maximum_iterations, orig_cond(*_as_args(lv)))
                body = lambda i, lv: (i + 1, orig_body(*_as_args(lv)))  # noqa: E731
            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants[0] if try_to_pack else shape_invariants)
        if shape_invariants is not None:
            nest.assert_same_structure(loop_vars, shape_invariants)
        context = WhileContext(maximum_iterations=maximum_iterations, parallel_iterations=parallel_iterations,
                               back_prop=back_prop, swap_memory=swap_memory)
        if context.outer_context is None:
            g.add_to_collection(GraphKeys.WHILE_CONTEXT, context)
        result = context.build_loop(cond, body, loop_vars, shape_invariants, return_same_structure)
        if maximum_iterations is not None:
            return result[1]
        return result


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """branch_fns[branch_index]() (a list, or a dict keyed by ints); `default` (or the last branch)
    for an index that names no branch. Built from conds, as TF1 builds `case`."""
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
        keys = [k for k, _ in items]
        if keys != list(range(len(keys))):
            raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
                             f"{{{','.join(str(k) for k in keys)}}}")
    elif isinstance(branch_fns, (list, tuple)):
        items = list(enumerate(branch_fns))
        if items and all(isinstance(b, tuple) and len(b) == 2 for _, b in items):
            items = sorted(b for _, b in items)  # a list of (int, fn) pairs
    else:
        raise TypeError("branch_fns must be a list, tuple, or dict")
    if not items:
        raise ValueError("Must provide at least one item in branch_fns")
    for key, fn in items:
        if not isinstance(key, int):
            raise TypeError(f"branch_fns dict keys must be ints, got {key!r}")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable.")
    if default is None:
        default = items[-1][1]
    g = get_default_graph()
    with g.name_scope(name):
        index = convert_to_tensor(branch_index, name="branch_index")
        if index.dtype.base_dtype != dtypes.int32:
            raise TypeError(f"branch_index must be an int32 Tensor, got {index.dtype.base_dtype.name}")
        pairs = [(math_ops.equal(index, key), fn) for key, fn in items]
        return case(pairs, default=default, name="indexed_case")

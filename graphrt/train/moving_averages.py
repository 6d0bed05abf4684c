"""`tf.train.ExponentialMovingAverage`, as TF1's moving_averages.py builds it.

`apply(var_list)` makes one shadow variable per variable, `<var>/ExponentialMovingAverage`
(a slot: get_variable in `variable_scope(None, default_name="<var>/<name>")`,
colocated with the variable), starting at the variable's value (its initial
value while it is uninitialized), and returns the op that moves every shadow:

    shadow -= (1 - decay) * (shadow - value)      decay = min(decay, (1 + n) / (10 + n)) with num_updates n

A Tensor (not a Variable) gets a zeros shadow; with `zero_debias` it is
debiased with two more variables `<shadow>/biased` and `<shadow>/local_step`:
biased moves as above and shadow = biased / (1 - decay^local_step).
"""
import contextlib

from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import control_flow_ops, control_ops, math_ops, state_ops
from ..ops import variable_scope as vs
from ..ops import variables as variables_lib
from .optimizer import inherit_save_slice_info



def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """variable -= (1 - decay) * (variable - value); with zero_debias the average of a
    zero-started variable is divided by 1 - decay^steps (TF's assign_moving_average)."""
    g = get_default_graph()
    with g.name_scope(name or "AssignMovingAvg") as scope:
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype.base_dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, decay, scope)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


def _zero_debias(unbiased_var, value, decay, scope):
    g = get_default_graph()
    with vs.variable_scope(unbiased_var.op.name):
        with g.colocate_with(unbiased_var.op):
            biased = vs.get_variable(_unique_in_scope("biased"), initializer=variables_lib.Zeros(),
                                     shape=unbiased_var.get_shape(), dtype=unbiased_var.dtype, trainable=False)
            local_step = vs.get_variable(_unique_in_scope("local_step"), shape=[], dtype=unbiased_var.dtype,
                                         initializer=variables_lib.Zeros(), trainable=False)
    update_biased = state_ops.assign_sub(biased, (biased - value) * decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - decay, update_local_step)
    return state_ops.assign(unbiased_var, update_biased / bias_factor, name=scope)


def _unique_in_scope(name):
    """`name`, or `name_1`, ... when the scope already holds a variable by that name (TF's _maybe_get_unique)."""
    scope = vs.get_variable_scope()
    if scope.reuse:
        return name
    taken = {v.op.name for v in scope.global_variables()}
    full = f"{scope.name}/{name}"
    if full not in taken:
        return name
    i = 1
    while f"{full}_{i}" in taken:
        i += 1
    return f"{name}_{i}"


def _create_shadow(primary, value, name, colocate):
    """The non-trainable variable `<primary>/<name>` (made unique by its variable scope) starting at `value`."""
    g = primary.graph
    with vs.variable_scope(None, default_name=f"{primary.op.name}/{name}"):
        with g.colocate_with(primary.op) if colocate else contextlib.nullcontext():
            if callable(value):
                shadow = vs.get_variable("", shape=primary.get_shape(), dtype=primary.dtype.base_dtype,
                                         initializer=value, trainable=False)
            else:
                shadow = vs.get_variable("", initializer=value, trainable=False,
                                         validate_shape=value.get_shape().is_fully_defined())
    if isinstance(primary, variables_lib.Variable):
        inherit_save_slice_info(primary, shadow)
    return shadow


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates the shadow variables (once per variable) and returns the op that updates them."""
        if var_list is None:
            var_list = variables_lib.trainable_variables()
        var_list = list(var_list)
        g = get_default_graph()
        zero_debias = set()
        for var in var_list:
            if not var.dtype.base_dtype.is_floating:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            with vs.init_scope(g):
                if isinstance(var, variables_lib.Variable):
                    with g.device(var.device):
                        start = control_flow_ops.cond(state_ops.is_variable_initialized(var), var.read_value,
                                                      lambda var=var: var.initial_value)
                    avg = _create_shadow(var, start, self._name, colocate=True)
                    g.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = _create_shadow(var, variables_lib.Zeros(), self._name,
                                         colocate=var.op.type in ("Variable", "VariableV2", "VarHandleOp"))
                    if self._zero_debias:
                        zero_debias.add(avg)
            self._averages[var] = avg
        with g.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[var], var, decay, self._averages[var] in zero_debias)
                       for var in var_list]
            return control_ops.group(*updates, name=scope)

    def average(self, var):
        """The shadow variable of `var`, or None."""
        return self._averages.get(var)

    def average_name(self, var):
        """The shadow's name without `:0`, also for a variable not averaged yet (the name it would get)."""
        if var in self._averages:
            return self._averages[var].op.name
        return get_default_graph().unique_name(f"{var.op.name}/{self._name}", mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable} for a Saver that loads the averages into the variables
        (and every other global variable under its own name)."""
        if moving_avg_variables is None:
            moving_avg_variables = variables_lib.trainable_variables()
            moving_avg_variables += variables_lib.moving_average_variables()
        moving_avg_variables = set(moving_avg_variables)
        name_map = {self.average_name(v): v for v in moving_avg_variables}
        averaged_names = {v.name for v in moving_avg_variables}
        for v in variables_lib.global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map

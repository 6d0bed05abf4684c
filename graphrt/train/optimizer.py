"""Optimizers (TF1 `tf.train.*Optimizer`): gradients, slots, update ops.

`minimize` = `compute_gradients` + `apply_gradients`. Each variable's
update op is built under the name scope `<name>/update_<var>` and colocated
with the variable, as are its slots (`w/Momentum`, `w/Adam`, `w/Adam_1`),
so the update runs where the variable lives. Slots are made as TF's
slot_creator makes them: `get_variable` in `variable_scope(None,
default_name="<var>/<optimizer name>")`, so a second slot of the same
optimizer is `<var>/<name>_1` and slots live in the variable store. A
variable's constraint is applied right after its update, as TF does.

An IndexedSlices gradient (an embedding lookup's) gets a sparse update that
touches only the looked-up rows: a scatter for SGD, SparseApplyMomentum,
SparseApplyAdagrad, SparseApply(Centered)RMSProp, TF1's sparse Adam (its
slots decay densely); repeated indices are summed first. Other optimizers
apply it densely.
"""
import numpy as np

from ..framework.graph import GraphKeys, Tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_builder import apply_op, convert_to_tensor
from ..gradients import gradients
from ..framework.tensor_shape import as_shape
from ..ops import array_ops, control_ops, math_ops, sparse_training_ops, state_ops, training_ops
from ..ops.extra_ops import unique
from ..ops import variable_scope as vs
from ..ops import variables as variables_lib
from ..resource_variables import ResourceVariable


class Optimizer:
    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}          # slot name -> {var: slot variable}
        self._non_slot = {}       # name -> variable

    def get_name(self):
        return self._name

    # -- the public steps ------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not support "
                             f"gradients, between variables {[v.name for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        if callable(loss):
            raise ValueError("graphrt optimizers take a loss Tensor, not a callable")
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH. Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        if not loss.dtype.base_dtype.is_floating:
            raise ValueError(f"Invalid type {loss.dtype.name} for {loss.name}, expected: float16, float32, float64.")
        if var_list is None:
            var_list = variables_lib.trainable_variables()
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss, colocate_gradients_with_ops=colocate_gradients_with_ops,
                          aggregation_method=aggregation_method,
                          gate_gradients=gate_gradients == Optimizer.GATE_OP)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = control_ops.tuple(grads)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = [(g, v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, (Tensor, IndexedSlices)):
                raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}")
            if not isinstance(v, variables_lib.Variable):  # TF's class for a Tensor "variable"
                raise NotImplementedError(f"Trying to update a Tensor {v!r}")
            if isinstance(v, ResourceVariable):
                raise NotImplementedError(
                    f"{type(self).__name__} builds ref-variable updates; {v.name} is a resource variable (from a "
                    f"TensorFlow 2 graph). Run that graph's own training op, or rebuild the model in graphrt")
        var_list = [v for g, v in grads_and_vars if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[(str(g), v.name) for g, v in grads_and_vars]}.")
        g = get_default_graph()
        with g.control_dependencies(None):
            self._create_slots(var_list)
        update_ops = []
        with g.name_scope(name or self._name) as scope:
            self._prepare()
            for grad, var in grads_and_vars:
                if grad is None:
                    continue
                with g.name_scope(f"update_{var.op.name}"), g.colocate_with(var):
                    if isinstance(grad, IndexedSlices):
                        update = self._apply_sparse_duplicate_indices(grad, var)
                    else:
                        update = self._apply_dense(grad, var)
                    if var.constraint is not None:  # as TF: project the variable after its update
                        with g.control_dependencies([update]):
                            update = var.assign(var.constraint(var.read_value())).op
                    update_ops.append(update)
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with g.control_dependencies([self._finish(update_ops, "update")]):
                    with g.colocate_with(global_step):
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope).op
            train_ops = g.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    # -- hooks for subclasses ---------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} must implement _apply_dense")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """A sparse update: repeated indices summed first (TF1), then `_apply_sparse`."""
        return self._apply_sparse(deduplicate_indexed_slices(grad), var)

    def _apply_sparse(self, grad, var):
        """Without a sparse rule the slices are applied densely (all rows, zeros where no gradient)."""
        return self._apply_dense(convert_to_tensor(grad), var)

    def _finish(self, update_ops, name_scope):
        return control_ops.group(*update_ops, name=name_scope)

    # -- slots --------------------------------------------------------------------------
    def _zeros_slot(self, var, slot_name, op_name):
        """A slot of zeros shaped like `var`, named `<var>/<op_name>` (TF's create_zeros_slot)."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            slots[var] = create_zeros_slot(var, op_name)
        return slots[var]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            slots[var] = create_slot_with_initializer(var, initializer, shape, dtype, op_name)
        return slots[var]

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        if name not in self._non_slot:
            g = get_default_graph()
            # init_scope: built inside a loop body (a sunk training loop), the variable still lives outside it.
            with g.colocate_with(colocate_with), vs.init_scope(g):  # (named in the caller's name scope)
                self._non_slot[name] = variables_lib.Variable(initial_value, trainable=False, name=name)
        return self._non_slot[name]

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        out = list(self._non_slot.values())
        for slots in self._slots.values():
            out.extend(slots.values())
        return sorted(out, key=lambda v: v.name)

    def _hyper(self, value, name, dtype):
        if callable(value):
            value = value()
        if isinstance(value, (Tensor, variables_lib.Variable)):
            return math_ops.cast(value, dtype)
        return convert_to_tensor(np.asarray(value, dtype=dtype.np), name=name)


# -- slots (TF's slot_creator) ------------------------------------------------------------

def create_slot_with_initializer(primary, initializer, shape, dtype, name):
    """A non-trainable variable `<primary>/<name>` (made unique as `<name>_1`, ... by its
    variable scope), colocated with `primary`, created through get_variable as TF does."""
    g = primary.graph
    shape = as_shape(shape)
    with g.as_default(), vs.variable_scope(None, default_name=f"{primary.op.name}/{name}"):
        with g.colocate_with(primary.op):
            scope = vs.get_variable_scope()
            partitioner = scope.partitioner
            scope.set_partitioner(None)
            try:
                if shape.is_fully_defined():
                    slot = vs.get_variable("", initializer=initializer, trainable=False, shape=shape,
                                           dtype=dtype, validate_shape=True)
                else:
                    value = (initializer(array_ops.shape(primary), dtype=dtype) if callable(initializer)
                             else initializer)
                    slot = vs.get_variable("", initializer=value, trainable=False, validate_shape=False)
            finally:
                scope.set_partitioner(partitioner)
    inherit_save_slice_info(primary, slot)
    return slot


def inherit_save_slice_info(primary, slot):
    """A slot of a partitioned variable's part is a part too: `w/part_1/Adam` saves as slice
    "w/Adam" of the same offsets (cut to the slot's rank, none for a scalar slot)."""
    info = getattr(primary, "_save_slice_info", None)
    if info is None:
        return
    slot_name = slot.op.name[len(primary.op.name) + 1:]
    n = slot.shape.ndims
    if n is None or n > 0:
        slot._set_save_slice_info(variables_lib.SaveSliceInfo(f"{info.full_name}/{slot_name}", info.full_shape[:n],
                                                              info.var_offset[:n], info.var_shape[:n]))


def create_zeros_slot(primary, name, dtype=None):
    dtype = (dtype or primary.dtype).base_dtype
    return create_slot_with_initializer(primary, variables_lib.Zeros(), primary.get_shape(), dtype, name)


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._lr = {}

    def _prepare(self):
        self._lr = {}

    def _lr_for(self, dtype):
        if dtype not in self._lr:
            self._lr[dtype] = self._hyper(self._learning_rate, "learning_rate", dtype)
        return self._lr[dtype]

    def _apply_dense(self, grad, var):
        return apply_op("ApplyGradientDescent", [var._ref(), self._lr_for(var.dtype.base_dtype), grad],
                        name="ApplyGradientDescent", use_locking=self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        # A scatter adds repeated rows up by itself.
        values = grad.values * self._lr_for(var.dtype.base_dtype)
        return sparse_training_ops.scatter_sub(var, grad.indices, values, use_locking=self._use_locking).op


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._hypers = {}

    def _get(self, dtype):
        if dtype not in self._hypers:
            self._hypers[dtype] = (self._hyper(self._learning_rate, "learning_rate", dtype),
                                   self._hyper(self._momentum, "momentum", dtype))
        return self._hypers[dtype]

    def _apply_dense(self, grad, var):
        lr, momentum = self._get(var.dtype.base_dtype)
        accum = self.get_slot(var, "momentum")
        return apply_op("ApplyMomentum", [var._ref(), accum._ref(), lr, grad, momentum], name="ApplyMomentum",
                        use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        lr, momentum = self._get(var.dtype.base_dtype)
        return sparse_training_ops.sparse_apply_momentum(
            var, self.get_slot(var, "momentum"), lr, grad.values, grad.indices, momentum,
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(np.float32(self._beta1), "beta1_power", first)
        self._create_non_slot_variable(np.float32(self._beta2), "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _get_beta_accumulators(self):
        return self._non_slot["beta1_power"], self._non_slot["beta2_power"]

    def _prepare(self):
        self._hypers = {}

    def _get(self, dtype):
        if dtype not in self._hypers:
            self._hypers[dtype] = tuple(self._hyper(v, n, dtype) for v, n in (
                (self._lr, "learning_rate"), (self._beta1, "beta1"), (self._beta2, "beta2"),
                (self._epsilon, "epsilon")))
        return self._hypers[dtype]

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        lr, beta1, beta2, eps = self._get(dtype)
        b1p, b2p = self._get_beta_accumulators()
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return apply_op("ApplyAdam", [var._ref(), m._ref(), v._ref(), math_ops.cast(b1p, dtype),
                                      math_ops.cast(b2p, dtype), lr, beta1, beta2, eps, grad],
                        name="ApplyAdam", use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        """TF1's sparse Adam: m and v decay everywhere, the rows with a gradient get it,
        and every row of var moves by the (bias-corrected) m / (sqrt(v) + eps)."""
        dtype = var.dtype.base_dtype
        lr, beta1, beta2, eps = self._get(dtype)
        b1p, b2p = (math_ops.cast(b, dtype) for b in self._get_beta_accumulators())
        lr = lr * math_ops.sqrt(1 - b2p) / (1 - b1p)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(m, m * beta1, use_locking=self._use_locking)
        g = get_default_graph()
        with g.control_dependencies([m_t]):
            m_t = sparse_training_ops.scatter_add(m, grad.indices, grad.values * (1 - beta1),
                                                  use_locking=self._use_locking)
        v_t = state_ops.assign(v, v * beta2, use_locking=self._use_locking)
        with g.control_dependencies([v_t]):
            v_t = sparse_training_ops.scatter_add(v, grad.indices, (grad.values * grad.values) * (1 - beta2),
                                                  use_locking=self._use_locking)
        var_update = state_ops.assign_sub(var, lr * m_t / (math_ops.sqrt(v_t) + eps),
                                          use_locking=self._use_locking)
        return control_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops, name_scope):
        g = get_default_graph()
        with g.control_dependencies(update_ops):
            b1p, b2p = self._get_beta_accumulators()
            with g.colocate_with(b1p):
                dtype = b1p.dtype.base_dtype
                update_b1 = b1p.assign(b1p * self._hyper(self._beta1, "beta1", dtype), use_locking=self._use_locking)
                update_b2 = b2p.assign(b2p * self._hyper(self._beta2, "beta2", dtype), use_locking=self._use_locking)
        return control_ops.group(*update_ops, update_b1, update_b2, name=name_scope)


class RMSPropOptimizer(Optimizer):
    """TF1 RMSProp: slots `rms` (`<var>/RMSProp`, ones), `momentum` (zeros) and, centered,
    `mg` (zeros) between them, so the names are RMSProp, RMSProp_1 (, RMSProp_2)."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered
        self._learning_rate_tensor = self._decay_tensor = None
        self._momentum_tensor = self._epsilon_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            if v.get_shape().is_fully_defined():
                init_rms = variables_lib.Ones(dtype=dtype)
            else:
                init_rms = array_ops.ones_like(v)
            self._get_or_make_slot_with_initializer(v, init_rms, v.get_shape(), dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")
        self._decay_tensor = convert_to_tensor(self._call_if_callable(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        rms = self.get_slot(var, "rms")
        mom = self.get_slot(var, "momentum")
        hypers = [math_ops.cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                                     self._momentum_tensor, self._epsilon_tensor)]
        if self._centered:
            mg = self.get_slot(var, "mg")
            return training_ops.apply_centered_rms_prop(var, mg, rms, mom, *hypers, grad,
                                                        use_locking=self._use_locking).op
        return training_ops.apply_rms_prop(var, rms, mom, *hypers, grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        rms = self.get_slot(var, "rms")
        mom = self.get_slot(var, "momentum")
        hypers = [math_ops.cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                                     self._momentum_tensor, self._epsilon_tensor)]
        if self._centered:
            return sparse_training_ops.sparse_apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *hypers, grad.values, grad.indices,
                use_locking=self._use_locking).op
        return sparse_training_ops.sparse_apply_rms_prop(var, rms, mom, *hypers, grad.values, grad.indices,
                                                         use_locking=self._use_locking).op


def create_accumulators(optimizer, var_list, value):
    """An `accumulator` slot per variable, filled with `value` (Adagrad's and ProximalAdagrad's)."""
    for v in var_list:
        dtype = v.dtype.base_dtype
        if v.get_shape().is_fully_defined():
            init = variables_lib.Constant(value, dtype=dtype)
        else:
            init = array_ops.fill(array_ops.shape(v), np.asarray(value, dtype.np))
        optimizer._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accumulator", optimizer._name)


class AdagradOptimizer(Optimizer):
    """TF1 Adagrad: one slot `accumulator` (`<var>/Adagrad`) starting at
    initial_accumulator_value."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor = None

    def _create_slots(self, var_list):
        create_accumulators(self, var_list, self._initial_accumulator_value)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return training_ops.apply_adagrad(var, acc, math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype),
                                          grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return sparse_training_ops.sparse_apply_adagrad(
            var, acc, math_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype), grad.values, grad.indices,
            use_locking=self._use_locking).op


def deduplicate_indexed_slices(grad):
    """`grad` with each index once, its rows summed (TF's _deduplicate_indexed_slices)."""
    unique_indices, new_index_positions = unique(grad.indices)
    summed = array_ops.unsorted_segment_sum(grad.values, new_index_positions, array_ops.shape(unique_indices)[0])
    return IndexedSlices(summed, unique_indices, grad.dense_shape)

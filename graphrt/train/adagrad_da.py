"""`tf.train.AdagradDAOptimizer` (Adagrad dual averaging): slots `gradient_accumulator`
(`<var>/AdagradDA`, zeros) and `gradient_squared_accumulator` (`<var>/AdagradDA_1`,
starting at initial_gradient_squared_accumulator_value). The update takes
global_step + 1 (read once per apply); the optimizer does not advance the step
itself, `minimize(global_step=...)` does."""
import numpy as np

from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, math_ops
from ..ops import variables as variables_lib
from .optimizer import Optimizer
from . import update_ops


class AdagradDAOptimizer(Optimizer):
    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False,
                 name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_value = initial_gradient_squared_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._global_step = global_step
        self._learning_rate_tensor = self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            if v.get_shape().is_fully_defined():
                zeros = variables_lib.Zeros(dtype=dtype)
                start = variables_lib.Constant(self._initial_value, dtype=dtype)
            else:
                zeros = array_ops.zeros_like(v)
                start = array_ops.fill(array_ops.shape(v), np.asarray(self._initial_value, dtype.np))
            self._get_or_make_slot_with_initializer(v, zeros, v.get_shape(), dtype, "gradient_accumulator",
                                                    self._name)
            self._get_or_make_slot_with_initializer(v, start, v.get_shape(), dtype, "gradient_squared_accumulator",
                                                    self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._learning_rate, name="learning_rate")
        with get_default_graph().colocate_with(self._learning_rate_tensor):
            self._global_step_on_worker = array_ops.identity(self._global_step) + 1

    def _args(self, var):
        dtype = var.dtype.base_dtype
        g = get_default_graph()
        with g.device(var.device):
            global_step = array_ops.identity(self._global_step_on_worker)
        return ([math_ops.cast(self._learning_rate_tensor, dtype), math_ops.cast(self._l1, dtype),
                 math_ops.cast(self._l2, dtype), global_step])

    def _apply_dense(self, grad, var):
        return update_ops.apply_adagrad_da(var, self.get_slot(var, "gradient_accumulator"),
                                           self.get_slot(var, "gradient_squared_accumulator"), grad, *self._args(var),
                                           use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return update_ops.sparse_apply_adagrad_da(var, self.get_slot(var, "gradient_accumulator"),
                                                  self.get_slot(var, "gradient_squared_accumulator"), grad.values,
                                                  grad.indices, *self._args(var), use_locking=self._use_locking).op

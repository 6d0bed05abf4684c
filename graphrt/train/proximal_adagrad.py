"""`tf.train.ProximalAdagradOptimizer`: one slot `accumulator` (`<var>/ProximalAdagrad`)
starting at initial_accumulator_value; ApplyProximalAdagrad / SparseApplyProximalAdagrad.
Its hyperparameters are not cast to the variable's dtype (as TF)."""
from ..framework.op_builder import convert_to_tensor
from .optimizer import Optimizer, create_accumulators
from . import update_ops


class ProximalAdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._tensors = None

    def _create_slots(self, var_list):
        create_accumulators(self, var_list, self._initial_accumulator_value)

    def _prepare(self):
        self._tensors = (convert_to_tensor(self._learning_rate, name="learning_rate"),
                         convert_to_tensor(self._l1, name="l1_regularization_strength"),
                         convert_to_tensor(self._l2, name="l2_regularization_strength"))

    def _apply_dense(self, grad, var):
        return update_ops.apply_proximal_adagrad(var, self.get_slot(var, "accumulator"), *self._tensors, grad,
                                                 use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return update_ops.sparse_apply_proximal_adagrad(var, self.get_slot(var, "accumulator"), *self._tensors,
                                                        grad.values, grad.indices, use_locking=self._use_locking).op

"""`tf.train.ProximalGradientDescentOptimizer`: no slots; ApplyProximalGradientDescent /
SparseApplyProximalGradientDescent. Hyperparameters are not cast (as TF)."""
from ..framework.op_builder import convert_to_tensor
from .optimizer import Optimizer
from . import update_ops


class ProximalGradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._tensors = None

    def _prepare(self):
        self._tensors = (convert_to_tensor(self._learning_rate, name="learning_rate"),
                         convert_to_tensor(self._l1, name="l1_regularization_strength"),
                         convert_to_tensor(self._l2, name="l2_regularization_strength"))

    def _apply_dense(self, grad, var):
        return update_ops.apply_proximal_gradient_descent(var, *self._tensors, grad,
                                                          use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return update_ops.sparse_apply_proximal_gradient_descent(var, *self._tensors, grad.values, grad.indices,
                                                                 use_locking=self._use_locking).op

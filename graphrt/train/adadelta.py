"""`tf.train.AdadeltaOptimizer`: slots `accum` (`<var>/Adadelta`) and `accum_update`
(`<var>/Adadelta_1`), both zeros; ApplyAdadelta / SparseApplyAdadelta."""
from ..framework.op_builder import convert_to_tensor
from ..ops import math_ops
from .optimizer import Optimizer
from . import update_ops


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon
        self._lr_t = self._rho_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="lr")
        self._rho_t = convert_to_tensor(self._call_if_callable(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _hypers(self, var):
        dtype = var.dtype.base_dtype
        return [math_ops.cast(t, dtype) for t in (self._lr_t, self._rho_t, self._epsilon_t)]

    def _apply_dense(self, grad, var):
        return update_ops.apply_adadelta(var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                                         *self._hypers(var), grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return update_ops.sparse_apply_adadelta(var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                                                *self._hypers(var), grad.values, grad.indices,
                                                use_locking=self._use_locking).op

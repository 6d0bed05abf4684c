"""`tf.train.FtrlOptimizer`: slots `accum` (`<var>/Ftrl`, starting at
initial_accumulator_value) and `linear` (`<var>/Ftrl_1`, zeros); ApplyFtrl, or
ApplyFtrlV2 when l2_shrinkage_regularization_strength > 0 (and their sparse forms).
`beta` enters as TF folds it into l2: l2 + beta / (2 * max(learning_rate, 1e-36))."""
from ..framework.op_builder import convert_to_tensor
from ..ops import math_ops
from ..ops import variables as variables_lib
from .optimizer import Optimizer
from . import update_ops


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value:f} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power:f} needs to be negative or zero")
        if l1_regularization_strength < 0.0:
            raise ValueError(f"l1_regularization_strength {l1_regularization_strength:f} needs to be positive or zero")
        if l2_regularization_strength < 0.0:
            raise ValueError(f"l2_regularization_strength {l2_regularization_strength:f} needs to be positive or zero")
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError(f"l2_shrinkage_regularization_strength {l2_shrinkage_regularization_strength:f} needs to "
                             "be positive or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name
        self._tensors = None

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = variables_lib.Constant(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.shape, dtype, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        lr = convert_to_tensor(self._learning_rate, name="learning_rate")
        l1 = convert_to_tensor(self._l1, name="l1_regularization_strength")
        l2 = convert_to_tensor(self._l2 + self._beta / (2.0 * math_ops.maximum(self._learning_rate, 1e-36)),
                               name="adjusted_l2_regularization_strength")
        shrinkage = convert_to_tensor(self._l2_shrinkage, name="l2_shrinkage_regularization_strength")
        power = convert_to_tensor(self._learning_rate_power, name="learning_rate_power")
        self._tensors = lr, l1, l2, shrinkage, power

    def _hypers(self, var):
        """lr, l1, l2 (, l2_shrinkage with V2), lr_power in var's dtype."""
        lr, l1, l2, shrinkage, power = (math_ops.cast(t, var.dtype.base_dtype) for t in self._tensors)
        return (lr, l1, l2, power) if self._l2_shrinkage <= 0.0 else (lr, l1, l2, shrinkage, power)

    def _apply_dense(self, grad, var):
        fn = update_ops.apply_ftrl if self._l2_shrinkage <= 0.0 else update_ops.apply_ftrl_v2
        return fn(var, self.get_slot(var, "accum"), self.get_slot(var, "linear"), grad, *self._hypers(var),
                  use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        fn = update_ops.sparse_apply_ftrl if self._l2_shrinkage <= 0.0 else update_ops.sparse_apply_ftrl_v2
        return fn(var, self.get_slot(var, "accum"), self.get_slot(var, "linear"), grad.values, grad.indices,
                  *self._hypers(var), use_locking=self._use_locking).op

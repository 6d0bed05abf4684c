"""The update ops of Adadelta, FTRL, ProximalAdagrad, ProximalGradientDescent and
AdagradDA (TF's training_ops): ApplyX for dense gradients and SparseApplyX for
IndexedSlices (rows `indices` of var and its slots). Their kernels are in
update_kernels.py, which this module imports so they register with the ops.
"""
from ..framework.op_builder import apply_op
from ..framework.registry import not_differentiable, register_op
from ..ops.sparse_training_ops import INDEX, _sparse_apply_shape
from ..ops.state_ops import _ref
from ..ops.training_ops import _apply_shape
from ..resource_variables import register_resource_form
from . import update_kernels  # noqa: F401 - registers the kernels

# (op, ApplyX inputs, number of slots after var, position of grad, positions of the scalar inputs, extra attrs)
_OPS = [
    ("Adadelta", ["var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T", "rho: T", "epsilon: T",
                  "grad: T"], 2, 6, [3, 4, 5], {}),
    ("Ftrl", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T", "l1: T", "l2: T",
              "lr_power: T"], 2, 3, [4, 5, 6, 7], {"multiply_linear_by_lr": False}),
    ("FtrlV2", ["var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T", "l1: T", "l2: T",
                "l2_shrinkage: T", "lr_power: T"], 2, 3, [4, 5, 6, 7, 8], {"multiply_linear_by_lr": False}),
    ("ProximalAdagrad", ["var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T", "grad: T"], 1, 5, [2, 3, 4],
     {}),
    ("ProximalGradientDescent", ["var: Ref(T)", "alpha: T", "l1: T", "l2: T", "delta: T"], 0, 4, [1, 2, 3], {}),
    ("AdagradDA", ["var: Ref(T)", "gradient_accumulator: Ref(T)", "gradient_squared_accumulator: Ref(T)",
                   "grad: T", "lr: T", "l1: T", "l2: T", "global_step: int64"], 2, 3, [4, 5, 6, 7], {}),
]


def _sparse_inputs(inputs, grad):
    """The SparseApplyX inputs: the gradient rows are `grad`, followed by `indices`."""
    out = list(inputs)
    out[grad] = "grad: T"
    out.insert(grad + 1, "indices: Tindices")
    return out


def _sparse_scalars(scalars, grad):
    return [i + 1 if i > grad else i for i in scalars]


for _op, _inputs, _n_slots, _grad, _scalars, _attrs in _OPS:
    register_op(f"Apply{_op}", _inputs, ["out: Ref(T)"], attrs={"use_locking": False, **_attrs},
                shape_fn=_apply_shape(list(range(1, 1 + _n_slots)), _scalars, _grad), is_stateful=True)
    register_op(f"SparseApply{_op}", _sparse_inputs(_inputs, _grad), ["out: Ref(T)"],
                attrs={"use_locking": False, **_attrs}, shape_fn=_sparse_apply_shape(_n_slots, _grad),
                allowed_types={"Tindices": INDEX}, is_stateful=True)
    not_differentiable(f"Apply{_op}")
    not_differentiable(f"SparseApply{_op}")
    register_resource_form(f"Apply{_op}")  # ResourceApplyAdadelta, ...: what TF 2 graphs name
    register_resource_form(f"SparseApply{_op}")


def _apply(op, refs, others, use_locking, name):
    return apply_op(op, [_ref(r) for r in refs] + list(others), name=name or op,
                    use_locking=bool(use_locking)).outputs[0]


# -- Python API (TF's gen_training_ops) ---------------------------------------------------

def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False, name=None):
    return _apply("ApplyAdadelta", [var, accum, accum_update], [lr, rho, epsilon, grad], use_locking, name)


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices, use_locking=False, name=None):
    return _apply("SparseApplyAdadelta", [var, accum, accum_update], [lr, rho, epsilon, grad, indices],
                  use_locking, name)


def apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, use_locking=False, name=None):
    return _apply("ApplyFtrl", [var, accum, linear], [grad, lr, l1, l2, lr_power], use_locking, name)


def sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power, use_locking=False, name=None):
    return _apply("SparseApplyFtrl", [var, accum, linear], [grad, indices, lr, l1, l2, lr_power], use_locking,
                  name)


def apply_ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power, use_locking=False, name=None):
    return _apply("ApplyFtrlV2", [var, accum, linear], [grad, lr, l1, l2, l2_shrinkage, lr_power], use_locking,
                  name)


def sparse_apply_ftrl_v2(var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power, use_locking=False,
                         name=None):
    return _apply("SparseApplyFtrlV2", [var, accum, linear], [grad, indices, lr, l1, l2, l2_shrinkage, lr_power],
                  use_locking, name)


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    return _apply("ApplyProximalAdagrad", [var, accum], [lr, l1, l2, grad], use_locking, name)


def sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices, use_locking=False, name=None):
    return _apply("SparseApplyProximalAdagrad", [var, accum], [lr, l1, l2, grad, indices], use_locking, name)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    return _apply("ApplyProximalGradientDescent", [var], [alpha, l1, l2, delta], use_locking, name)


def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices, use_locking=False, name=None):
    return _apply("SparseApplyProximalGradientDescent", [var], [alpha, l1, l2, grad, indices], use_locking, name)


def apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step,
                     use_locking=False, name=None):
    return _apply("ApplyAdagradDA", [var, gradient_accumulator, gradient_squared_accumulator],
                  [grad, lr, l1, l2, global_step], use_locking, name)


def sparse_apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, indices, lr, l1, l2,
                            global_step, use_locking=False, name=None):
    return _apply("SparseApplyAdagradDA", [var, gradient_accumulator, gradient_squared_accumulator],
                  [grad, indices, lr, l1, l2, global_step], use_locking, name)

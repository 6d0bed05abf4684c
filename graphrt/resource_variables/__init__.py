"""Resource variables: TensorFlow 2's kind of variable, as `tf.compat.v1` graphs make them by default.

A `VarHandleOp` names a variable held by its device (the same storage as a
ref variable's, `ops/state_ops.VariableState`); `ReadVariableOp` takes a
snapshot of its value, `AssignVariableOp` and its relatives replace or
update it, and every update op of the optimizers has a `Resource...` form
(`ResourceApplyAdam`, `ResourceSparseApplyAdagrad`, `ResourceScatterAdd`, ...)
that takes handles instead of refs. So a graph TensorFlow 2 wrote from
compat.v1 code (a SavedModel, a `.meta` with its checkpoint, a GraphDef)
imports, restores, runs and keeps training here. `ResourceVariable` is
the Python object over such a variable (what `import_meta_graph` gives for
a VariableDef with `is_resource`).
"""
from . import grad, kernels, updates  # noqa: F401 - register gradients, kernels and the Resource update forms
from .ops import read_variable_op, var_handle_op  # noqa: F401
from .updates import register_resource_form  # noqa: F401
from .variable import ResourceVariable  # noqa: F401

"""Op families. Importing this package registers every op declaration,
kernel and gradient; the order matters only in that kernels and gradients
refer to declarations."""
from . import math_ops, math_kernels, math_grad  # noqa: F401
from . import array_ops, array_kernels, array_grad  # noqa: F401
from . import state_ops, control_ops, comm_ops, variables  # noqa: F401
from . import nn_ops, nn_kernels, nn_grad, random_ops  # noqa: F401
from . import control_flow_ops, control_flow_kernels, control_flow_grad, stack_ops  # noqa: F401
from . import variable_scope  # noqa: F401
from . import training_ops, sparse_training_ops  # noqa: F401
from . import extra_ops, extra_kernels, extra_grad, clip_ops  # noqa: F401
from . import fused_batch_norm  # noqa: F401 - TF's fused ops, for imported GraphDefs

"""TF1's framework utilities at the top of `tf.*`: tensor queries (`is_tensor`,
`get_static_value`, `dimension_value`, `dimension_at_index`), `init_scope`,
`get_logger`, and gradients defined by the user (`custom_gradient`,
`grad_pass_through`, `no_gradient`).
"""
import contextlib
import functools
import inspect
import itertools
import logging as _py_logging

from .framework.constant_value import constant_value
from .framework.graph import Tensor, get_default_graph
from .framework.indexed_slices import IndexedSlices
from .framework.op_builder import convert_to_tensor
from .framework.registry import not_differentiable, register_gradient
from .framework.tensor_shape import Dimension, as_shape
from .ops import nest
from .ops.extra_ops import identity_n
from .ops.variables import Variable, global_variables, local_variables

__all__ = ["custom_gradient", "dimension_at_index", "dimension_value", "executing_eagerly_outside_functions",
           "get_logger", "get_static_value", "grad_pass_through", "init_scope", "is_tensor", "no_gradient"]


def is_tensor(x):
    """Whether x is a graph value: a Tensor, a Variable, IndexedSlices or a sparse tensor."""
    if isinstance(x, (Tensor, Variable, IndexedSlices)):
        return True
    return getattr(x, "_is_graphrt_composite_tensor", False) is True


def get_static_value(tensor, partial=False):
    """The value of `tensor` if it can be computed when the graph is built, else None."""
    del partial  # graphrt folds whole values only
    if not is_tensor(tensor):
        return tensor
    return constant_value(convert_to_tensor(tensor))


def dimension_value(dimension):
    """A Dimension's int value (None when unknown); anything else is returned as it is."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index):
    """The Dimension at `index` of `shape` (unknown if the rank is unknown)."""
    shape = as_shape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


@contextlib.contextmanager
def init_scope():
    """Ops created inside depend on no control inputs of the scopes around it (in TF1 graph mode
    that, and leaving control-flow contexts, is what init_scope does)."""
    g = get_default_graph()
    with g.control_dependencies(None):
        yield


def get_logger():
    """Python's logger named 'tensorflow', as TF's get_logger returns (graphrt's own log is 'graphrt')."""
    return _py_logging.getLogger("tensorflow")


def executing_eagerly_outside_functions():
    return False  # graphrt builds graphs only


def no_gradient(op_type):
    """Declares that ops of `op_type` have no gradient (tf.no_gradient, TF1's NotDifferentiable)."""
    not_differentiable(op_type)


_custom_gradient_ids = itertools.count()


def custom_gradient(f=None):
    """Decorates f(*args) -> (y, grad_fn) so that tf.gradients uses grad_fn(*dys) for y's
    gradient with respect to args (and, if f reads variables, grad_fn(*dys, variables=...) returns
    (input grads, variable grads)). Built as TF builds it in a graph: an IdentityN over outputs,
    inputs and variables whose gradient is overridden."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords arguments only when "
                             "eager execution is enabled.")
        return _graph_mode_custom_gradient(f, args)
    return decorated


def _graph_mode_custom_gradient(f, args):
    g = get_default_graph()
    name = f"CustomGradient-{next(_custom_gradient_ids)}"
    args = nest.map_structure(convert_to_tensor, args)
    result, grad_fn = f(*args)
    flat_args = nest.flatten(args)
    flat_result = [convert_to_tensor(t) for t in nest.flatten(result)]
    n_result = len(flat_result)
    variables = _variables_read_between(flat_args, flat_result)
    spec = inspect.getfullargspec(grad_fn)
    takes_variables = "variables" in spec.args or "variables" in spec.kwonlyargs or spec.varkw is not None
    if variables and not takes_variables:
        raise TypeError(f"@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function "
                        f"uses variables: {[v.name for v in variables]}")

    @register_gradient(name)
    def _gradient(unused_op, *result_grads):
        result_grads = result_grads[:n_result]
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads = grad_fn(*result_grads)
            variable_grads = []
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != len(flat_args):
            raise ValueError(f"custom_gradient function expected to return {len(flat_args)} gradients, but "
                             f"returned {len(input_grads)} instead.")
        return [None] * n_result + list(input_grads) + list(variable_grads)

    with g.gradient_override_map({"IdentityN": name}):
        outputs = identity_n(flat_result + flat_args + [v.value() for v in variables])
    return nest.pack_sequence_as(result, outputs[:n_result])


def _variables_read_between(inputs, outputs):
    """The variables whose values `outputs` depend on without going through `inputs`, by name."""
    by_op = {}
    for v in global_variables() + local_variables():
        by_op.setdefault(v.op.name, v)
    stop = {t.op.name for t in inputs if isinstance(t, Tensor)}
    seen, found, todo = set(), {}, [t.op for t in outputs]
    while todo:
        op = todo.pop()
        if op.name in seen or op.name in stop:
            continue
        seen.add(op.name)
        if op.name in by_op:
            found[op.name] = by_op[op.name]
            continue
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    return sorted(found.values(), key=lambda v: v.name)


def grad_pass_through(f):
    """f(*args) whose gradient with respect to args is taken as the identity (a straight-through
    estimator); variables f reads get no gradient, as in TF."""
    @custom_gradient
    def _pass_through(*args):
        def grad(*dys, variables=None):
            if variables is not None:
                return dys, [None] * len(variables)
            return dys
        return f(*args), grad
    return functools.wraps(f)(_pass_through)

"""The global step: one int64 variable counting training steps."""
from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph


def get_global_step(graph=None):
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("There should be only one global step tensor, found several in the collection.")
    if found:
        return found[0]
    try:
        tensor = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if not tensor.dtype.base_dtype.is_integer:
        raise TypeError(f"Existing global_step has non-integer dtype {tensor.dtype.name}")
    return tensor


def create_global_step(graph=None):
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    from ..ops.variables import Variable
    import numpy as np
    with graph.as_default(), graph.name_scope(None):
        return Variable(np.array(0, dtype=np.int64), trainable=False, name=GraphKeys.GLOBAL_STEP,
                        dtype=dtypes.int64, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or get_default_graph()
    step = get_global_step(graph)  # (a variable has no truth value: never `or` it)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor):
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    """TypeError unless `global_step_tensor` is an integer scalar Variable or Tensor."""
    from ..framework.graph import Tensor
    from ..ops.variables import Variable
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}')
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')

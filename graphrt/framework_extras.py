"""TF1's small top-level helpers that are pure Python over existing ops: casts to
complex, clip_by_average_norm, static broadcasting, tensor predicates,
numerics checks, the remaining asserts of TF's check_ops, graph scopes kept
for old programs (op_scope, container), AggregationMethod and
UnconnectedGradients, vectorized_map, required_space_to_batch_paddings, and
the version constants. Formulas, names and errors are TF's."""
import contextlib
import enum

import numpy as np

from .framework import dtypes
from .framework.constant_value import constant_value
from .framework.graph import Tensor, get_default_graph, graph_of
from .framework.indexed_slices import IndexedSlices
from .framework.op_builder import convert_to_tensor, is_tensor_like
from .framework.tensor_shape import TensorShape, as_shape
from .functional import map_fn
from .ops import array_ops, control_ops, math_ops, nest
from .ops.extra_ops import _message_prefix, assert_op, assert_rank, assert_type
from .ops.variables import local_variables_initializer, variables_initializer
from .special_math import ndtri

# graphrt's own versions under TF's names: its release, and the GraphDef producer version it writes
# (framework/graph_def.py), which TF's consumers accept (min_consumer 0).
VERSION = "0.1.0"
GIT_VERSION = "graphrt-" + VERSION
COMPILER_VERSION = "python"
GRAPH_DEF_VERSION = 1
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0


def _scope(name, default, values):
    g = graph_of([v for v in values if is_tensor_like(v)])
    return g, g.name_scope(default if name is None else name)


# -- casts and clipping ----------------------------------------------------------------------

def to_complex64(x, name="ToComplex64"):
    return math_ops.cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    return math_ops.cast(x, dtypes.complex128, name=name)


def clip_by_average_norm(t, clip_norm, name=None):
    """t * clip_norm / max(l2norm(t) / size(t), clip_norm) (TF's formula, in float32 counts)."""
    g, scope = _scope(name, "clip_by_average_norm", [t, clip_norm])
    with g.as_default(), scope as name:
        t = convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(t * t, math_ops.range(array_ops.rank(t))))
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element, convert_to_tensor(1.0) / clip_norm),
            name=name)


def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape of a broadcast of tensors of the two static shapes."""
    x, y = as_shape(shape_x), as_shape(shape_y)
    if x.ndims is None or y.ndims is None:
        return TensorShape(None)
    out = []
    for i in range(1, max(x.ndims, y.ndims) + 1):
        a = x.dims[-i].value if i <= x.ndims else 1
        b = y.dims[-i].value if i <= y.ndims else 1
        if a is None or b is None:  # an unknown dim is the other one when that is > 1 (it cannot be 1 then)
            out.append(a if a is not None and a > 1 else b if b is not None and b > 1 else None)
        elif a == 1 or a == b:
            out.append(b)
        elif b == 1:
            out.append(a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if for each "
                             f"dimension pair they are either equal or one of them is 1. Received: {x} and {y}.")
    return TensorShape(out[::-1])


def erfcinv(x, name=None):
    """The inverse of erfc: -ndtri(x / 2) / sqrt(2) (TF's composition)."""
    g, scope = _scope(name, "erfcinv", [x])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="start")
        return -ndtri(0.5 * x) * np.sqrt(0.5)


# -- predicates and conversions ----------------------------------------------------------------

def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """An IndexedSlices as it is (its dtype checked), anything else converted to a Tensor."""
    if isinstance(value, IndexedSlices):
        if dtype and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def is_numeric_tensor(tensor):
    """True for a Tensor (not a Variable) of an integer, floating or complex dtype."""
    return isinstance(tensor, Tensor) and tensor.dtype.base_dtype in dtypes.NUMERIC


# -- numerics checks -------------------------------------------------------------------------

def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """`t`, after a CheckNumerics of it (an InvalidArgumentError at run time on NaN or Inf)."""
    t = x if t is None else t
    msg = message if msg is None else msg
    g, scope = _scope(name, "VerifyFinite", [t])
    with g.as_default(), scope:
        t = convert_to_tensor(t, name="t")
        with g.colocate_with(t.op):
            verify = control_ops.check_numerics(t, message=msg)
            return control_ops.with_dependencies([verify], t)


def add_check_numerics_ops():
    """One op that runs a CheckNumerics of every half/float/double output in the graph, chained
    by control dependencies in the order the ops were made (TF's)."""
    check = []
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                if op._control_flow_context is not None:
                    raise ValueError("`tf.add_check_numerics_ops() is not compatible with TensorFlow control "
                                     "flow operations such as `tf.cond()` or `tf.while_loop()`.")
                with get_default_graph().control_dependencies(check):
                    check = [control_ops.check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return control_ops.group(*check)


# -- asserts (TF's check_ops) ------------------------------------------------------------------

def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Assert |x - y| < atol + rtol * |y| element-wise (default tolerances 10 eps of x's dtype)."""
    message = _message_prefix(message)
    g, scope = _scope(name, "assert_near", [x, y, rtol, atol])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        dtype = x.dtype.real_dtype if x.dtype.is_complex else x.dtype.base_dtype
        eps = np.finfo(dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=dtype)
        if data is None:
            data = [message, f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        tol = atol + rtol * math_ops.abs(y)
        diff = math_ops.abs(x - y)
        return assert_op(math_ops.reduce_all(math_ops.less(diff, tol)), data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Assert rank(x) is one of `ranks`: a ValueError now when the ranks are known, else an Assert."""
    g, scope = _scope(name, "assert_rank_in", [x] + list(ranks))
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        ranks = tuple(convert_to_tensor(r, name="rank") for r in ranks)
        message = _message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have rank in"] + list(ranks) + ["Received shape: ",
                                                                                  array_ops.shape(x)]
        for r in ranks:
            assert_type(r, dtypes.int32)
        static = [constant_value(r) for r in ranks]
        if all(s is not None for s in static):
            if any(np.ndim(s) != 0 for s in static):
                raise ValueError("Rank must be a scalar.")
            if x.shape.ndims is not None:
                if x.shape.ndims not in [int(s) for s in static]:
                    raise ValueError(f"{message}Tensor {x.name} must have rank in "
                                     f"{tuple(int(s) for s in static)}.  Received rank {x.shape.ndims}, "
                                     f"shape {x.shape}")
                return control_ops.no_op(name="static_checks_determined_all_ok")
        rank = array_ops.rank(x)
        condition = convert_to_tensor(False)
        for i, r in enumerate(ranks):
            condition = math_ops.equal(r, rank) if i == 0 else math_ops.logical_or(condition,
                                                                                   math_ops.equal(r, rank))
        for r, s in zip(ranks, static):
            if s is None:  # a rank given as a vector is a mistake (assert_rank(x, [n]))
                check = assert_rank(r, 0, data=["Rank must be a scalar. Received rank: ", r])
                condition = control_ops.with_dependencies([check], condition)
        return assert_op(condition, data, summarize=summarize)


def assert_integer(x, message=None, name=None):
    """TypeError unless x has an integer dtype; otherwise a no-op."""
    g, scope = _scope(name, "assert_integer", [x])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of '
                            f'dtype {x.dtype!r}')
        return control_ops.no_op("statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """`tensor` as a Tensor; ValueError unless its static rank is 0."""
    g, scope = _scope(name, "assert_scalar", [tensor])
    with g.as_default(), scope as scope_name:
        tensor = convert_to_tensor(tensor, name=scope_name)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: "
                             f"{tensor.shape}.")
        return tensor


def assert_proper_iterable(values):
    """TypeError for a Tensor, ndarray or string (iterables by accident) and for non-iterables."""
    from .sparse import SparseTensor
    if isinstance(values, (Tensor, SparseTensor, np.ndarray, bytes, str)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating base dtype of `tensors` (and `dtype`), float32 when neither gives one."""
    first = None
    for t in tensors or ():
        if t is None:
            continue
        t_type = t.dtype.base_dtype
        if dtype is None:
            dtype, first = t_type, t
        elif t_type != dtype:
            given = f" as {first.name}" if first is not None else ""
            raise ValueError(f"{getattr(t, 'name', t)}, type={t_type!r}, must be of the same type ({dtype!r})"
                             f"{given}.")
    if not dtype:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype!r}.")
    return dtype


# -- gradients and graph scopes ------------------------------------------------------------------

class AggregationMethod:
    """How tf.gradients sums several gradients of one tensor (graphrt always sums with AddN)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """What tf.gradients returns for an x the ys do not depend on: None or zeros."""
    NONE = "none"
    ZERO = "zero"


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name=name)


def initialize_local_variables():
    return local_variables_initializer()


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """TF's pre-1.0 `name_scope(name, default_name, values)` with its arguments reordered."""
    g, scope = _scope(name, default_name, values or [])
    with g.as_default(), scope as s:
        yield s


def container(container_name):
    """The default graph's `container` scope, as TF's `tf.container`."""
    return get_default_graph().container(container_name)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """fn over the first dimension of `elems`, as TF's fallback runs it: a while loop (map_fn).
    fn is traced once on the first element to learn the structure and dtypes of its results."""
    first = nest.map_structure(lambda t: convert_to_tensor(t)[0], elems)
    sample = fn(first)
    dtype = nest.map_structure(lambda t: convert_to_tensor(t).dtype.base_dtype, sample)
    return map_fn(fn, elems, dtype=dtype)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) making input_shape + paddings a multiple of block_shape (TF's formula)."""
    g, scope = _scope(name, "required_space_to_batch_paddings", [input_shape, block_shape])
    with g.as_default(), scope:
        input_shape = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if not block_shape.shape.is_fully_defined() or block_shape.shape.ndims != 1:
            raise ValueError(f"block_shape must be a vector of known length, got shape {block_shape.shape}")
        n = block_shape.shape.dims[0].value
        if n == 0:
            return array_ops.zeros([0, 2], dtypes.int32), array_ops.zeros([0, 2], dtypes.int32)
        input_shape.shape.assert_is_compatible_with([n])
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
            base_paddings.shape.assert_is_compatible_with([n, 2])
        else:
            base_paddings = array_ops.zeros([n, 2], dtypes.int32)
        known = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(k is not None for k in known):  # numpy then, and the results are constants
            block_shape, input_shape, base_paddings = known
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        return (_stack_rows([(pad_start[i], pad_end[i]) for i in range(n)], "paddings"),
                _stack_rows([(0, pad_end_extra[i]) for i in range(n)], "crops"))


def _stack_rows(rows, name):
    """A [len(rows), 2] tensor of scalars that are numbers or scalar tensors."""
    if not any(isinstance(v, Tensor) for row in rows for v in row):
        return array_ops.stack([list(row) for row in rows], name=name)
    return array_ops.stack([array_ops.stack(list(row)) for row in rows], name=name)

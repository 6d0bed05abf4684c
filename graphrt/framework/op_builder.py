"""Turning Python calls into ops: tensor conversion and `apply_op`.

`apply_op("MatMul", [a, b], name=None, transpose_a=True)` does what TF's
generated op wrappers do: enter a name scope for the op (which makes its
name unique), convert Python and numpy values to `Const` ops named after
the argument they feed (`add/y`), unify the inputs of each type attr
(mismatched dtypes are a TypeError), then create the op.
"""
import contextlib

import numpy as np

from . import dtypes as dtypes_lib
from .graph import Operation, Tensor, get_default_graph, graph_of
from .registry import get_op_def
from .tensor_shape import Dimension, TensorShape

_conversion_functions = []  # (type, fn(value, dtype, name, as_ref) -> Tensor)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda e: e[0])


def is_tensor_like(value):
    return isinstance(value, Tensor) or any(isinstance(value, t) for _, t, _ in _conversion_functions)


def _python_value_dtype_check(value, dtype, arg_desc):
    """TF refuses lossy conversions of Python numbers (2.5 -> int32)."""
    flat = np.asarray(value, dtype=object).ravel() if not isinstance(value, np.ndarray) else None
    if flat is None or not dtype.is_numeric and not dtype.is_bool:
        return
    for item in flat:
        if isinstance(item, float) and (dtype.is_integer or dtype.is_bool) and not float(item).is_integer():
            raise TypeError(f"Expected {dtype.name} {arg_desc}, got {item!r} of type 'float' instead.")
        if isinstance(item, (str, bytes)):
            raise TypeError(f"Expected {dtype.name} {arg_desc}, got {item!r} of type "
                            f"'{type(item).__name__}' instead.")
        if isinstance(item, (int, float)) and not isinstance(item, bool) and dtype.is_bool:
            raise TypeError(f"Expected bool {arg_desc}, got {item!r} of type '{type(item).__name__}' instead.")


def make_ndarray(value, dtype=None, arg_desc=""):
    """A numpy array for a constant, with TF's default dtypes (float -> float32, int -> int32)."""
    if value is None:
        raise ValueError("None values not supported.")
    if dtype is not None:
        dtype = dtypes_lib.as_dtype(dtype).base_dtype
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.array(value)  # a copy: the constant must not share (or freeze) the caller's array
        if arr.dtype.kind in "USO":
            arr = _bytes_array(arr)
        if dtype is None or dtype == dtypes_lib.string:
            return arr
        # As TF's make_tensor_proto: a numpy value is cast to the requested dtype (floats truncate).
        return arr.astype(dtype.np) if arr.dtype != dtype.np else arr
    if dtype is None:
        dtype = _infer_python_dtype(value)
        if dtype is None:
            raise TypeError(f"Failed to convert object of type {type(value).__name__} to Tensor. "
                            f"Contents: {value!r}. Consider casting elements to a supported type.")
        # TF keeps a Python int that int32 cannot hold as int64 (its downcast must be lossless)
        int32 = dtypes_lib.int32
        if dtype == int32 and any(isinstance(v, int) and not int32.min <= v <= int32.max
                                  for v in np.array(value, dtype=object).ravel()):
            dtype = dtypes_lib.int64
    _python_value_dtype_check(value, dtype, arg_desc)
    if dtype == dtypes_lib.string:
        return _bytes_array(np.array(value, dtype=object))
    try:
        arr = np.array(value, dtype=dtype.np)
    except OverflowError:
        raise ValueError(f"Value {value!r} out of range for {dtype.name}") from None
    except (TypeError, ValueError) as e:
        raise TypeError(f"Failed to convert object of type {type(value).__name__} to Tensor "
                        f"{arg_desc}. Contents: {value!r}. ({e})") from None
    if dtype.is_integer and not dtype.is_unsigned:
        big = np.array(value, dtype=object)
        if any(isinstance(v, int) and not (dtype.min <= v <= dtype.max) for v in big.ravel()):
            raise ValueError(f"Value {value!r} out of range for {dtype.name}")
    return arr


def _bytes_array(arr):
    """Strings are stored as object arrays of bytes, as TF returns them."""
    out = np.empty(arr.shape, dtype=object)
    for index, item in np.ndenumerate(arr):
        out[index] = item.encode() if isinstance(item, str) else bytes(item)
    return out


def _infer_python_dtype(value):
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            return dtypes_lib.float32
        kinds = [_infer_python_dtype(v) for v in value]
        if any(k is None for k in kinds):
            return None
        if dtypes_lib.string in kinds:
            return dtypes_lib.string if all(k == dtypes_lib.string for k in kinds) else None
        # numpy's promotion of the elements, then TF's preference: float64 -> float32, int64 -> int32
        result = dtypes_lib.as_dtype(np.result_type(*[k.np for k in kinds]))
        return {dtypes_lib.float64: dtypes_lib.float32, dtypes_lib.int64: dtypes_lib.int32}.get(result, result)
    if isinstance(value, (Tensor,)):
        return value.dtype
    return dtypes_lib.dtype_of_value(value)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A `Const` op holding `value` (broadcast/reshaped to `shape` if given)."""
    arr = make_ndarray(value, dtype)
    if shape is not None:
        shape = [int(d) for d in (shape.as_list() if isinstance(shape, TensorShape) else shape)]
        size = int(np.prod(shape, dtype=np.int64))
        if arr.shape != tuple(shape):
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
            if size == 0:
                arr = np.empty(shape, dtype=arr.dtype)
            elif arr.size > size:
                raise ValueError(f"Too many elements provided. Takes at most {size}, but got {arr.size}.")
            elif arr.size == 0:
                arr = np.zeros(shape, dtype=arr.dtype) if arr.dtype.kind != "O" else np.full(shape, b"", dtype=object)
            else:
                # As TF's Const kernel reads a short TensorProto: the last value fills the rest.
                flat = arr.ravel()
                arr = np.concatenate([flat, np.repeat(flat[-1:], size - flat.size)]).reshape(shape)
    dt = dtypes_lib.as_dtype(arr.dtype) if arr.dtype.kind != "O" else dtypes_lib.string
    if dtype is not None:
        dt = dtypes_lib.as_dtype(dtype).base_dtype
    arr.flags.writeable = False  # kernels share a constant's buffer across steps
    g = get_default_graph()
    with g.name_scope(name) as scope:
        op = g.create_op("Const", [], {"value": arr, "dtype": dt}, name=scope)
    return op.outputs[0]


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """A Tensor for `value`: Tensors pass through (dtype checked), registered types
    (Variables) convert themselves, Python/numpy values become a Const."""
    if dtype is not None:
        dtype = dtypes_lib.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.base_dtype == value.dtype.base_dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.base_dtype.name} for Tensor "
                             f"with dtype {value.dtype.base_dtype.name}: {value!r}")
        return value
    if isinstance(value, (TensorShape, Dimension)):
        return _shape_to_tensor(value, dtype, name)
    if isinstance(value, (list, tuple)) and not as_ref:
        packed = _autopack(value, dtype, name)
        if packed is not None:
            return packed
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return result
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor "
                        f"(target dtype={dtype}, name={name!r}, as_ref={as_ref})")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _shape_to_tensor(value, dtype, name):
    """TF's conversion of a fully known TensorShape (or Dimension) to an int32/int64 constant."""
    if isinstance(value, Dimension):
        if value.value is None:
            raise ValueError(f"Cannot convert unknown Dimension {value} to a Tensor.")
        dims = value.value
    else:
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        dims = value.as_list()
    large = any(d >= 2 ** 31 for d in np.ravel(dims))
    if dtype is not None:
        if dtype.base_dtype not in (dtypes_lib.int32, dtypes_lib.int64):
            raise TypeError(f"Cannot convert {value} to dtype {dtype.name}. "
                            "Allowed dtypes are tf.int32 and tf.int64.")
        if dtype.base_dtype == dtypes_lib.int32 and large:
            raise ValueError(f"Cannot convert {value} to dtype int32; a dimension is too large. "
                             "Consider using tf.int64.")
    else:
        dtype = dtypes_lib.int64 if large else dtypes_lib.int32
    return constant(dims, dtype=dtype, name=name or "shape_as_tensor")


def _nested_tensor_dtype(values):
    for v in values:
        if is_tensor_like(v):
            return dtypes_lib.as_dtype(v.dtype).base_dtype
        if isinstance(v, (list, tuple)):
            found = _nested_tensor_dtype(v)
            if found is not None:
                return found
    return None


def _autopack(values, dtype, name):
    """TF's autopacking: a (nested) list holding Tensors becomes a `Pack` of its elements; None if it holds none."""
    inferred = _nested_tensor_dtype(values)
    if inferred is None:
        return None
    g = graph_of(_graph_elements(values))
    with g.as_default():
        if dtype is None:
            dtype = inferred
        elif dtype.base_dtype != inferred:
            values = _cast_nested(values, dtype.base_dtype)
        return _pack_nested(values, dtype.base_dtype, name or "packed")


def _cast_nested(values, dtype):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            v = _cast_nested(v, dtype)
        elif is_tensor_like(v):
            v = convert_to_tensor(v)
            if v.dtype.base_dtype != dtype:
                v = apply_op("Cast", [v], name="Cast", DstT=dtype).outputs[0]
        out.append(v)
    return out


def _pack_nested(values, dtype, name):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        elems, must_pack = [], False
        for i, v in enumerate(values):
            if is_tensor_like(v):
                v = convert_to_tensor(v)
                if v.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype {v.dtype.name} to "
                                    f"{dtype.name} (Tensor is: {v!r})")
                must_pack = True
            elif isinstance(v, (list, tuple)):
                v = _pack_nested(v, dtype, str(i))
                if isinstance(v, Tensor):
                    must_pack = True
            elems.append(v)
        if not must_pack:
            return elems
        tensors = [v if isinstance(v, Tensor) else constant(v, dtype=dtype, name=str(i)) for i, v in enumerate(elems)]
        return apply_op("Pack", [tensors], name=scope).outputs[0]


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype=dtype, name=f"{name}_{i}" if name else None) for i, v in enumerate(values)]


def _graph_elements(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _graph_elements(v)
        elif is_tensor_like(v) or isinstance(v, Operation):
            yield v


def apply_op(op_type, inputs, name=None, **attrs):
    """Creates one op of `op_type` (see module doc); returns the Operation."""
    op_def = get_op_def(op_type)
    if len(inputs) != len(op_def.inputs):
        raise TypeError(f"{op_type} takes {len(op_def.inputs)} inputs, got {len(inputs)}")
    g = graph_of(_graph_elements(inputs))
    with g.as_default(), g.name_scope(name or op_type) as scope:
        _infer_type_attrs_from_tensors(op_def, inputs, attrs)
        converted = []
        for arg, value in zip(op_def.inputs, inputs):
            if arg.number_attr:
                if not isinstance(value, (list, tuple)):
                    raise TypeError(f"Expected list for '{arg.name}' argument to '{op_type}' Op, not {value!r}.")
                values = list(value)
                attrs.setdefault(arg.number_attr, len(values))
                tensors = [_convert_arg(op_def, arg, v, attrs, f"{arg.name}_{i}" if len(values) > 1 else arg.name)
                           for i, v in enumerate(values)]
                converted.extend(tensors)
            else:
                converted.append(_convert_arg(op_def, arg, value, attrs, arg.name))
        # As TF's op_def_library: an op that takes a ref (a variable's buffer) lives with that variable,
        # whatever device function is in force (e.g. IsVariableInitialized under replica_device_setter).
        refs = [t.op for arg, t in zip(_flat_args(op_def, attrs), converted) if arg.is_ref]
        if not refs:
            return g.create_op(op_type, converted, attrs, name=scope)
        with contextlib.ExitStack() as colocations:
            for ref_op in refs:
                colocations.enter_context(g.colocate_with(ref_op))
            return g.create_op(op_type, converted, attrs, name=scope)


def _flat_args(op_def, attrs):
    """The op's input args, a list arg repeated once per tensor it holds."""
    for arg in op_def.inputs:
        yield from [arg] * (attrs[arg.number_attr] if arg.number_attr else 1)


def _infer_type_attrs_from_tensors(op_def, inputs, attrs):
    """First pass: type attrs fixed by Tensor inputs, so Python values convert to them."""
    for arg, value in zip(op_def.inputs, inputs):
        if not arg.type_attr or arg.type_attr in attrs:
            continue
        values = value if arg.number_attr and isinstance(value, (list, tuple)) else [value]
        for v in values:
            dt = getattr(v, "dtype", None) if is_tensor_like(v) else None
            if isinstance(dt, dtypes_lib.DType):
                attrs[arg.type_attr] = dt.base_dtype
                break


def _convert_arg(op_def, arg, value, attrs, const_name):
    want = arg.fixed_type if arg.fixed_type is not None else attrs.get(arg.type_attr)
    if arg.is_ref:
        tensor = convert_to_tensor(value, as_ref=True)
        if not tensor.dtype.is_ref_dtype:
            raise TypeError(f"'{op_def.name}' Op requires that input '{arg.name}' be a mutable tensor "
                            f"(e.g. a tf.Variable), got {tensor!r}")
    elif isinstance(value, Tensor) or is_tensor_like(value):
        tensor = convert_to_tensor(value)
    elif want is not None:
        tensor = convert_to_tensor(value, dtype=want, name=const_name)
    else:
        # as TF: a type attr's default is the preferred dtype of a Python value ([] -> int32 axes)
        default = op_def.attrs.get(arg.type_attr) if arg.type_attr else None
        tensor = convert_to_tensor(value, name=const_name,
                                   preferred_dtype=default if isinstance(default, dtypes_lib.DType) else None)
    base = tensor.dtype.base_dtype
    if want is not None and base != want:
        if arg.fixed_type is not None:
            raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {base.name} that does not "
                            f"match expected type of {want.name}.")
        raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {base.name} that does not match "
                        f"type {want.name} of argument '{_first_arg_with(op_def, arg.type_attr)}'.")
    if arg.type_attr and arg.type_attr not in attrs:
        attrs[arg.type_attr] = base
    return tensor


def _first_arg_with(op_def, type_attr):
    for a in op_def.inputs:
        if a.type_attr == type_attr:
            return a.name
    return type_attr

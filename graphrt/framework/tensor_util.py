"""TensorProto <-> numpy, as TensorFlow's `tf.make_tensor_proto` / `tf.make_ndarray`.

The message classes are TensorFlow's own (`tensorboard.compat.proto`, the
same .proto files with TF's field numbers), so the bytes match TF's. The
rules for which field holds the values follow TF's `make_tensor_proto`:
numeric tensors of more than one element go in `tensor_content` (raw
little-endian bytes), single values, bools, complex numbers and strings in
the typed repeated fields. `MakeNdarray` reads every layout TF writes,
including a short `*_val` list that TF pads with its last element.
"""
import numpy as np
from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2, types_pb2

from . import dtypes as dtypes_lib
from .tensor_shape import TensorShape

TensorProto = tensor_pb2.TensorProto
TensorShapeProto = tensor_shape_pb2.TensorShapeProto

_ENUM_OF_NAME = {
    "float32": types_pb2.DT_FLOAT, "float64": types_pb2.DT_DOUBLE, "int32": types_pb2.DT_INT32,
    "uint8": types_pb2.DT_UINT8, "int16": types_pb2.DT_INT16, "int8": types_pb2.DT_INT8,
    "string": types_pb2.DT_STRING, "complex64": types_pb2.DT_COMPLEX64, "int64": types_pb2.DT_INT64,
    "bool": types_pb2.DT_BOOL, "uint16": types_pb2.DT_UINT16, "complex128": types_pb2.DT_COMPLEX128,
    "float16": types_pb2.DT_HALF, "resource": types_pb2.DT_RESOURCE, "uint32": types_pb2.DT_UINT32,
    "uint64": types_pb2.DT_UINT64, "variant": types_pb2.DT_VARIANT,
}
_NAME_OF_ENUM = {v: k for k, v in _ENUM_OF_NAME.items()}
_REF_OFFSET = 100  # TF's DT_FLOAT_REF is DT_FLOAT + 100
# TF's _TENSOR_CONTENT_TYPES: the dtypes make_tensor_proto packs as raw bytes.
_CONTENT_TYPES = {"float16", "float32", "float64", "int32", "uint8", "int16", "int8", "int64", "uint16",
                  "uint32", "uint64"}


def dtype_to_enum(dtype):
    """A DType -> TF's DataType enum value (refs are +100, as in types.proto)."""
    dtype = dtypes_lib.as_dtype(dtype)
    try:
        base = _ENUM_OF_NAME[dtype.base_dtype.name]
    except KeyError:
        raise TypeError(f"dtype {dtype.name} has no TensorFlow DataType") from None
    return base + (_REF_OFFSET if dtype.is_ref_dtype else 0)


def enum_to_dtype(enum):
    """TF's DataType enum value -> DType; an enum graphrt lacks is a TypeError naming it."""
    ref = enum > _REF_OFFSET
    name = _NAME_OF_ENUM.get(enum - _REF_OFFSET if ref else enum)
    if name is None:
        label = types_pb2.DataType.Name(enum) if enum in types_pb2.DataType.values() else str(enum)
        raise TypeError(f"TensorFlow DataType {label} is not supported by graphrt")
    dtype = dtypes_lib.as_dtype(name)
    return dtype._as_ref() if ref else dtype


def shape_to_proto(shape):
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.ndims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else d) for d in shape.as_list()])


def shape_from_proto(proto):
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """TF's `tf.make_tensor_proto`: a TensorProto holding `values`."""
    dtype = dtypes_lib.as_dtype(dtype) if dtype is not None else None
    if dtype is not None and dtype.base_dtype == dtypes_lib.string:
        arr = _string_array(values)
    elif dtype is not None:
        arr = np.asarray(values, dtype=dtype.np)
    else:
        arr = np.asarray(values)
        if arr.dtype.kind in "USO":
            arr = _string_array(values)
        elif arr.dtype == np.float64 and not isinstance(values, np.ndarray):
            arr = arr.astype(np.float32)  # Python floats are float32 constants in TF
        elif arr.dtype == np.int64 and not isinstance(values, (np.ndarray, np.integer)):
            arr = arr.astype(np.int32)
    dtype = dtype or dtypes_lib.as_dtype(arr.dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
        if arr.size == 1 and int(np.prod(shape)) != 1:
            proto = TensorProto(dtype=dtype_to_enum(dtype), tensor_shape=shape_to_proto(shape))
            _append_values(proto, dtype, arr.ravel())  # TF keeps one value and lets readers broadcast it
            return proto
        if arr.size != int(np.prod(shape)):
            raise ValueError(f"Too many elements provided. Needed at most {int(np.prod(shape))}, "
                             f"but received {arr.size}")
        arr = arr.reshape(shape)
    proto = TensorProto(dtype=dtype_to_enum(dtype), tensor_shape=shape_to_proto(arr.shape))
    if dtype.base_dtype.name in _CONTENT_TYPES and arr.size > 1:
        proto.tensor_content = np.ascontiguousarray(arr, dtype=dtype.np.newbyteorder("<")).tobytes()
    else:
        _append_values(proto, dtype, arr.ravel())
    return proto


def _string_array(values):
    arr = np.asarray(values, dtype=object)
    flat = [v if isinstance(v, bytes) else str(v).encode() for v in arr.ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(arr.shape)


def _append_values(proto, dtype, flat):
    name = dtype.base_dtype.name
    if name == "string":
        proto.string_val.extend(flat)
    elif name == "float16":
        proto.half_val.extend(np.asarray(flat, np.float16).view(np.uint16).tolist())
    elif name == "float32":
        proto.float_val.extend(flat.tolist())
    elif name == "float64":
        proto.double_val.extend(flat.tolist())
    elif name in ("int32", "int16", "int8", "uint8", "uint16"):
        proto.int_val.extend(flat.tolist())
    elif name == "int64":
        proto.int64_val.extend(flat.tolist())
    elif name == "uint32":
        proto.uint32_val.extend(flat.tolist())
    elif name == "uint64":
        proto.uint64_val.extend(flat.tolist())
    elif name == "bool":
        proto.bool_val.extend(flat.tolist())
    elif name in ("complex64", "complex128"):
        pairs = np.stack([flat.real, flat.imag], axis=-1).ravel().tolist()
        (proto.scomplex_val if name == "complex64" else proto.dcomplex_val).extend(pairs)
    else:
        raise TypeError(f"Unsupported dtype for a TensorProto: {dtype.name}")


def MakeNdarray(tensor):  # noqa: N802 - the TF name
    """TF's `tf.make_ndarray`: the numpy value of a TensorProto."""
    dtype = enum_to_dtype(tensor.dtype).base_dtype
    shape = [d.size for d in tensor.tensor_shape.dim]
    if any(d < 0 for d in shape):
        raise ValueError(f"A TensorProto must have a fully defined shape, got {shape}")
    n = int(np.prod(shape, dtype=np.int64))
    if tensor.tensor_content:
        expected = n * dtype.np.itemsize
        if len(tensor.tensor_content) != expected:
            raise ValueError(f"TensorProto tensor_content has {len(tensor.tensor_content)} bytes; "
                             f"shape {shape} of {dtype.name} needs {expected}")
        return np.frombuffer(tensor.tensor_content, dtype=dtype.np.newbyteorder("<")).astype(dtype.np) \
            .reshape(shape)
    name = dtype.name
    if name == "string":
        out = np.empty(len(tensor.string_val), dtype=object)
        out[:] = list(tensor.string_val)
        vals = out
    elif name == "float16":
        vals = np.asarray(tensor.half_val, np.uint16).view(np.float16)
    elif name in ("complex64", "complex128"):
        raw = np.asarray(tensor.scomplex_val if name == "complex64" else tensor.dcomplex_val, dtype.np)
        vals = (raw[0::2] + 1j * raw[1::2]).astype(dtype.np)
    else:
        field = {"float32": "float_val", "float64": "double_val", "int64": "int64_val", "bool": "bool_val",
                 "uint32": "uint32_val", "uint64": "uint64_val"}.get(name, "int_val")
        vals = np.asarray(getattr(tensor, field), dtype.np)
    if vals.size == n:
        return vals.reshape(shape)
    if vals.size > n:
        raise ValueError(f"TensorProto has {vals.size} values for shape {shape}")
    if vals.size == 0:
        return np.zeros(shape, dtype.np) if name != "string" else np.full(shape, b"", dtype=object)
    # TF writes a trailing run of equal values once; readers repeat the last one.
    out = np.empty(n, dtype.np)
    out[:vals.size] = vals
    out[vals.size:] = vals[-1]
    return out.reshape(shape)


make_ndarray = MakeNdarray

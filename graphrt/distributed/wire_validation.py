"""Checks on untrusted wire data before numpy (or anything else) sees it.

Every byte a peer sends is hostile until checked. numpy raises plain
ValueErrors for shapes it cannot represent (`np.empty([0, 2**62, 2**62])`:
"array is too big"), so a tensor spec is validated here first: the dtype
comes from an allow-list, every dimension is a non-negative int, and the
spec's *nominal* size (the product of its dimensions with zeros counted as
one, times the item size) must fit the message size limit, which also keeps
it far below what numpy can index. A non-empty tensor must then fill its
frame exactly; a string tensor's length table must fit its frame.

`guard_decode(fn)` is the last line: whatever a decoder raises (a bug, a
RecursionError, a MemoryError) becomes a WireError, which the worker answers
as InvalidArgumentError and the client delivers to the waiting call. One bad
message must never end a serving or I/O thread.
"""
import functools

import numpy as np

from .. import errors

MAX_NDIMS = 32
_U63 = 1 << 63


class WireError(errors.InvalidArgumentError):
    """A malformed or disallowed message."""


DTYPES = {name: np.dtype(name).newbyteorder("<") for name in (
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "complex64", "complex128")}
DTYPES["bool"] = np.dtype(np.bool_)
STRING = "string"
STRING_LENGTH_BYTES = 8  # a string tensor's frame starts with one uint64 length per element
ALLOWED_DTYPES = frozenset(DTYPES) | {STRING}
_SPEC_FIELDS = frozenset(("dtype", "shape", "scalar"))


def short(text, limit=80):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


def check_tensor_spec(spec, frame_bytes, limit, index=0):
    """(dtype name, shape list, element count, scalar) of a numeric or string spec, or WireError.

    `frame_bytes` is the length of the spec's frame; `limit` the largest
    message this process accepts (bounds zero-size tensors, whose frames say
    nothing about their shape).
    """
    for name in spec:
        if name not in _SPEC_FIELDS:
            raise WireError(f"tensor {index}: unknown field '{short(name)}'")
    name = spec.get("dtype")
    if type(name) is not str or name not in ALLOWED_DTYPES:
        raise WireError(f"tensor {index}: dtype {short(repr(name))} is not allowed "
                        f"(allowed: {sorted(ALLOWED_DTYPES)})")
    shape = spec.get("shape")
    if type(shape) is not list or len(shape) > MAX_NDIMS:
        raise WireError(f"tensor {index}: shape must be a list of at most {MAX_NDIMS} dimensions")
    count = 1
    nominal = 1
    for d in shape:
        if type(d) is not int or not 0 <= d < _U63:
            raise WireError(f"tensor {index}: shape {short(repr(shape))} has a bad dimension")
        count *= d
        if d:
            nominal *= d
    itemsize = STRING_LENGTH_BYTES if name == STRING else DTYPES[name].itemsize
    if name == STRING:
        if count * STRING_LENGTH_BYTES > frame_bytes:
            raise WireError(f"tensor {index}: string tensor of {count} elements needs {count * 8} bytes of "
                            f"lengths, the frame has {frame_bytes}")
    elif count * itemsize != frame_bytes:
        raise WireError(f"tensor {index}: {name}{shape} needs {count * itemsize} bytes, the frame has "
                        f"{frame_bytes}")
    if nominal * itemsize > limit:  # only a zero-size tensor can get here with frame and shape agreeing
        raise WireError(f"tensor {index}: shape {short(repr(shape))} of {name} is larger than the maximum "
                        f"message size of {limit} bytes")
    scalar = spec.get("scalar", False)
    if type(scalar) is not bool or (scalar and shape):
        raise WireError(f"tensor {index}: 'scalar' must be a boolean and only set for shape []")
    return name, shape, count, scalar


def guard_decode(fn):
    """Wraps a decoder: any failure that is not already a WireError becomes one."""
    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except WireError:
            raise
        except Exception as e:  # noqa: BLE001 - untrusted input: every failure is the sender's
            raise as_wire_error(e) from None
    return guarded


def as_wire_error(e):
    """The WireError a decoder raises for an unexpected failure `e` while reading untrusted bytes."""
    if isinstance(e, RecursionError):
        return WireError("Malformed message: it nests too deeply")
    if isinstance(e, MemoryError):
        return WireError("Malformed message: decoding it would need more memory than is available")
    return WireError(f"Malformed message: {type(e).__name__}: {short(e, 200)}")

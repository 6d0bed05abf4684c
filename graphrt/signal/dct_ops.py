"""tf.signal.dct / idct (TF's dct_ops.py): DCT types I-IV along the last axis
from an RFFT of the (mirrored or zero-padded) signal; norm=None or "ortho"."""
import math

from ..framework.graph import graph_of
from ..framework.op_builder import convert_to_tensor, is_tensor_like
from ..ops import array_ops, math_ops
from . import fft_ops


def _validate(input, dct_type, n, axis, norm):  # noqa: A002 - the TF name
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = input.shape[-1] if is_tensor_like(input) and input.shape.ndims else None
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _last_dim(x):
    static = x.shape[-1] if x.shape.ndims else None
    return static or array_ops.shape(x)[-1]


def _ints(value):
    """A nested list of ints and scalar tensors, packed into one tensor when it holds a tensor."""
    if isinstance(value, list):
        parts = [_ints(v) for v in value]
        return array_ops.stack(parts) if any(is_tensor_like(p) for p in parts) else parts
    return value


def _pad_last(x, count, value=0):
    rank = x.shape.ndims
    paddings = [[0, 0]] * (rank - 1) + [[0, count]]
    return array_ops.pad(x, _ints(paddings), constant_values=value)


def _dct(input, type, n, norm, name):  # noqa: A002 - the TF names
    g = graph_of([input] if is_tensor_like(input) else [])
    with g.as_default(), g.name_scope(name or "dct"):
        x = convert_to_tensor(input)
        zero = convert_to_tensor(0.0, dtype=x.dtype.base_dtype)
        if n is not None:
            seq_len = _last_dim(x)
            x = x[..., 0:n] if n <= seq_len else _pad_last(x, n - seq_len)
        axis_dim = _last_dim(x)
        axis_dim_float = math_ops.cast(axis_dim, x.dtype.base_dtype)
        if type == 1:
            return math_ops.real(fft_ops.rfft(array_ops.concat([x, x[..., -2:0:-1]], axis=-1)))
        if type == 2:
            scale = 2.0 * math_ops.exp(math_ops.complex(
                zero, -math_ops.range(axis_dim_float) * math.pi * 0.5 / axis_dim_float))
            dct2 = math_ops.real(fft_ops.rfft(x, fft_length=_ints([2 * axis_dim]))[..., :axis_dim] * scale)
            if norm == "ortho":
                n1 = 0.5 * math_ops.rsqrt(axis_dim_float)
                n2 = n1 * math.sqrt(2.0)
                weights = array_ops.pad(array_ops.expand_dims(n1, 0), _ints([[0, axis_dim - 1]]), constant_values=n2)
                dct2 *= weights
            return dct2
        if type == 3:
            if norm == "ortho":
                n1 = math_ops.sqrt(axis_dim_float)
                n2 = n1 * math.sqrt(0.5)
                x *= array_ops.pad(array_ops.expand_dims(n1, 0), _ints([[0, axis_dim - 1]]), constant_values=n2)
            else:
                x *= axis_dim_float
            scale = 2.0 * math_ops.exp(math_ops.complex(
                zero, math_ops.range(axis_dim_float) * math.pi * 0.5 / axis_dim_float))
            return math_ops.real(fft_ops.irfft(scale * math_ops.complex(x, zero),
                                               fft_length=_ints([2 * axis_dim])))[..., :axis_dim]
        dct4 = _dct(x, 2, 2 * axis_dim, None, None)[..., 1::2]
        if norm == "ortho":
            dct4 *= math.sqrt(0.5) * math_ops.rsqrt(axis_dim_float)
        return dct4


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - the TF names
    """The DCT of `type` (1-4) of the last axis, `n` points (cropped or zero-padded)."""
    _validate(input, type, n, axis, norm)
    return _dct(input, type, n, norm, name)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - the TF names
    """The inverse DCT: idct(dct(x)) == x with norm="ortho" (else scaled by 2N, 2(N-1) for type 1)."""
    _validate(input, type, n, axis, norm)
    return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm, name)



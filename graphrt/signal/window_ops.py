"""Window functions of tf.signal (TF's window_ops.py): hann, hamming (raised
cosines, periodic by default), vorbis, kaiser and kaiser_bessel_derived."""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_flow_ops, math_ops
from ..special_math import bessel_i0e


def _check_params(window_length, dtype):
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    window_length = convert_to_tensor(window_length, dtype=dtypes.int32)
    window_length.shape.with_rank(0)
    return window_length


def _raised_cosine_window(name, default_name, window_length, periodic, dtype, a, b):
    """a - b cos(2 pi n / N), N = window_length (periodic, even lengths) or window_length - 1."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    with get_default_graph().name_scope(name or default_name):
        window_length = convert_to_tensor(window_length, dtype=dtypes.int32, name="window_length")
        window_length.shape.with_rank(0)
        length_const = constant_value(window_length)
        if length_const is not None and int(length_const) == 1:
            return array_ops.ones([1], dtype=dtype)
        periodic = math_ops.cast(convert_to_tensor(periodic, dtype=dtypes.bool, name="periodic"), dtypes.int32)
        periodic.shape.with_rank(0)
        even = 1 - math_ops.mod(window_length, 2)
        n = math_ops.cast(window_length + periodic * even - 1, dtype=dtype)
        count = math_ops.cast(math_ops.range(window_length), dtype)
        cos_arg = convert_to_tensor(np.array(2 * np.pi, dtype.np)) * count / n
        if length_const is not None:
            return math_ops.cast(a - b * math_ops.cos(cos_arg), dtype=dtype)
        return control_flow_ops.cond(math_ops.equal(window_length, 1),
                                     lambda: array_ops.ones(array_ops.expand_dims(window_length, 0), dtype=dtype),
                                     lambda: math_ops.cast(a - b * math_ops.cos(cos_arg), dtype=dtype))


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N)."""
    return _raised_cosine_window(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N)."""
    return _raised_cosine_window(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """sin(pi / 2 sin^2(pi (n + 0.5) / N))."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "vorbis_window"):
        window_length = _check_params(window_length, dtype)
        arg = math_ops.cast(math_ops.range(window_length), dtype=dtype)
        inner = math_ops.sin(np.array(np.pi, dtype.np) / math_ops.cast(window_length, dtype=dtype) * (arg + 0.5))
        return math_ops.sin(np.array(np.pi / 2.0, dtype.np) * math_ops.pow(inner, np.array(2.0, dtype.np)))


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta), from exponentially scaled Bessel functions."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "kaiser_window"):
        window_length = _check_params(window_length, dtype)
        length_const = constant_value(window_length)
        if length_const is not None and int(length_const) == 1:
            return array_ops.ones([1], dtype=dtype)
        if length_const is not None:  # a constant, so that the window's length is static
            half = np.float32((int(length_const) - 1) / 2.0)
            halflen_float = convert_to_tensor(half)
            arg = convert_to_tensor(np.arange(-half, half + np.float32(0.1), dtype=np.float32))
        else:
            halflen_float = (math_ops.cast(window_length, dtype=dtypes.float32) - 1.0) / 2.0
            arg = math_ops.range(-halflen_float, halflen_float + 0.1, dtype=dtypes.float32)
        arg = math_ops.cast(arg, dtype=dtype)
        beta = math_ops.cast(beta, dtype=dtype)
        one = math_ops.cast(1.0, dtype=dtype)
        halflen_float = math_ops.cast(halflen_float, dtype=dtype)
        num = beta * math_ops.sqrt(math_ops.maximum(one - math_ops.square(arg / halflen_float),
                                                    math_ops.cast(0.0, dtype)))
        return math_ops.exp(num - beta) * (bessel_i0e(num) / bessel_i0e(beta))


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """sqrt of the normalized running sum of a kaiser window of window_length // 2 + 1, mirrored."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "kaiser_bessel_derived_window"):
        window_length = _check_params(window_length, dtype)
        length_const = constant_value(window_length)
        halflen = int(length_const) // 2 if length_const is not None else window_length // 2
        kaiserw = kaiser_window(halflen + 1, beta, dtype=dtype)
        kaiserw_csum = math_ops.cumsum(kaiserw)
        halfw = math_ops.sqrt(kaiserw_csum[:-1] / kaiserw_csum[-1])
        return array_ops.concat((halfw, halfw[::-1]), axis=0)

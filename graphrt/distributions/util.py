"""Helpers the distributions share (TF's distributions/util.py and
special_math.py): logits <-> probs, log multinomial coefficients, seeds for a
second draw, the normal CDF in the tails, static broadcasting."""
import hashlib

import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor, is_tensor_like
from ..ops import array_ops, control_ops, extra_ops, math_ops, nn_ops
from ..ops.shape_fns import broadcast_shapes
from ..special_math import lgamma

# log_ndtr's segments: above UPPER log1p(-ndtr(-x)) ~ -ndtr(-x), below LOWER an asymptotic series
_LOG_NDTR_SEGMENTS = {dtypes.float32: (-10.0, 5.0), dtypes.float64: (-20.0, 8.0)}


def float_param(value, name, dtype=None):
    """A parameter as a tensor (identity-named as TF's, so it shows under the distribution's scope)."""
    t = value if is_tensor_like(value) else convert_to_tensor(value, dtype=dtype, name=name)
    return array_ops.identity(t, name=name)


def same_float_dtype(tensors):
    """TF's check_ops.assert_same_float_dtype: one floating dtype, else ValueError."""
    dtype = None
    for t in tensors:
        dt = t.dtype.base_dtype
        if not dt.is_floating:
            raise ValueError(f"Expected floating point type, got {dt}.")
        if dtype is not None and dt != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype {dt.name}: {t}")
        dtype = dt
    return dtype


def with_checks(validate, checks, tensor):
    """`tensor` after `checks()` when validating."""
    if not validate:
        return tensor
    return control_ops.with_dependencies(checks(), tensor)


def static_broadcast(*tensors):
    out = tensors[0].shape
    for t in tensors[1:]:
        out = broadcast_shapes(out, t.shape)
    return out


def dynamic_broadcast(*tensors):
    """The broadcast shape as a tensor: the shape of the sum of zeros like each."""
    total = array_ops.zeros_like(tensors[0])
    for t in tensors[1:]:
        total = total + array_ops.zeros_like(t)
    return array_ops.shape(total)


def get_logits_and_probs(logits=None, probs=None, multidimensional=False, validate_args=False,
                         name="get_logits_and_probs", dtype=None):
    with get_default_graph().name_scope(name):
        if (probs is None) == (logits is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            logits = convert_to_tensor(logits, name="logits", dtype=dtype)
            if not logits.dtype.is_floating:
                raise TypeError("logits must having floating type.")
            if multidimensional:
                return logits, nn_ops.softmax(logits, name="probs")
            return logits, math_ops.sigmoid(logits, name="probs")
        probs = convert_to_tensor(probs, name="probs", dtype=dtype)
        if not probs.dtype.is_floating:
            raise TypeError("probs must having floating type.")
        if validate_args:
            one = np.array(1.0, probs.dtype.np)
            checks = [extra_ops.assert_non_negative(probs)]
            if multidimensional:
                checks.append(extra_ops.assert_less_equal(
                    math_ops.abs(math_ops.reduce_sum(probs, -1) - one), np.array(10 * np.finfo(probs.dtype.np).eps,
                                                                                   probs.dtype.np),
                    message="probs does not sum to 1."))
            else:
                checks.append(extra_ops.assert_less_equal(probs, one, message="probs has components greater than 1."))
            probs = control_ops.with_dependencies(checks, probs)
        with get_default_graph().name_scope("logits"):
            if multidimensional:
                return math_ops.log(probs), probs
            return math_ops.log(probs) - math_ops.log1p(-1.0 * probs), probs


def log_combinations(n, counts, name="log_combinations"):
    """log(n! / prod(counts!)), the multinomial coefficient."""
    with get_default_graph().name_scope(name):
        n = convert_to_tensor(n, name="n")
        counts = convert_to_tensor(counts, name="counts")
        return lgamma(n + 1) - math_ops.reduce_sum(lgamma(counts + 1), axis=[-1])


def gen_new_seed(seed, salt):
    """A second op seed derived from `seed` (TF's: the first 8 hex digits of md5(seed + salt))."""
    if seed is None:
        return None
    return int(hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()[:8], 16) & 0x7FFFFFFF


def ndtr(x):
    """The standard normal CDF through erf near 0 and erfc in the tails (TF's _ndtr)."""
    half_sqrt_2 = np.array(0.5 * np.sqrt(2.0), x.dtype.np)
    w = x * half_sqrt_2
    z = math_ops.abs(w)
    y = math_ops.where_v2(math_ops.less(z, half_sqrt_2), 1.0 + math_ops.erf(w),
                          math_ops.where_v2(math_ops.greater(w, 0.0), 2.0 - math_ops.erfc(z), math_ops.erfc(z)))
    return 0.5 * y


def log_ndtr(x, series_order=3):
    """log of the standard normal CDF, accurate far into both tails (TF's log_ndtr)."""
    if x.dtype.base_dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError(f"x.dtype={x.dtype} is not supported.")
    lower, upper = _LOG_NDTR_SEGMENTS[x.dtype.base_dtype]
    return math_ops.where_v2(
        math_ops.greater(x, upper), -ndtr(-x),
        math_ops.where_v2(math_ops.greater(x, lower), math_ops.log(ndtr(math_ops.maximum(x, lower))),
                          _log_ndtr_lower(math_ops.minimum(x, lower), series_order)))


def _log_ndtr_lower(x, series_order):
    """log Phi(x) for x far below 0: the Gaussian tail times 1 - 1/x^2 + 3/x^4 - ..."""
    dtype = x.dtype.np
    x_2 = math_ops.square(x)
    log_scale = -0.5 * x_2 - math_ops.log(-x) - 0.5 * np.log(2.0 * np.pi)
    even_sum = array_ops.zeros_like(x)
    odd_sum = array_ops.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return log_scale + math_ops.log(1.0 + even_sum - odd_sum)


def log_cdf_laplace(x):
    """log of the standard Laplace CDF, without cancellation for large x."""
    lower_solution = -np.log(2.0) + x
    upper_solution = math_ops.log1p(-0.5 * math_ops.exp(-math_ops.abs(x)))
    return math_ops.where_v2(x < 0.0, lower_solution, upper_solution)

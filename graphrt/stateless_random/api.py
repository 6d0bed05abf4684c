"""The TF1 API of the gamma/Poisson and stateless random ops, under TF's
names, name scopes and argument orders (`tf.random_gamma`,
`tf.random.stateless_uniform`, ...)."""
import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..ops import array_ops, math_ops
from ..ops.random_ops import _float_dtype, _seed_attrs, _shape_tensor
from . import ops as _ops, grad as _grad, kernels as _kernels  # noqa: F401 - registers ops, kernels, gradients

_INT_OUT = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)


def _broadcast_alpha(alpha, beta):
    """alpha broadcast against beta (TF's BroadcastTo of broadcast_dynamic_shape), as a graph tensor."""
    a, b = alpha.shape, beta.shape
    if a.is_fully_defined() and b.is_fully_defined():
        out = np.broadcast_shapes(tuple(a.as_list()), tuple(b.as_list()))
        return alpha if out == tuple(a.as_list()) else array_ops.broadcast_to(alpha, list(out))
    return alpha + array_ops.zeros_like(beta)


def _gamma(op_type, inputs, alpha, beta, dtype, attrs):
    """max(tiny, Gamma(alpha) / beta) as TF's random_gamma/stateless_random_gamma."""
    alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
    beta = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
    alpha_b = _broadcast_alpha(alpha, beta)
    draw = apply_op(op_type, inputs + [alpha_b], **attrs).outputs[0]
    return math_ops.maximum(np.finfo(dtype.np).tiny, draw / beta)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """`shape` draws from Gamma(alpha, rate=beta) per element of broadcast(alpha, beta): shape + that shape."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise ValueError(f"Invalid dtype {dtype!r} for random_gamma: must be a floating point type")
    with get_default_graph().name_scope(name or "random_gamma"):
        shape_t = _shape_tensor(shape)
        return _gamma("RandomGamma", [shape_t], alpha, beta, dtype, _seed_attrs(seed))


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """`shape` draws from Poisson(lam) per element of lam (TF1's argument order: lam first)."""
    with get_default_graph().name_scope(name or "random_poisson"):
        shape_t = _shape_tensor(shape)
        lam = convert_to_tensor(lam, name="rate")
        return apply_op("RandomPoissonV2", [shape_t, lam], dtype=dtypes.as_dtype(dtype).base_dtype,
                        **_seed_attrs(seed)).outputs[0]


def random_poisson_v2(shape, lam, dtype=dtypes.float32, seed=None, name=None):
    return random_poisson(lam, shape, dtype=dtype, seed=seed, name=name)


# -- stateless ------------------------------------------------------------------------------

def _seed_tensor(seed):
    seed = convert_to_tensor(seed, name="seed")
    if seed.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'seed' has DataType {seed.dtype.base_dtype.name} not in list "
                        f"of allowed values: int32, int64")
    return seed


def _set_static_shape(result, shape_t):
    from ..framework.constant_value import constant_value_as_shape
    result.set_shape(result.shape.merge_with(constant_value_as_shape(shape_t)))
    return result


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                             alg="auto_select"):
    """U[minval, maxval), the same numbers for the same `seed` (a shape-[2] int tensor) in any run."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64) + _INT_OUT:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are float16, float32, "
                         f"float64, int32, int64, uint32, uint64")
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and `maxval` must be both "
                             f"None or not None. Got `minval`={minval} and `maxval`={maxval}.")
        if minval is not None and dtype in (dtypes.uint32, dtypes.uint64):
            raise ValueError(f"Argument `dtype` got invalid value {dtype!r} when argument `minval` is not None. "
                             f"Please don't use unsigned integers in this case.")
    elif maxval is None:
        maxval = 1
    with get_default_graph().name_scope(name or "stateless_random_uniform") as scope:
        shape_t = _shape_tensor(shape)
        seed = _seed_tensor(seed)
        if dtype.is_integer and minval is None:
            return apply_op("StatelessRandomUniformFullInt", [shape_t, seed], dtype=dtype, name=scope).outputs[0]
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply_op("StatelessRandomUniformInt", [shape_t, seed, minval, maxval], name=scope).outputs[0]
        rnd = apply_op("StatelessRandomUniform", [shape_t, seed], dtype=dtype).outputs[0]
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def _stateless_scaled(op_type, default_name, shape, seed, mean, stddev, dtype, name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        f"values: float16, float32, float64")
    with get_default_graph().name_scope(name or default_name) as scope:
        shape_t = _shape_tensor(shape)
        seed = _seed_tensor(seed)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op_type, [shape_t, seed], dtype=dtype).outputs[0]
        return _set_static_shape(math_ops.add(rnd * stddev, mean, name=scope), shape_t)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """N(mean, stddev**2), deterministic in `seed`."""
    return _stateless_scaled("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean, stddev,
                             dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                               alg="auto_select"):
    """N(mean, stddev**2) redrawn beyond two stddevs, deterministic in `seed`."""
    return _stateless_scaled("StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed, mean, stddev,
                             dtype, name)


def _stateless_multinomial(logits, num_samples, seed, output_dtype, scope_name, name):
    with get_default_graph().name_scope(name or scope_name):
        logits = convert_to_tensor(logits, name="logits")
        num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        return apply_op("StatelessMultinomial", [logits, num_samples, _seed_tensor(seed)],
                        output_dtype=dtypes.as_dtype(output_dtype).base_dtype).outputs[0]


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """[batch, num_samples] classes drawn from softmax(logits), deterministic in `seed`."""
    return _stateless_multinomial(logits, num_samples, seed, dtype, "stateless_categorical", name)


def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64, name=None):
    return _stateless_multinomial(logits, num_samples, seed, output_dtype, "stateless_multinomial", name)


def stateless_random_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """Binomial(counts, probs) draws of `shape` (counts and probs broadcast to it)."""
    with get_default_graph().name_scope(name or "stateless_random_binomial"):
        shape_t = _shape_tensor(shape)
        probs = convert_to_tensor(probs, dtype=None if hasattr(probs, "dtype") else dtypes.float32, name="probs")
        counts = convert_to_tensor(counts, dtype=probs.dtype, name="counts")
        return _set_static_shape(apply_op("StatelessRandomBinomial", [shape_t, _seed_tensor(seed), counts, probs],
                                          dtype=dtypes.as_dtype(output_dtype).base_dtype).outputs[0], shape_t)


def stateless_random_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma(alpha, rate=beta) draws of `shape` (which ends with broadcast(alpha, beta)'s shape)."""
    dtype = _float_dtype(dtype, "stateless_random_gamma")
    with get_default_graph().name_scope(name or "stateless_random_gamma"):
        shape_t = _shape_tensor(shape)
        result = _gamma("StatelessRandomGammaV2", [shape_t, _seed_tensor(seed)], alpha, beta, dtype, {})
        return _set_static_shape(result, shape_t)


def stateless_random_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson(lam) draws of `shape` (lam broadcast to it)."""
    with get_default_graph().name_scope(name or "stateless_random_poisson"):
        shape_t = _shape_tensor(shape)
        seed = _seed_tensor(seed)
        lam = convert_to_tensor(lam, name="lam")
        return apply_op("StatelessRandomPoisson", [shape_t, seed, lam],
                        dtype=dtypes.as_dtype(dtype).base_dtype).outputs[0]


def split(seed, num=2, alg="auto_select"):
    """`num` new seeds ([num, 2]) drawn from `seed`."""
    seed = convert_to_tensor(seed)
    return stateless_random_uniform([num, 2], seed, dtype=seed.dtype, minval=None, maxval=None)


def fold_in(seed, data, alg="auto_select"):
    """A new seed [f(seed), data] that depends on both."""
    data = convert_to_tensor(data)
    seed1 = stateless_random_uniform([], seed, dtype=data.dtype, minval=None, maxval=None)
    return array_ops.stack([seed1, data])


__all__ = ["random_gamma", "random_poisson", "random_poisson_v2", "stateless_random_uniform",
           "stateless_random_normal", "stateless_truncated_normal", "stateless_categorical", "stateless_multinomial",
           "stateless_random_binomial", "stateless_random_gamma", "stateless_random_poisson", "split", "fold_in"]

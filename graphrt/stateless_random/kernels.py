"""CPU kernels of the gamma/Poisson and stateless random ops (numpy).

Stateful ops own a Generator seeded from (seed, seed2) like `ops/random_ops.py`'s.
A stateless op makes a fresh Generator from its seed input on every call, so
equal seeds give equal numbers in any run or session; the op type salts the
entropy so that, say, a uniform and a normal draw with one seed are not the
same underlying bits.
"""
import zlib

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.random_ops import _shape_arg, make_rng
from ..special_math import functions

_U64 = (1 << 64) - 1


def _stateful_gen(ctx):
    return make_rng(np, ctx.attr("seed", 0), ctx.attr("seed2", 0)).gen


def _stateless_gen(seed, op_type, node):
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise errors.InvalidArgumentError(f"seed must have shape [2], not {list(seed.shape)}", node=node)
    return np.random.default_rng([int(s) & _U64 for s in seed] + [zlib.crc32(op_type.encode())])


def _gamma(gen, alpha, dims, dtype):
    """`dims` samples of Gamma(alpha, 1) per alpha element, clamped to the dtype's tiny as TF's sampler."""
    alpha = np.asarray(alpha, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        draws = gen.standard_gamma(np.where(alpha > 0, alpha, 1.0), size=tuple(dims) + alpha.shape)
    draws = np.where(alpha > 0, draws, np.nan)  # TF: nan for a non-positive concentration
    return np.maximum(draws, np.finfo(dtype).tiny).astype(dtype)


def _poisson(gen, lam, dims, dtype):
    lam = np.asarray(lam, dtype=np.float64)
    ok = lam >= 0
    draws = gen.poisson(np.where(ok, lam, 0.0), size=tuple(dims) + lam.shape).astype(np.float64)
    if np.dtype(dtype).kind == "f":
        return np.where(ok, draws, np.nan).astype(dtype)
    return draws.astype(dtype)


@register_kernel("RandomGamma", ("CPU",), host_memory=("shape",), fresh_outputs=True)
def _random_gamma(ctx):
    gen, name = _stateful_gen(ctx), ctx.name
    dtype = ctx.output_dtypes[0].np
    return lambda shape, alpha: _gamma(gen, alpha, _shape_arg(shape, name), dtype)


@register_kernel("RandomPoissonV2", ("CPU",), host_memory=("shape",), fresh_outputs=True)
def _random_poisson(ctx):
    gen, name = _stateful_gen(ctx), ctx.name
    dtype = ctx.output_dtypes[0].np
    return lambda shape, rate: _poisson(gen, rate, _shape_arg(shape, name), dtype)


@register_kernel("RandomGammaGrad", ("CPU",), fresh_outputs=True)
def _random_gamma_grad(ctx):
    def grad(alpha, sample):
        """d sample / d alpha of a Gamma(alpha, 1) draw (implicit reparameterization):
        -(dP(alpha, x)/d alpha) / pdf(x), the pdf taken in logs."""
        dtype = np.asarray(alpha).dtype
        a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(sample, np.float64))
        with np.errstate(all="ignore"):
            log_pdf = -x + (a - 1.0) * np.log(x) - functions.lgamma(a)
            return np.asarray(-functions.igamma_grad_a(a, x) / np.exp(log_pdf), dtype=dtype)
    return grad


# -- stateless ------------------------------------------------------------------------------

def _stateless_kernel(op_type, draw):
    """A kernel factory for a stateless op: `draw(gen, dims, dtype, *params)`."""
    def factory(ctx):
        dtype, name = ctx.output_dtypes[0].np, ctx.name

        def kernel(shape, seed, *params):
            dims = _shape_arg(shape, name)
            with np.errstate(all="ignore"):
                return draw(_stateless_gen(seed, op_type, name), dims, dtype, name, *params)
        return kernel
    register_kernel(op_type, ("CPU",), host_memory=("shape", "seed"), fresh_outputs=True)(factory)


def _uniform(gen, dims, dtype, name):
    out = gen.random(dims).astype(dtype)
    return np.minimum(out, np.nextafter(dtype.type(1), dtype.type(0)))  # rounding to half may reach 1


def _normal(gen, dims, dtype, name):
    return gen.standard_normal(dims).astype(dtype)


def _truncated(gen, dims, dtype, name):
    out = gen.standard_normal(dims)
    bad = np.abs(out) >= 2  # as TF: values two or more stddevs out are drawn again
    while bad.any():
        out[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(out) >= 2
    return out.astype(dtype)


def _uniform_int(gen, dims, dtype, name, minval, maxval):
    for what, v in (("minval", minval), ("maxval", maxval)):
        if np.ndim(v) != 0:
            raise errors.InvalidArgumentError(f"{what} must be 0-D, got shape {list(np.shape(v))}", node=name)
    lo, hi = int(minval), int(maxval)
    if not lo < hi:
        raise errors.InvalidArgumentError(f"Need minval < maxval: {lo} >= {hi}", node=name)
    return gen.integers(lo, hi, size=dims, dtype=dtype)


def _full_int(gen, dims, dtype, name):
    info = np.iinfo(dtype)
    return gen.integers(info.min, info.max, size=dims, dtype=dtype, endpoint=True)


def _broadcast_param(value, dims, what, name):
    try:
        return np.broadcast_to(np.asarray(value, np.float64), dims)
    except ValueError:
        raise errors.InvalidArgumentError(f"{what} of shape {list(np.shape(value))} does not broadcast to "
                                          f"shape {list(dims)}", node=name) from None


def _binomial(gen, dims, dtype, name, counts, probs):
    counts = _broadcast_param(counts, dims, "counts", name)
    probs = _broadcast_param(probs, dims, "probs", name)
    ok = (counts >= 0) & (probs >= 0) & (probs <= 1)
    draws = gen.binomial(np.where(ok, counts, 0).astype(np.int64), np.where(ok, probs, 0.0)).astype(np.float64)
    return np.where(ok, draws, np.nan).astype(dtype) if np.dtype(dtype).kind == "f" else draws.astype(dtype)


def _poisson_stateless(gen, dims, dtype, name, lam):
    lam = _broadcast_param(lam, dims, "lam", name)
    return _poisson(gen, lam, (), dtype)


def _gamma_stateless(gen, dims, dtype, name, alpha):
    alpha = _broadcast_param(alpha, dims, "alpha", name)
    return _gamma(gen, alpha, (), dtype)


_stateless_kernel("StatelessRandomUniform", _uniform)
_stateless_kernel("StatelessRandomNormal", _normal)
_stateless_kernel("StatelessTruncatedNormal", _truncated)
_stateless_kernel("StatelessRandomUniformInt", _uniform_int)
_stateless_kernel("StatelessRandomUniformFullInt", _full_int)
_stateless_kernel("StatelessRandomBinomial", _binomial)
_stateless_kernel("StatelessRandomPoisson", _poisson_stateless)
_stateless_kernel("StatelessRandomGammaV2", _gamma_stateless)


@register_kernel("StatelessMultinomial", ("CPU",), host_memory=("num_samples", "seed"), fresh_outputs=True)
def _stateless_multinomial(ctx):
    out_dtype, name = ctx.output_dtypes[0].np, ctx.name

    def multinomial(logits, num_samples, seed):
        if logits.ndim != 2:
            raise errors.InvalidArgumentError(f"logits should be a matrix, got shape {list(logits.shape)}",
                                              node=name)
        n = int(num_samples)
        if n < 0:
            raise errors.InvalidArgumentError(f"num_samples should be nonnegative, got {n}", node=name)
        gen = _stateless_gen(seed, "StatelessMultinomial", name)
        batch, classes = logits.shape
        if classes == 0 and batch and n:
            raise errors.InvalidArgumentError("num_classes should be positive, got 0", node=name)
        if batch == 0 or n == 0:
            return np.zeros((batch, n), dtype=out_dtype)
        z = logits.astype(np.float64)
        z = z - z.max(axis=1, keepdims=True)
        cdf = np.cumsum(np.exp(z), axis=1)
        cdf /= cdf[:, -1:]
        u = gen.random((batch, n))
        idx = np.stack([np.searchsorted(cdf[r], u[r], side="right") for r in range(batch)])
        return np.minimum(idx, classes - 1).astype(out_dtype)
    return multinomial

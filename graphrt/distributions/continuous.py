"""Scalar continuous distributions: Normal, Laplace, Uniform, StudentT, Gamma,
Exponential, Beta, with TF1's formulas and their registered KL divergences."""
import math

import numpy as np

from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, control_ops, extra_ops, math_ops, random_ops
from ..special_math import betainc, digamma, lbeta, lgamma, ndtri
from ..stateless_random import random_gamma
from . import util
from .distribution import FULLY_REPARAMETERIZED, Distribution
from .kullback_leibler import RegisterKL


class _Scalar(Distribution):
    """A distribution of scalar events whose batch shape broadcasts its parameters (`_params`)."""

    _params = ()

    def _init_params(self, name, values, validate_args, checks=None):
        with get_default_graph().name_scope(name) as scope:
            tensors = [util.float_param(values[p], p) for p in self._params]
            if validate_args and checks:
                deps = checks(*tensors)
                tensors = [control_ops.with_dependencies(deps, t) for t in tensors]
            dtype = util.same_float_dtype(tensors)
        for p, t in zip(self._params, tensors):
            setattr(self, "_" + p, t)
        return scope, dtype, tensors

    def _param_tensors(self):
        return [getattr(self, "_" + p) for p in self._params]

    def _batch_shape(self):
        return util.static_broadcast(*self._param_tensors())

    def _batch_shape_tensor(self):
        return util.dynamic_broadcast(*self._param_tensors())

    def _event_shape(self):
        return TensorShape([])

    def _event_shape_tensor(self):
        return convert_to_tensor(np.zeros([0], np.int32))

    def _sample_shape(self, n):
        return array_ops.concat([array_ops.reshape(n, [1]) if not isinstance(n, (int, np.integer)) else
                                 np.array([n], np.int32), self.batch_shape_tensor()], 0)

    def _nan_fill(self, value):
        return array_ops.fill(self.batch_shape_tensor(), np.array(value, self.dtype.np), name="nan")


def _positive(*names):
    def checks(*tensors):
        return [extra_ops.assert_positive(t) for t, keep in zip(tensors, names) if keep]
    return checks


class Normal(_Scalar):
    """N(loc, scale**2)."""

    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        parameters = dict(locals())
        name, dtype, graph_parents = self._init_params(name, {"loc": loc, "scale": scale}, validate_args,
                                                       _positive(False, True))
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters, graph_parents,
                         name)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _z(self, x):
        with get_default_graph().name_scope("standardize"):
            return (x - self.loc) / self.scale

    def _sample_n(self, n, seed=None):
        sampled = random_ops.random_normal(self._sample_shape(n), mean=0.0, stddev=1.0, dtype=self.loc.dtype,
                                           seed=seed)
        return sampled * self.scale + self.loc

    def _log_prob(self, x):
        return -0.5 * math_ops.square(self._z(x)) - (0.5 * math.log(2.0 * math.pi) + math_ops.log(self.scale))

    def _log_cdf(self, x):
        return util.log_ndtr(self._z(x))

    def _cdf(self, x):
        return util.ndtr(self._z(x))

    def _log_survival_function(self, x):
        return util.log_ndtr(-self._z(x))

    def _survival_function(self, x):
        return util.ndtr(-self._z(x))

    def _entropy(self):
        return 0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(self.scale * array_ops.ones_like(self.loc))

    def _mean(self):
        return self.loc * array_ops.ones_like(self.scale)

    def _quantile(self, p):
        with get_default_graph().name_scope("reconstruct"):
            return ndtri(p) * self.scale + self.loc

    def _stddev(self):
        return self.scale * array_ops.ones_like(self.loc)

    def _mode(self):
        return self._mean()


@RegisterKL(Normal, Normal)
def _kl_normal_normal(n_a, n_b, name=None):
    with get_default_graph().name_scope(name or "kl_normal_normal"):
        dtype = n_a.dtype.np
        one, two, half = (convert_to_tensor(np.array(v, dtype)) for v in (1, 2, 0.5))
        s_a_squared = math_ops.square(n_a.scale)
        s_b_squared = math_ops.square(n_b.scale)
        ratio = s_a_squared / s_b_squared
        return (math_ops.squared_difference(n_a.loc, n_b.loc) / (two * s_b_squared)
                + half * (ratio - one - math_ops.log(ratio)))


class Laplace(_Scalar):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        parameters = dict(locals())
        name, dtype, graph_parents = self._init_params(name, {"loc": loc, "scale": scale}, validate_args,
                                                       _positive(False, True))
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters, graph_parents,
                         name)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _sample_n(self, n, seed=None):
        u = random_ops.random_uniform(self._sample_shape(n), minval=np.nextafter(self.dtype.np.type(-1.0),
                                                                                  self.dtype.np.type(0.0)),
                                      maxval=1.0, dtype=self.dtype, seed=seed)
        return self.loc - self.scale * math_ops.sign(u) * math_ops.log1p(-math_ops.abs(u))

    def _log_prob(self, x):
        return -math_ops.abs(self._z(x)) - (math.log(2.0) + math_ops.log(self.scale))

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return util.log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return util.log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 + 0.5 * math_ops.sign(z) * (1.0 - math_ops.exp(-math_ops.abs(z)))

    def _entropy(self):
        return math.log(2.0) + 1.0 + math_ops.log(self.scale + array_ops.zeros_like(self.loc))

    def _mean(self):
        return self.loc + array_ops.zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + array_ops.zeros_like(self.loc)

    def _mode(self):
        return self._mean()


class Uniform(_Scalar):
    """U[low, high)."""

    _params = ("low", "high")

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True, name="Uniform"):
        parameters = dict(locals())

        def checks(lo, hi):
            return [extra_ops.assert_less(lo, hi, message="uniform not defined when low >= high.")]
        name, dtype, graph_parents = self._init_params(name, {"low": low, "high": high}, validate_args, checks)
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters, graph_parents,
                         name)

    low = property(lambda self: self._low)
    high = property(lambda self: self._high)

    def range(self, name="range"):
        with self._name_scope(name):
            return self.high - self.low

    def _sample_n(self, n, seed=None):
        samples = random_ops.random_uniform(self._sample_shape(n), dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        bx = x * array_ops.ones(self.batch_shape_tensor(), dtype=x.dtype)
        outside = math_ops.logical_or(bx < self.low, bx >= self.high)
        return math_ops.where_v2(extra_ops.is_nan(bx), bx, math_ops.where_v2(
            outside, array_ops.zeros_like(bx), array_ops.ones_like(bx) / self.range()))

    def _cdf(self, x):
        ones = array_ops.ones(util.dynamic_broadcast(x, self.low, self.high), dtype=self.dtype)
        bx = x * ones
        not_big = math_ops.where_v2(x < self.low, array_ops.zeros_like(ones), (bx - self.low) / self.range())
        return math_ops.where_v2(x >= self.high, ones, not_big)

    def _entropy(self):
        return math_ops.log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return math_ops.square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)


class StudentT(_Scalar):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`."""

    _params = ("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True, name="StudentT"):
        parameters = dict(locals())
        name, dtype, graph_parents = self._init_params(name, {"df": df, "loc": loc, "scale": scale}, validate_args,
                                                       _positive(True, False, False))
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters, graph_parents,
                         name)

    df = property(lambda self: self._df)
    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _sample_n(self, n, seed=None):
        normal = random_ops.random_normal(self._sample_shape(n), dtype=self.dtype, seed=seed)
        df = self.df * array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)
        gamma = random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype, seed=util.gen_new_seed(seed, "student_t"))
        return normal * math_ops.rsqrt(gamma / df) * self.scale + self.loc

    def _log_prob(self, x):
        y = (x - self.loc) / self.scale
        unnormalized = -0.5 * (self.df + 1.0) * math_ops.log1p(y ** 2.0 / self.df)
        return unnormalized - self._log_normalization()

    def _log_normalization(self):
        return (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df) + 0.5 * np.log(np.pi)
                + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))

    def _cdf(self, x):
        y = (x - self.loc) / math_ops.abs(self.scale)
        x_t = self.df / (y ** 2.0 + self.df)
        zeros = array_ops.zeros_like(x_t)  # graphrt's betainc takes equal shapes or scalars
        neg_cdf = 0.5 * betainc(0.5 * self.df + zeros, 0.5 + zeros, x_t)
        return math_ops.where_v2(math_ops.less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = array_ops.expand_dims(array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype), -1)
        u = v * array_ops.expand_dims(self.df, -1)
        beta_arg = array_ops.concat([u, v], -1) / 2.0
        return (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df) + lbeta(beta_arg)
                + 0.5 * (self.df + 1.0) * (digamma(0.5 * (self.df + 1.0)) - digamma(0.5 * self.df)))

    def _mean(self):
        mean = self.loc * array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)
        if self.allow_nan_stats:
            return math_ops.where_v2(math_ops.greater(self.df, 1.0), mean, self._nan_fill(np.nan))
        return control_ops.with_dependencies([extra_ops.assert_less(
            np.array(1, self.dtype.np), self.df, message="mean not defined for components of df <= 1")], mean)

    def _variance(self):
        denom = math_ops.where_v2(math_ops.greater(self.df, 2.0), self.df - 2.0, array_ops.ones_like(self.df))
        ones = array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)
        var = ones * math_ops.square(self.scale) * self.df / denom
        defined = math_ops.where_v2(self.df > 2.0, var, array_ops.fill(self.batch_shape_tensor(),
                                                                        np.array(np.inf, self.dtype.np), name="inf"))
        if self.allow_nan_stats:
            return math_ops.where_v2(math_ops.greater(self.df, 1.0), defined, self._nan_fill(np.nan))
        return control_ops.with_dependencies([extra_ops.assert_less(
            np.array(1, self.dtype.np), self.df, message="variance not defined for components of df <= 1")], defined)

    def _mode(self):
        return array_ops.identity(self.loc)


class Gamma(_Scalar):
    """Gamma(concentration, rate): density x^(c-1) e^(-rate x) rate^c / Gamma(c)."""

    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True, name="Gamma"):
        parameters = dict(locals())
        name, dtype, graph_parents = self._init_params(name, {"concentration": concentration, "rate": rate},
                                                       validate_args, _positive(True, True))
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters, graph_parents,
                         name)

    concentration = property(lambda self: self._concentration)
    rate = property(lambda self: self._rate)

    def _sample_n(self, n, seed=None):
        return random_gamma([n], self.concentration, beta=self.rate, dtype=self.dtype, seed=seed)

    def _checked(self, x):
        util.same_float_dtype([x])
        if x.dtype.base_dtype != self.dtype:
            raise ValueError(f"Tensor conversion requested dtype {self.dtype.name} for Tensor with dtype "
                             f"{x.dtype.base_dtype.name}: {x}")
        return util.with_checks(self.validate_args, lambda: [extra_ops.assert_positive(x)], x)

    def _log_prob(self, x):
        x = self._checked(x)
        return (math_ops.xlogy(self.concentration - 1.0, x) - self.rate * x
                - (lgamma(self.concentration) - self.concentration * math_ops.log(self.rate)))

    def _cdf(self, x):
        from ..special_math import igamma
        return igamma(self.concentration, self.rate * self._checked(x))

    def _entropy(self):
        c = self.concentration
        return c - math_ops.log(self.rate) + lgamma(c) + (1.0 - c) * digamma(c)

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / math_ops.square(self.rate)

    def _stddev(self):
        return math_ops.sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        if self.allow_nan_stats:
            return math_ops.where_v2(self.concentration > 1.0, mode, self._nan_fill(np.nan))
        return control_ops.with_dependencies([extra_ops.assert_less(
            np.array(1, self.dtype.np), self.concentration, message="mode not defined when any concentration <= 1")],
            mode)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    with get_default_graph().name_scope(name or "kl_gamma_gamma"):
        return ((g0.concentration - g1.concentration) * digamma(g0.concentration)
                + lgamma(g1.concentration) - lgamma(g0.concentration)
                + g1.concentration * math_ops.log(g0.rate) - g1.concentration * math_ops.log(g1.rate)
                + g0.concentration * (g1.rate / g0.rate - 1.0))


class Exponential(Gamma):
    """Exponential(rate): Gamma(1, rate)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            rate_t = convert_to_tensor(rate, name="rate")
        super().__init__(concentration=array_ops.ones([], dtype=rate_t.dtype), rate=rate_t,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats, name=scope)
        self._parameters = {k: v for k, v in parameters.items() if k not in ("self", "__class__")}

    def _log_survival_function(self, value):
        return self._log_prob(value) - math_ops.log(self.rate)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([np.array([n], np.int32) if isinstance(n, (int, np.integer))
                                  else array_ops.reshape(n, [1]), array_ops.shape(self.rate)], 0)
        u = random_ops.random_uniform(shape, minval=np.finfo(self.dtype.np).tiny, maxval=1.0, seed=seed,
                                      dtype=self.dtype)
        return -math_ops.log(u) / self.rate


class Beta(_Scalar):
    """Beta(concentration1, concentration0) on (0, 1)."""

    _params = ("concentration1", "concentration0")

    def __init__(self, concentration1=None, concentration0=None, validate_args=False, allow_nan_stats=True,
                 name="Beta"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            c1 = convert_to_tensor(concentration1, name="concentration1")
            c0 = convert_to_tensor(concentration0, name="concentration0")
            if validate_args:
                c1, c0 = (control_ops.with_dependencies([extra_ops.assert_positive(
                    c, message="Concentration parameter must be positive.")], c) for c in (c1, c0))
            dtype = util.same_float_dtype([c1, c0])
            self._concentration1, self._concentration0 = c1, c0
            self._total_concentration = c1 + c0
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [c1, c0, self._total_concentration], scope)

    concentration1 = property(lambda self: self._concentration1)
    concentration0 = property(lambda self: self._concentration0)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _sample_n(self, n, seed=None):
        ones = array_ops.ones_like(self.total_concentration, dtype=self.dtype)
        g1 = random_gamma([n], ones * self.concentration1, dtype=self.dtype, seed=seed)
        g0 = random_gamma([n], ones * self.concentration0, dtype=self.dtype, seed=util.gen_new_seed(seed, "beta"))
        return g1 / (g1 + g0)

    def _log_normalization(self):
        return lgamma(self.concentration1) + lgamma(self.concentration0) - lgamma(self.total_concentration)

    def _log_prob(self, x):
        x = util.with_checks(self.validate_args, lambda: [
            extra_ops.assert_positive(x, message="sample must be positive"),
            extra_ops.assert_less(x, np.array(1, self.dtype.np), message="sample must be less than `1`.")], x)
        return (math_ops.xlogy(self.concentration1 - 1.0, x) + (self.concentration0 - 1.0) * math_ops.log1p(-x)
                - self._log_normalization())

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return math_ops.log(self._cdf(x))

    def _cdf(self, x):
        c1 = self.concentration1 + array_ops.zeros_like(x)
        c0 = self.concentration0 + array_ops.zeros_like(x)
        return betainc(c1, c0, x + array_ops.zeros_like(c1))

    def _entropy(self):
        return (self._log_normalization() - (self.concentration1 - 1.0) * digamma(self.concentration1)
                - (self.concentration0 - 1.0) * digamma(self.concentration0)
                + (self.total_concentration - 2.0) * digamma(self.total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        return self._mean() * (1.0 - self._mean()) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        if self.allow_nan_stats:
            defined = math_ops.logical_and(self.concentration1 > 1.0, self.concentration0 > 1.0)
            return math_ops.where_v2(defined, mode, self._nan_fill(np.nan))
        one = np.array(1, self.dtype.np)
        return control_ops.with_dependencies([
            extra_ops.assert_less(one, self.concentration1, message="Mode undefined for concentration1 <= 1."),
            extra_ops.assert_less(one, self.concentration0, message="Mode undefined for concentration0 <= 1.")], mode)


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    with get_default_graph().name_scope(name or "kl_beta_beta"):
        return ((d2._log_normalization() - d1._log_normalization())
                - digamma(d1.concentration1) * (d2.concentration1 - d1.concentration1)
                - digamma(d1.concentration0) * (d2.concentration0 - d1.concentration0)
                + digamma(d1.total_concentration) * (d2.total_concentration - d1.total_concentration))


__all__ = ["Normal", "Laplace", "Uniform", "StudentT", "Gamma", "Exponential", "Beta"]

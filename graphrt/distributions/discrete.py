"""Distributions over classes and counts: Bernoulli, Categorical, Multinomial,
Dirichlet, DirichletMultinomial, with TF1's formulas and registered KLs."""
import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..functional import map_fn
from ..ops import array_ops, control_ops, extra_ops, math_ops, nn_ops, random_ops
from ..special_math import digamma, lbeta
from ..stateless_random import random_gamma
from . import util
from .distribution import FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution
from .kullback_leibler import RegisterKL


def _n_vector(n):
    return np.array([n], np.int32) if isinstance(n, (int, np.integer)) else array_ops.reshape(n, [1])


def _scalar_event_shape_tensor():
    return convert_to_tensor(np.zeros([0], np.int32))


class Bernoulli(Distribution):
    """Bernoulli(probs = sigmoid(logits)) over {0, 1}."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False, allow_nan_stats=True,
                 name="Bernoulli"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            self._logits, self._probs = util.get_logits_and_probs(logits=logits, probs=probs,
                                                                  validate_args=validate_args, name=scope)
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], scope)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return array_ops.shape(self._logits)

    def _event_shape(self):
        return TensorShape([])

    def _event_shape_tensor(self):
        return _scalar_event_shape_tensor()

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([_n_vector(n), self.batch_shape_tensor()], 0)
        uniform = random_ops.random_uniform(shape, seed=seed, dtype=self.probs.dtype)
        return math_ops.cast(math_ops.less(uniform, self.probs), self.dtype)

    def _log_prob(self, event):
        event = math_ops.cast(event, self.logits.dtype)
        logits = self.logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits, event = array_ops.ones_like(event) * logits, array_ops.ones_like(logits) * event
        return -nn_ops.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self.logits * (math_ops.sigmoid(self.logits) - 1) + nn_ops.softplus(-self.logits)

    def _mean(self):
        return array_ops.identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return math_ops.cast(self.probs > 0.5, self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    with get_default_graph().name_scope(name or "kl_bernoulli_bernoulli"):
        delta_probs0 = nn_ops.softplus(-b.logits) - nn_ops.softplus(-a.logits)
        delta_probs1 = nn_ops.softplus(b.logits) - nn_ops.softplus(a.logits)
        return math_ops.sigmoid(a.logits) * delta_probs0 + math_ops.sigmoid(-a.logits) * delta_probs1


def _broadcast_event_and_params(event, params):
    """Class indices and [..., classes] parameters broadcast to one batch shape (TF's Categorical helper)."""
    if event.dtype.is_floating:
        event = math_ops.cast(event, dtypes.int32)
    elif not event.dtype.is_integer:
        raise TypeError("`value` should have integer `dtype` or `self.dtype`")
    known = params.shape.ndims is not None and params.shape[:-1].is_fully_defined() and event.shape.is_fully_defined()
    if not known or params.shape[:-1] != event.shape:
        params = params * array_ops.ones_like(array_ops.expand_dims(event, -1), dtype=params.dtype)
        event = event * array_ops.ones(array_ops.shape(params)[:-1], dtype=event.dtype)
        if params.shape.ndims is not None:
            event.set_shape(TensorShape(params.shape[:-1]))
    return event, params


class Categorical(Distribution):
    """One class of [0, K) drawn with probabilities softmax(logits) (or `probs`)."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False, allow_nan_stats=True,
                 name="Categorical"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            self._logits, self._probs = util.get_logits_and_probs(logits=logits, probs=probs,
                                                                  validate_args=validate_args,
                                                                  multidimensional=True, name=scope)
            static = self._logits.shape.with_rank_at_least(1)
            self._batch_rank = (convert_to_tensor(np.int32(static.ndims - 1), name="batch_rank")
                                if static.ndims is not None else array_ops.rank(self._logits) - 1)
            logits_shape = array_ops.shape(self._logits, name="logits_shape")
            last = static.as_list()[-1] if static.ndims is not None else None
            self._event_size = (convert_to_tensor(np.int32(last), name="event_size") if last is not None
                                else logits_shape[-1])
            batch = static[:-1] if static.ndims is not None else TensorShape(None)
            self._batch_shape_val = (convert_to_tensor(np.array(batch.as_list(), np.int32), name="batch_shape")
                                     if batch.is_fully_defined() else logits_shape[:-1])
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], scope)

    event_size = property(lambda self: self._event_size)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape(self):
        return self.logits.shape[:-1] if self.logits.shape.ndims is not None else TensorShape(None)

    def _batch_shape_tensor(self):
        return array_ops.identity(self._batch_shape_val)

    def _event_shape(self):
        return TensorShape([])

    def _event_shape_tensor(self):
        return _scalar_event_shape_tensor()

    def _sample_n(self, n, seed=None):
        logits_2d = (self.logits if self.logits.shape.ndims == 2
                     else array_ops.reshape(self.logits, array_ops.stack([-1, self.event_size])))
        sample_dtype = dtypes.int64 if self.dtype.size > 4 else dtypes.int32
        draws = random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = array_ops.reshape(array_ops.transpose(draws),
                                  array_ops.concat([_n_vector(n), self.batch_shape_tensor()], 0))
        return math_ops.cast(draws, self.dtype)

    def _cdf(self, k):
        k, probs = _broadcast_event_and_params(k, self.probs)
        flat_probs = array_ops.reshape(probs, array_ops.stack([-1, self._event_size]))
        flat_k = array_ops.reshape(k, [-1])
        mask = extra_ops.sequence_mask(flat_k, self._event_size)
        cdf = math_ops.reduce_sum(math_ops.where_v2(mask, flat_probs, array_ops.zeros_like(flat_probs)), axis=-1)
        return array_ops.reshape(cdf, array_ops.shape(k))

    def _log_prob(self, k):
        k, logits = _broadcast_event_and_params(k, self.logits)
        return -nn_ops.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -math_ops.reduce_sum(nn_ops.log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self):
        ret = math_ops.cast(math_ops.argmax(self.logits, axis=-1), self.dtype)
        ret.set_shape(self.batch_shape)
        return ret


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    with get_default_graph().name_scope(name or "kl_categorical_categorical"):
        delta_log_probs = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
        return math_ops.reduce_sum(nn_ops.softmax(a.logits) * delta_log_probs, axis=-1)


class _VectorEvent(Distribution):
    """Events are vectors over K classes; the batch is everything before the last axis of `_stats`."""

    def _batch_shape(self):
        return self._stats.shape.with_rank_at_least(1)[:-1]

    def _batch_shape_tensor(self):
        return array_ops.shape(self._stats)[:-1]

    def _event_shape(self):
        return self._stats.shape.with_rank_at_least(1)[-1:]

    def _event_shape_tensor(self):
        return array_ops.shape(self._stats)[-1:]


def _nonnegative_integer(x, validate):
    def checks():
        return [extra_ops.assert_non_negative(x),
                extra_ops.assert_equal(x, math_ops.round(x), message=f"{x.name} has non-integer components")]
    return util.with_checks(validate, checks, x)


class Multinomial(_VectorEvent):
    """Counts of `total_count` draws over K classes with probabilities softmax(logits) (or `probs`)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False, allow_nan_stats=True,
                 name="Multinomial"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            self._total_count = _nonnegative_integer(convert_to_tensor(total_count, name="total_count"),
                                                     validate_args)
            self._logits, self._probs = util.get_logits_and_probs(logits=logits, probs=probs, multidimensional=True,
                                                                  validate_args=validate_args, name=scope)
            self._stats = self._mean_val = array_ops.expand_dims(self._total_count, -1) * self._probs
        super().__init__(self._probs.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._total_count, self._logits, self._probs], scope)

    total_count = property(lambda self: self._total_count)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _sample_n(self, n, seed=None):
        n_draws = math_ops.cast(self.total_count, dtypes.int32)
        k = self.event_shape_tensor()[0]
        n_draws = array_ops.ones_like(self.logits[..., 0], dtype=dtypes.int32) * n_draws
        logits = array_ops.ones_like(array_ops.expand_dims(n_draws, -1), dtype=self.logits.dtype) * self.logits
        flat_logits = array_ops.reshape(logits, array_ops.stack([-1, k]))
        flat_ndraws = n * array_ops.reshape(n_draws, [-1])

        def sample_one(args):
            row, draws = args
            x = random_ops.multinomial(array_ops.expand_dims(row, 0), draws, seed)
            x = array_ops.reshape(x, array_ops.stack([n, -1]))
            return math_ops.reduce_sum(array_ops.one_hot(x, depth=k, dtype=self.dtype), axis=-2)
        x = map_fn(sample_one, [flat_logits, flat_ndraws], dtype=self.dtype)
        x = array_ops.transpose(x, [1, 0, 2])
        return array_ops.reshape(x, array_ops.concat([_n_vector(n), self.batch_shape_tensor(),
                                                      array_ops.reshape(k, [1])], 0))

    def _checked_counts(self, counts):
        counts = _nonnegative_integer(counts, self.validate_args)
        return util.with_checks(self.validate_args, lambda: [extra_ops.assert_equal(
            self.total_count, math_ops.reduce_sum(counts, -1), message="counts must sum to `self.total_count`")],
            counts)

    def _log_prob(self, counts):
        counts = self._checked_counts(counts)
        return (math_ops.reduce_sum(counts * nn_ops.log_softmax(self.logits), -1)
                + util.log_combinations(self.total_count, counts))

    def _mean(self):
        return array_ops.identity(self._mean_val)

    def _variance(self):
        p = self.probs * array_ops.expand_dims(array_ops.ones_like(self.total_count), -1)
        return self._mean_val - self._mean_val * p

    def _covariance(self):
        p = self.probs * array_ops.expand_dims(array_ops.ones_like(self.total_count), -1)
        outer = array_ops.expand_dims(self._mean_val, -1) * array_ops.expand_dims(p, -2)
        return extra_ops.matrix_set_diag(-outer, self._variance())


class Dirichlet(_VectorEvent):
    """Dirichlet(concentration) over the probability simplex."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True, name="Dirichlet"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            c = convert_to_tensor(concentration, name="concentration")
            c = util.with_checks(validate_args, lambda: [
                extra_ops.assert_positive(c, message="Concentration parameter must be positive."),
                extra_ops.assert_less(1, array_ops.shape(c)[-1],
                                      message="Concentration parameter must have event_size >= 2.")], c)
            self._stats = self._concentration = c
            self._total_concentration = math_ops.reduce_sum(c, -1)
        super().__init__(c.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [c, self._total_concentration], scope)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _sample_n(self, n, seed=None):
        gamma = random_gamma([n], self.concentration, dtype=self.dtype, seed=seed)
        return gamma / math_ops.reduce_sum(gamma, -1, keepdims=True)

    def _log_prob(self, x):
        x = util.with_checks(self.validate_args, lambda: [
            extra_ops.assert_positive(x, message="samples must be positive"),
            extra_ops.assert_less_equal(math_ops.abs(math_ops.reduce_sum(x, -1) - 1.0),
                                        np.array(10 * np.finfo(self.dtype.np).eps, self.dtype.np),
                                        message="sample last-dimension must sum to `1`")], x)
        return math_ops.reduce_sum(math_ops.xlogy(self.concentration - 1.0, x), -1) - lbeta(self.concentration)

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _k(self):
        return math_ops.cast(self.event_shape_tensor()[0], self.dtype)

    def _entropy(self):
        return (lbeta(self.concentration) + (self.total_concentration - self._k()) * digamma(self.total_concentration)
                - math_ops.reduce_sum((self.concentration - 1.0) * digamma(self.concentration), axis=-1))

    def _mean(self):
        return self.concentration / array_ops.expand_dims(self.total_concentration, -1)

    def _scale_term(self):
        return math_ops.rsqrt(1.0 + array_ops.expand_dims(self.total_concentration, -1))

    def _variance(self):
        scale = self._scale_term()
        x = scale * self._mean()
        return x * (scale - x)

    def _covariance(self):
        x = self._scale_term() * self._mean()
        return extra_ops.matrix_set_diag(-array_ops.expand_dims(x, -1) * array_ops.expand_dims(x, -2),
                                         self._variance())

    def _mode(self):
        mode = (self.concentration - 1.0) / (array_ops.expand_dims(self.total_concentration, -1) - self._k())
        if self.allow_nan_stats:
            nan = array_ops.fill(array_ops.shape(mode), np.array(np.nan, self.dtype.np), name="nan")
            return math_ops.where_v2(math_ops.reduce_all(self.concentration > 1.0, axis=-1), mode, nan)
        return control_ops.with_dependencies([extra_ops.assert_less(
            np.array(1, self.dtype.np), self.concentration, message="Mode undefined when any concentration <= 1")],
            mode)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    with get_default_graph().name_scope(name or "kl_dirichlet_dirichlet"):
        digamma_sum_d1 = digamma(math_ops.reduce_sum(d1.concentration, axis=-1, keepdims=True))
        digamma_diff = digamma(d1.concentration) - digamma_sum_d1
        concentration_diff = d1.concentration - d2.concentration
        return (math_ops.reduce_sum(concentration_diff * digamma_diff, axis=-1)
                - lbeta(d1.concentration) + lbeta(d2.concentration))


class DirichletMultinomial(_VectorEvent):
    """Counts of `total_count` draws from a Multinomial whose probabilities are Dirichlet(concentration)."""

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with get_default_graph().name_scope(name) as scope:
            self._total_count = _nonnegative_integer(convert_to_tensor(total_count, name="total_count"),
                                                     validate_args)
            c = convert_to_tensor(concentration, name="concentration")
            c = util.with_checks(validate_args, lambda: [
                extra_ops.assert_positive(c, message="Concentration parameter must be positive.")], c)
            self._stats = self._concentration = c
            self._total_concentration = math_ops.reduce_sum(c, -1)
        super().__init__(c.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._total_count, c], scope)

    total_count = property(lambda self: self._total_count)
    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _sample_n(self, n, seed=None):
        n_draws = math_ops.cast(self.total_count, dtypes.int32)
        k = self.event_shape_tensor()[0]
        logits = array_ops.reshape(math_ops.log(random_gamma([n], self.concentration, dtype=self.dtype, seed=seed)),
                                   array_ops.stack([-1, k]))
        draws = random_ops.multinomial(logits, n_draws, seed=util.gen_new_seed(seed, "dirichlet_multinomial"))
        x = math_ops.reduce_sum(array_ops.one_hot(draws, depth=k), -2)
        x = array_ops.reshape(x, array_ops.concat([_n_vector(n), self.batch_shape_tensor(),
                                                   array_ops.reshape(k, [1])], 0))
        return math_ops.cast(x, self.dtype)

    def _log_prob(self, counts):
        counts = _nonnegative_integer(counts, self.validate_args)
        counts = util.with_checks(self.validate_args, lambda: [extra_ops.assert_equal(
            self.total_count, math_ops.reduce_sum(counts, -1),
            message="counts last-dimension must sum to `self.total_count`")], counts)
        ordered = lbeta(self.concentration + counts) - lbeta(self.concentration)
        return ordered + util.log_combinations(self.total_count, counts)

    def _prob(self, counts):
        return math_ops.exp(self._log_prob(counts))

    def _mean(self):
        return self.total_count * (self.concentration / array_ops.expand_dims(self.total_concentration, -1))

    def _scale_term(self):
        c0 = array_ops.expand_dims(self.total_concentration, -1)
        return math_ops.sqrt((1.0 + c0 / self.total_count) / (1.0 + c0))

    def _variance(self):
        scale = self._scale_term()
        x = scale * self._mean()
        return x * (self.total_count * scale - x)

    def _covariance(self):
        x = self._scale_term() * self._mean()
        return extra_ops.matrix_set_diag(-array_ops.expand_dims(x, -1) * array_ops.expand_dims(x, -2),
                                         self._variance())

"""TF1's `tf.distributions.Distribution`: the public methods (sample,
log_prob, prob, cdf, ..., entropy, mean, ...) open the distribution's name
scope and a scope named after the method, convert the value, and call the
subclass's `_method`; a missing one falls back on its counterpart
(prob = exp(log_prob), stddev = sqrt(variance), ...) as TF's do."""
import numpy as np

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor, is_tensor_like
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops, math_ops


class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters; compared by identity."""

    def __init__(self, rep_type):
        self._rep_type = rep_type

    def __repr__(self):
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def _convert_value(value, dtype):
    if is_tensor_like(value):
        return convert_to_tensor(value, name="value")
    try:
        return convert_to_tensor(value, dtype=dtype, name="value")
    except (TypeError, ValueError):
        return convert_to_tensor(value, name="value")


class Distribution:
    """A batch of probability distributions over events of one shape."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats, parameters=None,
                 graph_parents=None, name=None):
        graph_parents = [] if graph_parents is None else graph_parents
        for i, t in enumerate(graph_parents):
            if t is None or not is_tensor_like(t):
                raise ValueError(f"Graph parent item {i} is not a Tensor; {t}.")
        if not name or name[-1] != "/":
            with get_default_graph().name_scope(name or type(self).__name__) as name:
                pass
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._allow_nan_stats = allow_nan_stats
        self._validate_args = validate_args
        self._parameters = {k: v for k, v in (parameters or {}).items() if k != "self" and k != "__class__"}
        self._graph_parents = graph_parents
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self):
        return {k: v for k, v in self._parameters.items() if not k.startswith("__")}

    @property
    def reparameterization_type(self):
        return self._reparameterization_type

    @property
    def allow_nan_stats(self):
        return self._allow_nan_stats

    @property
    def validate_args(self):
        return self._validate_args

    def copy(self, **override_parameters_kwargs):
        return type(self)(**dict(self.parameters, **override_parameters_kwargs))

    def _name_scope(self, name):
        return _DistributionScope(self, name)

    # -- shapes ------------------------------------------------------------------------------

    @property
    def batch_shape(self):
        return as_shape(self._batch_shape())

    @property
    def event_shape(self):
        return as_shape(self._event_shape())

    def _batch_shape(self):
        return TensorShape(None)

    def _event_shape(self):
        return TensorShape(None)

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.batch_shape.as_list(), np.int32), name="batch_shape")
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.event_shape.as_list(), np.int32), name="event_shape")
            return self._event_shape_tensor()

    def is_scalar_event(self, name="is_scalar_event"):
        with self._name_scope(name):
            return convert_to_tensor(self._is_scalar(self.event_shape, self.event_shape_tensor),
                                     name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._name_scope(name):
            return convert_to_tensor(self._is_scalar(self.batch_shape, self.batch_shape_tensor),
                                     name="is_scalar_batch")

    @staticmethod
    def _is_scalar(static_shape, dynamic_shape_fn):
        if static_shape.ndims is not None:
            return static_shape.ndims == 0
        return math_ops.equal(array_ops.shape(dynamic_shape_fn())[0], 0)

    # -- sampling ----------------------------------------------------------------------------

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape sample_shape + batch_shape + event_shape."""
        with self._name_scope(name):
            sample_shape = convert_to_tensor(sample_shape, dtype=dtypes.int32, name="sample_shape")
            static = constant_value(sample_shape)
            if sample_shape.shape.ndims not in (0, 1):
                raise ValueError("Input is neither scalar nor vector.")
            if sample_shape.shape.ndims == 0:
                sample_shape = (convert_to_tensor(np.array([static], np.int32), name="sample_shape")
                                if static is not None else array_ops.reshape(sample_shape, [1]))
            n = np.prod(static, dtype=np.int32) if static is not None else math_ops.reduce_prod(sample_shape)
            samples = self._sample_n(n, seed)
            final_shape = array_ops.concat([sample_shape, array_ops.shape(samples)[1:]], 0)
            samples = array_ops.reshape(samples, final_shape)
            if static is not None:
                known = TensorShape(np.atleast_1d(static).tolist())
                if self.batch_shape.ndims is not None and self.event_shape.ndims is not None:
                    known = known.concatenate(self.batch_shape).concatenate(self.event_shape)
                    samples.set_shape(samples.shape.merge_with(known))
            return samples

    def _sample_n(self, n, seed=None):
        raise NotImplementedError(f"sample_n is not implemented: {type(self).__name__}")

    # -- functions of a value, each with its fallback ---------------------------------------------

    def _call(self, name, value, primary, fallback):
        with self._name_scope(name):
            value = _convert_value(value, self.dtype)
            try:
                return getattr(self, primary)(value)
            except NotImplementedError as original:
                try:
                    return fallback(value)
                except NotImplementedError:
                    raise original from None

    def log_prob(self, value, name="log_prob"):
        return self._call(name, value, "_log_prob", lambda v: math_ops.log(self._prob(v)))

    def prob(self, value, name="prob"):
        return self._call(name, value, "_prob", lambda v: math_ops.exp(self._log_prob(v)))

    def log_cdf(self, value, name="log_cdf"):
        return self._call(name, value, "_log_cdf", lambda v: math_ops.log(self._cdf(v)))

    def cdf(self, value, name="cdf"):
        return self._call(name, value, "_cdf", lambda v: math_ops.exp(self._log_cdf(v)))

    def log_survival_function(self, value, name="log_survival_function"):
        return self._call(name, value, "_log_survival_function", lambda v: math_ops.log1p(-self.cdf(v)))

    def survival_function(self, value, name="survival_function"):
        return self._call(name, value, "_survival_function", lambda v: 1.0 - self.cdf(v))

    def quantile(self, value, name="quantile"):
        with self._name_scope(name):
            return self._quantile(_convert_value(value, self.dtype))

    # -- statistics -------------------------------------------------------------------------------

    def _stat(self, name, primary, fallback=None):
        with self._name_scope(name):
            try:
                return getattr(self, primary)()
            except NotImplementedError as original:
                if fallback is None:
                    raise
                try:
                    return fallback()
                except NotImplementedError:
                    raise original from None

    def entropy(self, name="entropy"):
        return self._stat(name, "_entropy")

    def mean(self, name="mean"):
        return self._stat(name, "_mean")

    def variance(self, name="variance"):
        return self._stat(name, "_variance", lambda: math_ops.square(self._stddev()))

    def stddev(self, name="stddev"):
        return self._stat(name, "_stddev", lambda: math_ops.sqrt(self._variance()))

    def covariance(self, name="covariance"):
        return self._stat(name, "_covariance")

    def mode(self, name="mode"):
        return self._stat(name, "_mode")

    def cross_entropy(self, other, name="cross_entropy"):
        from .kullback_leibler import cross_entropy
        with self._name_scope(name):
            return cross_entropy(self, other, allow_nan_stats=self.allow_nan_stats)

    def kl_divergence(self, other, name="kl_divergence"):
        from .kullback_leibler import kl_divergence
        with self._name_scope(name):
            return kl_divergence(self, other, allow_nan_stats=self.allow_nan_stats)

    def __str__(self):
        batch = f", batch_shape={self.batch_shape}" if self.batch_shape.ndims is not None else ""
        event = f", event_shape={self.event_shape}" if self.event_shape.ndims is not None else ""
        return f'tfp.distributions.{type(self).__name__}("{self.name}"{batch}{event}, dtype={self.dtype.name})'

    def __repr__(self):
        return (f"<tfp.distributions.{type(self).__name__} '{self.name}' batch_shape={self.batch_shape} "
                f"event_shape={self.event_shape} dtype={self.dtype.name}>")


def _not_implemented(method):
    def missing(self, *args):
        raise NotImplementedError(f"{method[1:]} is not implemented: {type(self).__name__}")
    return missing


# what a subclass leaves out raises NotImplementedError, so the public method can fall back
for _method in ("_log_prob", "_prob", "_log_cdf", "_cdf", "_log_survival_function", "_survival_function",
                "_quantile", "_entropy", "_mean", "_variance", "_stddev", "_covariance", "_mode",
                "_batch_shape_tensor", "_event_shape_tensor"):
    setattr(Distribution, _method, _not_implemented(_method))


class _DistributionScope:
    """The distribution's own scope re-entered, then a fresh scope for the method (TF's _name_scope)."""

    def __init__(self, dist, name):
        self._dist, self._name = dist, name

    def __enter__(self):
        g = get_default_graph()
        self._outer = g.name_scope(self._dist.name)
        self._outer.__enter__()
        self._inner = g.name_scope(self._name)
        return self._inner.__enter__()

    def __exit__(self, *exc):
        self._inner.__exit__(*exc)
        self._outer.__exit__(*exc)
        return False

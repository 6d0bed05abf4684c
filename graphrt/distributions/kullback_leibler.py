"""KL divergences between distributions: a table of functions keyed by a pair
of classes (`RegisterKL`), looked up along both classes' MROs, nearest pair first."""
from ..framework.graph import get_default_graph
from ..ops import array_ops, control_ops, extra_ops, math_ops

_DIVERGENCES = {}


def _registered_kl(type_a, type_b):
    best, best_distance = None, None
    for i, parent_a in enumerate(type_a.__mro__):
        for j, parent_b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((parent_a, parent_b))
            if fn is not None and (best is None or i + j < best_distance):
                best, best_distance = fn, i + j
    return best


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """Batchwise KL(distribution_a || distribution_b)."""
    kl_fn = _registered_kl(type(distribution_a), type(distribution_b))
    if kl_fn is None:
        raise NotImplementedError(f"No KL(distribution_a || distribution_b) registered for distribution_a type "
                                  f"{type(distribution_a).__name__} and distribution_b type "
                                  f"{type(distribution_b).__name__}")
    g = get_default_graph()
    with g.name_scope("KullbackLeibler"):
        kl_t = kl_fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = array_ops.identity(kl_t, name="kl")
        check = extra_ops.assert_op(
            math_ops.logical_not(math_ops.reduce_any(extra_ops.is_nan(kl_t))),
            [f"KL calculation between {distribution_a.name} and {distribution_b.name} returned NaN values "
             f"(and was called with allow_nan_stats=False). Values:", kl_t])
        return control_ops.with_dependencies([check], kl_t, name="checked_kl")


def cross_entropy(ref, other, allow_nan_stats=True, name=None):
    """H[ref, other] = entropy(ref) + KL(ref || other)."""
    with get_default_graph().name_scope(name or "cross_entropy"):
        return ref.entropy() + kl_divergence(ref, other, allow_nan_stats=allow_nan_stats)


class RegisterKL:
    """Decorator: registers a KL function for a pair of distribution classes."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has already been registered "
                             f"to: {_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn

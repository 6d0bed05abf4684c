"""Declarations and the TF1 API of the special functions (TF's special_math_ops
and the special functions of its math_ops).

Ops under TF's names and dtypes: Lgamma, Digamma, Erfinv, Ndtri, BesselI0e,
BesselI1e, Igamma, Igammac (half, float, double: graphrt has no bfloat16),
and Polygamma, Zeta, IgammaGradA, Betainc (float, double). bessel_i0,
bessel_i1 and lbeta are compositions: i0 = i0e(x) exp(|x|) (TF 2.x has a
BesselI0 op; its gradient, i1(x), is what the composition's gives), and
lbeta(x) = sum(lgamma(x), -1) - lgamma(sum(x, -1)).
"""
import numpy as np

from ..framework import dtypes
from ..framework.graph import graph_of
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops import math_ops, shape_fns

_HALF_FLOAT_DOUBLE = {"T": (dtypes.float16, dtypes.float32, dtypes.float64)}
_FLOAT_DOUBLE = {"T": (dtypes.float32, dtypes.float64)}

UNARY = ("Lgamma", "Digamma", "Erfinv", "Ndtri", "BesselI0e", "BesselI1e")
for _name in UNARY:
    register_op(_name, ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged, allowed_types=_HALF_FLOAT_DOUBLE)
for _name, _args in (("Igamma", ("a", "x")), ("Igammac", ("a", "x")), ("IgammaGradA", ("a", "x")),
                     ("Polygamma", ("a", "x")), ("Zeta", ("x", "q"))):
    register_op(_name, [f"{_args[0]}: T", f"{_args[1]}: T"], ["z: T"], shape_fn=shape_fns.broadcast,
                allowed_types=_HALF_FLOAT_DOUBLE if _name in ("Igamma", "Igammac") else _FLOAT_DOUBLE)


def _betainc_shape(ctx):
    """TF's: a, b and x are scalars or all of one shape."""
    out = TensorShape(None)
    shapes = [ctx.shape(i) for i in range(3)]
    for s in shapes:
        if s.ndims == 0:
            continue
        if not out.is_compatible_with(s):
            raise ValueError(f"Shapes of a, b and x must be equal or scalars, but are {shapes[0]}, "
                             f"{shapes[1]} and {shapes[2]}")
        out = out.merge_with(s)
    if all(s.ndims == 0 for s in shapes):
        return TensorShape([])
    return out


register_op("Betainc", ["a: T", "b: T", "x: T"], ["z: T"], shape_fn=_betainc_shape, allowed_types=_FLOAT_DOUBLE)


def _scope(name, default, values):
    g = graph_of([v for v in values if is_tensor_like(v)])
    return g, g.name_scope(name or default)


def _op(op_type, inputs, name):
    return apply_op(op_type, list(inputs), name=name or op_type).outputs[0]


def lgamma(x, name=None):
    """log |Gamma(x)| elementwise."""
    return _op("Lgamma", [x], name)


def digamma(x, name=None):
    """Psi, the derivative of lgamma."""
    return _op("Digamma", [x], name)


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a a non-negative integer, as a float)."""
    return _op("Polygamma", [a, x], name)


def zeta(x, q, name=None):
    """Hurwitz zeta: sum over k >= 0 of (q + k)^-x."""
    return _op("Zeta", [x, q], name)


def igamma(a, x, name=None):
    """The lower regularized incomplete gamma function P(a, x)."""
    return _op("Igamma", [a, x], name)


def igammac(a, x, name=None):
    """The upper regularized incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _op("Igammac", [a, x], name)


def igamma_grad_a(a, x, name=None):
    """d igamma(a, x) / da (TF's raw op IgammaGradA)."""
    return _op("IgammaGradA", [a, x], name)


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b)."""
    return _op("Betainc", [a, b, x], name)


def _scoped_unary(op_type, default):
    def fn(x, name=None):
        g, scope = _scope(name, default, [x])
        with g.as_default(), scope:
            x = convert_to_tensor(x, name="x")
            return apply_op(op_type, [x], name=op_type).outputs[0]
    fn.__name__ = default
    fn.__doc__ = f"TF's tf.math.{default} (op {op_type})."
    return fn


erfinv = _scoped_unary("Erfinv", "erfinv")
ndtri = _scoped_unary("Ndtri", "ndtri")
bessel_i0e = _scoped_unary("BesselI0e", "bessel_i0e")
bessel_i1e = _scoped_unary("BesselI1e", "bessel_i1e")


def bessel_i0(x, name=None):
    """The modified Bessel function I0: bessel_i0e(x) * exp(|x|)."""
    g, scope = _scope(name, "bessel_i0", [x])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        return bessel_i0e(x) * math_ops.exp(math_ops.abs(x))


def bessel_i1(x, name=None):
    """The modified Bessel function I1: bessel_i1e(x) * exp(|x|)."""
    g, scope = _scope(name, "bessel_i1", [x])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        return bessel_i1e(x) * math_ops.exp(math_ops.abs(x))


def lbeta(x, name=None):
    """log |Beta(x)| over the last dimension: sum(lgamma(x), -1) - lgamma(sum(x, -1))
    (-inf for an empty last dimension, as TF)."""
    g, scope = _scope(name, "lbeta", [x])
    with g.as_default(), scope:
        x = convert_to_tensor(x, name="x")
        axis = np.array([-1], dtype=np.int32)
        log_prod_gamma_x = math_ops.reduce_sum(lgamma(x), axis=axis)
        sum_x = math_ops.reduce_sum(x, axis=axis)
        log_gamma_sum_x = lgamma(sum_x)
        return math_ops.subtract(log_prod_gamma_x, log_gamma_sum_x, name="sub")

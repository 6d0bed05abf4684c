"""Gradients of the special-function ops, TF's formulas (math_grad.py)."""
import numpy as np

from ..framework.registry import register_gradient
from ..ops import array_ops, math_ops
from ..ops.math_grad import sum_to
from . import ops


def _xlogy(u, v):
    """u * log(v), 0 where u == 0 (TF's xlogy, without its gradient)."""
    return math_ops.where_v2(math_ops.equal(u, 0.0), array_ops.zeros_like(u), u * math_ops.log(v))


def _xlog1py(u, v):
    return math_ops.where_v2(math_ops.equal(u, 0.0), array_ops.zeros_like(u), u * math_ops.log1p(v))


@register_gradient("Lgamma")
def _lgamma_grad(op, grad):
    return [grad * ops.digamma(op.inputs[0])]


@register_gradient("Digamma")
def _digamma_grad(op, grad):
    x = op.inputs[0]
    one = math_ops.cast(1, x.dtype)
    return [grad * ops.polygamma(one, x)]


@register_gradient("Polygamma")
def _polygamma_grad(op, grad):
    """d/dx only, as TF (no derivative in the order n)."""
    n, x = op.inputs
    return [None, sum_to(grad * ops.polygamma(n + 1.0, x), x, n)]


@register_gradient("Zeta")
def _zeta_grad(op, grad):
    """d/dq only, as TF: -x zeta(x + 1, q)."""
    x, q = op.inputs
    return [None, sum_to(grad * (-x * ops.zeta(x + 1.0, q)), q, x)]


@register_gradient("Igamma")
def _igamma_grad(op, grad):
    a, x = op.inputs
    partial_a = ops.igamma_grad_a(a, x)
    # in logs: Gamma(a) and x^(a-1) grow large
    partial_x = math_ops.exp(-x + (a - 1.0) * math_ops.log(x) - ops.lgamma(a))
    return [sum_to(partial_a * grad, a, x), sum_to(partial_x * grad, x, a)]


@register_gradient("Igammac")
def _igammac_grad(op, grad):
    da, dx = _igamma_grad(op, grad)
    return [math_ops.negative(da), math_ops.negative(dx)]


@register_gradient("Betainc")
def _betainc_grad(op, grad):
    """d/dx only, as TF: x^(a-1) (1-x)^(b-1) / B(a, b)."""
    a, b, x = op.inputs
    log_beta = ops.lgamma(a) + ops.lgamma(b) - ops.lgamma(a + b)
    partial_x = math_ops.exp(_xlog1py(b - 1.0, -x) + _xlogy(a - 1.0, x) - log_beta)
    return [None, None, sum_to(partial_x * grad, x, a, b)]


@register_gradient("Erfinv")
def _erfinv_grad(op, grad):
    y = op.outputs[0]
    return [grad * (np.sqrt(np.pi) / 2) * math_ops.exp(math_ops.square(y))]


@register_gradient("Ndtri")
def _ndtri_grad(op, grad):
    y = op.outputs[0]
    return [grad * np.sqrt(2 * np.pi) * math_ops.exp(math_ops.square(y) / 2.0)]


@register_gradient("BesselI0e")
def _bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (ops.bessel_i1e(x) - math_ops.sign(x) * y)]


@register_gradient("BesselI1e")
def _bessel_i1e_grad(op, grad):
    """At x = 0 the derivative is 0.5 (the formula divides by x there)."""
    x, y = op.inputs[0], op.outputs[0]
    dy_dx = math_ops.where_v2(math_ops.equal(x, 0.0), 0.5 * array_ops.ones_like(x),
                              ops.bessel_i0e(x) - y * (math_ops.sign(x) + math_ops.reciprocal(x)))
    return [grad * dy_dx]

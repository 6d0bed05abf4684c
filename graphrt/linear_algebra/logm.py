"""`tf.linalg.logm`: TF's MatrixLogarithm op (complex64 and complex128 only; like TF, no gradient)
and its numpy kernel, the principal logarithm.

TF computes it with Eigen's Schur-Pade method. Here a matrix with a well-conditioned eigenbasis
takes log through its eigendecomposition (exact on the branch cut: an eigenvalue -1 has log i pi);
an (almost) defective one takes inverse scaling and squaring: square roots by the Denman-Beavers
iteration until it is near the identity, then log(I + X) by Gauss-Legendre quadrature (the
diagonal Pade approximant). A singular matrix gives NaNs, as TF's.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op
from ..framework.registry import register_kernel, register_op
from . import ops as la
from .kernels import CPU

register_op("MatrixLogarithm", ["input: T"], ["output: T"], shape_fn=la._square_unchanged,
            allowed_types={"T": (dtypes.complex64, dtypes.complex128)})

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(10)


def _sqrt_denman_beavers(a, iterations=100):
    y, z = a, np.eye(a.shape[-1], dtype=a.dtype)
    for _ in range(iterations):
        y_next = 0.5 * (y + np.linalg.inv(z))
        z = 0.5 * (z + np.linalg.inv(y))
        done = np.linalg.norm(y_next - y, 1) <= 1e-15 * np.linalg.norm(y_next, 1)
        y = y_next
        if done:
            break
    return y


def _log_scaling_squaring(a):
    n = a.shape[-1]
    eye = np.eye(n, dtype=a.dtype)
    k = 0
    while np.linalg.norm(a - eye, 1) > 0.25 and k < 64:
        a = _sqrt_denman_beavers(a)
        k += 1
    x = a - eye
    # log(I + X) = integral over [0, 1] of X (I + t X)^-1 dt
    t, w = 0.5 * (_NODES + 1.0), 0.5 * _WEIGHTS
    log = sum(wi * np.linalg.solve(eye + ti * x, x) for ti, wi in zip(t, w))
    return log * 2.0 ** k


def logm_one(a):
    """The principal logarithm of one complex128 matrix (NaNs for a singular one)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    w, v = np.linalg.eig(a)
    if np.any(w == 0) or not np.all(np.isfinite(a)):
        return np.full(a.shape, np.nan + 1j * np.nan)
    if np.linalg.cond(v) < 1e6:
        return (v * np.log(w)[None, :]) @ np.linalg.inv(v)
    try:
        return _log_scaling_squaring(a)
    except np.linalg.LinAlgError:
        return np.full(a.shape, np.nan + 1j * np.nan)


@register_kernel("MatrixLogarithm", CPU, fresh_outputs=True)
def _matrix_logarithm(ctx):
    name = ctx.name

    def logm(x):
        if x.ndim < 2:
            raise errors.InvalidArgumentError(f"Input tensor 0 must have rank >= 2, got {x.ndim}", node=name)
        if x.shape[-1] != x.shape[-2]:
            raise errors.InvalidArgumentError("Input matrix must be square.", node=name)
        n = x.shape[-1]
        flat = x.reshape((int(np.prod(x.shape[:-2])), n, n)).astype(np.complex128)
        with np.errstate(all="ignore"):
            out = np.stack([logm_one(m) for m in flat]) if flat.shape[0] else flat
        return out.reshape(x.shape).astype(x.dtype)
    return logm


def logm(input, name=None):  # noqa: A002
    """The principal matrix logarithm of (batches of) complex square matrices."""
    return apply_op("MatrixLogarithm", [input], name=name or "MatrixLogarithm").outputs[0]

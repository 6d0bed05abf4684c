"""Special functions (TF's special_math_ops and the special functions of its
math_ops): lgamma, digamma, polygamma, zeta, igamma, igammac, lbeta,
erfinv, ndtri, bessel_i0e, bessel_i1e, bessel_i0, bessel_i1, betainc.

`ops.py` declares the ops and the TF1 API, `kernels.py` registers CPU
kernels over `functions.py` (the numerical algorithms and their accuracy,
numpy only), `grad.py` TF's gradients. Importing registers them.
"""
from . import grad as _grad, kernels as _kernels  # noqa: F401 - registers kernels and gradients
from .ops import (bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, betainc, digamma, erfinv, igamma,  # noqa: F401
                  igammac, lbeta, lgamma, ndtri, polygamma, zeta)

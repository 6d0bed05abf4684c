"""CPU kernels of the special-function ops (SIM wraps them; GPU has none, so
these ops are placed on a CPU): float64 numpy (`functions.py`), cast back to
the input's dtype."""
import numpy as np

from ..framework.registry import register_kernel
from . import functions

_FUNCTIONS = {"Lgamma": functions.lgamma, "Digamma": functions.digamma, "Erfinv": functions.erfinv,
              "Ndtri": functions.ndtri, "BesselI0e": functions.bessel_i0e, "BesselI1e": functions.bessel_i1e,
              "Igamma": functions.igamma, "Igammac": functions.igammac,
              "IgammaGradA": functions.igamma_grad_a, "Polygamma": functions.polygamma,
              "Zeta": functions.zeta, "Betainc": functions.betainc}


def _kernel_of(fn):
    def factory(ctx):
        def kernel(*inputs):
            dtype = np.asarray(inputs[0]).dtype
            with np.errstate(all="ignore"):
                return np.asarray(fn(*inputs), dtype=dtype)
        return kernel
    return factory


for _op_type, _fn in _FUNCTIONS.items():
    register_kernel(_op_type, ("CPU",), fresh_outputs=True)(_kernel_of(_fn))

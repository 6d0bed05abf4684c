"""The Bucketize kernel, as TF's CPU kernel computes it."""
import numpy as np

from ..framework.registry import register_kernel


@register_kernel("Bucketize", ("CPU",), fresh_outputs=True, inexpensive=True)
def _bucketize(ctx):
    # TF's boundaries are floats, searched with std::upper_bound: a double input is compared in
    # double, any other input as a float.
    boundaries = np.asarray(ctx.attr("boundaries"), np.float32)

    def bucketize(x):
        if x.dtype == np.float64:
            return np.searchsorted(boundaries.astype(np.float64), x, side="right").astype(np.int32)
        return np.searchsorted(boundaries, x.astype(np.float32), side="right").astype(np.int32)
    return bucketize

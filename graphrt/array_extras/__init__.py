"""Array, scatter and search ops of TF1 that graphrt/ops lacks: tensor and
variable scatters (nd and row-wise), searchsorted, setdiff1d,
unique_with_counts, histograms, unravel_index, saturate_cast, shape_n,
parallel_stack, bitcast, ensure_shape, batch_gather, the segment products,
broadcast_dynamic_shape and guarantee_const.

`ops.py` declares the ops and the TF1 API, `kernels.py` registers their
kernels, `grad.py` TF's gradients. Importing registers them. (gather with
batch_dims and boolean_mask with N-D masks live with gather in
graphrt/ops/array_ops.py.)
"""
from . import grad as _grad, kernels as _kernels  # noqa: F401 - registers kernels and gradients
from .ops import broadcast_dynamic_shape, guarantee_const  # noqa: F401
from .ops import (batch_gather, batch_scatter_update, bitcast, ensure_shape, histogram_fixed_width,  # noqa: F401
                  histogram_fixed_width_bins, parallel_stack, saturate_cast, scatter_div, scatter_max,
                  scatter_min, scatter_mul, scatter_nd_add, scatter_nd_sub, scatter_nd_update, searchsorted,
                  segment_prod, setdiff1d, shape_n, tensor_scatter_add, tensor_scatter_nd_add,
                  tensor_scatter_nd_max, tensor_scatter_nd_min, tensor_scatter_nd_sub, tensor_scatter_nd_update,
                  tensor_scatter_sub, tensor_scatter_update, unique_with_counts, unravel_index,
                  unsorted_segment_prod)

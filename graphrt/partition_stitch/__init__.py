"""tf.dynamic_partition and tf.dynamic_stitch (TF's data_flow_ops): rows of a
tensor routed to partitions by an index tensor, and interleaved back.

`ops.py` declares DynamicPartition, DynamicStitch and ParallelDynamicStitch
and the TF1 API, `kernels.py` their host kernels (TF's checks and
messages), `grad.py` TF's gradients. Importing registers them.
"""
from . import grad as _grad, kernels as _kernels  # noqa: F401 - registers kernels and gradients
from .ops import dynamic_partition, dynamic_stitch, parallel_dynamic_stitch  # noqa: F401

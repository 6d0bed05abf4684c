"""`tf.contrib.memory_stats`: BytesInUse, MaxBytesInUse, BytesLimit (graphrt/memory_stats)."""
from ..memory_stats import BytesInUse, BytesLimit, MaxBytesInUse  # noqa: F401

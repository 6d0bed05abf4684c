"""Queues and the input pipelines built on them (TF1's data_flow_ops, QueueRunner,
Coordinator, input producers and batching, readers). Importing this package
registers the ops and kernels."""
from . import queue_ops, queue_kernels  # noqa: F401
from .queues import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue  # noqa: F401

"""`tf.queue`: the queue classes under TF 2's namespace for them (graphrt/data_flow/queues.py)."""
from .data_flow import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue  # noqa: F401

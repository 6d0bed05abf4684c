"""Queues and the input pipelines built on them (TF1's data_flow_ops, QueueRunner,
Coordinator, input producers and batching, readers). Importing this package
registers the ops and kernels."""
from . import queue_ops, queue_kernels  # noqa: F401
from .queues import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue  # noqa: F401
from .count_up_to import count_up_to  # noqa: F401
from .coordinator import Coordinator, LooperThread  # noqa: F401
from .queue_runner import QueueRunner, add_queue_runner, start_queue_runners  # noqa: F401
from .input import (batch, batch_join, input_producer, limit_epochs, range_input_producer,  # noqa: F401
                    shuffle_batch, shuffle_batch_join, slice_input_producer, string_input_producer)
from .io_ops import match_filenames_once, matching_files, read_file, write_file  # noqa: F401
from .readers import (FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader,  # noqa: F401
                      WholeFileReader)
from .accumulators import ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator  # noqa: F401

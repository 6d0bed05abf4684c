"""`graphrt.distribute` (also `tf.distribute`): data and pipeline parallelism built from Send/Recv.

    collectives.py        all_reduce / reduce_scatter / all_gather / broadcast / reduce
    ring.py, tree.py,     the algorithms, as ordinary ops placed per device
    halving_doubling.py
    replicas.py           input checks, chunking, op placement and names
    accounting.py         bytes sent, messages, memory and time of a traced step
    data_parallel.py      DataParallel: towers, mirrored variables, reduced gradients, ZeRO stages
    bucketing.py          gradient buckets (fuse, all-reduce once, split back)
    zero.py               which replica owns which variable's optimizer state
    pipeline.py           pipeline parallelism: GPipe and 1F1B schedules, the bubble measured
"""
from .accounting import bytes_sent, device_memory, messages_sent, step_time_micros, transfers
from .data_parallel import DataParallel
from . import cluster_resolver  # noqa: F401 - TFConfigClusterResolver, SlurmClusterResolver
from .collectives import (ALGORITHMS, all_gather, all_reduce, broadcast, choose_algorithm, modelled_time,
                          reduce, reduce_scatter)
from .pipeline import Pipeline, bubble_fraction, pipeline, schedule_tasks, textbook_bubble

__all__ = ["ALGORITHMS", "DataParallel", "Pipeline", "all_gather", "all_reduce", "broadcast", "bubble_fraction",
           "bytes_sent", "choose_algorithm", "device_memory", "messages_sent", "modelled_time", "pipeline", "reduce",
           "reduce_scatter", "schedule_tasks", "step_time_micros", "textbook_bubble", "transfers"]

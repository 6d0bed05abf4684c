"""`tf.contrib.nccl`: TF1's names for all-reduce over the devices of the inputs.

graphrt has no NCCL; these build the ring all-reduce of graphrt.distribute
(one result per input, on the input's device), which is what NCCL runs.
"""
from ..distribute.collectives import all_reduce


def all_sum(tensors):
    """Returns the sum of `tensors` on each of their devices (TF1 `tf.contrib.nccl.all_sum`)."""
    return all_reduce(tensors, op="sum", algorithm="ring", name="NcclAllSum")


def all_max(tensors):
    """Returns the elementwise max of `tensors` on each of their devices (`tf.contrib.nccl.all_max`)."""
    return all_reduce(tensors, op="max", algorithm="ring", name="NcclAllMax")

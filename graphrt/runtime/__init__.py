"""The runtime: devices, the dataflow executor, steps and their stats."""
from . import comm_kernels  # noqa: F401 - registers _Arg/_Retval/_Send/_Recv kernels
from . import functions  # noqa: F401 - registers the kernels of call ops (PartitionedCall)
from .device_kernels import register_device_kernels

# SIM kernels for every CPU kernel registered so far, so that placement knows
# SIM devices before any exists (graphrt inspect --devices CPU:1,SIM:2);
# making a SIM device adds those of kernels registered since.
register_device_kernels("SIM")

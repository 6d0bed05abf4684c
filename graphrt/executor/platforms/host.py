"""The `host` platform: the CPU as a StreamExecutor device.

Device memory is ordinary host memory (one numpy buffer per allocation),
so it is host-readable: `as_array` works from any thread. Streams are still
real worker threads, so the platform behaves like every other one and
code written against it runs unchanged on `sim` and `cuda`.
"""
import dataclasses
import math
import os

import numpy as np

from ..heap_allocator import HeapAllocator
from ..platform import Platform, options_from_mapping
from ..stream_executor import StreamExecutor


def _physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


@dataclasses.dataclass(frozen=True)
class HostOptions:
    """Options of `host` executors.

    Attributes:
        memory_limit: bytes the device may hold at once; None = physical memory.
    """

    memory_limit: int | None = None

    @classmethod
    def from_mapping(cls, mapping):
        return options_from_mapping(cls, mapping)


class HostExecutor(StreamExecutor):
    """A StreamExecutor over host memory; numpy kernels, readable from anywhere."""

    def _create_allocator(self):
        limit = self.options.memory_limit
        return HeapAllocator(limit if limit is not None else _physical_memory(), name=self.name)

    def _device_bytes(self, memory):
        return self.allocator.buffer(memory.opaque)

    def _device_view(self, memory, dtype, shape):
        nbytes = math.prod(shape) * dtype.itemsize
        return self._device_bytes(memory)[:nbytes].view(dtype).reshape(shape)

    def _plain_copies(self):
        return True

    def _copy_h2d(self, stream, memory, host):
        np.copyto(self._device_view(memory, host.dtype, host.shape), host)

    def _copy_d2h(self, stream, host, memory):
        np.copyto(host, self._device_view(memory, host.dtype, host.shape))

    def _copy_d2d(self, stream, dst, src, nbytes):
        np.copyto(dst.executor._device_bytes(dst)[:nbytes], src.executor._device_bytes(src)[:nbytes])

    def _model_name(self):
        return "host memory (numpy)"


class HostPlatform(Platform):
    """The CPU; any number of logical devices share the host's memory."""

    name = "host"
    device_type = "CPU"
    options_type = HostOptions
    default_device_count = 16

    def _new_executor(self, ordinal, options):
        return HostExecutor(self, ordinal, options)

"""The `sim` platform: a simulated accelerator that needs no GPU.

Each device has its own memory, one numpy uint8 arena managed by the BFC
allocator; DeviceMemory handles are offsets into it and host code cannot
read them (`as_array` only works inside work running on the device's own
streams). Each device has a compute stream and h2d/d2h/d2d copy streams on
their own threads, so everything a GPU does asynchronously (overlapping
copies and kernels, events, stream errors) happens here too.

Costs can be modelled so copy/compute overlap is visible on a laptop: a
copy takes at least `copy_latency + nbytes / copy_bandwidth` seconds and a
kernel at least `kernel_launch_latency + argument bytes / kernel_bandwidth`.
The stream thread does the real work first and then sleeps for the modelled
time left, which releases the GIL, so other streams make progress meanwhile.
A kernel's own code therefore runs at the start of its modelled time: a
graph kernel (runtime/device_kernels.py) hands its outputs, with a ready
event recorded after it, to the executor right away, and the executor
queues the next kernels while the stream is still busy, as a host runs
ahead of a GPU. (Sleeping first made every kernel wait for the executor's
bookkeeping of the one before it: idle gaps on the stream no GPU has.)
Unmodelled (the default), copies are a single np.copyto into a view of the
arena.
"""
import dataclasses
import time

import numpy as np

from graphrt import errors

from ..bfc_allocator import BFCAllocator
from ..platform import Platform, options_from_mapping
from ..stream import current_stream
from .host import HostExecutor

DEFAULT_MEMORY_BYTES = 256 << 20


@dataclasses.dataclass(frozen=True)
class SimOptions:
    """Options of `sim` executors (also accepted as a dict by `Platform.configure`).

    Attributes:
        memory_bytes: size of each device's arena. The numpy buffer is
            allocated when the device first allocates; pages are only
            touched as they are used.
        copy_bandwidth: modelled host<->device bandwidth in bytes/s; None
            copies as fast as the machine can.
        d2d_bandwidth: modelled device-to-device bandwidth in bytes/s; None
            is unmodelled.
        copy_latency: modelled fixed cost of every copy, in seconds.
        kernel_launch_latency: modelled fixed cost of every kernel, in seconds.
        kernel_bandwidth: modelled bytes/s a kernel reads: a kernel also
            takes (bytes of its device-tensor arguments) / kernel_bandwidth
            seconds, so smaller tensors make shorter kernels (a memory-bound
            roofline); None is unmodelled. A kernel holds its stream for its
            modelled time or its real time, whichever is longer; traced
            kernels span that, as a GPU trace would.
        allocation_retry_timeout: seconds an allocation that does not fit
            waits for frees before ResourceExhaustedError (TF waits 10 s).
        strict_host_access: refuse `as_array` outside this device's streams,
            as real device memory would be unreadable from the host.

    Example:
        >>> get_platform("sim").configure(options=SimOptions(copy_bandwidth=2e9, copy_latency=1e-5))
        >>> get_platform("sim").configure(options={"copy_bandwidth": 2e9})  # same, from a config dict
    """

    memory_bytes: int = DEFAULT_MEMORY_BYTES
    copy_bandwidth: float | None = None
    d2d_bandwidth: float | None = None
    copy_latency: float = 0.0
    kernel_launch_latency: float = 0.0
    kernel_bandwidth: float | None = None
    allocation_retry_timeout: float = 0.0
    strict_host_access: bool = True

    def __post_init__(self):
        if self.memory_bytes < 256:
            raise errors.InvalidArgumentError(f"SimOptions.memory_bytes must be >= 256, got {self.memory_bytes}")
        for name in ("copy_bandwidth", "d2d_bandwidth", "kernel_bandwidth"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise errors.InvalidArgumentError(f"SimOptions.{name} must be > 0 or None, got {value}")
        for name in ("copy_latency", "kernel_launch_latency", "allocation_retry_timeout"):
            if getattr(self, name) < 0:
                raise errors.InvalidArgumentError(f"SimOptions.{name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def from_mapping(cls, mapping):
        return options_from_mapping(cls, mapping)

    @property
    def models_kernel_costs(self):
        """True when kernels have a modelled time (they then run at its start: see the module docstring)."""
        return self.kernel_launch_latency > 0 or self.kernel_bandwidth is not None

    @property
    def models_costs(self):
        """True when any copy or kernel cost is modelled."""
        return (self.copy_bandwidth is not None or self.d2d_bandwidth is not None
                or self.copy_latency > 0 or self.kernel_launch_latency > 0 or self.kernel_bandwidth is not None)


class SimExecutor(HostExecutor):
    """A simulated device: a private BFC-managed arena and optional cost model."""

    def __init__(self, platform, ordinal, options):
        super().__init__(platform, ordinal, options)
        self._arena = None
        self._wall_offset_ns = time.time_ns() - time.perf_counter_ns()  # perf_counter -> trace (wall) time

    def _create_allocator(self):
        self._arena = np.empty(self.options.memory_bytes, dtype=np.uint8)
        return BFCAllocator(self.options.memory_bytes, name=self.name)

    def _device_bytes(self, memory):
        return self._arena[memory.opaque:memory.opaque + memory.size]

    def _device_view(self, memory, dtype, shape):
        return np.ndarray(shape, dtype, self._arena, memory.opaque)  # (one call: on every kernel's outputs)

    def _check_host_access(self, memory):
        if not self.options.strict_host_access:
            return
        stream = current_stream()
        if stream is None or stream.executor is not self:
            raise errors.FailedPreconditionError(
                f"{memory!r} is memory of the simulated device {self.name}; host code cannot read it. "
                f"Copy it to the host (Stream.then_memcpy_d2h) or read it in a kernel launched on one of "
                f"{self.name}'s streams (Stream.then_launch).", device=self.name)

    def _plain_copies(self):
        # a modelled copy sleeps, and a modelled kernel starts after the copies before it (ready_floor)
        return not self.options.models_costs

    def _copy_h2d(self, stream, memory, host):
        start = time.perf_counter()
        super()._copy_h2d(stream, memory, host)
        self._model_copy(start, host.nbytes, self.options.copy_bandwidth)

    def _copy_d2h(self, stream, host, memory):
        start = time.perf_counter()
        super()._copy_d2h(stream, host, memory)
        self._model_copy(start, host.nbytes, self.options.copy_bandwidth)

    def _copy_d2d(self, stream, dst, src, nbytes):
        start = time.perf_counter()
        super()._copy_d2d(stream, dst, src, nbytes)
        self._model_copy(start, nbytes, self.options.d2d_bandwidth)

    def _launch(self, stream, kernel, args, kwargs):
        modelled = self.options.kernel_launch_latency
        if self.options.kernel_bandwidth:
            modelled += _argument_bytes(args) / self.options.kernel_bandwidth
        if not modelled:
            kernel(*args, **kwargs)
            return
        now = time.perf_counter()
        # The device's clock: a kernel starts when the stream's earlier work has ended in modelled time
        # and it had been enqueued, as on a GPU. Not when this thread woke from sleeping through the
        # kernel before: time.sleep overshoots by ~0.1 ms, and that is the simulator's, not the device's.
        start = min(now, max(stream.launch_enqueued, stream.ready_floor, stream.modelled_free_at))
        end = start + modelled
        stream.launch_started_ns = self._wall_offset_ns + int(start * 1e9)  # the kernel's trace event
        stream.launch_ends_ns = self._wall_offset_ns + int(end * 1e9)  # ... ends no sooner
        try:
            kernel(*args, **kwargs)
        finally:
            now = time.perf_counter()
            stream.modelled_free_at = max(end, now)  # (a kernel that ran longer than modelled held it)
            if end > now:
                time.sleep(end - now)  # the stream stays busy for the modelled time, as with copies

    def _model_copy(self, start, nbytes, bandwidth):
        modelled = self.options.copy_latency + (nbytes / bandwidth if bandwidth else 0.0)
        if modelled:
            remaining = start + modelled - time.perf_counter()
            if remaining > 0:
                time.sleep(remaining)  # releases the GIL: other streams run meanwhile

    def _model_name(self):
        return "simulated accelerator"


class SimPlatform(Platform):
    """Simulated accelerators, `sim:0` .. `sim:<device_count-1>`."""

    name = "sim"
    device_type = "SIM"
    options_type = SimOptions
    default_device_count = 8

    def _new_executor(self, ordinal, options):
        return SimExecutor(self, ordinal, options)


def _argument_bytes(args):
    """Bytes of the device tensors among a kernel's arguments (one list deep)."""
    from ..device_tensor import DeviceTensor
    total = 0
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, DeviceTensor):
                total += t.nbytes
    return total

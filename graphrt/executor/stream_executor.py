"""StreamExecutor: one device ordinal's memory, streams and events.

The base class does the bookkeeping every platform shares: handle checks,
error context, the default streams, shutdown. A platform subclass supplies
the allocator and a handful of hooks that touch the device (`_copy_h2d`,
`_copy_d2h`, `_copy_d2d`, `_launch`, `_device_view`, and on devices with
their own queues `_record_device_marker` / `_wait_device_marker` /
`_synchronize_device`). Hooks that copy or launch run on a stream's worker
thread; synchronous copies call the same hooks on the caller's thread.
"""
import collections
import dataclasses
import itertools
import math
import threading
import weakref

import numpy as np

from graphrt import errors

from ._format import format_bytes
from .device_memory import DeviceMemory
from .device_tensor import memory_of
from .dma import check_dma_safe
from .event import Event
from .reuse_pool import ReusePool
from .stream import Stream, current_stream

DeviceStreams = collections.namedtuple("DeviceStreams", "compute h2d d2h d2d")
DeviceStreams.__doc__ = """A device's standing streams: one for kernels and one per copy direction.

TF's GPU device context has the same four; copies use their own streams so
they overlap with compute, ordered against it with events."""

MemoryUsage = collections.namedtuple("MemoryUsage", "free total")
MemoryUsage.__doc__ = "Device memory in bytes: free now, and total usable (TF DeviceMemoryUsage)."


@dataclasses.dataclass(frozen=True)
class DeviceDescription:
    """What a platform knows about one device (TF DeviceDescription).

    Attributes:
        name: short name, e.g. 'sim:0'.
        platform: platform name ('host', 'sim', 'cuda').
        device_type: TF device type ('CPU', 'SIM', 'GPU').
        ordinal: device index within the platform.
        memory_limit: bytes the device's allocator can hand out.
        model: free text, e.g. 'simulated accelerator' or the GPU's name.
    """

    name: str
    platform: str
    device_type: str
    ordinal: int
    memory_limit: int | None
    model: str


class StreamExecutor:
    """The interface to one device: memory, streams, events (TF StreamExecutor).

    Get one with `get_platform(name).executor(ordinal)` (cached and shared)
    or `platform.create_executor(ordinal, options)` (yours to `shutdown()`).

    Attributes:
        platform: the Platform this executor belongs to.
        ordinal: device index within the platform.
        options: the platform's options dataclass in force (e.g. SimOptions).
        name: '<platform>:<ordinal>', e.g. 'sim:0'.
        array_module: numpy, or cupy on `cuda`: the array library kernels use.

    Example:
        >>> ex = get_platform("sim").executor(0)
        >>> x = DeviceTensor.empty(ex, (2, 3), np.float32)
        >>> def double(t):                      # a kernel: runs on a stream thread
        ...     a = t.as_array(); a *= 2
        >>> ex.h2d_stream.then_memcpy_h2d(x, np.ones((2, 3), np.float32))
        >>> ex.compute_stream.then_wait_for(ex.h2d_stream).then_launch(double, x)
        >>> out = np.empty((2, 3), np.float32)
        >>> ex.d2h_stream.then_wait_for(ex.compute_stream).then_memcpy_d2h(out, x)
        >>> ex.d2h_stream.block_host_until_done(timeout=5)   # out is now all 2.0
    """

    array_module = np
    _pool = None  # the open ReusePool, if any

    def __init__(self, platform, ordinal, options):
        self.platform = platform
        self.ordinal = ordinal
        self.options = options
        self.name = f"{platform.name}:{ordinal}"
        self._lock = threading.Lock()
        self._allocator = None
        self._streams = weakref.WeakSet()
        self._default_streams = None
        self._stream_numbers = itertools.count(1)
        self._shut_down = False
        self.plain_copies = self._plain_copies()  # options do not change once an executor exists

    # -- memory ---------------------------------------------------------

    @property
    def allocator(self):
        """The device allocator (BFCAllocator on sim/cuda, HeapAllocator on host), made on first use."""
        if self._allocator is None:
            with self._lock:
                if self._allocator is None:
                    self._allocator = self._create_allocator()
        return self._allocator

    def allocate(self, nbytes):
        """Allocates `nbytes` of device memory; 0 bytes gives the null handle.

        Raises:
            ResourceExhaustedError: the device is out of memory (with a
                summary of the allocator).
        """
        if self._shut_down:
            self._check_running()
        allocator = self._allocator or self.allocator  # (the property makes it on first use)
        offset, alloc_id = allocator.allocate_with_id(nbytes, getattr(self.options, "allocation_retry_timeout", 0.0))
        if offset is None:
            return DeviceMemory.null(self)
        return DeviceMemory(offset, nbytes, self, alloc_id)

    def deallocate(self, memory):
        """Frees `memory` now. Null handles are ignored.

        Only free memory that no enqueued work still uses
        (`Stream.then_deallocate` frees in stream order instead).

        Raises:
            InvalidArgumentError: the memory belongs to another device.
            InternalError: double free.
        """
        if memory.is_null():
            return
        if memory.executor is not self:
            raise errors.InvalidArgumentError(
                f"{self.name}: cannot deallocate {memory!r}, it belongs to {memory.device}", device=self.name)
        if not self.allocator.is_live(memory.opaque, memory._alloc_id):
            raise errors.InternalError(f"{self.name}: double free of {memory!r}", device=self.name)
        self.allocator.deallocate(memory.opaque)

    def _release(self, memory, pooled=True):
        """Deallocation when a DeviceTensor that owns `memory` is gone: never raises. Kept for
        reuse instead while a ReusePool of this thread is open (`pooled`)."""
        pool = self._pool
        if pool is not None and pooled and pool.give(memory):
            return
        try:
            (self._allocator or self.allocator).release(memory.opaque, memory._alloc_id)
        except errors.OpError:
            pass  # freed concurrently: nothing left to give back

    def open_reuse_pool(self):
        """A ReusePool for the calling thread (see executor/reuse_pool.py), or None when one is open."""
        with self._lock:
            if self._pool is not None:
                return None
            self._pool = ReusePool(self)
            return self._pool

    def close_reuse_pool(self, pool):
        """Closes `pool` (from open_reuse_pool; None: nothing) and frees what it kept."""
        if pool is None:
            return
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.drain()

    def memory_usage(self):
        """MemoryUsage(free, total) of this device's allocator, in bytes."""
        stats = self.allocator.stats()
        total = stats.bytes_limit
        return MemoryUsage(None if total is None else total - stats.bytes_in_use, total)

    def allocator_stats(self):
        """AllocatorStats of this device's allocator."""
        return self.allocator.stats()

    def as_array(self, memory, dtype, shape):
        """The device-side array behind `memory`: a numpy view, or a cupy array on `cuda`.

        For use inside kernels launched on this executor's streams. On `sim`
        (with strict_host_access) and `cuda` calling it from anywhere else
        raises FailedPreconditionError: device memory is not host-readable,
        copy it out instead.
        """
        dtype = np.dtype(dtype)
        shape = tuple(int(d) for d in shape)
        nbytes = math.prod(shape) * dtype.itemsize
        self._check_host_access(memory)
        if nbytes == 0:
            return self.array_module.empty(shape, dtype)
        if memory.executor is not self:
            raise errors.InvalidArgumentError(
                f"{self.name}: as_array of {memory!r}, which belongs to {memory.device}", device=self.name)
        self._check_live(memory, nbytes, "as_array")
        return self._device_view(memory, dtype, shape)

    def host_memory_allocate(self, nbytes):
        """A host uint8 buffer suited to async copies (pinned on `cuda`)."""
        return np.empty(int(nbytes), dtype=np.uint8)

    # -- streams and events -----------------------------------------------

    @property
    def streams(self):
        """DeviceStreams(compute, h2d, d2h, d2d) of this device, created on first use."""
        if self._default_streams is None:
            with self._lock:
                if self._default_streams is None:
                    self._check_running()
                    self._default_streams = DeviceStreams(*(
                        self._new_stream(role) for role in DeviceStreams._fields))
        return self._default_streams

    @property
    def compute_stream(self):
        return self.streams.compute

    @property
    def h2d_stream(self):
        return self.streams.h2d

    @property
    def d2h_stream(self):
        return self.streams.d2h

    @property
    def d2d_stream(self):
        return self.streams.d2d

    def create_stream(self, name=None):
        """A new Stream on this device; its worker thread starts with its first work."""
        self._check_running()
        return self._new_stream(name or f"stream{next(self._stream_numbers)}")

    def create_event(self, name=None):
        """A new, unrecorded Event on this device."""
        return Event(self, name)

    def synchronize_all_activity(self, timeout=None):
        """Waits for every stream of this device to drain.

        Returns True if every stream is ok afterwards.

        Raises:
            DeadlineExceededError: some stream still had work after `timeout` s.
        """
        ok = True
        for stream in list(self._streams):
            if stream is current_stream():
                continue
            try:
                stream.block_host_until_done(timeout)
            except errors.DeadlineExceededError:
                raise
            except errors.OpError:
                ok = False
        return ok

    # -- synchronous copies (on the caller's thread, unordered with streams) --------

    def synchronous_memcpy_h2d(self, dst, host_array):
        """Copies `host_array` into `dst` before returning. Not ordered with stream work."""
        host = np.asarray(host_array)
        if host.nbytes == 0:
            return
        mem = memory_of(dst, None, "destination")
        check_dma_safe(host.dtype, device=self.name)
        self._check_memory(mem, host.nbytes, None, "destination")
        self._copy_h2d(None, mem, host)

    def synchronous_memcpy_d2h(self, host_array, src):
        """Copies the first `host_array.nbytes` bytes of `src` into `host_array` before returning."""
        if host_array.nbytes == 0:
            return
        mem = memory_of(src, None, "source")
        check_dma_safe(host_array.dtype, device=self.name)
        self._check_memory(mem, host_array.nbytes, None, "source")
        self._copy_d2h(None, host_array, mem)

    def synchronous_memcpy_d2d(self, dst, src, nbytes=None):
        """Copies `nbytes` (default: all of `src`) between device buffers before returning."""
        src_mem, dst_mem = memory_of(src, None, "source"), memory_of(dst, None, "destination")
        nbytes = src_mem.size if nbytes is None else int(nbytes)
        if nbytes == 0:
            return
        self._check_peer_memory(src_mem, nbytes, None, "source")
        self._check_peer_memory(dst_mem, nbytes, None, "destination")
        self._copy_d2d(None, dst_mem, src_mem, nbytes)

    # -- description and lifetime --------------------------------------------

    def description(self):
        """DeviceDescription of this device."""
        return DeviceDescription(self.name, self.platform.name, self.platform.device_type,
                                 self.ordinal, self.memory_usage().total, self._model_name())

    def shutdown(self, timeout=1.0):
        """Stops every stream of this device (pending work is cancelled).

        Later calls that need the device raise FailedPreconditionError.
        Idempotent.
        """
        with self._lock:
            self._shut_down = True
            streams = list(self._streams)
        for stream in streams:
            stream.close(timeout)

    @property
    def is_shut_down(self):
        return self._shut_down

    def __repr__(self):
        state = " shut down" if self._shut_down else ""
        usage = ""
        if self._allocator is not None:
            stats = self._allocator.stats()
            usage = f" {format_bytes(stats.bytes_in_use)}/{format_bytes(stats.bytes_limit)} in use,"
        return f"<{type(self).__name__} {self.name}{usage} {len(self._streams)} streams{state}>"

    # -- checks used by Stream --------------------------------------------------

    def _check_running(self):
        if self._shut_down:
            raise errors.FailedPreconditionError(f"{self.name} has been shut down", device=self.name)

    def _new_stream(self, name):
        stream = Stream(self, name)
        self._streams.add(stream)
        return stream

    def _check_memory(self, memory, nbytes, stream, role):
        """`memory` must be this device's, live, and hold `nbytes`."""
        if memory.executor is not self:
            where = stream.name if stream is not None else self.name
            raise errors.InvalidArgumentError(
                f"{where}: {role} {memory!r} is on {memory.device}, not on {self.name}", device=self.name)
        if memory.size >= nbytes and self.allocator.is_live(memory.opaque, memory._alloc_id):
            return  # (on every copy enqueued: _check_live only for its errors)
        self._check_live(memory, nbytes, f"{stream.name if stream is not None else self.name}: {role}")

    def _check_peer_memory(self, memory, nbytes, stream, role):
        """`memory` may be on any device of this platform (a peer copy)."""
        owner = memory.executor
        if owner is None or owner.platform is not self.platform:
            where = stream.name if stream is not None else self.name
            raise errors.InvalidArgumentError(
                f"{where}: {role} {memory!r} is not on a {self.platform.name} device; device-to-device "
                "copies stay within one platform", device=self.name)
        owner._check_live(memory, nbytes, f"{stream.name if stream is not None else self.name}: {role}")

    def _check_live(self, memory, nbytes, where):
        if memory.size < nbytes:
            raise errors.FailedPreconditionError(
                f"Allocation on device not large enough for array: {memory.size} < {nbytes}",
                device=self.name)
        if not self.allocator.is_live(memory.opaque, memory._alloc_id):
            raise errors.FailedPreconditionError(
                f"{where}: {memory!r} has been deallocated", device=self.name)

    # -- platform hooks --------------------------------------------------------

    def _create_allocator(self):
        raise NotImplementedError(f"{type(self).__name__} must provide an allocator")

    def _device_view(self, memory, dtype, shape):
        """The array (numpy/cupy) of `dtype`/`shape` over `memory`'s first bytes."""
        raise NotImplementedError

    def _check_host_access(self, memory):
        """Raise if the calling thread may not read device memory directly."""

    def _plain_copies(self):
        """True when a copy to, from or within this device is nothing but `np.copyto` between
        views of host-addressable memory (no cost model, no device queue): a stream then hands
        its worker the copy itself, views made when it was enqueued (Stream.then_memcpy_*).
        Asked once, when the executor is made (`plain_copies`)."""
        return False

    def _copy_h2d(self, stream, memory, host):
        raise NotImplementedError

    def _copy_d2h(self, stream, host, memory):
        raise NotImplementedError

    def _copy_d2d(self, stream, dst, src, nbytes):
        raise NotImplementedError

    def _launch(self, stream, kernel, args, kwargs):
        kernel(*args, **kwargs)

    def _on_stream_thread_start(self, stream):
        """Runs first on each new worker thread (e.g. select the CUDA device)."""

    def _record_device_marker(self, stream):
        """For devices with their own queues: a marker passed once prior work is done."""
        return None

    def _wait_device_marker(self, stream, marker):
        """Makes the device queue behind `stream` wait for `marker`."""

    def _synchronize_device(self, stream):
        """Blocks the worker until the device has finished `stream`'s work so far."""

    def _model_name(self):
        return type(self).__name__

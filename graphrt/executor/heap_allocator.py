"""HeapAllocator: host memory, one numpy buffer per allocation.

The `host` platform's memory is the process heap, so there is no arena to
carve: each allocation is its own numpy buffer and its opaque handle is the
buffer's address. It reports the same AllocatorStats as the BFC allocator
and enforces an optional byte limit, so the platform suite can treat every
platform alike.
"""
import threading

import numpy as np

from graphrt import errors

from ._format import format_bytes
from .allocator_stats import AllocatorStats, WatchedCounters


class HeapAllocator(WatchedCounters):
    """Allocates host buffers; handles are their addresses.

    Args:
        limit: most bytes live at once, None for unlimited.
        name: names the allocator in reprs and errors (e.g. 'host:0').
    """

    def __init__(self, limit=None, name="heap"):
        self.name = name
        self.limit = limit
        # Reentrant, and release() defers a free asked for inside a locked section: a DeviceTensor frees
        # in __del__, which the garbage collector may run on a thread that holds this lock.
        self._lock = threading.RLock()
        self._deferred = []
        self._buffers = {}  # address -> (uint8 buffer, alloc_id, requested bytes)
        self._next_alloc_id = 1
        self._bytes_in_use = 0
        self._peak_bytes_in_use = 0
        self._num_allocs = 0
        self._largest_alloc_size = 0

    def allocate(self, nbytes, timeout=0.0):
        """Returns the address of a fresh `nbytes` buffer (None for 0 bytes)."""
        del timeout  # nothing to wait for: the heap has no fragmentation to outlast
        nbytes = int(nbytes)
        if nbytes < 0:
            raise errors.InvalidArgumentError(f"Allocator ({self.name}): negative allocation size {nbytes}")
        if nbytes == 0:
            return None
        with self._lock:
            if self.limit is not None and self._bytes_in_use + nbytes > self.limit:
                raise errors.ResourceExhaustedError(
                    f"Allocator ({self.name}) ran out of memory trying to allocate {format_bytes(nbytes)} "
                    f"({nbytes} bytes). {self._summary_locked()}", device=self.name)
        buffer = np.empty(nbytes, dtype=np.uint8)
        address = buffer.ctypes.data
        with self._lock:
            self._buffers[address] = (buffer, self._next_alloc_id, nbytes)
            self._next_alloc_id += 1
            self._num_allocs += 1
            self._bytes_in_use += nbytes
            self._requested_in_use += nbytes
            self._peak_bytes_in_use = max(self._peak_bytes_in_use, self._bytes_in_use)
            self._largest_alloc_size = max(self._largest_alloc_size, nbytes)
            self._notify_watches(nbytes)
        if self._deferred:
            self._free_deferred()
        return address

    def allocate_with_id(self, nbytes, timeout=0.0):
        """allocate(), returning (address, allocation_id) ((None, 0) for 0 bytes)."""
        address = self.allocate(nbytes, timeout)
        return (None, 0) if address is None else (address, self.allocation_id(address))

    def release(self, address, allocation_id):
        """Frees the buffer at `address` if it is live with `allocation_id`; True if it was (or,
        asked from inside this allocator's locked section, will be when the section ends)."""
        if self._lock._is_owned():
            self._deferred.append((address, allocation_id))
            return True
        with self._lock:
            entry = self._buffers.get(address)
            if entry is None or entry[1] != allocation_id:
                return False
        self.deallocate(address)
        return True

    def _free_deferred(self):
        while self._deferred:
            self.release(*self._deferred.pop())

    def deallocate(self, address):
        """Frees the buffer at `address`; InternalError when it is not live."""
        if address is None:
            return
        with self._lock:
            entry = self._buffers.pop(address, None)
            if entry is None:
                raise errors.InternalError(
                    f"Allocator ({self.name}): deallocate of {address:#x}, which is not a live "
                    "allocation (double free or foreign pointer)", device=self.name)
            self._bytes_in_use -= entry[2]
            self._requested_in_use -= entry[2]
        if self._deferred:
            self._free_deferred()

    def buffer(self, address):
        """The uint8 numpy buffer behind a live address."""
        entry = self._buffers.get(address)
        if entry is None:
            raise errors.InternalError(f"Allocator ({self.name}): {address!r} is not a live allocation",
                                       device=self.name)
        return entry[0]

    def allocation_id(self, address):
        entry = self._buffers.get(address)
        if entry is None:
            raise errors.InternalError(f"Allocator ({self.name}): {address!r} is not a live allocation",
                                       device=self.name)
        return entry[1]

    def is_live(self, address, allocation_id=None):
        entry = self._buffers.get(address)
        return entry is not None and (allocation_id is None or entry[1] == allocation_id)

    def _watch_lock(self):
        return self._lock

    def stats(self):
        with self._lock:
            return self._stats_locked()

    def clear_stats(self):
        with self._lock:
            self._num_allocs = 0
            self._largest_alloc_size = 0
            self._peak_bytes_in_use = self._bytes_in_use

    def summary(self):
        with self._lock:
            return self._summary_locked()

    def __repr__(self):
        return f"<HeapAllocator {self.name} {self.summary()}>"

    def _stats_locked(self):
        free = None if self.limit is None else self.limit - self._bytes_in_use
        return AllocatorStats(
            num_allocs=self._num_allocs, bytes_in_use=self._bytes_in_use,
            peak_bytes_in_use=self._peak_bytes_in_use, largest_alloc_size=self._largest_alloc_size,
            bytes_limit=self.limit, largest_free_chunk=free if free is not None else 0)

    def _summary_locked(self):
        return (f"{format_bytes(self._bytes_in_use)} in use in {len(self._buffers)} buffers, "
                f"limit {format_bytes(self.limit)}")

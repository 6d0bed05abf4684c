"""BFCAllocator: best-fit with coalescing over one fixed arena (TF's BFC).

The arena is a range of integer offsets [0, arena_size); the allocator only
does the bookkeeping, so the same class manages a numpy buffer on `sim` and
a cupy buffer on `cuda`. The arithmetic follows TensorFlow exactly:

* every request is rounded up to a multiple of 256 bytes; 0 bytes -> None;
* 21 bins, bin b holds free chunks with size in [256*2^b, 256*2^(b+1)),
  the last bin (256 MiB) everything larger; each bin is ordered by
  (size, offset), so the first fit found scanning upward from the request's
  bin is the best fit (smallest, then lowest address);
* a chunk is split when it is at least twice the rounded request or the
  leftover would be at least 128 MiB; otherwise the whole chunk is handed
  out (bytes_in_use counts it whole);
* a freed chunk merges with free physical neighbours before it is binned.

There is one region (the arena) and no growth: when nothing fits, the
allocation optionally waits `timeout` seconds for frees, then fails with a
ResourceExhaustedError that summarises the arena.
"""
import bisect
import collections
import threading
import time

from graphrt import errors

from ._format import format_bytes
from .allocator_stats import AllocatorStats, WatchedCounters

MIN_ALLOCATION_SIZE = 256
NUM_BINS = 21
MAX_INTERNAL_FRAGMENTATION = 128 << 20  # leftover this large is always split off
_FREE = -1

ChunkInfo = collections.namedtuple(
    "ChunkInfo", "offset size requested_size allocation_id in_use bin")
ChunkInfo.__doc__ = "One chunk of the arena as reported by BFCAllocator.chunks()."


def round_bytes(nbytes):
    """Rounds a request up to the 256-byte allocation granule."""
    return (nbytes + MIN_ALLOCATION_SIZE - 1) // MIN_ALLOCATION_SIZE * MIN_ALLOCATION_SIZE


def bin_for_size(size):
    """Bin index of a chunk size: min(20, floor(log2(max(size, 256) / 256)))."""
    return min(NUM_BINS - 1, (max(size, MIN_ALLOCATION_SIZE) >> 8).bit_length() - 1)


def bin_size(b):
    """Smallest chunk size held by bin `b`."""
    return MIN_ALLOCATION_SIZE << b


class _Chunk:
    __slots__ = ("offset", "size", "requested", "alloc_id", "prev", "next")

    def __init__(self, offset, size):
        self.offset = offset
        self.size = size
        self.requested = 0
        self.alloc_id = _FREE
        self.prev = None  # physically adjacent chunks
        self.next = None

    @property
    def in_use(self):
        return self.alloc_id != _FREE


class BFCAllocator(WatchedCounters):
    """Best-fit-with-coalescing allocator over offsets [0, arena_size).

    Thread-safe. Offsets returned are multiples of 256.

    Args:
        arena_size: bytes managed; rounded down to a multiple of 256.
        name: names the allocator in reprs and errors (e.g. 'sim:0').

    Example:
        >>> bfc = BFCAllocator(1 << 20, name="sim:0")
        >>> a = bfc.allocate(1000)     # -> 0, a 1024-byte chunk
        >>> bfc.deallocate(a)
        >>> bfc
        <BFCAllocator sim:0 0 B/1.0 MiB in use, 1 chunk>
    """

    def __init__(self, arena_size, name="bfc"):
        arena_size = int(arena_size) // MIN_ALLOCATION_SIZE * MIN_ALLOCATION_SIZE
        if arena_size <= 0:
            raise errors.InvalidArgumentError(
                f"BFCAllocator {name}: arena must hold at least {MIN_ALLOCATION_SIZE} bytes")
        self.name = name
        self.arena_size = arena_size
        # An RLock (entered in C: allocations are on every device kernel's path) guards the state; the
        # Condition over it is for allocations waiting for frees, counted in _waiters. Reentrant because
        # a DeviceTensor frees its memory in __del__, which the garbage collector may run on this thread
        # inside a locked section: release() then defers the free (_deferred) to the section's end
        # rather than deadlock on a plain lock or change the bins half way through an operation.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._deferred = []  # (offset, allocation_id) released from inside a locked section
        self._waiters = 0
        self._chunks = {}  # offset -> _Chunk, every chunk of the arena
        self._bins = [[] for _ in range(NUM_BINS)]  # sorted (size, offset) of free chunks
        self._nonempty = 0  # bit b set: bin b holds a free chunk (the search skips empty bins at once)
        self._next_alloc_id = 1
        self._bytes_in_use = 0
        self._peak_bytes_in_use = 0
        self._num_allocs = 0
        self._largest_alloc_size = 0
        first = _Chunk(0, arena_size)
        self._chunks[0] = first
        self._insert_free(first)

    # -- public API ------------------------------------------------------

    def allocate(self, nbytes, timeout=0.0):
        """Allocates `nbytes`; returns the chunk's offset, or None for 0 bytes.

        Args:
            nbytes: bytes requested.
            timeout: seconds to wait for other threads to free memory before
                giving up (TF waits up to 10 s; 0 fails at once).

        Raises:
            ResourceExhaustedError: nothing fits (message summarises the arena).
            InvalidArgumentError: negative size.
        """
        return self.allocate_with_id(nbytes, timeout)[0]

    def allocate_with_id(self, nbytes, timeout=0.0):
        """allocate(), returning (offset, allocation_id) ((None, 0) for 0 bytes): one call where
        StreamExecutor.allocate needs both."""
        nbytes = int(nbytes)
        rounded = (nbytes + MIN_ALLOCATION_SIZE - 1) // MIN_ALLOCATION_SIZE * MIN_ALLOCATION_SIZE
        if nbytes > 0:
            with self._lock:
                chunk = self._find_chunk(rounded, nbytes)
            if self._deferred:
                self._free_deferred()
            if chunk is not None:  # (the common case: it fits)
                return chunk.offset, chunk.alloc_id
        chunk = self._allocate_or_wait(nbytes, rounded, timeout)
        return (None, 0) if chunk is None else (chunk.offset, chunk.alloc_id)

    def _allocate_or_wait(self, nbytes, rounded, timeout):
        if nbytes <= 0:
            if nbytes < 0:
                raise errors.InvalidArgumentError(f"Allocator ({self.name}): negative allocation size {nbytes}")
            return None
        with self._lock:
            chunk = self._find_chunk(rounded, nbytes)  # (another thread may have freed some since)
            if chunk is None and self._deferred:
                self._free_deferred()
                chunk = self._find_chunk(rounded, nbytes)
            if chunk is not None:
                return chunk
            if timeout > 0 and rounded <= self.arena_size:  # (what can never fit is not worth waiting for)
                deadline = time.monotonic() + timeout
                self._waiters += 1
                try:
                    while chunk is None:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        self._cond.wait(remaining)
                        chunk = self._find_chunk(rounded, nbytes)
                finally:
                    self._waiters -= 1
                if chunk is not None:
                    return chunk
            raise errors.ResourceExhaustedError(self._oom_message(nbytes, rounded), device=self.name)

    def deallocate(self, offset):
        """Frees the chunk at `offset` and coalesces it with free neighbours.

        None (the null allocation) is a no-op.

        Raises:
            InternalError: `offset` is not the start of a live chunk (double
                free or a foreign offset).
        """
        if offset is None:
            return
        with self._lock:
            chunk = self._chunks.get(offset)
            if chunk is None or chunk.alloc_id == _FREE:
                what = "already free (double free)" if chunk is not None else "not the start of any chunk"
                raise errors.InternalError(
                    f"Allocator ({self.name}): deallocate of offset {offset:#x}, which is {what}",
                    device=self.name)
            self._free(chunk)
        if self._deferred:
            self._free_deferred()

    def release(self, offset, allocation_id):
        """Frees the allocation at `offset` if it is live with `allocation_id`; True if it was.
        (A tensor's release: the check and the free under one lock.) Called from inside one of
        this allocator's locked sections (a tensor's __del__ run by the garbage collector), the
        free happens when that section ends, and this returns True."""
        lock = self._lock
        if lock._is_owned():
            self._deferred.append((offset, allocation_id))
            return True
        with lock:
            freed = self._release_locked(offset, allocation_id)
        if self._deferred:
            self._free_deferred()
        return freed

    def _release_locked(self, offset, allocation_id):
        chunk = self._chunks.get(offset)
        if chunk is None or chunk.alloc_id != allocation_id or allocation_id == _FREE:
            return False
        self._free(chunk)
        return True

    def _free_deferred(self):
        with self._lock:
            while self._deferred:
                self._release_locked(*self._deferred.pop())

    def _free(self, chunk):
        self._bytes_in_use -= chunk.size
        self._requested_in_use -= chunk.requested
        chunk.alloc_id = _FREE
        chunk.requested = 0
        # merge with free neighbours
        nxt = chunk.next
        prev = chunk.prev
        if (prev is None or prev.alloc_id != _FREE) and nxt is not None and nxt.alloc_id == _FREE:
            # only the next one (the common case, the arena's free end): the merged chunk, larger,
            # takes its entry's place when that keeps its bin in order (no bin churn)
            size = nxt.size
            b = (size >> 8).bit_length() - 1
            if b >= NUM_BINS:
                b = NUM_BINS - 1
            free = self._bins[b]
            i = bisect.bisect_left(free, (size, nxt.offset))
            self._absorb_next(chunk)
            entry = (chunk.size, chunk.offset)
            if bin_for_size(chunk.size) == b and (
                    i + 1 == len(free) or entry < free[i + 1]):
                free[i] = entry
            else:
                self._drop_entry(b, i)
                self._insert_free(chunk)
        else:
            if nxt is not None and nxt.alloc_id == _FREE:
                self._remove_free(nxt)
                self._absorb_next(chunk)
            if prev is not None and prev.alloc_id == _FREE:
                self._remove_free(prev)
                self._absorb_next(prev)
                chunk = prev
            self._insert_free(chunk)
        if self._waiters:
            self._cond.notify_all()

    def requested_size(self, offset):
        """Bytes the caller asked for at `offset` (InternalError if not live)."""
        return self._live_chunk(offset).requested

    def allocated_size(self, offset):
        """Bytes actually reserved for the allocation at `offset`."""
        return self._live_chunk(offset).size

    def allocation_id(self, offset):
        """Unique, increasing id (from 1) of the allocation at `offset`."""
        return self._live_chunk(offset).alloc_id

    def is_live(self, offset, allocation_id=None):
        """True when `offset` starts a live allocation (with that id, if given)."""
        chunk = self._chunks.get(offset)
        if chunk is None or chunk.alloc_id == _FREE:
            return False
        return allocation_id is None or chunk.alloc_id == allocation_id

    def _watch_lock(self):
        return self._lock

    def stats(self):
        """An AllocatorStats snapshot."""
        with self._lock:
            return AllocatorStats(
                num_allocs=self._num_allocs,
                bytes_in_use=self._bytes_in_use,
                peak_bytes_in_use=self._peak_bytes_in_use,
                largest_alloc_size=self._largest_alloc_size,
                bytes_limit=self.arena_size,
                largest_free_chunk=self._largest_free_chunk())

    def clear_stats(self):
        """Resets num_allocs and largest_alloc_size to 0 and peak to current use."""
        with self._lock:
            self._num_allocs = 0
            self._largest_alloc_size = 0
            self._peak_bytes_in_use = self._bytes_in_use

    def chunks(self):
        """Every chunk of the arena in address order, as ChunkInfo records."""
        with self._lock:
            return [self._info(c) for c in self._walk()]

    def free_chunks(self, bin_index=None):
        """(size, offset) of free chunks in bin order, optionally of one bin."""
        with self._lock:
            if bin_index is not None:
                return list(self._bins[bin_index])
            return [entry for b in self._bins for entry in b]

    def summary(self):
        """A multi-line description of the arena: totals, bins, in-use sizes, a map."""
        with self._lock:
            return self._summary_locked()

    def occupancy_map(self, width=100):
        """One character per 1/width of the arena: '*' requested, 'x' padding, '_' free."""
        with self._lock:
            return self._occupancy_map_locked(width)

    def __repr__(self):
        with self._lock:
            n = len(self._chunks)
            return (f"<BFCAllocator {self.name} {format_bytes(self._bytes_in_use)}/"
                    f"{format_bytes(self.arena_size)} in use, {n} chunk{'s' if n != 1 else ''}>")

    # -- allocation internals (called with the lock held) ---------------------

    def _find_chunk(self, rounded, requested):
        b = (rounded >> 8).bit_length() - 1  # bin_for_size(rounded)
        if b >= NUM_BINS:
            b = NUM_BINS - 1
        nonempty = self._nonempty >> b
        if not nonempty:
            return None
        free = None
        if nonempty & 1:
            free = self._bins[b]
            i = bisect.bisect_left(free, (rounded, -1))
            if i == len(free):
                free = None
                nonempty ^= 1
                if not nonempty:
                    return None
        if free is None:
            # The next non-empty bin: every chunk there is larger than `rounded`, its first the best fit.
            b += (nonempty & -nonempty).bit_length() - 1
            free = self._bins[b]
            i = 0
        size, offset = free[i]
        chunk = self._chunks[offset]
        if size >= 2 * rounded or size - rounded >= MAX_INTERNAL_FRAGMENTATION:
            # split: the rest is a free chunk of its own, right after
            rest = _Chunk(offset + rounded, size - rounded)
            rest.prev = chunk
            nxt = rest.next = chunk.next
            if nxt is not None:
                nxt.prev = rest
            chunk.next = rest
            chunk.size = rounded
            self._chunks[rest.offset] = rest
            entry = (rest.size, rest.offset)  # smaller than the chunk's: in order at its place if in its bin
            if bin_for_size(rest.size) == b and (i == 0 or free[i - 1] < entry):
                free[i] = entry  # (the common case, a split of the arena's free end: no bin churn)
            else:
                self._drop_entry(b, i)
                self._insert_free(rest)
        else:
            self._drop_entry(b, i)
        # (the chunk is in use from here)
        chunk.alloc_id = self._next_alloc_id
        self._next_alloc_id += 1
        chunk.requested = requested
        self._requested_in_use += requested
        self._num_allocs += 1
        size = chunk.size
        in_use = self._bytes_in_use = self._bytes_in_use + size
        if in_use > self._peak_bytes_in_use:
            self._peak_bytes_in_use = in_use
        if self._watches:
            self._notify_watches(size)
        if size > self._largest_alloc_size:
            self._largest_alloc_size = size
        return chunk

    def _absorb_next(self, chunk):
        nxt = chunk.next
        chunk.size += nxt.size
        chunk.next = nxt.next
        if nxt.next is not None:
            nxt.next.prev = chunk
        del self._chunks[nxt.offset]

    def _drop_entry(self, b, i):
        """Removes entry `i` of bin `b`, marking the bin empty when it was the last."""
        free = self._bins[b]
        del free[i]
        if not free:
            self._nonempty &= ~(1 << b)

    def _insert_free(self, chunk):
        size = chunk.size
        b = (size >> 8).bit_length() - 1  # bin_for_size(size): a chunk holds at least 256 bytes
        if b >= NUM_BINS:
            b = NUM_BINS - 1
        bisect.insort(self._bins[b], (size, chunk.offset))
        self._nonempty |= 1 << b

    def _remove_free(self, chunk):
        size = chunk.size
        b = (size >> 8).bit_length() - 1
        if b >= NUM_BINS:
            b = NUM_BINS - 1
        self._drop_entry(b, bisect.bisect_left(self._bins[b], (size, chunk.offset)))

    def _live_chunk(self, offset):
        chunk = self._chunks.get(offset)
        if chunk is None or not chunk.in_use:
            raise errors.InternalError(
                f"Allocator ({self.name}): offset {offset!r} is not a live allocation", device=self.name)
        return chunk

    def _largest_free_chunk(self):
        for free in reversed(self._bins):
            if free:
                return free[-1][0]
        return 0

    def _walk(self):
        chunk = self._chunks[0]
        while chunk is not None:
            yield chunk
            chunk = chunk.next

    @staticmethod
    def _info(chunk):
        return ChunkInfo(chunk.offset, chunk.size, chunk.requested,
                         chunk.alloc_id if chunk.in_use else None, chunk.in_use,
                         None if chunk.in_use else bin_for_size(chunk.size))

    # -- reporting --------------------------------------------------------

    def _oom_message(self, nbytes, rounded):
        in_use_chunks = sum(1 for c in self._chunks.values() if c.in_use)
        n = len(self._chunks)
        return (f"Allocator ({self.name}) ran out of memory trying to allocate "
                f"{format_bytes(nbytes)} ({nbytes} bytes, rounded to {rounded}). Arena: "
                f"{format_bytes(self._bytes_in_use)} in use, "
                f"{format_bytes(self.arena_size - self._bytes_in_use)} free, largest free chunk "
                f"{format_bytes(self._largest_free_chunk())}, limit {format_bytes(self.arena_size)}, "
                f"{n} chunks ({in_use_chunks} in use, {n - in_use_chunks} free).\n"
                + self._summary_locked())

    def _summary_locked(self):
        lines = [f"BFCAllocator {self.name}: {format_bytes(self._bytes_in_use)} in use "
                 f"(peak {format_bytes(self._peak_bytes_in_use)}) of {format_bytes(self.arena_size)}, "
                 f"{len(self._chunks)} chunks, largest free chunk "
                 f"{format_bytes(self._largest_free_chunk())}"]
        for b, free in enumerate(self._bins):
            if free:
                total = sum(size for size, _ in free)
                lines.append(f"  bin {b:2d} (>= {format_bytes(bin_size(b))}): "
                             f"{len(free)} free chunk{'s' if len(free) != 1 else ''}, {format_bytes(total)}")
        by_size = collections.Counter(c.size for c in self._chunks.values() if c.in_use)
        if by_size:
            lines.append("  in use by size: " + ", ".join(
                f"{count} x {format_bytes(size)}" for size, count in sorted(by_size.items())))
        lines.append(f"  [{self._occupancy_map_locked(100)}]")
        return "\n".join(lines)

    def _occupancy_map_locked(self, width):
        cells = ["_"] * width
        arena = self.arena_size

        def paint(start, end, mark):
            if end <= start:
                return
            for col in range(start * width // arena, (end - 1) * width // arena + 1):
                if cells[col] != "*":
                    cells[col] = mark

        for chunk in self._walk():
            if chunk.in_use:
                paint(chunk.offset + chunk.requested, chunk.offset + chunk.size, "x")
                paint(chunk.offset, chunk.offset + chunk.requested, "*")
        return "".join(cells)

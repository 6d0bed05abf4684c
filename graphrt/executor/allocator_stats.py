"""AllocatorStats: the counters every device allocator reports."""
import dataclasses

from ._format import format_bytes


@dataclasses.dataclass(frozen=True)
class AllocatorStats:
    """A snapshot of an allocator's counters (TF AllocatorStats).

    Attributes:
        num_allocs: successful allocations since creation (or clear_stats).
        bytes_in_use: bytes held by live allocations, counted at their
            allocated (rounded, possibly unsplit) size.
        peak_bytes_in_use: high-water mark of bytes_in_use.
        largest_alloc_size: largest single allocation handed out.
        bytes_limit: the most the allocator can ever hand out (arena size),
            None when unlimited.
        largest_free_chunk: the largest request that could succeed right now.
    """

    num_allocs: int
    bytes_in_use: int
    peak_bytes_in_use: int
    largest_alloc_size: int
    bytes_limit: int | None
    largest_free_chunk: int

    def as_dict(self):
        return dataclasses.asdict(self)

    def __str__(self):
        return (f"{format_bytes(self.bytes_in_use)} in use (peak {format_bytes(self.peak_bytes_in_use)}) "
                f"of {format_bytes(self.bytes_limit)}, {self.num_allocs} allocs, largest alloc "
                f"{format_bytes(self.largest_alloc_size)}, largest free chunk "
                f"{format_bytes(self.largest_free_chunk)}")


class MemoryWatch:
    """Counters of one interval (a traced step) on one allocator.

    `allocator.start_watch()` opens one and the allocator updates it on every
    allocation until `allocator.stop_watch(watch)`: several steps can watch
    the same allocator at once without resetting its lifetime statistics.

    Attributes:
        allocator_name: the allocator watched (e.g. 'sim:0').
        start_bytes: bytes in use when the watch started.
        peak_bytes: highest bytes in use while watched (at least start_bytes).
        total_bytes: bytes allocated while watched.
        num_allocs: allocations while watched.
        end_bytes: bytes in use when the watch stopped (None before).
        end_requested_bytes: of those, the bytes the live allocations asked
            for (the allocator rounds requests up and may hand out a larger
            chunk whole, which bytes in use counts).
    """

    __slots__ = ("allocator_name", "start_bytes", "peak_bytes", "total_bytes", "num_allocs", "end_bytes",
                 "end_requested_bytes")

    def __init__(self, allocator_name, bytes_in_use):
        self.allocator_name = allocator_name
        self.start_bytes = self.peak_bytes = bytes_in_use
        self.total_bytes = 0
        self.num_allocs = 0
        self.end_bytes = self.end_requested_bytes = None

    def allocated(self, nbytes, bytes_in_use):
        """Called by the allocator, under its lock, after each allocation."""
        self.total_bytes += nbytes
        self.num_allocs += 1
        if bytes_in_use > self.peak_bytes:
            self.peak_bytes = bytes_in_use

    def __repr__(self):
        return (f"<MemoryWatch {self.allocator_name} peak {format_bytes(self.peak_bytes)}, "
                f"{format_bytes(self.total_bytes)} in {self.num_allocs} allocs>")


class WatchedCounters:
    """The watch list both allocators keep (mixed in; they hold `_lock`/`_cond` and `_bytes_in_use`)."""

    _watches = ()  # replaced, never mutated: allocate() iterates it under the allocator's lock
    _requested_in_use = 0  # bytes the live allocations asked for

    def start_watch(self):
        """A MemoryWatch updated by every allocation until stop_watch()."""
        with self._watch_lock():
            watch = MemoryWatch(self.name, self._bytes_in_use)
            self._watches = self._watches + (watch,)
            return watch

    def stop_watch(self, watch):
        """Stops updating `watch` and records its end_bytes / end_requested_bytes; returns it."""
        with self._watch_lock():
            self._watches = tuple(w for w in self._watches if w is not watch)
            watch.end_bytes, watch.end_requested_bytes = self._bytes_in_use, self._requested_in_use
            return watch

    def _notify_watches(self, nbytes):
        for watch in self._watches:
            watch.allocated(nbytes, self._bytes_in_use)

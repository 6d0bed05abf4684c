"""ReusePool: device memory that work on one stream thread gives back and takes again.

A compiled while loop of a device's kernels is one launch on its compute
stream (runtime/compiled_loop.py) and, iteration after iteration, allocates
outputs of the sizes it freed an iteration before. While the loop runs, the
executor's pool keeps what that thread frees (a tensor's memory once the
tensor is gone: nothing can read it any more) and hands it out again to that
thread's next allocation of the same size, without the allocator: what a
device-side loop does with buffers assigned once for all iterations (XLA's
buffer assignment). At the loop's end the pool gives every kept buffer back
to the allocator.

The allocator's statistics stay exact: a kept buffer is still allocated (in
bytes_in_use, as it would be in the loop's buffer assignment) and a reuse is
not an allocation (num_allocs counts the allocator's). Frees from other
threads (a fetched value dropped by the client meanwhile) go to the
allocator as usual.

Example:
    >>> pool = executor.open_reuse_pool()   # on the stream thread that runs the loop
    >>> memory = pool.take(1024)            # the allocator's the first time ...
    >>> pool.give(memory)                   # (from a tensor's release on that thread)
    >>> pool.take(1024) is memory           # ... then the one given back
    True
    >>> executor.close_reuse_pool(pool)     # everything kept goes back to the allocator
"""
import threading


class ReusePool:
    """Buffers of one executor kept by size for the thread that opened the pool."""

    __slots__ = ("executor", "thread", "kept", "reused")

    def __init__(self, executor):
        self.executor = executor
        self.thread = threading.get_ident()
        self.kept = {}      # bytes -> [DeviceMemory] given back, not yet taken again
        self.reused = 0     # takes served from `kept` (for tests and benchmarks)

    def take(self, nbytes):
        """A DeviceMemory of `nbytes`: one given back, else the executor's allocate()."""
        kept = self.kept.get(nbytes)
        if kept:
            self.reused += 1
            return kept.pop()
        return self.executor.allocate(nbytes)

    def give(self, memory):
        """Keeps `memory` (its owner is gone) when called on the pool's thread; False otherwise
        (the caller frees it)."""
        if threading.get_ident() != self.thread:
            return False
        kept = self.kept.get(memory.size)
        if kept is None:
            self.kept[memory.size] = [memory]
        else:
            kept.append(memory)
        return True

    def drain(self):
        """Gives every kept buffer back to the allocator."""
        kept, self.kept = self.kept, {}
        for memories in kept.values():
            for memory in memories:
                self.executor._release(memory, pooled=False)

    def __repr__(self):
        n = sum(len(m) for m in self.kept.values())
        return f"<ReusePool {self.executor.name}: {n} buffers kept, {self.reused} reused>"

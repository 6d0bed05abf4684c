"""Large tensors between processes of one machine go through shared memory.

A 1 MiB tensor sent over the Unix socket crosses the kernel in 208 KiB
writes, each a copy in and a copy out plus a wake-up of ZeroMQ's I/O
threads on both sides. Two plain memory copies move it in a fraction of
that: on the development VM a raw pyzmq 1 MiB round trip took 370-410 us,
and a 4-byte round trip plus a copy into shared memory on one side and a
copy out on the other 210-235 us (docs/performance.md, 6.1).

So when a RecvTensor's asker reaches the sender over its Unix socket
(loopback.py: same machine, same user, checked with SO_PEERCRED), it asks
with the shared-memory request kind (wire.BINARY_RECV_TENSOR_SHARED). The
sender may then copy a tensor of SHARED_MIN_BYTES..SHARED_MAX_BYTES into an
*arena* it keeps for that asker, and answer with where it lies
(wire.BINARY_SHARED_TENSOR_REPLY: file descriptor, token, offset, sequence
number) instead of the bytes. The asker copies the tensor out and, with its
next request to that sender, says which sequence numbers it has copied; only
then is that space written again. Anything else (a smaller or larger
tensor, a dtype without a binary code, a full arena) is answered over the
socket as before, and so is every request from an asker that did not ask.

An arena is a sealed memfd (it can never shrink, so reading it never
faults), a 64-byte header holding a random 16-byte token, then records laid
out as a ring. The asker opens it as /proc/<pid>/fd/<fd>, with the pid its
own SO_PEERCRED check read (never one from the wire), checks the seals, the
size and the token, and maps it read-only. Nothing from the wire is trusted:
offsets and sizes are checked against the mapping, and a failure fails that
one pull with the peer named and turns the shared path off for that peer.

Why it is safe: a memfd is gone with the last process holding it (nothing
is left in /dev/shm by a crash); only a process of the same user may open
another's descriptors through /proc; the token stops a reused descriptor
number from being read as an arena. Linux only; off in a process with
GRAPHRT_SHARED_PAYLOAD=0, and whenever CURVE keys are configured (a user
who asked for encrypted connections gets them for every byte).
"""
import collections
import fcntl
import mmap
import os
import sys
import threading
import time

import numpy as np

from .. import errors

ENV_SWITCH = "GRAPHRT_SHARED_PAYLOAD"
SHARED_MIN_BYTES = 64 << 10
SHARED_MAX_BYTES = 16 << 20
_MIN_ARENA = 4 << 20
_MAX_ARENA = 64 << 20
_HEADER = 64          # token, then padding: records start cache-line aligned
_ALIGN = 64
_TOKEN = 16
_MAX_ARENAS = 64      # askers with an arena at once; more are answered over the socket
_IDLE_S = 600.0       # an arena nobody asked through for this long is closed (its asker went away)
_SEALS = getattr(fcntl, "F_SEAL_SHRINK", 2) | getattr(fcntl, "F_SEAL_GROW", 4) | getattr(fcntl, "F_SEAL_SEAL", 1)


def enabled():
    return (sys.platform.startswith("linux") and hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")
            and os.environ.get(ENV_SWITCH, "1") != "0")


def can_read_from(pid):
    """Whether this process may open process `pid`'s descriptors (/proc/<pid>/fd): the kernel asks what
    it asks for each descriptor's open, so a process made non-dumpable, or one this process cannot
    see, is found out here, before a pull depends on it."""
    try:
        os.listdir(f"/proc/{pid}/fd")
        return True
    except OSError:
        return False


class _Arena:
    """One asker's ring of records in a sealed memfd (the sender's side)."""

    __slots__ = ("fd", "token", "capacity", "map", "records", "live", "released", "used_at")

    def __init__(self, capacity):
        fd = os.memfd_create("graphrt-payload", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, capacity)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
            self.map = mmap.mmap(fd, capacity)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self.token = os.urandom(_TOKEN)
        self.map[:_TOKEN] = self.token
        self.capacity = capacity
        self.records = collections.deque()  # [seq, start, end] in the order they were placed
        self.live = set()                    # the seqs in `records`
        self.released = set()                # those of them the asker has copied out, not yet reclaimed
        self.used_at = time.monotonic()

    def reserve(self, nbytes):
        """The offset of `nbytes` of free space, or None when the ring has none."""
        records = self.records
        while records and records[0][0] in self.released:
            seq = records.popleft()[0]
            self.released.discard(seq)
            self.live.discard(seq)
        size = (nbytes + _ALIGN - 1) & -_ALIGN
        if not records:
            return _HEADER if _HEADER + size <= self.capacity else None
        tail, head = records[0][1], records[-1][2]
        if head > tail:  # in use: [tail, head); free: [head, capacity) and [_HEADER, tail)
            if head + size <= self.capacity:
                return head
            return _HEADER if _HEADER + size <= tail else None
        return head if head + size <= tail else None  # wrapped: free is [head, tail)

    def close(self):
        try:
            self.map.close()
        except BufferError:
            pass  # a copy into it is running on another thread (the service stops): it goes with the copy
        os.close(self.fd)

    def __repr__(self):
        in_use = sum(end - start for _, start, end in self.records)
        return f"<arena fd {self.fd}: {len(self.records)} records, {in_use} of {self.capacity} bytes>"


class PayloadArenas:
    """The sending worker's arenas, one per asker (a ZeroMQ routing identity)."""

    def __init__(self):
        self._arenas = {}
        self._lock = threading.Lock()
        self._seq = 0
        self._closed = False
        self.placed = 0   # tensors answered through shared memory
        self.declined = 0  # asked for, answered over the socket (size, dtype, full arena)

    def release(self, asker, seqs):
        """The asker has copied these records out: their space may be written again."""
        with self._lock:
            arena = self._arenas.get(asker)
            if arena is not None:
                # Only records of this arena: anything else (a bug, a stray) would stay in the set forever.
                arena.released.update(arena.live.intersection(seqs))

    def place(self, asker, arr):
        """Copies `arr` into the asker's arena: (fd, token, offset, seq), or None to answer over the socket."""
        nbytes = arr.nbytes
        if not SHARED_MIN_BYTES <= nbytes <= SHARED_MAX_BYTES:
            return None
        with self._lock:
            if self._closed:
                return None
            arena = self._arenas.get(asker)
            offset = None if arena is None else arena.reserve(nbytes)
            if offset is None:
                arena = self._fresh_arena(asker, arena, nbytes)
                if arena is None:
                    self.declined += 1
                    return None
                offset = arena.reserve(nbytes)
            self._seq += 1
            seq = self._seq
            arena.records.append([seq, offset, offset + ((nbytes + _ALIGN - 1) & -_ALIGN)])
            arena.live.add(seq)
            arena.used_at = time.monotonic()
            self.placed += 1
        # Outside the lock: the space is this record's until the asker releases it, and the asker
        # hears of it only from the reply sent after this copy.
        np.copyto(np.ndarray(arr.shape, arr.dtype, arena.map, offset), arr, casting="no")
        return arena.fd, arena.token, offset, seq

    def _fresh_arena(self, asker, arena, nbytes):
        """A new arena for `asker` when its ring is empty but too small, or it has none; None otherwise
        (the ring is busy: this tensor goes over the socket)."""
        if arena is not None and arena.records:
            return None
        capacity = _MIN_ARENA
        while capacity < 2 * nbytes + _HEADER and capacity < _MAX_ARENA:
            capacity *= 2
        if arena is not None and arena.capacity >= capacity:
            return None
        self._close_idle()
        if arena is None and len(self._arenas) >= _MAX_ARENAS:
            return None
        try:
            fresh = _Arena(capacity)
        except OSError:
            return None  # no memfd (a sandbox), or no memory: the socket it is
        if arena is not None:
            arena.close()  # empty: no reply points into it
        self._arenas[asker] = fresh
        return fresh

    def _close_idle(self):
        now = time.monotonic()
        for asker, arena in list(self._arenas.items()):
            if now - arena.used_at > _IDLE_S:
                del self._arenas[asker]
                arena.close()

    def stats(self):
        """What `GetStatus` shows: askers with an arena, the arenas' bytes, tensors placed and declined."""
        with self._lock:
            return {"askers": len(self._arenas), "arena_bytes": sum(a.capacity for a in self._arenas.values()),
                    "placed": self.placed, "declined": self.declined}

    def close(self):
        with self._lock:
            self._closed = True
            arenas, self._arenas = list(self._arenas.values()), {}
        for arena in arenas:
            arena.close()

    def __repr__(self):
        return (f"<PayloadArenas: {len(self._arenas)} askers, {self.placed} tensors placed, "
                f"{self.declined} declined>")


class PayloadReader:
    """The asking side for one peer: reads the tensors it placed in shared memory, and remembers which
    records to release with the next request."""

    _MAX_MAPS = 8

    def __init__(self, pid, peer_name):
        self.pid = pid
        self.peer_name = peer_name
        self.broken = None       # why the shared path failed for this peer (then it is not asked for)
        self.reads = 0
        self._maps = collections.OrderedDict()  # fd -> (token, mmap)
        self._released = []
        self._lock = threading.Lock()

    def take_released(self, limit):
        """The seqs copied out since the last request, at most `limit` (wire.MAX_RELEASED), for the
        request to carry; the rest go with the next."""
        if not self._released:
            return ()
        with self._lock:
            released = self._released[:limit]
            del self._released[:limit]
        return released

    def read(self, fd, token, offset, seq, dtype, shape, nbytes):
        """A copy of the tensor the peer placed at `offset` of its arena `fd`."""
        try:
            region = self._mapping(fd, token)
            if offset < _HEADER or offset + nbytes > len(region):
                raise ValueError(f"record [{offset}, {offset + nbytes}) outside the arena's {len(region)} bytes")
            value = np.ndarray(shape, dtype, region, offset).copy()
            value.flags.writeable = False  # as a tensor read from the socket is: the path does not show
        except (OSError, ValueError) as e:
            self.broken = f"{type(e).__name__}: {e}"
            if isinstance(e, OSError) and not os.path.exists(f"/proc/{self.pid}"):
                # It answered, then died: what a peer's death costs a pull over the socket too.
                raise errors.UnavailableError(f"{self.peer_name} (pid {self.pid}) is gone: the tensor it placed "
                                              f"in shared memory cannot be read") from None
            raise errors.InternalError(f"Could not read a tensor {self.peer_name} placed in shared memory "
                                       f"(/proc/{self.pid}/fd/{fd}): {self.broken}; later pulls from it go "
                                       f"over the socket") from None
        with self._lock:
            self._released.append(seq)
        self.reads += 1
        return value

    def _mapping(self, fd, token):
        held = self._maps.get(fd)
        if held is not None and held[0] == token:
            return held[1]
        with self._lock:  # the I/O thread and a thread reading its own replies may both get here
            return self._open(fd, token)

    def _open(self, fd, token):
        held = self._maps.get(fd)
        if held is not None and held[0] == token:
            return held[1]
        path = f"/proc/{self.pid}/fd/{fd}"
        # Not blocking: a descriptor number from the wire might name a FIFO, whose open would wait.
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            if fcntl.fcntl(handle, fcntl.F_GET_SEALS) & _SEALS != _SEALS:
                raise ValueError("not a sealed arena")
            size = os.fstat(handle).st_size
            if size < _HEADER or os.pread(handle, _TOKEN, 0) != token:
                raise ValueError("not the arena the reply names (its token differs)")
            region = mmap.mmap(handle, size, prot=mmap.PROT_READ)
        finally:
            os.close(handle)
        if held is not None:
            del self._maps[fd]  # a replaced arena: the peer reused the descriptor's number
        self._maps[fd] = (token, region)
        while len(self._maps) > self._MAX_MAPS:
            self._maps.popitem(last=False)  # a mapping stays valid for arrays copied out of it
        return region

    def close(self):
        with self._lock:
            maps, self._maps = list(self._maps.values()), collections.OrderedDict()
        for _, region in maps:
            try:
                region.close()
            except BufferError:
                pass  # a copy is being made from it on another thread; it goes with its last reference

    def __repr__(self):
        state = f"off ({self.broken})" if self.broken else f"{self.reads} tensors read"
        return f"<PayloadReader of {self.peer_name} (pid {self.pid}): {state}>"

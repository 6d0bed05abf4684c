"""LocalRendezvous: the in-process rendezvous table of one step."""
import threading
from time import monotonic

from ..errors import AbortedError
from .base import RECV_WAITING, SEND_WAITING, PendingRecord, Rendezvous, fail_waiters

__all__ = ["LocalRendezvous"]


# Four shards, a key's by `hash & _SHARD_MASK`: several devices' executors hit one step's table at once.
# Under the GIL a few shards already make waiting on another thread's lock rare, and a step creates its
# table anew (16 cost ~10 us).
_SHARD_MASK = 3


class _Shard:
    """One lock and the part of the table whose keys hash to it."""

    __slots__ = ("lock", "table", "completed")

    def __init__(self):
        self.lock = threading.Lock()
        self.table = {}
        self.completed = set()


class LocalRendezvous(Rendezvous):
    """An in-process Rendezvous: a dict from full key to the half of a pair
    that arrived first.

    An entry is a tuple, either `(SEND_WAITING, key, since, value, is_dead)`
    or `(RECV_WAITING, key, since, done)`. When the other half arrives the
    entry is removed and its full key goes into a `completed` set, so the
    table holds only live entries (`len()` is 0 after a clean step) while
    duplicates are still detected for the rest of the step. The completed
    set grows with the number of keys the step uses; the whole rendezvous is
    dropped when the step ends.

    The table is split into shards by key hash, each with its own lock, so
    that threads working on different keys rarely wait for one another.
    """

    def __init__(self, step_id=None):
        self.step_id = step_id
        self._shards = (_Shard(), _Shard(), _Shard(), _Shard())  # _SHARD_MASK + 1, with no generator per step
        self._abort_lock = threading.Lock()
        # Set before any shard is emptied; read under a shard lock, so a
        # call either finds its entry swept by the abort or sees the error.
        self._abort_error = None

    # -- the hot path ---------------------------------------------------------
    def send(self, key, value, is_dead=False):
        full = key.full_key
        shard = self._shards[hash(full) & _SHARD_MASK]
        with shard.lock:
            if self._abort_error is not None:
                raise self._abort_error.with_traceback(None)
            entry = shard.table.pop(full, None)
            if entry is None:
                if full in shard.completed:
                    raise _duplicated_send(key)
                shard.table[full] = (SEND_WAITING, key, monotonic(), value, is_dead)
                return
            if entry[0] is SEND_WAITING:
                shard.table[full] = entry
                raise _duplicated_send(key)
            shard.completed.add(full)
        entry[3](None, value, is_dead)

    def recv_async(self, key, done):
        full = key.full_key
        shard = self._shards[hash(full) & _SHARD_MASK]
        with shard.lock:
            error = self._abort_error
            if error is None:
                entry = shard.table.pop(full, None)
                if entry is None:
                    if full not in shard.completed:
                        shard.table[full] = (RECV_WAITING, key, monotonic(), done)
                        return
                    error = _duplicated_recv(key)
                elif entry[0] is SEND_WAITING:
                    shard.completed.add(full)
                else:
                    shard.table[full] = entry
                    error = _duplicated_recv(key)
        if error is None:
            done(None, entry[3], entry[4])
        else:
            done(error, None, False)

    # -- abort ------------------------------------------------------------------
    def start_abort(self, error):
        self._check_abort_error(error)
        with self._abort_lock:
            if self._abort_error is not None:
                return
            self._abort_error = error
        swept = []
        for shard in self._shards:
            with shard.lock:
                swept.extend(shard.table.values())
                shard.table = {}
                shard.completed = set()
        fail_waiters([entry[3] for entry in swept if entry[0] is RECV_WAITING], error)

    @property
    def status(self):
        return self._abort_error

    # -- introspection ------------------------------------------------------------
    def pending(self):
        entries = []
        for shard in self._shards:
            with shard.lock:
                entries.extend(shard.table.values())
        now = monotonic()
        records = [PendingRecord(entry[0], entry[1], entry[2], now - entry[2]) for entry in entries]
        records.sort(key=lambda record: record.since)
        return records

    def has_pending(self):
        # Asked when every step's table is dropped: a loop, not a generator's frames.
        for shard in self._shards:
            if shard.table:
                return True
        return False

    def num_items(self):
        """Live entries: recvs waiting for a value plus values waiting for a recv."""
        return sum(len(shard.table) for shard in self._shards)

    __len__ = num_items

    def __bool__(self):
        # An empty table is still a rendezvous; don't let `if rendezvous:` say no.
        return True

    def __repr__(self):
        step = "" if self.step_id is None else f" step {self.step_id}"
        error = self._abort_error
        state = "" if error is None else f", aborted: {type(error).__name__}({error.message!r})"
        return f"<LocalRendezvous{step}: {self.num_items()} waiting{state}>"


def _duplicated_send(key):
    return AbortedError(f"Duplicated send: {key.full_key}", device=key.src_device, key=key.full_key)


def _duplicated_recv(key):
    return AbortedError(f"Duplicated recv: {key.full_key}", device=key.dst_device, key=key.full_key)

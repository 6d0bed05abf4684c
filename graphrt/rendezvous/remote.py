"""RemoteRendezvous: the rendezvous of one step on one worker of a cluster.

It owns a LocalRendezvous that buffers every tensor *sent* on this worker;
senders never push over the network. A recv whose source device is on
this worker is a local recv. A recv whose source is on another task pulls
the value: it asks that task's worker with RecvTensor(step_id, key), and
the sending worker answers when its own local table has the value (a long
poll). That worker serves the request with `recv_local_async`.

The network side is injected as `peers`, an object with::

    peers.recv_tensor(src_task, step_id, key, done[, blocking=True]) -> handle
        # asks the worker of `src_task` ('/job:j/replica:r/task:t') for
        # `key`; calls done(error, value, is_dead) once, on any thread
        # (`blocking`: only with read_here, for a recv waiting on its thread)
    peers.cancel(handle)
        # the rendezvous gave up on the request (abort); drop its reply
    peers.read_here(src_task, started) -> reader or None   (optional)
        # lets a blocking recv read the reply on its own thread: reader.wait(seconds)
        # reads what arrived or sleeps until something does, reader.wake() ends a wait
        # from another thread, reader.done() gives the connection back

(graphrt.distributed.worker provides the ZeroMQ implementation), so this
module depends on no transport and the rendezvous layer stays below the
distributed runtime.

Keys are checked as TensorFlow checks them: `send` needs a source device on
this worker (`Invalid rendezvous key (src): <key> @ <task>`), `recv_async`
a destination on this worker. The sending worker checks the key's source
incarnation against its device (a restarted worker's new incarnation gives
AbortedError naming the device). Everything else is the contract of
`Rendezvous`: duplicates within a step fail, the first abort wins and also
fails every request still out on the network, and `pending()` lists remote
recvs still waiting next to the local entries.
"""
import threading
from functools import partial
from time import monotonic, perf_counter

from ..errors import AbortedError, InternalError, InvalidArgumentError, OpError
from .base import RECV_WAITING, PendingRecord, Rendezvous, fail_waiters
from .local import LocalRendezvous

__all__ = ["RemoteRendezvous", "task_of"]

_BLOCKING = ({}, {"blocking": True})  # recv_tensor's keyword for a pull a blocking recv waits for


def task_of(device_name):
    """'/job:w/replica:0/task:1/device:CPU:0' -> '/job:w/replica:0/task:1' (canonical names only)."""
    i = device_name.find("/device:")
    return device_name if i < 0 else device_name[:i]


class RemoteRendezvous(Rendezvous):
    def __init__(self, step_id, task, peers):
        self.step_id = step_id
        self.task = task
        self._prefix = task + "/"
        self._peers = peers
        self._local = LocalRendezvous(step_id)
        self._lock = threading.Lock()
        self._remote = {}        # full key -> [key, since, done, handle]
        self._completed = set()  # remote keys received this step
        self._prefetched = set() # remote keys asked for before their recv: the value goes to _local
        self._abort_error = None

    # -- the contract ---------------------------------------------------------------
    def send(self, key, value, is_dead=False):
        if not key.src_device.startswith(self._prefix):
            raise InvalidArgumentError(f"Invalid rendezvous key (src): {key.full_key} @ {self.task}",
                                       key=key.full_key)
        self._local.send(key, value, is_dead)

    def recv_async(self, key, done):
        if not key.dst_device.startswith(self._prefix):
            done(InvalidArgumentError(f"Invalid rendezvous key (dst): {key.full_key} @ {self.task}",
                                      key=key.full_key), None, False)
            return
        if key.src_device.startswith(self._prefix) or key.full_key in self._prefetched:
            self._local.recv_async(key, done)
            return
        self._pull(key, done)

    def recv(self, key, timeout=None):
        """As `Rendezvous.recv`. A remote value's reply is read on this thread while it waits when the
        transport can hand it the connection (`peers.read_here(src_task)`): a blocking pull then
        costs one thread wake-up, as a plain socket read would, not two. The request leaves first
        and the connection is taken while it travels (a reply that comes before is delivered by the
        transport's own thread, through the same callback)."""
        read_here = getattr(self._peers, "read_here", None)
        src = key.src_device
        if read_here is None or src.startswith(self._prefix) or key.full_key in self._prefetched \
                or not key.dst_device.startswith(self._prefix):
            return super().recv(key, timeout)
        started = perf_counter()  # the blocking operation's start, for the transport's spin policy
        # Straight to the pull (recv_async's checks were made above), its reply delivered as is:
        # nothing waits on this thread but this recv.
        return self._recv_waiting(key, timeout, lambda: read_here(task_of(src), started),
                                  partial(self._pull, blocking=True))  # a partial: no Python frame of its own

    def prefetch(self, key):
        """Asks for a remote key now, before its recv: the value then waits in the local table, where
        the recv finds it (a worker does this for a step's receives that wait on nothing, so the
        request travels with, not after, the step's start). A failed pull aborts the step, as the
        recv would have. A key already asked for, or not remote, is left alone."""
        full = key.full_key
        if key.src_device.startswith(self._prefix) or not key.dst_device.startswith(self._prefix):
            return
        with self._lock:
            if self._abort_error is not None or full in self._remote or full in self._completed \
                    or full in self._prefetched:
                return
            self._prefetched.add(full)

        def deposit(error, value, is_dead):
            if error is not None:
                self.start_abort(error if isinstance(error, OpError) else
                                 InternalError(f"Prefetching {full}: {type(error).__name__}: {error}", key=full))
                return
            try:
                self._local.send(key, value, is_dead)
            except OpError:
                pass  # the step was aborted meanwhile (with whatever error): nobody will receive it
        self._pull(key, deposit)

    def _pull(self, key, done, blocking=False):
        full = key.full_key
        with self._lock:
            error = self._abort_error
            if error is None:
                if full in self._remote or full in self._completed:
                    error = AbortedError(f"Duplicated recv: {full}", device=key.dst_device, key=full)
                else:
                    entry = [key, monotonic(), done, None]
                    self._remote[full] = entry
        if error is not None:
            done(error, None, False)
            return
        try:
            handle = self._peers.recv_tensor(task_of(key.src_device), self.step_id, key,
                                             partial(self._remote_done, full, entry), **_BLOCKING[blocking])
        except Exception as e:  # noqa: BLE001 - e.g. no worker known for the source task
            with self._lock:
                mine = self._remote.get(full) is entry
                if mine:
                    del self._remote[full]
            if mine:
                done(e, None, False)
            return
        with self._lock:
            if self._remote.get(full) is entry:
                entry[3] = handle
                return
        # Already completed (the reply came first) or aborted while we were sending.
        if self._abort_error is not None:
            self._peers.cancel(handle)

    def _remote_done(self, full, entry, error, value, is_dead):
        with self._lock:
            if self._remote.get(full) is not entry:
                return  # aborted: the waiter already heard
            del self._remote[full]
            if error is None:
                self._completed.add(full)
        done = entry[2]
        entry[2] = entry[3] = None  # no cycle through the call keeps the value alive
        done(error, value, is_dead)

    def recv_local_async(self, key, done):
        """The sending side of a RecvTensor request: waits for this worker's own send."""
        if not key.src_device.startswith(self._prefix):
            done(InvalidArgumentError(f"Invalid rendezvous key (src): {key.full_key} @ {self.task}",
                                      key=key.full_key), None, False)
            return
        self._local.recv_async(key, done)

    def start_abort(self, error):
        self._check_abort_error(error)
        with self._lock:
            if self._abort_error is not None:
                return
            self._abort_error = error
            waiting = list(self._remote.values())
            self._remote = {}
            self._completed = set()
        first_failure = None
        try:
            self._local.start_abort(error)
        except Exception as failure:  # noqa: BLE001 - every waiter must still hear
            first_failure = failure
        for _, _, _, handle in waiting:
            if handle is not None:
                self._peers.cancel(handle)
        fail_waiters([done for _, _, done, _ in waiting], error, first_failure)

    @property
    def status(self):
        return self._abort_error

    def pending(self):
        now = monotonic()
        with self._lock:
            remote = [PendingRecord(RECV_WAITING, key, since, now - since)
                      for key, since, _, _ in self._remote.values()]
            asked = set(self._remote) if self._prefetched else ()
        local = self._local.pending()
        if asked:  # a recv waiting for a prefetched value still on its way: its request says it once
            local = [r for r in local if r.kind != RECV_WAITING or r.key.full_key not in asked]
        records = local + remote
        records.sort(key=lambda r: r.since)
        return records

    def has_pending(self):
        return bool(self._remote) or self._local.has_pending()

    def num_items(self):
        return self._local.num_items() + len(self._remote)

    __len__ = num_items

    def __bool__(self):
        return True

    def __repr__(self):
        error = self._abort_error
        state = "" if error is None else f", aborted: {type(error).__name__}({error.message!r})"
        return (f"<RemoteRendezvous step {self.step_id} @ {self.task}: {self._local.num_items()} local, "
                f"{len(self._remote)} remote waiting{state}>")

"""Bounded per-step state of a worker: what anonymous peers can make it remember.

Any peer that reaches a worker's port can name any step id. Without bounds,
20,000 RecvTensor requests for made-up steps left 20,000 rendezvous tables
behind, and 20,000 AbortSteps as many more. The StepTable keeps such state
bounded:

* A step's rendezvous is *owned* while a RunGraph for it runs here. Before
  that (a RecvTensor may arrive before this worker's RunGraph) and after it
  (until the master's CleanupStep) it is *unowned*. Unowned rendezvous are
  created lazily, at most `max_unowned` of them, each for `unowned_ttl_s`
  seconds, and at most `max_unowned_recvs` RecvTensor requests may wait in
  them in total (a request counts until it is answered). Past the cap the
  oldest is evicted; an expired or evicted step is aborted (its waiting
  requests get AbortedError) and forgotten.
* An AbortStep creates no rendezvous and drops the step's table as soon as
  no RunGraph runs it: the step id and its error go into an LRU of
  `max_aborted` entries, so a RunGraph or RecvTensor that comes later still
  fails with that error (a closed session leaves nothing behind).
* CleanupStep ids are remembered in an LRU of `max_cleaned` ids (late
  requests for a cleaned step fail instead of creating state again).

`GraphQuota` bounds RegisterGraph: at most `max_graphs` graphs and
`max_bytes` bytes of GraphDef (as received) per worker; past that the least
recently used graphs are evicted (so a peer that registers thousands of
graphs cannot lock every later session out).
"""
import collections
import threading
import time

from .. import errors

MAX_UNOWNED_STEPS = 256
MAX_UNOWNED_RECVS = 4096
UNOWNED_TTL_S = 120.0
MAX_ABORTED = 4096
MAX_CLEANED = 100_000
MAX_ERROR_TEXT = 1024     # an abort's message, as remembered
MAX_GRAPHS = 1024
MAX_GRAPH_BYTES = 256 << 20


class StepTable:
    def __init__(self, manager, task, max_unowned=MAX_UNOWNED_STEPS, max_unowned_recvs=MAX_UNOWNED_RECVS,
                 unowned_ttl_s=UNOWNED_TTL_S, max_aborted=MAX_ABORTED, max_cleaned=MAX_CLEANED,
                 clock=time.monotonic):
        self._manager = manager
        self.task = task
        self.max_unowned = max_unowned
        self.max_unowned_recvs = max_unowned_recvs
        self.unowned_ttl_s = unowned_ttl_s
        self.max_aborted = max_aborted
        self.max_cleaned = max_cleaned
        self._clock = clock
        self._lock = threading.Lock()
        self._owned = {}                            # step id -> RunGraphs running it here
        self._unowned = collections.OrderedDict()   # step id -> [since, recvs], oldest first
        self._unowned_recvs = 0
        self._aborted = collections.OrderedDict()   # step id -> error (class, message), LRU
        self._cleaned = collections.OrderedDict()   # step id -> True, LRU
        self.evicted = 0

    # -- the paths that create state ---------------------------------------------------
    def for_run(self, step_id):
        """The rendezvous for a RunGraph of `step_id` (owned until `release`)."""
        with self._lock:
            if step_id in self._cleaned or step_id in self._aborted:
                self._refuse_if_gone(step_id, None)
            entry = self._unowned.pop(step_id, None)
            if entry is not None:
                self._unowned_recvs -= entry[1]
            self._owned[step_id] = self._owned.get(step_id, 0) + 1
            expired = self._sweep() if self._unowned else None
        if expired:
            self._abort_expired(expired)
        return self._manager.find_or_create(step_id)

    def release(self, step_id):
        """A RunGraph of `step_id` ended here: its rendezvous waits (unowned) for the CleanupStep."""
        with self._lock:
            running = self._owned.get(step_id, 0) - 1
            if running > 0:
                self._owned[step_id] = running
                return
            self._owned.pop(step_id, None)
            if step_id in self._cleaned or step_id not in self._manager:
                return
            aborted = self._aborted.get(step_id)
            if aborted is None:
                self._unowned[step_id] = [self._clock(), 0]
        if aborted is not None:  # nothing will need its table: late requests get the remembered error
            self._manager.cleanup(step_id, errors.mark_derived(aborted[0](aborted[1])))
            return
        with self._lock:
            evicted = self._over_cap() if len(self._unowned) > self.max_unowned else []
            evicted += self._sweep()
        if evicted:
            self._abort_expired(evicted)

    def for_recv(self, step_id, key):
        """(rendezvous, ticket) for a RecvTensor of `step_id`: the table it waits in (created if
        needed, within the caps). Until `recv_answered(step_id, ticket)` the request counts among
        those waiting in unowned steps (ticket None: the step runs here, nothing is counted)."""
        ticket = None
        # Every cross-process tensor of every step comes through here, the checks that find nothing
        # to do are made inline (each call costs several times its loop time on a freshly woken thread).
        with self._lock:
            if step_id in self._cleaned or step_id in self._aborted:
                self._refuse_if_gone(step_id, key)
            evicted = self._sweep() if self._unowned else []
            if step_id not in self._owned:
                entry = self._unowned.get(step_id)
                if self._unowned_recvs >= self.max_unowned_recvs:
                    evicted += self._evict_oldest(keep=step_id)
                    if self._unowned_recvs >= self.max_unowned_recvs:
                        raise errors.ResourceExhaustedError(
                            f"{self.task}: too many RecvTensor requests ({self._unowned_recvs}) wait for steps "
                            f"that do not run here; refused step {step_id}", key=key)
                    entry = self._unowned.get(step_id)
                if entry is None:
                    entry = self._unowned[step_id] = [self._clock(), 0]
                    evicted += self._over_cap()
                entry[1] += 1
                self._unowned_recvs += 1
                ticket = entry
        if evicted:
            self._abort_expired(evicted)
        return self._manager.find_or_create(step_id), ticket

    def recv_answered(self, step_id, ticket):
        """A request `for_recv` counted was answered (or failed): it no longer waits. (Counting every
        request instead refused the 4,097th pull from a step that had finished here, though each
        had been answered at once.) A ticket from an unowned phase the step has left counts nothing."""
        if ticket is None:
            return
        with self._lock:
            if ticket[1] > 0 and self._unowned.get(step_id) is ticket:
                ticket[1] -= 1
                self._unowned_recvs -= 1

    # -- the paths that end state ------------------------------------------------------
    def abort(self, step_id, error):
        """AbortStep: the error is remembered (bounded), so late requests for the step fail with it; the
        step's table, if it has one and no RunGraph runs it, is aborted and dropped at once."""
        with self._lock:
            if step_id in self._cleaned:
                return
            self._aborted[step_id] = (type(error), error.message[:MAX_ERROR_TEXT])
            self._aborted.move_to_end(step_id)
            while len(self._aborted) > self.max_aborted:
                self._aborted.popitem(last=False)
            owned = step_id in self._owned
            entry = self._unowned.pop(step_id, None)
            if entry is not None:
                self._unowned_recvs -= entry[1]
        if owned:  # the RunGraph ends soon (its step is aborted too) and drops the table then
            rendezvous = self._manager.find(step_id)
            if rendezvous is not None:
                rendezvous.start_abort(error)
        else:
            self._manager.cleanup(step_id, error)

    def cleanup(self, step_id):
        """CleanupStep: forget everything about the step; late requests for it fail."""
        with self._lock:
            self._cleaned[step_id] = True
            self._cleaned.move_to_end(step_id)
            while len(self._cleaned) > self.max_cleaned:
                self._cleaned.popitem(last=False)
            entry = self._unowned.pop(step_id, None)
            if entry is not None:
                self._unowned_recvs -= entry[1]
            self._aborted.pop(step_id, None)
        self._manager.cleanup(step_id)

    def sweep(self):
        """Aborts and forgets unowned steps past their time (also done on every new step)."""
        with self._lock:
            expired = self._sweep()
        self._abort_expired(expired)

    def stats(self):
        with self._lock:
            return {"owned": len(self._owned), "unowned": len(self._unowned),
                    "unowned_recvs": self._unowned_recvs, "aborted": len(self._aborted),
                    "cleaned": len(self._cleaned), "evicted": self.evicted}

    # -- internals (under the lock) ------------------------------------------------------
    def _refuse_if_gone(self, step_id, key):
        if step_id in self._cleaned:
            raise errors.AbortedError(f"Step {step_id} was already cleaned up on {self.task}", key=key)
        aborted = self._aborted.get(step_id)
        if aborted is not None:
            cls, message = aborted
            raise errors.mark_derived(cls(message, key=key))

    def _sweep(self):
        out = []
        if not self._unowned:
            return out
        limit = self._clock() - self.unowned_ttl_s
        while self._unowned:
            step_id, entry = next(iter(self._unowned.items()))
            if entry[0] > limit:
                break
            self._unowned.popitem(last=False)
            self._unowned_recvs -= entry[1]
            out.append((step_id, "expired"))
        return out

    def _over_cap(self):
        out = []
        while len(self._unowned) > self.max_unowned:
            out += self._evict_oldest()
        return out

    def _evict_oldest(self, keep=None):
        for step_id in self._unowned:
            if step_id != keep:
                entry = self._unowned.pop(step_id)
                self._unowned_recvs -= entry[1]
                self.evicted += 1
                return [(step_id, "evicted")]
        return []

    def _abort_expired(self, steps):
        for step_id, why in steps:
            what = (f"waited longer than {self.unowned_ttl_s:.0f}s without a running RunGraph or a CleanupStep"
                    if why == "expired" else
                    f"was evicted: more than {self.max_unowned} steps wait here without a running RunGraph")
            self._manager.cleanup(step_id, errors.mark_derived(errors.AbortedError(
                f"Step {step_id} on {self.task} {what}")))

    def __repr__(self):
        return f"<StepTable {self.task}: {self.stats()}>"


class GraphQuota:
    """Registered graphs and their bytes, least recently used first.

    A registration past `max_graphs` graphs or `max_bytes` bytes evicts the
    least recently used graphs (a RunGraph uses one) instead of locking every
    later session out; the master of an evicted graph gets AbortedError for
    its next step and registers it again. Only a graph larger than
    `max_bytes` on its own is refused (ResourceExhaustedError).
    """

    def __init__(self, task, max_graphs=MAX_GRAPHS, max_bytes=MAX_GRAPH_BYTES):
        self.task = task
        self.max_graphs = max_graphs
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._sizes = collections.OrderedDict()  # handle -> bytes, least recently used first
        self._bytes = 0
        self.evicted = 0

    def admit(self, handle, nbytes):
        """Accounts a new graph; returns the handles evicted to make room for it."""
        if nbytes > self.max_bytes:
            raise errors.ResourceExhaustedError(
                f"RegisterGraph: a graph of {nbytes} bytes is larger than {self.task} accepts "
                f"({self.max_bytes} bytes)")
        evicted = []
        with self._lock:
            while self._sizes and (len(self._sizes) >= self.max_graphs or self._bytes + nbytes > self.max_bytes):
                old, size = self._sizes.popitem(last=False)
                self._bytes -= size
                evicted.append(old)
            self._sizes[handle] = nbytes
            self._bytes += nbytes
            self.evicted += len(evicted)
        return evicted

    def touch(self, handle):
        """The graph was used: it is the last to be evicted."""
        try:
            self._sizes.move_to_end(handle)
        except KeyError:
            pass

    def release(self, handle):
        with self._lock:
            nbytes = self._sizes.pop(handle, None)
            if nbytes is not None:
                self._bytes -= nbytes

    def stats(self):
        return {"graphs": len(self._sizes), "bytes": self._bytes, "evicted": self.evicted}

    def __len__(self):
        return len(self._sizes)

    def __repr__(self):
        return f"<GraphQuota {self.task}: {len(self._sizes)} graphs, {self._bytes} bytes>"

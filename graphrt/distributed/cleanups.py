"""The master's CleanupStep messages after successful steps, carried by the next RunGraph.

After a step every task must forget the step's rendezvous (a peer may still
pull a tensor from it until the step is over everywhere, so a worker cannot
drop it on its own). Sending a CleanupStep to each remote task after every
step costs a message per task on the client's thread at the end of each
`Session.run` — on a loaded machine as much as a third of a small step. So
after a step that succeeded the ids wait here: the next RunGraph to that task
carries them (`cleanup_step_ids`), and whatever no step picked up within
`FLUSH_AFTER_S` goes out as one CleanupStep (`more_step_ids`). A failed step
is still cleaned up at once (it may hold aborted state others wait on).

The flush runs on one thread per master that sleeps until the next flush is
due and leaves after `IDLE_EXIT_S` with nothing to do. (A `threading.Timer`
per flush started a thread every 20 ms of steps, and starting one blocks the
caller until it runs: 0.2-0.3 ms on a small VM, inside a step.)
"""
import threading
import time

FLUSH_AFTER_S = 0.02
IDLE_EXIT_S = 5.0
_MAX_CARRIED = 1024   # ids one message carries (the wire allows 4096)


class DeferredCleanups:
    def __init__(self, send_oneway):
        self._send_oneway = send_oneway   # (task, fields) -> None
        # add and take run in every step: they take the plain lock (a C call), not the Condition
        # (a Python-level __enter__ and __exit__ around it); only the flusher waits on the Condition.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._pending = {}                # task -> [step ids]
        self._due = None                  # when the flusher sends what is pending (None: nothing asked)
        self._thread = None
        self._closed = False

    def add(self, tasks, step_id):
        """`step_id` ended well on `tasks`: clean it up there with the next message."""
        with self._lock:
            for task in tasks:
                self._pending.setdefault(task, []).append(step_id)
            if self._due is None and not self._closed:
                self._due = time.monotonic() + FLUSH_AFTER_S
                thread = self._thread
                if thread is None or not thread.is_alive():  # none yet, idle and gone, or lost in a fork
                    self._thread = threading.Thread(target=self._flusher, name="graphrt-cleanups", daemon=True)
                    self._thread.start()
                else:
                    self._cond.notify()

    def take(self, task):
        """The ids to carry in a RunGraph to `task` now (they are then no longer pending)."""
        if task not in self._pending:  # lock-free fast path: most steps find nothing
            return None
        with self._lock:
            ids = self._pending.pop(task, None)
            if ids and len(ids) > _MAX_CARRIED:
                self._pending[task] = ids[_MAX_CARRIED:]
                ids = ids[:_MAX_CARRIED]
        return ids

    def flush(self):
        """Sends every pending id now, one CleanupStep per task."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._due = None
        for task, ids in pending.items():
            for i in range(0, len(ids), _MAX_CARRIED):
                chunk = ids[i:i + _MAX_CARRIED]
                fields = {"step_id": chunk[0]}
                if len(chunk) > 1:
                    fields["more_step_ids"] = chunk[1:]
                self._send_oneway(task, fields)

    def _flusher(self):
        me = threading.current_thread()
        while True:
            with self._cond:
                while not self._closed:
                    if self._due is None:
                        if not self._cond.wait(IDLE_EXIT_S) and self._due is None:
                            break
                        continue
                    wait = self._due - time.monotonic()
                    if wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._closed or self._due is None:
                    if self._thread is me:
                        self._thread = None
                    return
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - a bug must be loud, but must not stop later flushes
                import traceback
                traceback.print_exc()

    def close(self):
        with self._cond:
            self._closed = True
            self._cond.notify()
        self.flush()

    def __len__(self):
        with self._cond:
            return sum(len(ids) for ids in self._pending.values())

    def __repr__(self):
        return f"<DeferredCleanups {len(self)} step ids pending>"

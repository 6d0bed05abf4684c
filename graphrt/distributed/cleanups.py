"""The master's CleanupStep messages after successful steps, carried by the next RunGraph.

After a step every task must forget the step's rendezvous (a peer may still
pull a tensor from it until the step is over everywhere, so a worker cannot
drop it on its own). Sending a CleanupStep to each remote task after every
step costs a message per task on the client's thread at the end of each
`Session.run` — on a loaded machine as much as a third of a small step. So
after a step that succeeded the ids wait here: the next RunGraph to that task
carries them (`cleanup_step_ids`), and a timer sends whatever no step picked
up within `FLUSH_AFTER_S` as one CleanupStep (`more_step_ids`). A failed step
is still cleaned up at once (it may hold aborted state others wait on).
"""
import threading

FLUSH_AFTER_S = 0.02
_MAX_CARRIED = 1024   # ids one message carries (the wire allows 4096)


class DeferredCleanups:
    def __init__(self, send_oneway):
        self._send_oneway = send_oneway   # (task, fields) -> None
        self._lock = threading.Lock()
        self._pending = {}                # task -> [step ids]
        self._timer = None
        self._closed = False

    def add(self, tasks, step_id):
        """`step_id` ended well on `tasks`: clean it up there with the next message."""
        with self._lock:
            for task in tasks:
                self._pending.setdefault(task, []).append(step_id)
            if self._timer is None and not self._closed:
                self._timer = threading.Timer(FLUSH_AFTER_S, self.flush)
                self._timer.daemon = True
                self._timer.start()

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
            self._timer = None
        for task, ids in pending.items():
            for i in range(0, len(ids), _MAX_CARRIED):
                chunk = ids[i:i + _MAX_CARRIED]
                fields = {"step_id": chunk[0]}
                if len(chunk) > 1:
                    fields["more_step_ids"] = chunk[1:]
                self._send_oneway(task, fields)

    def close(self):
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.flush()

    def __len__(self):
        with self._lock:
            return sum(len(ids) for ids in self._pending.values())

    def __repr__(self):
        return f"<DeferredCleanups {len(self)} step ids pending>"

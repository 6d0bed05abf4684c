"""Deadlines for steps, enforced from a thread of their own.

The caller of `Session.run` runs partitions on its own thread, so it cannot
be the one to notice a deadline if a kernel blocks it. The watchdog keeps a
heap of (deadline, step) and aborts a step whose deadline passes, which
fails its pending Recvs and releases kernels that watch the step's error.

Most steps finish long before their deadline, so cancelling must be cheap
and must not keep the step (with its feeds and results) alive until the
deadline: a cancelled entry drops its references at once, and the heap is
rebuilt when most of it is stale. Watching must be cheap too: the thread is
woken only for a deadline earlier than the time it already means to look
again (waking it costs the step a thread switch, and every step watches).
"""
import heapq
import itertools
import os
import threading
import time

_IDLE_EXIT_S = 5.0  # an idle thread exits after this long; the next watch starts another


class Watchdog:
    def __init__(self):
        # watch and cancel run twice a step on its critical path: they take the plain lock (a C call)
        # rather than the Condition (a Python-level __enter__ and __exit__ around an RLock).
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._heap = []           # [deadline, handle, step, make_error]; step None once cancelled
        self._entries = {}        # handle -> entry, for live entries
        self._ids = itertools.count()
        self._thread = None
        self._looks_at = 0.0      # when the sleeping thread looks at the heap next (0: it is awake)

    def watch(self, step, deadline, make_error):
        """Aborts `step` with `make_error()` at `deadline` (time.monotonic) unless cancelled first."""
        handle = next(self._ids)
        entry = [deadline, handle, step, make_error]
        with self._lock:
            heapq.heappush(self._heap, entry)
            self._entries[handle] = entry
            if self._thread is None:  # the thread clears it (under this lock) when it exits
                self._thread = threading.Thread(target=self._run, name="graphrt-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._looks_at:
                self._looks_at = 0.0
                self._cond.notify()
        return handle

    def cancel(self, handle):
        with self._lock:
            entry = self._entries.pop(handle, None)
            if entry is not None:
                entry[2] = entry[3] = None
            if len(self._heap) > 64 and len(self._entries) < len(self._heap) // 4:
                self._heap = [e for e in self._heap if e[2] is not None]
                heapq.heapify(self._heap)

    def __len__(self):
        return len(self._entries)

    def _after_fork_in_child(self):
        # The thread did not come along: the child's first watch starts its own.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._thread = None
        self._looks_at = 0.0

    def _run(self):
        try:
            self._serve()
        finally:
            with self._cond:
                if self._thread is threading.current_thread():
                    self._thread = None  # died (a make_error raised): the next watch starts another

    def _serve(self):
        while True:
            with self._cond:
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._looks_at = time.monotonic() + _IDLE_EXIT_S
                    woken = self._cond.wait(timeout=_IDLE_EXIT_S)
                    self._looks_at = 0.0
                    if not woken and not self._heap:
                        self._thread = None
                        return  # idle: exit; the next watch starts a new thread
                    continue
                entry = self._heap[0]
                now = time.monotonic()
                if now < entry[0]:
                    self._looks_at = entry[0]
                    self._cond.wait(timeout=entry[0] - now)
                    self._looks_at = 0.0
                    continue
                heapq.heappop(self._heap)
                self._entries.pop(entry[1], None)
                step, make_error = entry[2], entry[3]
                entry[2] = entry[3] = None
            if step is not None and not step.done:
                step.abort(make_error())


WATCHDOG = Watchdog()
os.register_at_fork(after_in_child=WATCHDOG._after_fork_in_child)

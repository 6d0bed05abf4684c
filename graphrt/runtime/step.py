"""The state one step shares across its partition executors: the step id,
the rendezvous, the call frame (feeds in, fetches out), the stats
collector, and a barrier that completes when every executor has finished.

The first error wins: it aborts the step's rendezvous so that executors
waiting on a `_Recv` stop at once, and it is the error the caller sees.
Errors that are only consequences of that abort are marked derived.

Kernels that talk to the rendezvous (`_Send`/`_Recv`) read `frame_iter`
from the step they are given: (0, 0) at top level; inside a while loop the
executor hands them a `FrameStep` carrying the frame id and iteration, so
each iteration of a loop uses its own rendezvous keys.

Kernels that wait on something other than the rendezvous (a queue's
dequeue waiting for an element) register an abort callback: it is called
once with the step's first error, so the wait ends when the step is
cancelled, times out or fails elsewhere.
"""
import threading
from _thread import allocate_lock as _allocate_lock

from .. import errors


ROOT_FRAME_ITER = (0, 0)


class Step:
    frame_iter = ROOT_FRAME_ITER  # kernels run at top level unless given a FrameStep

    __slots__ = ("step_id", "rendezvous", "args", "retvals", "stats", "_lock", "_remaining", "_done",
                 "error", "cancelled", "_abort_callbacks", "blocking", "on_done", "_finished", "__weakref__")

    def __init__(self, step_id, rendezvous, args, num_retvals, num_executors, stats=None):
        self.step_id = step_id
        self.rendezvous = rendezvous
        self.args = args
        self.retvals = [None] * num_retvals
        self.stats = stats
        self._lock = threading.Lock()
        self._remaining = num_executors
        # Held until every executor finished: a lock, not an Event (one is made per step, and an
        # Event costs a Condition and three failed attribute lookups).
        self._done = _allocate_lock()
        self._done.acquire()
        self._finished = False
        self.error = None
        self.cancelled = False
        self._abort_callbacks = None
        self.blocking = {}    # id -> (node, device, since): kernels declared may_block running now
        self.on_done = None   # called once every executor finished (the step driver's cleanup)

    def report_error(self, err):
        """Records an error; the first one aborts the rendezvous. Returns True if it was first."""
        with self._lock:
            first = self.error is None
            if first:
                self.error = err
            elif not errors.is_derived(err) and errors.is_derived(self.error):
                self.error = err  # a root cause beats an earlier consequence
        if first and self.rendezvous is not None:
            self.rendezvous.start_abort(err)
        if first:
            with self._lock:
                callbacks, self._abort_callbacks = self._abort_callbacks, None
            for fn, _ in (callbacks or {}).values():
                fn(err)
        return first

    def add_abort_callback(self, fn, what=None):
        """Calls `fn(error)` once when the step fails or is aborted (at once if it
        already has). `what` (a string, or a callable making one) says what is
        waiting, for a deadline's message. Returns a token for
        `remove_abort_callback`, or None if `fn` has already been called."""
        with self._lock:
            if self.error is None:
                if self._abort_callbacks is None:
                    self._abort_callbacks = {}
                token = object()
                self._abort_callbacks[token] = (fn, what)
                return token
            err = self.error
        fn(err)
        return None

    def remove_abort_callback(self, token):
        """Forgets a callback (the wait it guarded has ended); a no-op once it has run."""
        if token is None:
            return
        with self._lock:
            if self._abort_callbacks is not None:
                self._abort_callbacks.pop(token, None)

    def waiting_on(self):
        """What the registered abort callbacks say is waiting (queue operations)."""
        with self._lock:
            whats = [what for _, what in (self._abort_callbacks or {}).values() if what is not None]
        return [what() if callable(what) else what for what in whats]

    def executor_done(self, err=None):
        if err is not None:
            self.report_error(err)
        with self._lock:
            self._remaining -= 1
            last = self._remaining == 0
        if last:
            self._finished = True
            self._done.release()
            on_done = self.on_done
            if on_done is not None:
                self.on_done = None
                on_done()

    def wait(self, timeout=None):
        """True when every executor finished; False on timeout."""
        done = self._done
        if not done.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            return False
        done.release()  # for the other waiters
        return True

    @property
    def done(self):
        return self._finished

    def abort(self, err):
        """Stops the step from outside (timeout, cancellation)."""
        self.report_error(err)

    def __repr__(self):
        state = "done" if self.done else f"{self._remaining} executors running"
        return f"<Step {self.step_id} {state}{' failed' if self.error else ''}>"


class FrameStep:
    """The step as seen by a transfer kernel running in a loop frame: the same
    step (attributes are delegated) plus the (frame_id, iter_id) of its key."""

    __slots__ = ("step", "rendezvous", "frame_iter")

    def __init__(self, step, frame_id, iter_id):
        self.step = step
        self.rendezvous = step.rendezvous
        self.frame_iter = (frame_id, iter_id)

    def __getattr__(self, name):
        return getattr(self.step, name)

    def __repr__(self):
        return f"<FrameStep {self.frame_iter[0]}:{self.frame_iter[1]} of {self.step!r}>"

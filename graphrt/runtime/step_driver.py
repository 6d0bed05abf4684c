"""StepDriver: runs a step's partitions off the calling thread, so its deadline holds.

A caller that runs partitions on its own thread cannot return before they
do: a `py_func` blocked on I/O kept `Session.run` far past its
`timeout_in_ms`. With a deadline, the driver hands the partitions to the
session's runner and waits for the step with that deadline. When it passes,
the step is aborted (pending Recvs fail, kernels that watch the step stop);
partitions that still do not finish within `abandon_grace_s` are
*abandoned*: the caller gets DeadlineExceededError at once, naming the
kernels still blocked (those whose op was registered with `may_block=True`
are tracked on the step while they run). The runner gets as many extra
threads as were abandoned, so the next step has its usual parallelism; they
retire when the abandoned partitions finally end, and whatever they compute
then is discarded (a may_block kernel that returns into a failed step raises
a derived CancelledError instead of passing its value on).

Without a deadline the partitions run on the calling thread as before
(`run_all`): that path costs no thread hand-off.

`run_step` is the one way a step is driven, by the local session and by a
worker's RunGraph: the deadline, its error (`deadline_error`, naming the
rendezvous keys and queue operations still waited for), the abort of every
partition when the caller is interrupted, and the bounded wait for them to
stop. A worker's RunGraph uses its asynchronous form, `start_step`: the
partitions start on the thread that received the request (or the runner,
when a kernel may block or take long), the watchdog aborts the step at its
deadline, and a callback answers when the last partition finishes — or
DRAIN_TIMEOUT_S after the abort if one still runs.
"""
import threading
import time

from .. import errors
from ..rendezvous import format_pending
from .graph_executor import run_all
from .watchdog import WATCHDOG

ABANDON_GRACE_S = 0.25   # after the abort, how long partitions get to stop before they are abandoned
# The calling thread waits for a step in slices: a signal (Ctrl-C) that arrives
# just before a blocking wait begins has its handler run only once the wait
# returns, so an unsliced wait could hold a KeyboardInterrupt until the step ends.
_WAIT_SLICE_S = 0.2
# After an abort, executors stop within milliseconds; a kernel that ignores
# the abort could keep a step alive, so the wait for them is bounded too.
DRAIN_TIMEOUT_S = 10.0


class StepDriver:
    def __init__(self, runner, abandon_grace_s=ABANDON_GRACE_S):
        self.runner = runner
        self.abandon_grace_s = abandon_grace_s
        self.abandoned = 0   # steps given up on while a kernel still ran (for tests and status)

    def run_step(self, step, runs, timeout_ms, where=""):
        """Runs the started `runs` of `step` with a timeout of `timeout_ms` (0: none).

        On return the step is done, or failed (its error on `step.error`); an
        exception of the caller's thread (Ctrl-C) aborts the step and reaches
        the caller only once the partitions have stopped. `where` (' on
        /job:...') names the task in the deadline error."""
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None

        def make_error():
            return deadline_error(step, timeout_ms, where)
        try:
            self.run(step, runs, deadline, make_error)
        except BaseException as exc:  # noqa: BLE001 - Ctrl-C, or a signal handler that raises
            # Nothing of the step may run on (or hold the runner) after the caller gets the exception.
            step.abort(errors.CancelledError(f"Step {step.step_id} was interrupted ({type(exc).__name__})"))
            step.wait(DRAIN_TIMEOUT_S)
            raise
        return step

    def start_step(self, step, runs, timeout_ms, finish, where="", inline=True):
        """Starts the started `runs` of `step` and returns; `finish()` is called once: when the
        step is done, or DRAIN_TIMEOUT_S after its deadline's abort if a partition still runs (the
        step's error then says so). `inline` runs the partitions on this thread until they wait
        (cheap kernels only: the caller is a serving thread), else on the runner."""
        once = threading.Lock()
        watches = []

        def finish_once():
            if once.acquire(False):
                for watch in watches:
                    WATCHDOG.cancel(watch)
                finish()

        if timeout_ms > 0:
            def give_up():
                error = step.error
                if once.acquire(False):  # the partitions did not stop: answer without them
                    if isinstance(error, errors.OpError):
                        error.message += (f"\n(executors of step {step.step_id}{where} were still running "
                                          f"{DRAIN_TIMEOUT_S:.0f}s after the abort)")
                        error.args = (error.message,)
                    finish()
                return error

            def on_deadline():
                watches.append(WATCHDOG.watch(step, time.monotonic() + DRAIN_TIMEOUT_S, give_up))
                return deadline_error(step, timeout_ms, where)
            watches.append(WATCHDOG.watch(step, time.monotonic() + timeout_ms / 1000.0, on_deadline))
        if not runs:
            finish_once()
            return
        step.on_done = finish_once
        if inline:
            run_all(runs)
        else:
            self.runner(lambda: run_all(runs))

    def run(self, step, runs, deadline=None, make_error=None):
        """Runs the started `runs` of `step` until they finish or `deadline` (time.monotonic) passes.

        On return the step is done, or it failed with its deadline error and
        was abandoned (its error says what still ran)."""
        if deadline is None:
            run_all(runs)
            wait_for_step(step, None)
            return step
        self.runner(lambda: run_all(runs))
        try:
            finished = wait_for_step(step, deadline)
        except BaseException:  # KeyboardInterrupt: the partitions run elsewhere; stop them too
            step.abort(errors.CancelledError(f"Step {step.step_id} was interrupted"))
            raise
        if finished:
            return step
        step.abort(make_error())
        if step.wait(self.abandon_grace_s):
            return step
        self._abandon(step)
        return step

    def _abandon(self, step):
        blocked = sorted(step.blocking.copy().values(), key=lambda b: b[3])  # copy: other threads edit it
        extra = max(1, len(blocked))
        self.runner.add_threads(extra)
        once = threading.Lock()

        def retire():
            if once.acquire(False):
                self.runner.retire_threads(extra)
        step.on_done = retire
        if step.done:  # it finished just now: nothing is abandoned
            retire()
            return
        self.abandoned += 1
        error = step.error
        now = time.monotonic()
        if blocked:
            lines = [f"  {name} ({op}) on {device}: blocked in its kernel for {now - since:.2f}s"
                     for name, op, device, since in blocked]
            note = "\nStill blocked (abandoned; a late result is discarded):\n" + "\n".join(lines)
            if isinstance(error, errors.OpError) and error.node is None:
                error.node = blocked[0][0]
        else:
            note = (f"\n(a kernel of step {step.step_id} was still running {self.abandon_grace_s:.2f}s after the "
                    f"abort; the step was abandoned and its late results are discarded)")
        if isinstance(error, errors.OpError):
            error.message += note
            error.args = (error.message,)

    def __repr__(self):
        return f"<StepDriver on {self.runner!r}: {self.abandoned} steps abandoned>"


def deadline_error(step, timeout_ms, where=""):
    """The one DeadlineExceededError of a step: what it still waits for (rendezvous keys, queues)."""
    pending = step.rendezvous.pending() if step.rendezvous is not None else []
    lines = [format_pending(pending)] if pending else []
    lines += [f"  {w}" for w in step.waiting_on() if w]  # queue operations
    waiting = "\n".join(lines) or "  (no rendezvous keys pending: a kernel is still running)"
    return errors.DeadlineExceededError(
        f"Timed out after {timeout_ms} ms waiting for step {step.step_id}{where} to finish; still waiting:\n"
        f"{waiting}")


def wait_for_step(step, deadline):
    """step.wait until `deadline` (time.monotonic, or None); on the main thread
    in slices of _WAIT_SLICE_S, so that its signal handlers run meanwhile."""
    if step.done:  # the partitions ran on the caller's thread: nothing to wait for
        return True
    if threading.current_thread() is not threading.main_thread():
        return step.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    while True:
        left = _WAIT_SLICE_S if deadline is None else min(_WAIT_SLICE_S, deadline - time.monotonic())
        if left <= 0:
            return step.done
        if step.wait(left):
            return True

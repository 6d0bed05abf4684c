"""Whether a thread that has just handed ZeroMQ a message yields its core for a moment.

ZeroMQ writes to the network from its own I/O thread, and on a machine with
few cores that thread is often queued behind the very thread that woke it.
Two threads go on working right after a send: a master that has sent the
other tasks their RunGraphs and starts its own partitions, and a worker's
serving loop that answers a RecvTensor from inside a step it runs inline
(MasterBackend._start_step, WorkerService._send). Their message would leave
only when they sleep, and all they do meanwhile is on the step's critical
path; a yield lets the I/O thread run first. On the 2-task step
(benchmarks/two_task_step.py, 2 vCPUs) that took 2-12% off, in blocks of
steps alternating with blocks that did not yield. Other sends do not yield:
a yield after each of 100 RecvTensors fanned in to one step took that step
from 8 to 15 ms, as ZeroMQ's thread no longer took them in one go. For the
same reason only the first send of a burst yields (one within BURST_GAP_S of
the send before it does not).

Beside a CPU hog, a yield hands the core to the hog for a whole time slice:
1.8-2.9 ms here, against a median of 2 us on an idle machine (one in a
thousand over 250 us: the other task's work). So every yield is timed.
After LONG_STREAK yields in a row took longer than LONG_S, yielding stops
for a pause, and each pause is twice the one before (up to MAX_PAUSE_S)
until CALM_YIELDS short yields in a row bring it back to FIRST_PAUSE_S.
Beside a steady hog that costs a streak's slices every 16 seconds.
"""
import os
import time

LONG_S = 500e-6       # a yield this long ran another process for a slice (ZeroMQ's thread takes ~10-90 us)
LONG_STREAK = 2       # on an idle machine about 1 yield in 3,000 is that long: two in a row is a hog
FIRST_PAUSE_S = 1.0
MAX_PAUSE_S = 16.0
CALM_YIELDS = 1000    # short yields in a row after which the pause is back to FIRST_PAUSE_S
BURST_GAP_S = 200e-6  # a send this soon after the one before is part of a burst: no yield


class YieldPolicy:
    def __init__(self, clock=time.perf_counter, sched_yield=getattr(os, "sched_yield", None)):
        self._clock = clock
        self._sched_yield = sched_yield
        self._resume_at = 0.0   # no yield before this time (0: yielding)
        self._pause = FIRST_PAUSE_S
        self._streak = 0        # long yields in a row
        self._calm = 0          # short yields in a row
        self._last_send = float("-inf")
        self.yields = 0
        self.long_yields = 0

    def after_send(self):
        """Called by a thread that has just sent a message and has more to do before it sleeps."""
        if self._sched_yield is None:
            return  # a platform without sched_yield
        start = self._clock()
        previous, self._last_send = self._last_send, start
        if start < self._resume_at or start - previous < BURST_GAP_S:
            return
        self._sched_yield()
        took = self._clock() - start
        self.yields += 1
        # Threads race on these fields harmlessly: at worst a yield more or less.
        if took > LONG_S:
            self.long_yields += 1
            self._streak += 1
            self._calm = 0
            if self._streak >= LONG_STREAK:
                self._streak = 0
                self._resume_at = start + took + self._pause
                self._pause = min(2.0 * self._pause, MAX_PAUSE_S)
        else:
            self._streak = 0
            self._calm += 1
            if self._calm == CALM_YIELDS:
                self._pause = FIRST_PAUSE_S

    @property
    def yielding(self):
        return self._sched_yield is not None and self._clock() >= self._resume_at

    def __repr__(self):
        state = "yielding" if self.yielding else f"paused for {self._resume_at - self._clock():.1f}s"
        return f"<YieldPolicy {state}, {self.long_yields} long of {self.yields} yields>"

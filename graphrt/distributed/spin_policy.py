"""Whether a thread waiting for its replies polls for a while before it sleeps.

A thread that sleeps in poll(2) is woken through the scheduler when its reply
comes: on a VM an idle vCPU's wake-up, tens of microseconds, after which its
Python runs cold. Polling without sleeping avoids both, and took a 2-task step
15-20% lower on an idle machine, but beside a CPU hog a spin that never
yielded took the core the other task needed and the step got 25-45% slower
(the spin now yields, below). How busy the
machine is does not tell the two apart (the other task's own threads, and
ZeroMQ's, are busy too), so the policy measures what it is for: how long the
blocking operations that wait (a master's step, a blocking RecvTensor) take
with and without spinning, from the operation's start to its last reply. It
keeps the faster way, and every TRIAL_EVERY operations it tries the other for
TRIAL_LENGTH of them, as the BLAS ThreadChooser does for its team sizes; each
trial that keeps the choice doubles the interval to the next, up to
MAX_TRIAL_EVERY. Either way must win by a margin to be taken, so that noise
does not flip it back and forth.

A choice holds for the operations it was measured on. When those change (a
session's steps grow, a blocking pull moves 1 MiB where it moved 4 bytes)
the kept way's operations soon take a different time: once the median of its
latest TRIAL_LENGTH moves by more than SHIFT from what it was when the choice
was made, the kept way is measured afresh for TRIAL_LENGTH operations, the
trial follows, and the intervals start over. Without this a choice made on
4-byte pulls held through the next 3,000 1 MiB ones, whichever way those
favoured (on one hour's 1 MiB pulls spinning was 25% faster; on the next
hour's its trials read twice as slow, though they may have held the cold
first pulls described next). Without the fresh measurement the trial was
judged against the kept way's operations from both sides of the change:
64 KiB pulls and the first, cold 1 MiB ones (milliseconds each), so sleeping
won its trial and held through 1 MiB pulls that spinning made 15% faster.

A policy starts spinning. A trial is measured in the kept way's regime, and
the regime weighs: started sleeping, the trials of spinning on 4-byte pulls
read 216 against 225 us, 298 against 294, 255 against 282 (no clear win, so
it slept through 2,000 pulls in two of three runs), while the same pulls
forced to one way or the other read 20-30% shorter spinning; started
spinning, they spun 96% of the time in three of three runs. (A vCPU that
idles between operations runs slower for a while after, section 1 of
docs/performance.md.) Beside a CPU hog the yields below end each spin at
its first long yield, so spinning costs little there: 4-byte pulls beside a
hog took 190-192 us spinning against 176-178 sleeping (within the margin, so
the policy kept spinning), 1 MiB pulls and 2-task steps the same either way.

The operation, not the wait, is what is timed. A thread that spun runs the
code around its waits warm, so it reaches its next wait sooner and then waits
longer for the same reply: timing the waits alone, spinning looked slower on
a 2-task step (waits of 225 against 201 us) while the steps it ran were 7%
faster than the policy's and 19% faster than sleeping throughout.

A spinning thread yields its core between polls. Without that, 10-14% of
1 MiB pulls waited out the whole spin and took over 1 ms (against 0.4-0.6):
the process's own ZeroMQ I/O thread, which reads the reply off the socket,
was queued on the spinning thread's core (2 vCPUs, the sending process on
the other) until the spin ended. With the yield 0-1% did, and 4-byte pulls
lost nothing. Beside a CPU hog a yield hands the core to the hog for a whole
slice (yield_policy.py), so a yield that long ends the spin.

A spin lasts until the reply comes or MAX_SPIN_S passes. When most of the
latest TRIAL_LENGTH operations' longest waits were longer than that, nothing
is spun at all. A tighter bound, twice the recent wait, cut many waits
short: a step's long wait is longer than its typical one. The thread then
slept after all, and the policy's steps ran 4-11% slower than steps that
always spun up to 1 ms.
"""
import collections
import os
import statistics
import time

MAX_SPIN_S = 0.001
LONG_YIELD_S = 200e-6  # a yield this long ran another thread's slice, not just a waiting thread of ours


class SpinPolicy:
    TRIAL_EVERY = 200         # operations from one trial's start to the next, after a switch
    MAX_TRIAL_EVERY = 3200    # ... and at most, as trials that keep the choice space them out
    TRIAL_LENGTH = 20
    CLEAR_WIN = 0.9   # the other way is taken when its operations took under this share of this way's
    SHIFT = 2.0       # the kept way's median moving by this factor means the operations changed: trial now

    def __init__(self, spinning=True):
        self.spinning = spinning     # the way kept (see "A policy starts spinning" above)
        self.operations = 0
        self.spun = 0                # ... of them spinning
        self.trial_start = 0         # the operation that starts the next trial (the first ones try the other way)
        self.interval = self.TRIAL_EVERY
        # The latest operations' lengths, [sleeping, spinning]: a trial's median against the median of as
        # many of the other way's (a moving average of a few, as first tried, followed the noise).
        self.recent = [collections.deque(maxlen=self.TRIAL_LENGTH), collections.deque(maxlen=self.TRIAL_LENGTH)]
        # Whether each of the latest operations' longest wait (the one a spin must cover: a step waits
        # long for the tensor it needs and briefly for the last reply) outlasted MAX_SPIN_S; spinning
        # stops while most did. A moving average of the waits, as first kept, let one 5 ms wait among
        # 0.35 ms ones (1 MiB pulls) pass the bound and stop spinning for the next several operations.
        self.long_waits = collections.deque(maxlen=self.TRIAL_LENGTH)
        self.waits_long = False
        self.trials = 0
        self.switches = 0
        self.shifts = 0              # trials brought forward because the operations changed
        self._basis = None           # the kept way's median when the choice was last made
        self._kept_since = 0         # operations of the kept way since its median was last looked at

    def begin(self):
        """(arm, seconds) for a blocking operation starting now: arm 1 if its waits poll before they
        sleep, for at most `seconds` each (0: sleep at once); hand the arm back to finished()."""
        on_trial = self.trial_start <= self.operations < self.trial_start + self.TRIAL_LENGTH
        if self.spinning == on_trial or self.waits_long:
            # Sleeping, or waits too long to spin through: such an operation counts as a sleeping one (it
            # counted as spinning before, though it never spun, and blurred what spinning costs).
            return 0, 0.0
        return 1, MAX_SPIN_S

    def finished(self, arm, seconds, longest_wait):
        """How long an operation that begin() gave `arm` took, from its start until its last reply, and
        the longest of its waits (from a wait's start until something came)."""
        waits = self.long_waits
        waits.append(longest_wait >= MAX_SPIN_S)
        # Most of a full window: a session's first operations wait long (connections are made, caches
        # are cold), and over the first few one long wait was a majority that stopped every other spin.
        self.waits_long = 2 * sum(waits) > waits.maxlen
        self.recent[arm].append(seconds)
        # Threads race on these fields harmlessly: at worst an operation counts in the other trial.
        self.operations += 1
        self.spun += arm
        if arm == self.spinning and self.operations < self.trial_start:
            self._kept_since += 1
            if self._kept_since >= self.TRIAL_LENGTH:  # the deque holds only operations since the last look
                self._kept_since = 0
                basis = self._basis
                if basis is not None:
                    now = statistics.median(self.recent[arm])
                    if now > self.SHIFT * basis or now * self.SHIFT < basis:
                        # The kept way's latest operations straddle the change (and a change often
                        # starts with a few slow, cold ones): it is measured afresh before the trial,
                        # so that both ways are judged on the operations as they are now.
                        self.recent[arm].clear()
                        self._basis = None
                        self.trial_start = self.operations + self.TRIAL_LENGTH
                        self.interval = self.TRIAL_EVERY
                        self.shifts += 1
        if self.operations >= self.trial_start + self.TRIAL_LENGTH:  # a trial just ended
            self.trials += 1
            sleeping, spinning = self.medians()
            if sleeping is not None and spinning is not None:
                # The other way must win clearly to be taken: trials are noisy, and flipping back and
                # forth on noise only adds trials' worth of cost (it did, when spinning had only to lose
                # to be dropped).
                spin = spinning < self.CLEAR_WIN * sleeping if not self.spinning else \
                    not sleeping < self.CLEAR_WIN * spinning
                if spin != self.spinning:
                    self.spinning = spin
                    self.switches += 1
                    self.interval = self.TRIAL_EVERY
                else:
                    # Each trial runs the slower way: beside a CPU hog a spinning trial's steps took
                    # 2.6x a sleeping one's. A choice that trials keep confirming is tried less often.
                    self.interval = min(2 * self.interval, self.MAX_TRIAL_EVERY)
            self.trial_start += self.interval
            kept = self.recent[self.spinning]
            self._basis = statistics.median(kept) if kept else None
            self._kept_since = 0

    def medians(self):
        """[sleeping, spinning]: the median length of the latest operations each way (None: none yet)."""
        return [statistics.median(r) if r else None for r in self.recent]

    def __repr__(self):
        return (f"<SpinPolicy {'spinning' if self.spinning else 'sleeping'}, {self.spun} of {self.operations} "
                f"operations spun, latest {[None if m is None else round(m * 1e6) for m in self.medians()]} us "
                f"(sleeping, spinning), "
                f"{self.switches} switches in {self.trials} trials, {self.shifts} brought forward>")


def spin(poll, seconds, sched_yield=getattr(os, "sched_yield", None)):
    """poll(0) until it reports something or `seconds` pass, yielding the core between polls; what it
    reported, or an empty list. A yield that takes LONG_YIELD_S or more ran another process for a
    slice: the core is wanted, and the spin ends there (the caller then sleeps)."""
    clock = time.perf_counter
    end = clock() + seconds
    fired = poll(0)
    while not fired:
        start = clock()
        if start >= end:
            break
        if sched_yield is not None:
            sched_yield()
            if clock() - start >= LONG_YIELD_S:
                return poll(0)
        fired = poll(0)
    return fired

"""Whether a thread waiting for its replies polls for a while before it sleeps.

A thread that sleeps in poll(2) is woken through the scheduler when its reply
comes: on a VM an idle vCPU's wake-up, tens of microseconds, after which its
Python runs cold. Polling without sleeping avoids both, and took a 2-task step
15-20% lower on an idle machine, but beside a CPU hog the spinning thread took
the core the other task needed and the step got 25-45% slower. How busy the
machine is does not tell the two apart (the other task's own threads, and
ZeroMQ's, are busy too), so the policy measures what it is for: how long
waits take with and without spinning. It keeps the faster one, and every
TRIAL_EVERY waits it tries the other for TRIAL_WAITS waits, as the BLAS
ThreadChooser does for its team sizes. Spinning must win by a margin to be
taken (it costs a core while it lasts), and lose outright to be dropped. A
spin lasts at most twice the recent wait and never more than MAX_SPIN_S, and
waits longer than that are not spun at all.
"""
import time

MAX_SPIN_S = 0.001


class SpinPolicy:
    TRIAL_EVERY = 200
    TRIAL_WAITS = 20
    SPIN_WINS = 0.9   # spinning is taken when its waits took under this share of the sleeping ones
    _KEEP = 0.8       # weight of the old estimate in a moving average

    def __init__(self):
        self.spinning = False        # start by sleeping: it never takes a core from anyone
        self.waits = 0
        self.mean = [None, None]     # moving average of a wait's length, [sleeping, spinning]
        self.trials = 0
        self.switches = 0

    def spin_for(self):
        """Seconds the next wait may poll before it sleeps (0: sleep at once)."""
        arm = self._arm()
        if not arm:
            return 0.0
        typical = self.mean[1] if self.mean[1] is not None else self.mean[0]
        if typical is None:
            return MAX_SPIN_S
        return min(MAX_SPIN_S, 2.0 * typical) if typical < MAX_SPIN_S else 0.0

    def waited(self, seconds):
        """How long the wait that asked spin_for() took, from its start until something came."""
        arm = self._arm()
        old = self.mean[arm]
        self.mean[arm] = seconds if old is None else self._KEEP * old + (1.0 - self._KEEP) * seconds
        self.waits += 1
        if self.waits % self.TRIAL_EVERY == self.TRIAL_WAITS:  # a trial just ended
            self.trials += 1
            sleeping, spinning = self.mean
            if sleeping is not None and spinning is not None:
                # Spinning must win clearly to be taken, and lose outright to be dropped: trials are
                # noisy, and flipping back and forth on noise only adds trials' worth of cost.
                spin = spinning < (self.SPIN_WINS * sleeping if not self.spinning else sleeping)
                if spin != self.spinning:
                    self.spinning = spin
                    self.switches += 1

    def _arm(self):
        on_trial = self.waits % self.TRIAL_EVERY < self.TRIAL_WAITS
        return int(self.spinning != on_trial)

    def __repr__(self):
        return (f"<SpinPolicy {'spinning' if self.spinning else 'sleeping'}, waits "
                f"{[None if m is None else round(m * 1e6) for m in self.mean]} us (sleeping, spinning), "
                f"{self.switches} switches in {self.trials} trials>")


def spin(poll, seconds):
    """poll(0) until it reports something or `seconds` pass; what it reported, or an empty list."""
    end = time.perf_counter() + seconds
    fired = poll(0)
    while not fired and time.perf_counter() < end:
        fired = poll(0)
    return fired

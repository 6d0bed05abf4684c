import gc
import threading
import time
import weakref

from graphrt import errors
from graphrt.runtime.watchdog import Watchdog


class FakeStep:
    def __init__(self):
        self.done = False
        self.aborted = threading.Event()
        self.error = None

    def abort(self, err):
        self.error = err
        self.aborted.set()


def test_deadline_aborts_the_step_with_the_given_error():
    dog = Watchdog()
    step = FakeStep()
    dog.watch(step, time.monotonic() + 0.05, lambda: errors.DeadlineExceededError("late"))
    assert step.aborted.wait(5)
    assert isinstance(step.error, errors.DeadlineExceededError) and str(step.error) == "late"
    assert len(dog) == 0


def test_cancelled_steps_are_released_at_once_not_at_their_deadline():
    dog = Watchdog()
    steps = [FakeStep() for _ in range(200)]
    refs = [weakref.ref(s) for s in steps]
    handles = [dog.watch(s, time.monotonic() + 3600, lambda: errors.DeadlineExceededError("x")) for s in steps]
    for h in handles:
        dog.cancel(h)
    del steps
    gc.collect()
    assert all(r() is None for r in refs)  # nothing keeps a finished step alive for an hour
    assert len(dog) == 0 and len(dog._heap) <= 64


def test_a_finished_step_is_not_aborted():
    dog = Watchdog()
    finished, running = FakeStep(), FakeStep()
    finished.done = True
    now = time.monotonic()
    dog.watch(finished, now + 0.01, lambda: errors.DeadlineExceededError("x"))
    dog.watch(running, now + 0.02, lambda: errors.DeadlineExceededError("y"))
    # Deadlines are handled in order: once the later one has fired, the earlier one was handled.
    assert running.aborted.wait(60)
    assert len(dog) == 0
    assert finished.error is None and not finished.aborted.is_set()


def test_a_watchdog_whose_thread_died_starts_another_for_the_next_deadline():
    dog = Watchdog()
    broken = FakeStep()

    def make_error():
        raise RuntimeError("a make_error that fails")
    previous_hook = threading.excepthook
    threading.excepthook = lambda args: None  # the dying thread's traceback is expected here
    try:
        dog.watch(broken, time.monotonic() + 0.01, make_error)
        deadline = time.monotonic() + 5
        while dog._thread is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert dog._thread is None  # it died, and said so
    finally:
        threading.excepthook = previous_hook
    step = FakeStep()
    dog.watch(step, time.monotonic() + 0.02, lambda: errors.DeadlineExceededError("late"))
    assert step.aborted.wait(5) and str(step.error) == "late"


def test_a_forked_child_gets_a_watchdog_thread_of_its_own():
    import os
    from graphrt.runtime.watchdog import WATCHDOG
    parent = FakeStep()
    handle = WATCHDOG.watch(parent, time.monotonic() + 3600, lambda: errors.DeadlineExceededError("x"))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its deadline must still fire though the parent's thread did not come along
        ok = False
        try:
            step = FakeStep()
            WATCHDOG.watch(step, time.monotonic() + 0.02, lambda: errors.DeadlineExceededError("late"))
            ok = step.aborted.wait(5)
        finally:
            os.write(w, b"1" if ok else b"0")
            os._exit(0)
    os.close(w)
    try:
        assert os.read(r, 1) == b"1"
    finally:
        os.close(r)
        os.waitpid(pid, 0)
        WATCHDOG.cancel(handle)


def test_watching_wakes_the_thread_only_for_an_earlier_deadline(monkeypatch):
    # Every step watches its deadline; waking the thread each time would cost every step a thread
    # switch. A deadline later than the thread's next look needs no wake-up.
    dog = Watchdog()
    first = dog.watch(FakeStep(), time.monotonic() + 3600, lambda: errors.DeadlineExceededError("x"))
    end = time.monotonic() + 5
    while not dog._looks_at and time.monotonic() < end:
        time.sleep(0.001)
    assert dog._looks_at > time.monotonic() + 3000  # asleep until that deadline
    dog.cancel(first)
    notified = []
    real_notify = dog._cond.notify
    monkeypatch.setattr(dog._cond, "notify", lambda *a: (notified.append(1), real_notify(*a)))
    for _ in range(100):
        dog.cancel(dog.watch(FakeStep(), time.monotonic() + 7200, lambda: errors.DeadlineExceededError("x")))
    assert notified == []
    soon = FakeStep()
    dog.watch(soon, time.monotonic() + 0.05, lambda: errors.DeadlineExceededError("soon"))
    assert notified == [1]
    assert soon.aborted.wait(5) and str(soon.error) == "soon"

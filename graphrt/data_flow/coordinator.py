"""`tf.train.Coordinator`: stops a group of threads together and reports the
first error any of them raised (TF1's semantics).

    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except tf.errors.OutOfRangeError:
        pass                      # the input is exhausted
    finally:
        coord.request_stop()
    coord.join(threads)           # re-raises a runner thread's error

OutOfRangeError (the end of the input) is a clean stop, not an error to
report. Only the first reported error is kept; reports after the stop are
ignored (they are usually consequences of stopping).
"""
import contextlib
import sys
import threading
import time

from .. import errors
from .. import logging


class Coordinator:
    """A coordinator for threads (see module doc)."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def __repr__(self):
        state = "stopping" if self.should_stop() else "running"
        return f"<Coordinator {state}, {len(self._registered_threads)} registered threads>"

    def _filter_exception(self, ex):
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None):
        """Asks every thread to stop; `ex` (an exception or `sys.exc_info()`) is
        recorded if it is the first and is re-raised by `join()`."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                # nobody will join again to see it: raise it now
                if isinstance(ex, tuple):
                    raise ex[1]
                if ex is not None:
                    raise ex
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if not isinstance(ex, tuple):
                        info = sys.exc_info()
                        ex = info if info[1] is ex else (type(ex), ex, ex.__traceback__)
                    if not isinstance(ex[1], BaseException):
                        raise TypeError(f"ex must be an Exception or sys.exc_info(), got {ex!r}")
                    logging.info("Error reported to Coordinator: %s", ex[1])
                    self._exc_info_to_raise = ex
                self._stop_event.set()

    def clear_stop(self):
        """Makes `should_stop()` False again (and forgets the recorded error)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context whose exceptions become `request_stop(exc_info)` instead of propagating."""
        try:
            yield
        except:  # noqa: E722 - as TF: every exception stops the threads
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """True once a stop was requested; False if `timeout` seconds pass first."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` (and the registered ones) to end. Once a stop is
        requested they have `stop_grace_period_secs` to do so, else RuntimeError
        (unless `ignore_live_threads`). Re-raises the error given to request_stop."""
        with self._lock:
            threads = list(self._registered_threads.union(threads or ()))
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]
            if stragglers:
                if ignore_live_threads:
                    logging.info("Coordinator stopped with threads still running: %s", " ".join(stragglers))
                else:
                    raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(stragglers)}")

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the error given to `request_stop`, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]


class LooperThread(threading.Thread):
    """A daemon thread calling `target(*args)` until the coordinator stops,
    back to back or every `timer_interval_secs`; its errors stop the coordinator."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop."""

    def stop_loop(self):
        """Called once after the loop."""

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)

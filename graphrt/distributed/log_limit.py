"""Rate-limited stderr lines: a hostile peer must not be able to flood the logs.

`RateLimitedLog(name, per_interval, interval_s)` prints at most
`per_interval` lines per `interval_s` seconds; when a quiet period follows a
burst it prints how many lines it suppressed, so nothing is lost silently.
"""
import sys
import threading
import time


class RateLimitedLog:
    def __init__(self, name, per_interval=5, interval_s=10.0, stream=None):
        self.name = name
        self.per_interval = int(per_interval)
        self.interval_s = float(interval_s)
        self._stream = stream
        self._lock = threading.Lock()
        self._window_start = -float("inf")
        self._printed = 0
        self.suppressed = 0       # lines dropped in the current window
        self.total_suppressed = 0

    def __call__(self, line):
        now = time.monotonic()
        with self._lock:
            if now - self._window_start >= self.interval_s:
                if self.suppressed:
                    self._write(f"{self.name}: {self.suppressed} similar messages suppressed in the last "
                                f"{self.interval_s:.0f}s")
                self._window_start, self._printed, self.suppressed = now, 0, 0
            if self._printed >= self.per_interval:
                self.suppressed += 1
                self.total_suppressed += 1
                return False
            self._printed += 1
        self._write(line)
        return True

    def _write(self, line):
        try:
            print(line, file=self._stream or sys.stderr)
        except (OSError, ValueError):  # stderr closed
            pass

    def __repr__(self):
        return f"<RateLimitedLog {self.name}: {self.per_interval} per {self.interval_s:g}s>"

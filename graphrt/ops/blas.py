"""One BLAS for all host devices.

numpy's BLAS already spreads one matmul over every core. When two host
devices call it at once, each call starts its own team of threads and they
fight over the same cores (measured: a LeNet step went from ~150 ms to
~1.1 s). So BLAS-heavy kernels on host arrays take turns on this lock: each
runs at full width, and the GIL-free elementwise kernels of other devices
still run alongside.
"""
import functools
import os
import threading
import time

BLAS_LOCK = threading.Lock()


def blas_kernel(factory):
    """Wraps a kernel factory so its kernel holds BLAS_LOCK while it runs on numpy arrays."""
    @functools.wraps(factory)
    def make(ctx):
        fn = factory(ctx)
        if ctx.xp.__name__ != "numpy":
            return fn  # cupy work is ordered by the GPU stream, not by host threads

        timings = ThreadChooser.new_timings()

        def serialized(*args):
            with BLAS_LOCK:
                chooser = _CHOOSER
                if chooser is None:
                    return fn(*args)
                return chooser.run(fn, args, timings)
        serialized.uses_blas_team = True
        return serialized
    return make


def on_blas_team(ctx, fn):
    """Marks a host kernel that does its heavy work in BLAS calls (under BLAS_LOCK, on the BLAS
    team's threads), as `blas_kernel` marks its kernels. Executors read the mark: while such a
    kernel runs, the team may be using every core, so other work gains nothing by being handed
    to another thread then (runtime/graph_executor.py)."""
    if ctx.xp.__name__ == "numpy":
        fn.uses_blas_team = True
    return fn


def team_can_span_cores():
    """Whether a BLAS call may run on more than one thread now or later in this process: a
    ThreadChooser may pick every core, or the count is fixed above one."""
    return _CHOOSER is not None or (blas_threads() or 1) > 1


# -- axpy (y += a*x) from numpy's own BLAS ---------------------------------------
#
# numpy has no fused multiply-add, so `var -= lr * grad` costs four passes over
# memory. numpy ships with a BLAS (OpenBLAS in its wheels) whose axpy does it
# in one multithreaded pass (measured 0.24 ms vs 0.91 ms for 1M floats). It is
# found at run time among the libraries numpy loaded; where it isn't there
# (another BLAS build, another OS) callers fall back to numpy.

import ctypes  # noqa: E402
import numpy as np  # noqa: E402

_AXPY = {}      # numpy dtype -> ctypes function, filled on first use
_FOUND = None


def _loaded_blas_paths():
    """Shared libraries with 'blas' in their name mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if len(line.split()) >= 6}
    except OSError:
        return []
    return sorted(p for p in paths if p.startswith("/") and ".so" in p.rsplit("/", 1)[-1]
                  and "blas" in p.rsplit("/", 1)[-1].lower())


def _find_cblas(routine, argtypes):
    """{float32: cblas_s<routine>, float64: cblas_d<routine>} from numpy's BLAS as ctypes
    functions, their arguments typed by `argtypes(blas int type, scalar type)`; None if absent."""
    for lib in _loaded_blas_libs():
        for prefix in ("scipy_cblas_", "cblas_"):
            for suffix, int_type in (("64_", ctypes.c_int64), ("", ctypes.c_int)):
                s = getattr(lib, f"{prefix}s{routine}{suffix}", None)
                d = getattr(lib, f"{prefix}d{routine}{suffix}", None)
                if s is None or d is None:
                    continue
                for fn, scalar in ((s, ctypes.c_float), (d, ctypes.c_double)):
                    fn.argtypes = argtypes(int_type, scalar)
                    fn.restype = None
                return {np.dtype(np.float32): s, np.dtype(np.float64): d}
    return None


def _find_axpy():
    global _FOUND
    if _FOUND is None:
        found = _find_cblas("axpy", lambda i, x: [i, x, ctypes.c_void_p, i, ctypes.c_void_p, i])
        _AXPY.update(found or {})
        _FOUND = found is not None
    return _FOUND


def _loaded_blas_libs():
    for path in _loaded_blas_paths():
        try:
            yield ctypes.CDLL(path)
        except OSError:
            continue


_MIN_AXPY_ELEMENTS = 4096  # below this, numpy's own loop beats the ctypes call


def axpy(alpha, x, y):
    """y += alpha * x in place with BLAS, if it can (same float dtype and
    size, both contiguous, y writable, a BLAS found). Returns False otherwise,
    and the caller does it with numpy."""
    if type(x) is not np.ndarray or x.size < _MIN_AXPY_ELEMENTS:
        return False
    with BLAS_LOCK:
        return axpy_held(alpha, x, y)


def axpy_held(alpha, x, y):
    """`axpy` for a caller that holds BLAS_LOCK."""
    if (type(x) is not np.ndarray or type(y) is not np.ndarray or x.dtype != y.dtype or x.size != y.size
            or x.size < _MIN_AXPY_ELEMENTS or not x.flags.c_contiguous or not y.flags.c_contiguous
            or not y.flags.writeable):
        return False
    fn = _AXPY.get(y.dtype) if (_FOUND or _find_axpy()) else None
    if fn is None:
        return False
    # __array_interface__ rather than .ctypes.data: the same address without two Python-level calls
    fn(y.size, float(alpha), x.__array_interface__["data"][0], 1, y.__array_interface__["data"][0], 1)
    return True


# -- gemm with an accumulating C (c = beta * c + alpha * op(a) @ op(b)) ------------------------
#
# numpy's matmul always writes a new array (BLAS beta = 0). A weight's update
# `w -= lr * (x.T @ dy)` can be one gemm into w itself (beta = 1): no gradient
# array is written and read back, and no axpy pass follows (runtime/fused_updates.py).

_GEMM = {}      # numpy dtype -> ctypes cblas_?gemm, filled on first use
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _find_gemm():
    if "searched" not in _GEMM:
        _GEMM["searched"] = True
        _GEMM.update(_find_cblas("gemm", lambda i, x: [ctypes.c_int, ctypes.c_int, ctypes.c_int, i, i, i, x,
                                                       ctypes.c_void_p, i, ctypes.c_void_p, i, x,
                                                       ctypes.c_void_p, i]) or {})
    return len(_GEMM) > 1


def _gemm_operand(x, transposed):
    """(rows, cols, BLAS transpose flag, leading dimension) of op(x) for a 2-D C- or
    Fortran-ordered array `x` (`transposed`: op(x) = x.T), or None for any other layout."""
    if x.ndim != 2:
        return None
    r, c = x.shape
    if x.flags.c_contiguous:
        flag, ld = (_TRANS, c) if transposed else (_NO_TRANS, c)
    elif x.flags.f_contiguous:  # x.T is C-ordered
        flag, ld = (_NO_TRANS, r) if transposed else (_TRANS, r)
    else:
        return None
    return (c, r, flag, ld) if transposed else (r, c, flag, ld)


def gemm_update(alpha, a, ta, b, tb, c, beta=1.0):
    """c = beta * c + alpha * op(a) @ op(b) in place with BLAS (op(x) = x.T where `ta`/`tb`), the caller
    holding BLAS_LOCK. Returns False (nothing done) unless a, b and c are 2-D float arrays of one
    dtype with matching shapes, a and b C- or Fortran-ordered, c C-ordered and writable, and a
    BLAS gemm was found."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or type(c) is not np.ndarray
            or not a.dtype == b.dtype == c.dtype or c.ndim != 2 or not c.flags.c_contiguous
            or not c.flags.writeable):
        return False
    fn = _GEMM.get(c.dtype)
    if fn is None:
        fn = _GEMM.get(c.dtype) if _find_gemm() else None
        if fn is None:
            return False
    if a.ndim == 2 and b.ndim == 2 and a.flags.c_contiguous and b.flags.c_contiguous:
        # the common case, as _gemm_operand reads it, without its two calls
        (ra, lda), (rb, ldb) = a.shape, b.shape
        m, k, flag_a = (lda, ra, _TRANS) if ta else (ra, lda, _NO_TRANS)
        k_b, n, flag_b = (ldb, rb, _TRANS) if tb else (rb, ldb, _NO_TRANS)
    else:
        op_a, op_b = _gemm_operand(a, ta), _gemm_operand(b, tb)
        if op_a is None or op_b is None:
            return False
        m, k, flag_a, lda = op_a
        k_b, n, flag_b, ldb = op_b
    if k != k_b or c.shape != (m, n) or not (m and n and k):
        return False
    fn(_ROW_MAJOR, flag_a, flag_b, m, n, k, float(alpha), a.__array_interface__["data"][0], max(lda, 1),
       b.__array_interface__["data"][0], max(ldb, 1), float(beta), c.__array_interface__["data"][0], max(n, 1))
    return True


# -- BLAS threads ------------------------------------------------------------------
#
# OpenBLAS starts one thread per core for a large matmul, and its idle
# threads spin before they sleep. With several host devices (or other work)
# on the same cores they fight graphrt's device threads: a 3-device MLP step
# went from 2.5 ms to 111 ms under a concurrent CPU hog, and back to ~2 ms
# with one BLAS thread. So the policy (applied when a session or worker
# creates its devices, `apply_thread_policy`): `intra_op_parallelism_threads`
# when the ConfigProto sets it, as in TF; else one BLAS thread per host
# device's share of the cores when several host devices share them, and
# every core for a single device, as TensorFlow does. The policy does not
# look at the machine's load: a process's own BLAS threads raise the load
# average, so a rule keyed on it turned a quiet machine's second session
# single-threaded (an MLP step twice as slow). On a machine shared with other
# CPU-heavy work, set `intra_op_parallelism_threads=1` (measured under load:
# a 1-device MLP step took 316 ms wall with one thread, 850 ms with two on
# 2 cores).
# With several host devices the share is only the starting point: a
# ThreadChooser (below) measures each BLAS kernel with both team sizes and
# keeps the faster, so a quiet machine's sequential layers get every core
# back. The setting is process-wide (OpenBLAS has one pool): the session created
# last decides. Without a loaded OpenBLAS (another BLAS build) this does
# nothing.

_THREADS = {}   # "set" / "get" -> ctypes function, filled on first use
_DEFAULT_THREADS = None


def _find_threads():
    if "searched" in _THREADS:
        return "set" in _THREADS
    _THREADS["searched"] = True
    for lib in _loaded_blas_libs():
        for set_name, get_name, int_type in (
                ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_", ctypes.c_int),
                ("openblas_set_num_threads64_", "openblas_get_num_threads64_", ctypes.c_int),
                ("openblas_set_num_threads", "openblas_get_num_threads", ctypes.c_int)):
            set_fn, get_fn = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if set_fn is None or get_fn is None:
                continue
            set_fn.argtypes, set_fn.restype = [int_type], None
            get_fn.argtypes, get_fn.restype = [], int_type
            _THREADS["set"], _THREADS["get"] = set_fn, get_fn
            return True
    return False


def blas_threads():
    """The number of threads numpy's OpenBLAS uses now (None without one)."""
    get = _THREADS.get("get")
    if get is None:
        if not _find_threads():
            return None
        get = _THREADS["get"]
    return int(get())


def current_threads():
    """The BLAS team size a call made now would use (None without an OpenBLAS found)."""
    chooser = _CHOOSER
    if chooser is not None and chooser.current is not None:
        return chooser.current
    get = _THREADS.get("get")  # blas_threads(), inlined: this keys every fused update's check
    return int(get()) if get is not None else blas_threads()


def set_blas_threads(n):
    """Sets numpy's OpenBLAS thread count (process-wide); False without one."""
    global _DEFAULT_THREADS
    if not _find_threads():
        return False
    if _DEFAULT_THREADS is None:
        _DEFAULT_THREADS = int(_THREADS["get"]())
    with BLAS_LOCK:  # not while another thread is inside a BLAS call
        _THREADS["set"](max(1, int(n)))
    return True


_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
_PROC_STAT = "/proc/stat"


def _cpu_busy():
    """(seconds the cores this process may run on were busy, seconds this process ran) since
    boot, or None where /proc/stat cannot be read. Only the CPUs of the process's affinity count
    (a container pinned to some cores of a busy host sees its own), and busy includes the time
    the hypervisor gave to others (steal)."""
    try:
        allowed = {b"cpu%d" % c for c in os.sched_getaffinity(0)}
        with open(_PROC_STAT, "rb") as f:
            lines = f.read().split(b"\n")
    except (OSError, AttributeError):
        return None
    busy = 0
    for line in lines[1:]:
        fields = line.split()
        if not fields or not fields[0].startswith(b"cpu"):
            break  # per-CPU lines come right after the total
        if fields[0] in allowed and len(fields) >= 9:
            ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
            busy += sum(ticks) - ticks[3] - ticks[4]
    mine = os.times()
    return busy * _TICK_S, mine.user + mine.system


class ThreadChooser:
    """Chooses between a wide BLAS team (every core) and a narrow one (a host device's share)
    from measurement. Which is faster depends on what else runs: a quiet machine wants every
    core for each (already serialized) matmul, one where another process keeps a core busy
    wants one thread (an OpenBLAS team waits for its slowest member: measured 5.4 ms against
    2.5 ms per step under a CPU hog). The choice is process-wide and changes rarely: switching
    team sizes per call costs more than it wins.

    Every TRIAL_EVERY BLAS calls the other team runs TRIAL_CALLS calls. Each kernel's time with
    either team is a moving average (the team on trial's starts afresh each trial: one from an
    earlier trial may be from another moment), and the team whose kernels took less in sum (over
    kernels measured with both) is kept.

    Trials cost. While the wide team is kept and its kernels run within AT_BEST of their best
    average, the trial is put off: the narrow team can only win when something takes cores, and
    that slows the wide team first. (Each trial cost a quiet machine's 2-device MLP about 8% of
    its steps' time.) And a trial of the wide team comes at least TRIAL_GAP_S after the last
    trial: after one its idle threads spin for up to ~0.1 s (OpenBLAS's thread timeout) before
    they sleep, and with a trial every 256 calls of a small model they never slept (under a CPU
    hog a 3-device step took 4-6 ms instead of 1.3-2). Nor is the wide team tried while other
    processes keep OTHERS_BUSY cores busy (/proc/stat, less this process's own CPU time): it
    would wait for the cores they take, and the trial itself is what costs (it looks again
    LOOK_AGAIN calls later, not a whole TRIAL_EVERY). The gap starts short (FIRST_GAP_S: the
    first trials fall in a session's first, least steady steps) and doubles with every trial that
    keeps the choice, up to MAX_GAP_S: under a lasting hog each trial of the wide team made a
    second of steps 2-4x slower. A switch brings it back to TRIAL_GAP_S at most. A trial of the
    narrow team, once the wide one has slowed, waits for no gap. Runs under BLAS_LOCK."""

    FIRST_TRIAL = 64
    TRIAL_EVERY = 256
    TRIAL_CALLS = 32
    SETTLE_CALLS = 4   # calls right after a change of team, not measured: the new team's threads wake
    _KEEP = 0.7        # weight of the old estimate in a moving average
    AT_BEST = 1.5       # a CPU hog slows the wide team 3-10x; this machine's own drift, 10-40%
    # The wide team is taken when its kernels took under TO_WIDE of the narrow team's time, the narrow
    # one under TO_NARROW of the wide's: the wide team under a CPU hog costs far more (a 3-device step
    # 5-15 ms instead of 2) than the narrow one on a quiet machine (1.3 instead of 0.9).
    TO_WIDE = 0.8
    TO_NARROW = 0.95
    PUT_OFF_S = 30.0   # at most this long (a best measured under a load from the start proves nothing)
    TRIAL_GAP_S = 1.0
    FIRST_GAP_S = 0.05
    MAX_GAP_S = 16.0   # a hog that has gone gets the wide team back within this (and a trial)
    OTHERS_BUSY = 0.5  # cores' worth of CPU other processes use, from which the wide team is not tried
    MIN_LOOK_S = 0.1   # /proc/stat counts in 10 ms ticks
    LOOK_AGAIN = 64    # calls after a look that found the cores taken, to the next look

    def __init__(self, wide, narrow):
        self.teams = (int(wide), int(narrow))
        self.arm = 1                 # start narrow: safe on a busy machine
        self.current = None          # the thread count set now, if known
        self.calls = 0
        self.trial_start = self.FIRST_TRIAL
        self.switches = 0            # changes of the chosen team (for tests and benchmarks)
        self.trials = 0
        self._seen = {}              # id(timings) -> timings of kernels run since the last decision
        self._settling = 0           # calls left before the team set last is measured
        self._next_trial = 0.0       # time.monotonic() before which no trial starts
        self._gap = self.FIRST_GAP_S # seconds from the last trial to the next
        look = _cpu_busy()
        # (time, _cpu_busy()) when the machine's CPU use was last looked at, or None
        self._cpu_mark = None if look is None else (time.monotonic(), look)

    @staticmethod
    def new_timings():
        """A kernel's record: its moving average with the wide and the narrow team, the wide
        team's best average, and the trial its average for the team on trial comes from."""
        return [None, None, None, -1]

    def run(self, fn, args, timings):
        c = self.calls = self.calls + 1
        if c == self.trial_start:
            now = time.monotonic()
            if self.arm == 1 and now >= self._next_trial and self._cores_taken_elsewhere(now):
                self.trial_start = c + self.LOOK_AGAIN  # a look is cheap, and the load may be gone soon
                self._seen = {}
            elif (self.arm == 1 and now < self._next_trial) or (
                    self.arm == 0 and now < self._next_trial + self.PUT_OFF_S and self._wide_at_its_best()):
                self.trial_start = c + self.TRIAL_EVERY
                self._seen = {}
        trial_end = self.trial_start + self.TRIAL_CALLS
        arm = 1 - self.arm if self.trial_start <= c < trial_end else self.arm
        n = self.teams[arm]
        if n != self.current:
            _THREADS["set"](n)
            self.current = n
            # A team that was idle wakes its threads (or makes them) in its first calls: timing those
            # made the first trial of every core lose to the share it started from, for good.
            self._settling = self.SETTLE_CALLS
        t0 = time.perf_counter()
        out = fn(*args)
        took = time.perf_counter() - t0
        if self._settling:
            self._settling -= 1
        else:
            old = timings[arm]
            if arm != self.arm and timings[3] != self.trials:
                old, timings[3] = None, self.trials
            avg = timings[arm] = took if old is None else self._KEEP * old + (1.0 - self._KEEP) * took
            if arm == 0 and (timings[2] is None or avg < timings[2]):
                timings[2] = avg
            self._seen[id(timings)] = timings
        if c == trial_end - 1:
            if self._decide():
                self._gap = max(self.FIRST_GAP_S, min(self._gap, self.TRIAL_GAP_S))
            else:
                self._gap = min(self.MAX_GAP_S, 2 * self._gap)
            self.trial_start = c + self.TRIAL_EVERY
            now = time.monotonic()
            self._next_trial = now + self._gap
            self.trials += 1
            look = _cpu_busy()  # the next look at the machine covers the time since this trial
            self._cpu_mark = None if look is None else (now, look)
        return out

    def _cores_taken_elsewhere(self, now):
        """True when, since the last look, other processes kept OTHERS_BUSY cores' worth of CPU busy
        while this one ran: the wide team would wait for the cores they take, so trying it would
        only cost. A look over time this process mostly slept (under half a core of its own) says
        nothing about contention with it (another program may have run only meanwhile, as in a
        benchmark that takes turns): False, as is unknown (no /proc/stat), and the trial decides."""
        look = _cpu_busy()
        if look is None:
            return False
        mark = self._cpu_mark
        if mark is None or now - mark[0] < self.MIN_LOOK_S:
            if mark is None:
                self._cpu_mark = (now, look)
            return True  # too short a look to tell: look again at the next trial point
        self._cpu_mark = (now, look)
        elapsed = now - mark[0]
        own = (look[1] - mark[1][1]) / elapsed
        if own < 0.5:
            return False
        return (look[0] - mark[1][0]) / elapsed - own >= self.OTHERS_BUSY

    def _wide_at_its_best(self):
        seen = [t for t in self._seen.values() if t[0] is not None and t[2] is not None]
        return bool(seen) and sum(t[0] for t in seen) <= self.AT_BEST * sum(t[2] for t in seen)

    def _decide(self):
        both = [t for t in self._seen.values() if t[0] is not None and t[1] is not None]
        kept = sum(t[self.arm] for t in both)
        other = sum(t[1 - self.arm] for t in both)
        switch = bool(both) and other < (self.TO_WIDE if self.arm == 1 else self.TO_NARROW) * kept
        if switch:
            self.arm = 1 - self.arm
            self.switches += 1
        self._seen = {}
        return switch

    @property
    def threads(self):
        """The team size chosen now."""
        return self.teams[self.arm]

    def __repr__(self):
        return f"<ThreadChooser {self.threads} threads (wide={self.teams[0]}, narrow={self.teams[1]}), " \
               f"{self.switches} switches in {self.trials} trials>"


_CHOOSER = None   # a ThreadChooser while several host devices share the cores and no setting fixes the count


def thread_chooser():
    """The ThreadChooser in use, or None when the thread count is fixed."""
    return _CHOOSER


def use_thread_chooser(chooser):
    """Installs `chooser` (None: keep the count as set), e.g. to switch between sessions."""
    global _CHOOSER
    with BLAS_LOCK:
        _CHOOSER = chooser
        if chooser is not None:
            chooser.current = None  # unknown: whoever ran last may have changed it


def thread_policy(intra_op_threads, host_devices, cores=None):
    """The BLAS thread count for a process whose session has `host_devices`
    devices computing on the host (see the comment above)."""
    if intra_op_threads and intra_op_threads > 0:
        return int(intra_op_threads)
    if cores is None:
        cores = _DEFAULT_THREADS or blas_threads() or 1
    if host_devices > 1:
        return max(1, cores // host_devices)
    return cores


def apply_thread_policy(intra_op_threads, host_devices):
    """Sets the BLAS threads for a session with `host_devices` host devices: a fixed count
    (`intra_op_parallelism_threads`, or every core for one device), else a ThreadChooser
    between every core and a device's share, starting with the share."""
    global _CHOOSER
    if not _find_threads():
        return None
    if _DEFAULT_THREADS is None:
        set_blas_threads(blas_threads())  # records the library's own default first
    cores = _DEFAULT_THREADS or 1
    n = thread_policy(intra_op_threads, host_devices, cores)
    with BLAS_LOCK:
        _CHOOSER = ThreadChooser(cores, n) if not (intra_op_threads and intra_op_threads > 0) and n < cores \
            else None
    if n != blas_threads():
        set_blas_threads(n)
    if _CHOOSER is not None:
        _CHOOSER.current = n
    return n

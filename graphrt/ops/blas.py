"""One BLAS for all host devices.

numpy's BLAS already spreads one matmul over every core. When two host
devices call it at once, each call starts its own team of threads and they
fight over the same cores (measured: a LeNet step went from ~150 ms to
~1.1 s). So BLAS-heavy kernels on host arrays take turns on this lock: each
runs at full width, and the GIL-free elementwise kernels of other devices
still run alongside.
"""
import functools
import threading

BLAS_LOCK = threading.Lock()


def blas_kernel(factory):
    """Wraps a kernel factory so its kernel holds BLAS_LOCK while it runs on numpy arrays."""
    @functools.wraps(factory)
    def make(ctx):
        fn = factory(ctx)
        if ctx.xp.__name__ != "numpy":
            return fn  # cupy work is ordered by the GPU stream, not by host threads

        def serialized(*args):
            with BLAS_LOCK:
                return fn(*args)
        return serialized
    return make


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


def _find_axpy():
    global _FOUND
    if _FOUND is not None:
        return _FOUND
    _FOUND = False
    for lib in _loaded_blas_libs():
        for prefix in ("scipy_cblas_", "cblas_"):
            for suffix, int_type in (("64_", ctypes.c_int64), ("", ctypes.c_int)):
                s = getattr(lib, f"{prefix}saxpy{suffix}", None)
                d = getattr(lib, f"{prefix}daxpy{suffix}", None)
                if s is None or d is None:
                    continue
                s.argtypes = [int_type, ctypes.c_float, ctypes.c_void_p, int_type, ctypes.c_void_p, int_type]
                d.argtypes = [int_type, ctypes.c_double, ctypes.c_void_p, int_type, ctypes.c_void_p, int_type]
                s.restype = d.restype = None
                _AXPY[np.dtype(np.float32)] = s
                _AXPY[np.dtype(np.float64)] = d
                _FOUND = True
                return True
    return False


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
    if (type(x) is not np.ndarray or type(y) is not np.ndarray or x.dtype != y.dtype or x.size != y.size
            or x.size < _MIN_AXPY_ELEMENTS or not x.flags.c_contiguous or not y.flags.c_contiguous
            or not y.flags.writeable):
        return False
    fn = _AXPY.get(y.dtype) if (_FOUND or _find_axpy()) else None
    if fn is None:
        return False
    with BLAS_LOCK:
        fn(y.size, float(alpha), x.ctypes.data, 1, y.ctypes.data, 1)
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
# The setting is process-wide (OpenBLAS has one pool): the session created
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
    return int(_THREADS["get"]()) if _find_threads() else None


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
    """Sets the BLAS threads for a session with `host_devices` host devices."""
    if not _find_threads():
        return None
    if _DEFAULT_THREADS is None:
        set_blas_threads(blas_threads())  # records the library's own default first
    cores = _DEFAULT_THREADS or 1
    n = thread_policy(intra_op_threads, host_devices, cores)
    if n != blas_threads():
        set_blas_threads(n)
    return n

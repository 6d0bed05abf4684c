"""Keeping freed host memory for the next step, as TF's allocators keep theirs.

Host tensors are numpy arrays in glibc's malloc. By default glibc hands an
array of more than 128 KiB back to the kernel when it is freed (the
threshold then rises with what was freed, up to 32 MiB), and trims its heap
once the free space on top exceeds twice that threshold; the next array of
that size then page-faults on every page again. A kernel whose temporaries
are freed together hits this every step: a Sigmoid of 256x1024 float32
(five 1 MiB temporaries) took 3.4 ms and 1,248 page faults per run here,
0.58 ms and none once malloc kept its memory.

So when a process first creates graphrt's host devices, arrays up to 32
MiB (glibc's ceiling for this setting) come from the heap, and up to 256
MiB of free heap is kept. The process's resident memory then stays near
its peak, as it does with TF's allocators. `GRAPHRT_KEEP_FREED_MEMORY=0` in
the environment leaves malloc as it is; outside glibc nothing changes.
"""
import ctypes
import os
import sys
import threading

MMAP_THRESHOLD = 32 << 20   # arrays up to this come from the heap (glibc refuses more)
TRIM_THRESHOLD = 256 << 20  # free heap kept on top before glibc returns it
_M_TRIM_THRESHOLD = -1      # mallopt parameters, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
ENV = "GRAPHRT_KEEP_FREED_MEMORY"

_lock = threading.Lock()
_applied = None


def keep_freed_memory():
    """Sets glibc's thresholds once per process; True when they are set."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _set_thresholds()
        return _applied


def _set_thresholds():
    if os.environ.get(ENV, "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has these parameters
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # Both: setting either turns off glibc's own rising threshold.
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))

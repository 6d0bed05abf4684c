"""executor/host_malloc.py: once host devices exist, freed arrays stay in the
process for the next step instead of page-faulting back in."""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import graphrt as tf
from graphrt.executor import host_malloc


def _glibc():
    import ctypes
    try:
        return hasattr(ctypes.CDLL(None), "gnu_get_libc_version")
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(),
                                reason="the thresholds are glibc's")


def test_a_kernel_with_large_temporaries_does_not_page_fault_step_after_step():
    # Sigmoid frees several 1 MiB temporaries at once: by default glibc trimmed its heap after
    # each run and the next one faulted ~1,250 pages back in.
    x0 = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, x0.shape)
        y = tf.sigmoid(x)
        with tf.Session() as sess:
            assert host_malloc.keep_freed_memory()
            for _ in range(5):
                sess.run(y.op, {x: x0})
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for _ in range(20):
                sess.run(y.op, {x: x0})
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 20 * 50, f"{faults / 20:.0f} page faults per run"


def test_the_environment_can_leave_malloc_alone():
    code = ("import graphrt as tf; from graphrt.executor import host_malloc; "
            "tf.Session().close(); print(host_malloc.keep_freed_memory())")
    env = dict(os.environ, **{host_malloc.ENV: "0"})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"

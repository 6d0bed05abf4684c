"""Fixtures shared by the whole suite."""
import faulthandler
import os
import signal
import threading

import pytest
from hypothesis import settings

import graphrt as tf
from graphrt.executor import CudaOptions, HostOptions, SimOptions, get_platform

PLATFORMS = ("host", "sim", "cuda")
_TEST_OPTIONS = {
    "host": HostOptions(memory_limit=64 << 20),
    "sim": SimOptions(memory_bytes=16 << 20),
    "cuda": CudaOptions(memory_bytes=64 << 20),
}


# Hypothesis fails an example that takes over 200 ms by default: a timing bound that
# is not the behaviour under test, and one a loaded machine breaks.
settings.register_profile("graphrt", deadline=None)
settings.load_profile("graphrt")

# A test that hangs fails after this long, with every thread's stack, instead of stalling the run.
TIME_LIMIT_S = float(os.environ.get("GRAPHRT_TEST_TIME_LIMIT_S", "120"))


class TimeLimitExceeded(BaseException):
    """Raised into a test that ran over TIME_LIMIT_S. A BaseException, so that
    `except Exception` in the code under test cannot swallow it."""


@pytest.fixture(autouse=True)
def time_limit(request):
    """Fails the test (SIGALRM raises TimeLimitExceeded in the main thread) if it runs over TIME_LIMIT_S."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        faulthandler.dump_traceback(all_threads=True)  # where every thread was, in the captured stderr
        raise TimeLimitExceeded(f"{request.node.nodeid} ran over its time limit of {TIME_LIMIT_S:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def ctrl_c():
    """Python's own SIGINT handler (KeyboardInterrupt) for a test that sends itself Ctrl-C, even
    where the suite runs with SIGINT ignored (a background job of a non-interactive shell)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def graph():
    """A fresh Graph installed as the default, so tests never share state."""
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.fixture(params=PLATFORMS)
def platform(request):
    """Each StreamExecutor platform in turn; cuda is skipped where cupy or a GPU is missing."""
    p = get_platform(request.param)
    if not p.is_available():
        pytest.skip(f"{request.param} platform unavailable: {p.unavailable_reason()}")
    return p


@pytest.fixture
def executor(platform):
    """A fresh, uncached executor (device 0) of the platform, shut down afterwards."""
    ex = platform.create_executor(0, _TEST_OPTIONS[platform.name])
    yield ex
    ex.shutdown()


@pytest.fixture
def gate():
    """A threading.Event that holds a kernel until the test opens it (always opened at teardown)."""
    g = threading.Event()
    yield g
    g.set()

"""Deadlines: a step deadline holds even when a kernel blocks.

A py_func blocked on I/O used to keep Session.run past timeout_in_ms (3 s for a 0.5 s
limit; forever for a block that never ends): partitions ran on the calling thread.
Now the step driver runs them off it; the step fails with DeadlineExceededError naming
the blocked node, the blocked thread is abandoned (its late result is discarded), and
the next step works.
"""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def blocking_graph(release):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        calls = []

        def wait_for_io(a):
            calls.append(1)
            release.wait(30)          # a read that never completes (until the test releases it)
            return a * 2

        blocked = tf.py_func(wait_for_io, [x], tf.float32, name="read_socket")
        out = tf.identity(blocked, name="out")
        quick = tf.add(x, 1.0, name="quick")
    return g, x, out, quick, calls


@pytest.mark.parametrize("how", ["run_options", "config"])
def test_a_blocked_py_func_gives_deadline_exceeded_naming_it(how):
    release = threading.Event()
    g, x, out, quick, calls = blocking_graph(release)
    config = tf.ConfigProto(operation_timeout_in_ms=300) if how == "config" else None
    options = tf.RunOptions(timeout_in_ms=300) if how == "run_options" else None
    sess = tf.Session(graph=g, config=config)
    try:
        finished = threading.Event()
        outcome = []

        def run():
            try:
                outcome.append(sess.run(out, {x: [1.0, 2.0]}, options=options))
            except BaseException as e:  # noqa: BLE001
                outcome.append(e)
            finished.set()
        threading.Thread(target=run, daemon=True).start()
        # Never a hang: the call returns while the py_func is still blocked.
        assert finished.wait(20), "Session.run did not return while its py_func blocked"
        assert not release.is_set() and calls == [1]
        error = outcome[0]
        assert isinstance(error, errors.DeadlineExceededError), error
        assert "Timed out after 300 ms" in error.message
        assert "read_socket (PyFunc)" in error.message and "blocked in its kernel" in error.message
        assert error.node == "read_socket"
        # The next steps work, several times over (the abandoned thread was replaced).
        for i in range(3):
            np.testing.assert_allclose(sess.run(quick, {x: [i, 1.0]}, options=options), [i + 1.0, 2.0])
        assert sess._backend._driver.abandoned == 1
    finally:
        release.set()
        sess.close()


def test_the_abandoned_result_is_discarded_and_the_extra_thread_retires():
    release = threading.Event()
    g, x, out, quick, calls = blocking_graph(release)
    with tf.Session(graph=g, config=tf.ConfigProto(operation_timeout_in_ms=200)) as sess:
        threads_before = sess._backend._runner.num_threads
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(out, {x: [1.0, 2.0]})
        assert sess._backend._runner.num_threads == threads_before + 1
        release.set()      # the blocked read returns now: into a failed step
        for _ in range(200):
            if sess._backend._runner.num_threads == threads_before:
                break
            threading.Event().wait(0.01)
        assert sess._backend._runner.num_threads == threads_before
        # A step that does not block still gives its value with the deadline in force.
        np.testing.assert_allclose(sess.run(out, {x: [1.0, 2.0]}), [2.0, 4.0])

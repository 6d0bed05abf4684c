"""A multi-device Session.run interrupted on the calling thread (Ctrl-C, or a
signal handler that raises, such as the suite's time limit) aborts its step
before the exception leaves run(): every partition has stopped, nothing is
left waiting in the rendezvous, and the session runs the next step."""
import signal
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt.client import local_backend as session_lib

from .test_ops_for_tests import block_until_aborted, blocking_events


@pytest.fixture
def rendezvous_log(monkeypatch):
    made = []
    real = session_lib.LocalRendezvous

    def record(step_id):
        made.append(real(step_id))
        return made[-1]
    monkeypatch.setattr(session_lib, "LocalRendezvous", record)
    return made


def interrupt_main_when(*events):
    """Sends SIGINT to the main thread once every event is set (KeyboardInterrupt there)."""
    main = threading.main_thread().ident

    def fire():
        if all(e.wait(60) for e in events):
            signal.pthread_kill(main, signal.SIGINT)
    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    return thread


def graph(block_on_cpu0):
    """cpu:1 blocks until its step is aborted. With `block_on_cpu0`, so does
    cpu:0 (the client's device, whose partition the calling thread runs);
    otherwise cpu:0 only computes, so the calling thread ends up waiting for cpu:1."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
            first = block_until_aborted(x, name="blocked0") if block_on_cpu0 else tf.square(x, name="sq")
        with tf.device("/cpu:1"):
            second = block_until_aborted(tf.constant(1.0), name="blocked1")  # needs nothing from cpu:0
            ok = tf.multiply(x, 3.0, name="ok")
        with tf.device("/cpu:0"):
            total = tf.add(first, second, name="total")
            ok = tf.add(ok, 1.0, name="ok_total")
    return g, x, total, ok


@pytest.mark.parametrize("block_on_cpu0", [False, True], ids=["waiting", "inside_a_kernel"])
def test_an_interrupted_run_stops_every_partition_before_it_raises(block_on_cpu0, rendezvous_log, ctrl_c):
    g, x, total, ok = graph(block_on_cpu0)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        assert sess.run(ok, {x: 2.0}) == 7.0
        blocked1 = blocking_events("blocked1")
        blocked0 = blocking_events("blocked0") if block_on_cpu0 else None
        interrupter = interrupt_main_when(blocked1.started, *([blocked0.started] if blocked0 else []))
        with pytest.raises(KeyboardInterrupt):
            sess.run(total, {x: 1.0})
        interrupter.join(60)
        # Which thread ran what: the interrupt arrived where this case says it does.
        assert blocked1.thread is not threading.main_thread()
        if blocked0 is not None:
            assert blocked0.thread is threading.main_thread() and blocked0.returned.is_set()
        # Nothing of the interrupted step runs on: cpu:1's kernel was released by the
        # abort before run() raised, and no transfer is left in the step's rendezvous.
        assert blocked1.returned.is_set() and blocked1.released_by_abort
        assert rendezvous_log[-1].num_items() == 0
        # The session goes on working, on both devices.
        assert sess.run(ok, {x: 1.0}) == 4.0
        assert sess.run([ok, ok], {x: 0.0}) == [1.0, 1.0]
    assert len(rendezvous_log) == 4

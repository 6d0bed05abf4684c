"""The BLAS thread policy (ops/blas.py): applied when a session creates its
devices; overridden by ConfigProto.intra_op_parallelism_threads."""
import pytest

import graphrt as tf
from graphrt.ops import blas


def test_policy_shares_cores_between_host_devices():
    assert blas.thread_policy(0, 1, cores=8) == 8
    assert blas.thread_policy(0, 2, cores=8) == 4
    assert blas.thread_policy(0, 3, cores=2) == 1
    assert blas.thread_policy(3, 4, cores=8) == 3  # intra_op_parallelism_threads wins, as in TF
    assert blas.thread_policy(1, 1, cores=8) == 1   # how a shared machine asks for one thread


@pytest.fixture
def openblas(monkeypatch):
    if blas.blas_threads() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS with a thread setting")
    before = blas.blas_threads()
    yield
    blas.set_blas_threads(before)


def test_session_applies_policy(openblas):
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    cores = blas.blas_threads()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})):
        assert blas.blas_threads() == max(1, cores // 3)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=2)):
        assert blas.blas_threads() == 2
    with tf.Session():
        assert blas.blas_threads() == cores


def test_matmul_values_unchanged_with_one_thread(openblas):
    import numpy as np
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 32)).astype(np.float32)
    with tf.Graph().as_default():
        c = tf.matmul(tf.constant(a), tf.constant(b))
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            assert blas.blas_threads() == 1
            got = sess.run(c)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def _kernel_taking(chooser, seconds_by_threads):
    """A fake BLAS kernel whose time depends on the team size the chooser set."""
    import time
    timings = [None, None]

    def call():
        return chooser.run(lambda: time.sleep(seconds_by_threads[chooser.current]), (), timings)
    return call


@pytest.mark.parametrize("wide_faster", [True, False])
def test_thread_chooser_keeps_the_team_its_kernels_ran_faster_with(openblas, wide_faster):
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    assert chooser.threads == 1  # starts with a device's share
    fast, slow = 0.0005, 0.003
    kernels = [_kernel_taking(chooser, {2: fast if wide_faster else slow, 1: slow if wide_faster else fast})
               for _ in range(2)]
    for _ in range((chooser.FIRST_TRIAL + chooser.TRIAL_CALLS) // 2 + 1):
        for k in kernels:
            k()
    assert chooser.threads == (2 if wide_faster else 1)
    assert chooser.switches == (1 if wide_faster else 0)


def test_the_first_calls_after_a_change_of_team_are_not_held_against_it(openblas):
    """A team that was idle wakes its threads in its first calls: those are slow whichever team is
    faster afterwards, and must not decide the choice (a step's several kernels each get only a few
    calls in a trial, so the slow ones weighed heavily)."""
    import time
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    since_switch = {"team": chooser.current, "calls": 0}

    def kernel_time():
        if chooser.current != since_switch["team"]:
            since_switch.update(team=chooser.current, calls=0)
        since_switch["calls"] += 1
        if since_switch["calls"] <= chooser.SETTLE_CALLS:
            return 0.02  # waking the team
        return 0.0005 if chooser.current == 2 else 0.002
    kernels = [[None, None] for _ in range(8)]  # one step's eight BLAS kernels, called in turn
    for i in range(chooser.FIRST_TRIAL + chooser.TRIAL_CALLS + 1):
        chooser.run(lambda: time.sleep(kernel_time()), (), kernels[i % len(kernels)])
    assert chooser.threads == 2 and chooser.switches == 1


def test_a_session_with_several_host_devices_chooses_and_a_fixed_count_does_not(openblas):
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    if blas.blas_threads() < 2:
        pytest.skip("one BLAS thread in all: nothing to choose")
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})):
        chooser = blas.thread_chooser()
        assert chooser is not None and chooser.teams[1] == blas.blas_threads()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=1)):
        assert blas.thread_chooser() is None
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})):
        assert blas.thread_chooser() is None

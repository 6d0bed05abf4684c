"""graphrt.train.StalenessBoundHook (SSP): a worker more than `staleness` steps ahead
of the slowest waits; staleness=None never waits; a departed worker stops
holding the others back; two racing workers never start a step further apart."""
import threading

import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed.cluster import create_local_cluster


@pytest.fixture
def servers():
    workers, ps = create_local_cluster(2, num_ps=1)
    yield workers, ps
    for server in workers + ps:
        server.stop()


def _program(spec, task, hook_args, extra_hooks=()):
    """One worker's async training program with an SSP hook; returns (graph, train op, hook, ...)."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(cluster=spec, worker_device=f"/job:worker/task:{task}")):
            gs = tf.train.get_or_create_global_step()
            w = tf.Variable(1.0, name="w")
            train = tf.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=gs)
        hook = tf.train.StalenessBoundHook(worker_index=task, num_workers=2, **hook_args)
    return g, train, hook, list(extra_hooks)


def test_a_worker_ahead_by_more_than_staleness_waits(servers):
    workers, ps = servers
    spec = workers[0].cluster_spec
    g0, train0, hook0, _ = _program(spec, 0, {"staleness": 2, "max_wait_secs": 0.2})
    g1, train1, hook1, _ = _program(spec, 1, {"staleness": 2, "max_wait_secs": 0.2})
    with g0.as_default():
        s0 = tf.train.MonitoredTrainingSession(master=workers[0].target, is_chief=True, hooks=[hook0])
    with g1.as_default():
        s1 = tf.train.MonitoredTrainingSession(master=workers[1].target, is_chief=False, hooks=[hook1],
                                               max_wait_secs=30)
    try:
        for _ in range(3):       # clocks 0,1,2 at the start: at most 2 ahead of worker 1 (clock 0)
            s0.run(train0)
        with pytest.raises(errors.DeadlineExceededError, match="worker 0 at clock 3 waited 0.2 secs for worker 1 "
                                                              r"\(clock 0\) to come within staleness 2"):
            s0.run(train0)
        s1.run(train1)           # worker 1 reaches clock 1: worker 0 may start one more step
        s0.run(train0)
        assert hook0.gaps == [0, 1, 2, 2] and hook0.max_gap == 2
        assert hook1.gaps == [0]
        with g1.as_default():
            s1.close()           # a departed worker no longer holds worker 0 back
        for _ in range(5):
            s0.run(train0)
        assert hook0.max_gap == 2
    finally:
        for s in (s0, s1):
            if not s._is_closed():
                s.close()


def test_staleness_none_never_waits(servers):
    workers, ps = servers
    g0, train0, hook0, _ = _program(workers[0].cluster_spec, 0, {"staleness": None, "max_wait_secs": 0.2})
    with g0.as_default():
        with tf.train.MonitoredTrainingSession(master=workers[0].target, hooks=[hook0]) as sess:
            for _ in range(6):
                sess.run(train0)
    assert hook0.gaps == [0, 1, 2, 3, 4, 5] and hook0.waits == 0


@pytest.mark.parametrize("staleness", [0, 2])
def test_racing_workers_stay_within_the_bound(servers, staleness):
    workers, ps = servers
    spec = workers[0].cluster_spec
    hooks, failures = {}, []

    class Slow(tf.train.SessionRunHook):
        """Worker 1 does more work per step (three extra reads of the parameters from the ps)."""
        def __init__(self, w):
            self._w = w

        def after_run(self, run_context, run_values):
            for _ in range(3):
                run_context.session.run(self._w)

    def worker(task, steps):
        try:
            g, train, hook, _ = _program(spec, task, {"staleness": staleness, "max_wait_secs": 60})
            hooks[task] = hook
            with g.as_default():
                extra = [Slow(g.get_tensor_by_name("w:0"))] if task == 1 else []
                with tf.train.MonitoredTrainingSession(master=workers[task].target, is_chief=task == 0,
                                                       hooks=[hook] + extra, max_wait_secs=60) as sess:
                    for _ in range(steps):
                        sess.run(train)
        except BaseException as e:  # noqa: BLE001 - asserted below
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(task, 12)) for task in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    for task in (0, 1):
        assert len(hooks[task].gaps) == 12
        assert max(hooks[task].gaps) <= staleness

"""SyncReplicasOptimizer with two workers as threads of this process (each with its own
graph and session, as two programs) and an in-process ps: sync training counts
aggregated updates, and a worker stopping first does not hang the other."""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt.distributed.cluster import create_local_cluster

LR = 0.1
DATA = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def _worker(spec, target, task, last_step, results, replicas=2):
    """One replica's program: between-graph, MonitoredTrainingSession, StopAtStepHook."""
    try:
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=spec,
                                                          worker_device=f"/job:worker/task:{task}")):
                gs = tf.train.get_or_create_global_step()
                w = tf.Variable(0.0, name="w")
                loss = tf.reduce_mean(tf.square(w - DATA))
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                                     replicas_to_aggregate=replicas, total_num_replicas=2)
                train = opt.minimize(loss, global_step=gs)
            hooks = [opt.make_session_run_hook(task == 0), tf.train.StopAtStepHook(last_step=last_step)]
            runs = 0
            with tf.train.MonitoredTrainingSession(master=target, is_chief=task == 0, hooks=hooks,
                                                   max_wait_secs=60,
                                                   config=tf.ConfigProto(operation_timeout_in_ms=60_000)) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
                    results[task, "step"] = sess._tf_sess().run([gs, w])
            results[task] = runs
    except BaseException as e:  # noqa: BLE001 - the test asserts there was none
        results[task, "error"] = e


def _run_workers(last_steps, replicas=2):
    workers, ps = create_local_cluster(2, num_ps=1)
    results = {}
    try:
        spec = workers[0].cluster_spec
        threads = [threading.Thread(target=_worker, args=(spec, workers[i].target, i, last_steps[i], results,
                                                          replicas)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        assert not any(t.is_alive() for t in threads), "a worker hung"
    finally:
        for server in workers + ps:
            server.stop()
    errors_seen = {k: v for k, v in results.items() if isinstance(k, tuple) and k[1] == "error"}
    assert not errors_seen, errors_seen
    return results


def _gd(steps):
    w = 0.0
    for _ in range(steps):
        w -= LR * np.mean(2 * (w - DATA))
    return w


def test_sync_training_counts_aggregated_updates():
    results = _run_workers([5, 5])
    # both finished; every update averaged gradients computed at the current w (same data on both replicas,
    # so the result is exactly 5 steps of gradient descent)
    assert results[0] >= 1 and results[1] >= 1
    final = max(results[0, "step"], results[1, "step"], key=lambda v: v[0])
    assert final[0] == 5
    assert final[1] == pytest.approx(_gd(5), rel=1e-5)
    # 5 aggregated updates of 2 gradients each need 10 gradients; a run gives one (stale ones are dropped, so more
    # runs may be needed, never fewer)
    assert results[0] + results[1] >= 10


@pytest.mark.parametrize("early", [0, 1])
def test_a_worker_stopping_first_does_not_hang_the_other(early):
    last_steps = [30, 30]
    last_steps[early] = 2
    results = _run_workers(last_steps)
    late = 1 - early
    # the late worker ended normally (OutOfRange from the closed token queue ends a MonitoredSession) well
    # before its own last step: without a partner no aggregated update can happen
    assert results[late, "step"][0] < 30
    assert results[early, "step"][0] >= 2

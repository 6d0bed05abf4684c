"""MonitoredTrainingSession over in-process servers: a non-chief waits (polling)
for the chief's initialization or fails after max_wait_secs naming what is
missing; the chief survives a ps task that dies and comes back by re-creating
its session and restoring the last checkpoint."""
import threading

import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed.cluster import create_local_cluster


def _model(cluster):
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable(3.0, name="w")
        loss = w * w
        train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=gs)
    return gs, w, train


@pytest.fixture
def cluster():
    """Two worker servers and one ps server in this process, on free ports of 127.0.0.1."""
    workers, ps = create_local_cluster(2, num_ps=1)
    yield workers, ps
    for server in workers + ps:
        server.stop()


def test_non_chief_waits_for_the_chief(cluster):
    workers, ps = cluster
    spec = workers[0].cluster_spec
    seen = {}

    def non_chief():
        with tf.Graph().as_default():
            gs, w, train = _model(spec)
            try:
                with tf.train.MonitoredTrainingSession(master=workers[1].target, is_chief=False,
                                                       max_wait_secs=60) as sess:
                    seen["w"] = sess.run(w)
            except Exception as e:  # noqa: BLE001 - reported by the assertion below
                seen["error"] = e

    thread = threading.Thread(target=non_chief)
    thread.start()
    with tf.Graph().as_default():
        gs, w, train = _model(spec)
        set_w = w.assign(42.0)
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(set_w))
        with tf.train.MonitoredTrainingSession(master=workers[0].target, is_chief=True, scaffold=scaffold) as sess:
            thread.join(60)
            assert not thread.is_alive()
            assert sess.run(w) == 42.0
    assert "error" not in seen, seen.get("error")
    assert seen["w"] == 42.0  # the chief's value: the non-chief never initialized the model itself


def test_non_chief_without_chief_fails_in_bounded_time(graph, cluster):
    workers, ps = cluster
    gs, w, train = _model(workers[0].cluster_spec)
    with pytest.raises(errors.DeadlineExceededError, match=r"not ready after waiting 0\.3 secs.*w.*is the chief "
                                                           r"running\?"):
        tf.train.MonitoredTrainingSession(master=workers[1].target, is_chief=False, max_wait_secs=0.3)
    assert not graph.finalized


class _CountSessions(tf.train.SessionRunHook):
    def __init__(self):
        self.created = 0

    def after_create_session(self, session, coord):
        self.created += 1


def test_chief_recovers_from_a_restarted_ps(graph, cluster, tmp_path):
    workers, ps = cluster
    spec = workers[0].cluster_spec
    gs, w, train = _model(spec)
    counter = _CountSessions()
    ckpt = str(tmp_path / "ckpt")
    with tf.train.MonitoredTrainingSession(master=workers[0].target, checkpoint_dir=ckpt, save_checkpoint_steps=2,
                                           save_summaries_steps=None, log_step_count_steps=None,
                                           hooks=[counter, tf.train.StopAtStepHook(last_step=6)]) as sess:
        for _ in range(3):
            sess.run(train)
        assert sess.run(gs) == 3
        # The ps task dies (its variables are lost) and a new process takes its place.
        ps[0].stop()
        ps[0] = tf.train.Server(spec, "ps", 0)
        steps = 0
        while not sess.should_stop():
            sess.run(train)
            steps += 1
        assert counter.created == 2
        # restored at step 2 (the last checkpoint), then 4 steps: the same model as without the failure
        assert steps == 4
    assert tf.train.load_variable(ckpt, "global_step") == 6  # the final checkpoint, saved by end()
    assert tf.train.load_variable(ckpt, "w") == pytest.approx(3.0 * 0.5 ** 6)

"""tf.train.MonitoredSession / MonitoredTrainingSession / SingularMonitoredSession:
the hook protocol, Scaffold defaults, checkpoint restore on start, queue runners,
OutOfRange ending training, recovery from Aborted/Unavailable."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def _linear_model():
    """w starts at 3; each step of SGD (lr 0.25) on w^2 multiplies w by 0.5."""
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(3.0, name="w")
    loss = w * w
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=gs)
    return gs, w, loss, train


class RecordingHook(tf.train.SessionRunHook):
    def __init__(self, fetch=None, feed=None):
        self.calls = []
        self.fetch, self.feed = fetch, feed
        self.values = []

    def begin(self):
        self.calls.append("begin")
        self.graph_finalized_in_begin = tf.get_default_graph().finalized

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert isinstance(coord, tf.train.Coordinator)

    def before_run(self, run_context):
        self.calls.append("before_run")
        self.original = run_context.original_args
        return tf.train.SessionRunArgs(self.fetch, feed_dict=self.feed)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.values.append(run_values.results)

    def end(self, session):
        self.calls.append("end")


def test_stop_at_step_and_hook_protocol(graph):
    gs, w, loss, train = _linear_model()
    hook = RecordingHook(fetch={"w": w, "gs": gs})
    with tf.train.MonitoredTrainingSession(hooks=[hook, tf.train.StopAtStepHook(num_steps=3)]) as sess:
        assert graph.finalized
        outs = []
        while not sess.should_stop():
            outs.append(sess.run([train, loss]))
    assert not graph.finalized  # the monitored session unfinalizes the graph it finalized
    assert len(outs) == 3
    assert [o[1] for o in outs] == pytest.approx([9.0, 2.25, 0.5625])
    assert hook.calls == ["begin", "after_create_session"] + ["before_run", "after_run"] * 3 + ["end"]
    assert hook.graph_finalized_in_begin is False
    # the hook's fetches come back in its own structure, read with the caller's fetches
    assert [v["gs"] for v in hook.values] == [0, 1, 2]
    assert [v["w"] for v in hook.values] == pytest.approx([3.0, 1.5, 0.75])
    assert hook.original.fetches == [train, loss]


def test_stop_at_last_step_and_argument_errors(graph):
    gs, w, loss, train = _linear_model()
    with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=4)]) as sess:
        steps = 0
        while not sess.should_stop():
            sess.run(train)
            steps += 1
        assert steps == 4
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(train)
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)


def test_stop_at_step_needs_a_global_step(graph):
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_hook_feeds_and_conflicts(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    total = x + y
    tf.train.get_or_create_global_step()
    hook = RecordingHook(fetch=x * 10.0, feed={x: 2.0})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(total, feed_dict={y: 1.0}) == pytest.approx(3.0)
        assert hook.values == [pytest.approx(20.0)]
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={x: 1.0, y: 1.0})
    with tf.train.MonitoredSession(hooks=[RecordingHook(feed={x: 1.0}), RecordingHook(feed={x: 2.0})]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            sess.run(total, feed_dict={y: 0.0})


def test_request_stop_from_after_run(graph):
    tf.train.get_or_create_global_step()
    counter = tf.Variable(0, name="counter")
    inc = counter.assign_add(1)

    class StopAtTwo(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(counter)

        def after_run(self, run_context, run_values):
            if run_values.results >= 1:  # the value read with the increment: 0, then 1
                run_context.request_stop()

    with tf.train.MonitoredSession(hooks=[StopAtTwo()]) as sess:
        n = 0
        while not sess.should_stop():
            sess.run(inc)
            n += 1
    assert n == 2


def test_checkpoint_dir_restores_on_start(graph, tmp_path):
    gs, w, loss, train = _linear_model()
    ckpt = str(tmp_path / "ckpt")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=2, save_summaries_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    state = tf.train.get_checkpoint_state(ckpt)
    # saved when the session started (step 0), at step 2, and at the end (step 3)
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["0", "2", "3"]
    assert tf.train.load_variable(ckpt, "w") == pytest.approx(3.0 * 0.5 ** 3)
    assert (tmp_path / "ckpt" / "graph.pbtxt").exists()
    # A new program (a new graph) with the same checkpoint_dir continues from step 3.
    with tf.Graph().as_default():
        gs, w, loss, train = _linear_model()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_summaries_steps=None,
                                               hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
            assert sess.run(gs) == 3
            assert sess.run(w) == pytest.approx(3.0 * 0.5 ** 3)
            steps = 0
            while not sess.should_stop():
                sess.run(train)
                steps += 1
        assert steps == 2
    assert tf.train.load_variable(ckpt, "global_step") == 5


def test_out_of_range_ends_training_normally(graph):
    tf.train.get_or_create_global_step()
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    enqueue = q.enqueue_many([[1.0, 2.0, 3.0]])
    close = q.close()
    item = q.dequeue()
    final = tf.train.FinalOpsHook(q.size())
    got = []
    with tf.train.SingularMonitoredSession(hooks=[final]) as sess:
        sess.raw_session().run(enqueue)
        sess.raw_session().run(close)
        while not sess.should_stop():
            got.append(sess.run(item))
    assert got == [1.0, 2.0, 3.0]
    assert final.final_ops_values == 0  # end() ran: leaving on OutOfRange is a normal end


def test_queue_runners_start_and_stop_with_the_session(graph):
    tf.train.get_or_create_global_step()
    q = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    counter = tf.Variable(0, name="counter")
    enqueue = q.enqueue(counter.assign_add(1))
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [enqueue]))
    batch = q.dequeue_many(3)
    with tf.train.MonitoredSession() as sess:
        first = sess.run(batch)
        second = sess.run(batch)
    assert list(first) == [1, 2, 3]
    assert list(second) == [4, 5, 6]


def test_scaffold_defaults_and_init_fn(graph):
    gs, w, loss, train = _linear_model()
    local = tf.Variable(7.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="local")
    set_w = w.assign(10.0)
    seen = []

    def init_fn(scaffold, session):
        seen.append(scaffold)
        session.run(set_w)

    scaffold = tf.train.Scaffold(init_fn=init_fn)
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert sess.run([w, local]) == [10.0, 7.0]
        assert seen == [scaffold]
        assert scaffold.saver is not None and scaffold.ready_op is not None
        names = sess._tf_sess().run(scaffold.ready_op)
        assert names.size == 0
    copy = tf.train.Scaffold(copy_from_scaffold=scaffold, init_fn=None)
    assert copy.ready_op is scaffold.ready_op and copy.init_op is scaffold.init_op
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold"):
        tf.train.Scaffold(copy_from_scaffold=object())


def test_closed_session_errors(graph):
    gs, w, loss, train = _linear_model()
    sess = tf.train.MonitoredSession()
    sess.run(train)
    sess.close()
    assert sess.should_stop()
    with pytest.raises(RuntimeError, match="Run called on a closed MonitoredSession"):
        sess.run(train)
    with pytest.raises(RuntimeError, match="Session is already closed"):
        sess.close()


class _FlakyCreator(tf.train.SessionCreator):
    """Fails the first `failures` creations with UnavailableError (a task not back yet)."""

    def __init__(self, failures):
        self.inner = tf.train.ChiefSessionCreator()
        self.failures = failures
        self.created = 0

    def create_session(self):
        if self.failures:
            self.failures -= 1
            raise errors.UnavailableError("ps task 0 is not reachable")
        self.created += 1
        return self.inner.create_session()


class _AbortOnce(tf.train.SessionRunHook):
    def __init__(self, at_run):
        self.at_run, self.runs, self.sessions = at_run, 0, 0

    def after_create_session(self, session, coord):
        self.sessions += 1

    def after_run(self, run_context, run_values):
        self.runs += 1
        if self.runs == self.at_run:
            raise errors.AbortedError("worker restarted (new incarnation)")


def test_recoverable_session_recreates_after_aborted_and_unavailable(graph):
    gs, w, loss, train = _linear_model()
    creator = _FlakyCreator(failures=2)
    hook = _AbortOnce(at_run=2)
    with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
        sess.run(train)
        sess.run(train)  # aborted: the session is re-created (variables initialized again) and the run repeated
        assert creator.created == 2 and hook.sessions == 2
        assert sess.run(gs) == 1  # the re-initialized model ran the repeated step once


def test_recovery_gives_up_after_max_recovery_secs(graph):
    _linear_model()
    with pytest.raises(errors.UnavailableError, match="Gave up re-creating the session after 0 secs"):
        tf.train.MonitoredSession(session_creator=_FlakyCreator(failures=10 ** 6), max_recovery_secs=0)


def test_singular_session_does_not_recover(graph):
    gs, w, loss, train = _linear_model()
    hook = _AbortOnce(at_run=1)
    with pytest.raises(errors.AbortedError):
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train)
    assert hook.sessions == 1


def test_run_step_fn(graph):
    gs, w, loss, train = _linear_model()
    with tf.train.MonitoredSession() as sess:
        def step(ctx):
            value = ctx.run_with_hooks(train)
            ctx.request_stop()
            return ctx.session.run(gs), value
        assert sess.run_step_fn(step) == (1, None)
        assert sess.should_stop()

"""The standard hooks: NanTensorHook, LoggingTensorHook, StepCounterHook,
SummarySaverHook, CheckpointSaverHook with listeners, FeedFnHook, the timer."""
import glob
import logging

import numpy as np
import pytest

import graphrt as tf


def _events(logdir):
    events = []
    for path in sorted(glob.glob(f"{logdir}/events.out.tfevents.*")):
        events.extend(tf.train.summary_iterator(path))
    return events


@pytest.fixture(autouse=True)
def _fresh_writers():
    yield
    tf.train.SummaryWriterCache.clear()


def test_nan_tensor_hook_fails_or_stops(graph):
    tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [])
    loss = tf.sqrt(x)  # sqrt(-1) is NaN
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
        assert sess.run(loss, {x: 4.0}) == 2.0
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training."):
            sess.run(loss, {x: -1.0})
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        sess.run(loss, {x: -1.0})
        assert sess.should_stop()


def test_logging_tensor_hook_every_n_iter_and_at_end(graph, caplog):
    gs = tf.train.get_or_create_global_step()
    step = tf.assign_add(gs, 1)
    logged = []
    hook = tf.train.LoggingTensorHook({"step": gs}, every_n_iter=2, at_end=True,
                                      formatter=lambda values: logged.append(int(values["step"])) or "x")
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(step)
    # iterations 0, 2 and 4 log the value read with their run (before its increment), then the end
    assert logged == [0, 2, 4, 5]
    plain = tf.train.LoggingTensorHook([gs.name], every_n_iter=1)
    tf.logging.set_verbosity(tf.logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="graphrt"):
            with tf.train.MonitoredSession(hooks=[plain]) as sess:
                sess.run(step)
    finally:
        tf.logging.set_verbosity(tf.logging.WARN)
    assert "global_step:0 = 0" in caplog.text
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([gs])


def test_step_counter_and_summary_saver_write_events(graph, tmp_path):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(2.0)
    loss = w * w
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=gs)
    counter = tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    with tf.train.MonitoredTrainingSession(summary_dir=str(tmp_path), save_summaries_steps=2, log_step_count_steps=None,
                                           hooks=[counter, tf.train.StopAtStepHook(last_step=6)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    events = _events(str(tmp_path))
    losses = {e.step: v.simple_value for e in events for v in e.summary.value if v.tag == "loss"}
    # written at steps 1 (the first run), 3 and 5; the value is the loss that run computed
    assert sorted(losses) == [1, 3, 5]
    assert losses[1] == pytest.approx(4.0)
    assert losses[3] == pytest.approx(4.0 * 0.25 ** 2)
    rates = [e.step for e in events for v in e.summary.value if v.tag == "global_step/sec"]
    assert rates == [3, 5]  # the first trigger (step 1) only starts the clock
    assert counter.last_steps_per_sec > 0
    starts = [e.step for e in events if e.HasField("session_log") and e.session_log.status == 1]  # START
    assert starts == [1]


def test_step_counter_alone_flushes_its_rates_at_the_end(graph, tmp_path):
    gs = tf.train.get_or_create_global_step()
    step = tf.assign_add(gs, 1)
    tf.train.SummaryWriterCache.get(str(tmp_path)).flush()  # the writer's own first flush is spent
    with tf.train.MonitoredSession(hooks=[tf.train.StepCounterHook(every_n_steps=1, output_dir=str(tmp_path))]) as sess:
        for _ in range(4):
            sess.run(step)
    rates = [e.step for e in _events(str(tmp_path)) for v in e.summary.value if v.tag == "global_step/sec"]
    assert rates == [2, 3, 4]


def test_checkpoint_saver_hook_listeners_and_errors(graph, tmp_path):
    gs = tf.train.get_or_create_global_step()
    step = tf.assign_add(gs, 1)
    saver = tf.train.Saver()

    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.calls = []

        def before_save(self, session, global_step_value):
            self.calls.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            self.calls.append(("after", global_step_value))
            return global_step_value >= 3  # asks to stop training

        def end(self, session, global_step_value):
            self.calls.append(("end", global_step_value))

    listener = Listener()
    # The writer's own flush comes with its first event, then every two minutes: the session
    # logs below reach the file only if the hook flushes at its end.
    tf.train.SummaryWriterCache.get(str(tmp_path)).flush()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, saver=saver, listeners=[listener])
    runs = 0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(step)
            runs += 1
    assert runs == 3
    assert listener.calls == [("before", 0), ("after", 0), ("before", 3), ("after", 3), ("end", 3)]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
    checkpoints = [e.session_log.checkpoint_path for e in _events(str(tmp_path)) if e.HasField("session_log")]
    assert checkpoints == [str(tmp_path / "model.ckpt")] * 2
    with pytest.raises(ValueError, match="exactly one of every_secs and every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path))
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=saver, scaffold=tf.train.Scaffold())


def test_feed_fn_hook_and_timer(graph):
    tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [])
    double = x * 2.0
    values = iter([1.0, 5.0])
    with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: next(values)})]) as sess:
        assert [sess.run(double), sess.run(double)] == [2.0, 10.0]
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(2)
    assert timer.should_trigger_for_step(3)
    assert timer.update_last_triggered_step(3)[1] == 3
    with pytest.raises(ValueError, match="exactly one of every_secs and every_steps"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_nan_hook_value_is_checked_elementwise(graph):
    tf.train.get_or_create_global_step()
    v = tf.constant(np.array([1.0, np.nan], np.float32))
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(v)]) as sess:
        with pytest.raises(tf.train.NanLossDuringTrainingError):
            sess.run(v)

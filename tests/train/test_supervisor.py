"""tf.train.Supervisor's threads (they run, report errors, and all stop), and the other
additions of the train_supervisor case where the golden cannot show them: error messages,
random backup values in warm_start, a ProfilerHook trace, a GlobalStepWaiterHook that waits."""
import json
import os
import threading
import time

import numpy as np
import pytest

import graphrt as tf


@pytest.fixture
def no_leftover_threads():
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not extra:
            return
        time.sleep(0.01)
    pytest.fail(f"threads left behind: {[t.name for t in extra]}")


def _model():
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        loss = tf.reduce_sum(tf.square(w))
        tf.summary.scalar("loss", loss)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return g, gs, train


def _events(logdir):
    events = []
    for name in sorted(os.listdir(logdir)):
        if name.startswith("events.out.tfevents"):
            events.extend(tf.train.summary_iterator(os.path.join(logdir, name)))
    return events


def test_services_write_checkpoints_and_summaries_then_stop(tmp_path, no_leftover_threads):
    g, gs, train = _model()
    sv = tf.train.Supervisor(graph=g, logdir=str(tmp_path), save_model_secs=0.05, save_summaries_secs=0.05)
    with sv.managed_session() as sess:
        deadline = time.monotonic() + 0.4
        while time.monotonic() < deadline and not sv.should_stop():
            sess.run(train)
            time.sleep(0.005)
    assert sv.should_stop()
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert len(state.all_model_checkpoint_paths) >= 2  # the timer saved more than its first checkpoint
    tags = {v.tag for e in _events(str(tmp_path)) for v in e.summary.value}
    assert {"loss", "global_step/sec"} <= tags
    statuses = [e.session_log.status for e in _events(str(tmp_path)) if e.HasField("session_log")]
    assert statuses[0] == tf.summary.SessionLog.START and statuses[-1] == tf.summary.SessionLog.STOP
    assert tf.summary.SessionLog.CHECKPOINT in statuses


def test_error_in_a_service_thread_comes_out_of_the_block(tmp_path, no_leftover_threads):
    g, gs, train = _model()
    sv = tf.train.Supervisor(graph=g, logdir=str(tmp_path), save_model_secs=3600, save_summaries_secs=3600)

    def fail():
        raise ValueError("from the looper")

    with pytest.raises(ValueError, match="from the looper"):
        with sv.managed_session() as sess:
            sv.loop(0.01, fail)
            sv.wait_for_stop()
            sess.run(train)


def test_stop_joins_queue_runners_of_an_endless_input(no_leftover_threads):
    g = tf.Graph()
    with g.as_default():
        n = tf.train.range_input_producer(5, shuffle=False).dequeue()
        batch = tf.train.batch([n], batch_size=4, num_threads=2)
    sv = tf.train.Supervisor(graph=g)
    with sv.managed_session() as sess:
        got = np.concatenate([sess.run(batch) for _ in range(3)])
    assert sorted(got.tolist()) == sorted([0, 1, 2, 3, 4] * 2 + [0, 1])


def test_restores_from_the_latest_checkpoint_and_counts_on(tmp_path, no_leftover_threads):
    for expected_start in (0, 3):
        g, gs, train = _model()
        sv = tf.train.Supervisor(graph=g, logdir=str(tmp_path), save_model_secs=0, summary_writer=None)
        with sv.managed_session() as sess:
            assert sess.run(gs) == expected_start
            for _ in range(3):
                sess.run(train)
            sv.saver.save(sess, sv.save_path, global_step=gs)
    assert os.path.basename(tf.train.latest_checkpoint(str(tmp_path))) == "model.ckpt-6"


def test_non_chief_requires_placed_variables():
    g, _, _ = _model()
    with pytest.raises(ValueError, match="When using replicas, all Variables must have their device set"):
        tf.train.Supervisor(graph=g, is_chief=False)


def test_maybe_batch_errors():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(ValueError, match="cannot be a vector when `enqueue_many=False`"):
            tf.train.maybe_batch([x], [True, False], 2)
        with pytest.raises(ValueError, match="must be 0 or 1 dimensions"):
            tf.train.maybe_batch([x], [[True]], 2, enqueue_many=True)
        with pytest.raises(ValueError, match="capacity 4 must be bigger than min_after_dequeue 4"):
            tf.train.maybe_shuffle_batch([x], 2, 4, 4, True)


def test_warm_start_draws_backup_values_for_new_words_and_oov(tmp_path):
    (tmp_path / "old").write_text("a\nb\n")
    (tmp_path / "new").write_text("b\nz\n")
    with tf.Graph().as_default():
        tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="emb")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.Saver().save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [4, 2])
        info = tf.train.VocabInfo(str(tmp_path / "new"), 2, 2, str(tmp_path / "old"),
                                  backup_initializer=tf.random_uniform_initializer(5.0, 6.0))
        tf.train.warm_start(ckpt, vars_to_warm_start=[emb], var_name_to_vocab_info={"emb": info})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(emb)
    np.testing.assert_array_equal(value[0], [3.0, 4.0])
    assert np.all((value[1:] >= 5.0) & (value[1:] < 6.0))


def test_warm_start_vocab_file_too_short(tmp_path):
    (tmp_path / "old").write_text("a\n")
    (tmp_path / "new").write_text("a\n")
    with tf.Graph().as_default():
        tf.Variable(np.ones([1, 2], np.float32), name="emb")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.Saver().save(sess, str(tmp_path / "model"))
    with tf.Graph().as_default():
        tf.get_variable("emb", [3, 2])
        info = tf.train.VocabInfo(str(tmp_path / "new"), 3, 0, str(tmp_path / "old"))
        with pytest.raises(ValueError, match="fewer than new_vocab_size 3"):
            tf.train.warm_start(ckpt, var_name_to_vocab_info={"emb": info})


def test_profiler_hook_writes_a_chrome_trace_of_the_step(tmp_path):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        step = tf.assign_add(gs, 1, name="the_step")
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path))
        try:
            with tf.train.MonitoredSession(hooks=[hook]) as sess:
                for _ in range(2):
                    sess.run(step)
        finally:
            tf.train.SummaryWriterCache.clear()
    with open(tmp_path / "timeline-2.json") as f:
        trace = json.load(f)
    assert any(e.get("args", {}).get("name") == "the_step" for e in trace["traceEvents"])
    assert any(e.tagged_run_metadata.tag == "step_2" for e in _events(str(tmp_path)))


def test_global_step_waiter_hook_waits_for_the_step(no_leftover_threads):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        bump = tf.assign_add(gs, 1)
        hook = tf.train.GlobalStepWaiterHook(3)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def chief():
                for _ in range(3):
                    time.sleep(0.02)
                    sess.run(bump)

            t = threading.Thread(target=chief)
            t.start()
            assert hook.before_run(tf.train.SessionRunContext(None, sess)) is None
            assert sess.run(gs) >= 3
            t.join()


def test_remove_checkpoint_v1_deletes_the_exact_file(tmp_path):
    from tensorboard.compat.proto import saver_pb2
    (tmp_path / "m-1").write_bytes(b"v1")
    (tmp_path / "m-1.meta").write_bytes(b"meta")
    (tmp_path / "m-10").write_bytes(b"other")
    tf.train.remove_checkpoint(str(tmp_path / "m-1"), saver_pb2.SaverDef.V1)
    assert sorted(os.listdir(tmp_path)) == ["m-10"]

"""Infeed ops (graphrt/infeed): batches through a device's infeed, the sunk loop reading
them (tf.train.repeat(infeed_queue=...)), and the waits ending with their step."""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.infeed import InfeedQueue, InfeedThread
from graphrt.runtime import compiled_loop

from ..train.test_repeat import B, K, _data, _loss  # the same model and batches as the gathered path

DEVICES = ["/device:CPU:0", "/device:SIM:0"]
CONFIG = tf.ConfigProto(device_count={"SIM": 1})
FAST_FAIL = tf.RunOptions(timeout_in_ms=20000)  # a bug fails the test instead of hanging it


def _step(x, y):
    loss = _loss(x, y)
    return tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss), loss


def _train(device, infeed, threaded=False, fed_once=False):
    """K momentum steps in one run: batches gathered from [K, ...] inputs or dequeued from the infeed
    (put by separate runs, or with `fed_once` by the loop's run: repeat(infeed=True)).
    Returns (losses, parameters, the run's loop plans)."""
    xs, ys = _data()
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        if infeed and not fed_once:
            x = tf.placeholder(tf.float32, [B, 4])
            y = tf.placeholder(tf.float32, [B, 1])
            q = InfeedQueue(tuple_types=[tf.float32, tf.float32], tuple_shapes=[[B, 4], [B, 1]])
            enqueue, = q.generate_enqueue_ops([[x, y]])
            losses = tf.train.repeat(_step, K, infeed_queue=q)
            feed = {}
        else:
            xs_t = tf.placeholder(tf.float32, xs.shape)
            ys_t = tf.placeholder(tf.float32, ys.shape)
            losses = tf.train.repeat(_step, K, [xs_t, ys_t], infeed=fed_once)
            feed = {xs_t: xs, ys_t: ys}
            infeed = False
    with tf.Session(graph=g, config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        if infeed:
            batches = ({x: xs[i], y: ys[i]} for i in range(K))
            if threaded:
                feeder = InfeedThread(sess, enqueue, batches, options=FAST_FAIL).start()
            else:
                for b in batches:  # K batches fit the infeed (16): all put before the loop runs
                    sess.run(enqueue, b)
        got = sess.run(losses, feed, options=FAST_FAIL)
        if infeed and threaded:
            feeder.join(20)
        plan = sess.plan_for(losses, feed)
        plans = [getattr(ex, "loop_plan", None) for ex in plan.executors]
        return got, sess.run(tf.trainable_variables()), plans


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("threaded", [False, True], ids=["fed-before", "fed-meanwhile"])
def test_a_sunk_loop_reading_the_infeed_trains_as_the_gathered_batches(device, threaded):
    want_losses, want_params, _ = _train(device, infeed=False)
    losses, params, plans = _train(device, infeed=True, threaded=threaded)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    for a, b in zip(params, want_params):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    loops = [u for p in plans if p is not None for u in p.units if isinstance(u, compiled_loop.LoopPlan)]
    assert len(loops) == 1  # the dequeue runs inside a compiled loop
    assert (loops[0].stream is not None) == device.endswith("SIM:0")  # on SIM: one launch on its stream


@pytest.mark.parametrize("device", DEVICES)
def test_a_sunk_loop_fed_once_through_the_infeed_trains_as_the_gathered_batches(device):
    want_losses, want_params, _ = _train(device, infeed=False)
    losses, params, plans = _train(device, infeed=True, fed_once=True)  # 6 batches, twice: the infeed grows
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    for a, b in zip(params, want_params):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    loops = [u for p in plans if p is not None for u in p.units if isinstance(u, compiled_loop.LoopPlan)]
    assert len(loops) == 1 and (loops[0].stream is not None) == device.endswith("SIM:0")


def test_a_sunk_loop_fed_once_puts_more_batches_than_the_infeed_held():
    g = tf.Graph()
    with g.as_default(), tf.device("/device:SIM:0"):
        xs = tf.placeholder(tf.float32, [40, 3])
        sums = tf.train.repeat(lambda x: tf.reduce_sum(x), 40, [xs], infeed=True)
    values = np.random.RandomState(1).rand(40, 3).astype(np.float32)
    with tf.Session(graph=g, config=CONFIG) as sess:
        for _ in range(2):
            np.testing.assert_allclose(sess.run(sums, {xs: values}, options=FAST_FAIL), values.sum(1), rtol=1e-6)
    with tf.Graph().as_default(), pytest.raises(errors.InvalidArgumentError, match="infeed=True needs iterations"):
        tf.train.repeat(lambda x: tf.reduce_sum(x), tf.constant(4), [tf.zeros([4, 3])], infeed=True)


@pytest.mark.parametrize("device", DEVICES)
def test_the_frame_executor_reads_the_infeed_as_the_compiled_loop(device, monkeypatch):
    want_losses, want_params, _ = _train(device, infeed=True)
    monkeypatch.setattr(compiled_loop, "ENABLED", False)
    losses, params, plans = _train(device, infeed=True, threaded=True)
    assert all(p is None for p in plans)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    for a, b in zip(params, want_params):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _session_with(build, device):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        ops = build()
    return tf.Session(graph=g, config=CONFIG), ops


@pytest.mark.parametrize("device", DEVICES)
def test_single_tensor_ops_keep_fifo_order_and_values(device):
    def build():
        x = tf.placeholder(tf.int32, [3])
        return x, tf.contrib.tpu.infeed_enqueue(x), tf.contrib.tpu.infeed_dequeue(tf.int32, [3])
    sess, (x, enqueue, dequeue) = _session_with(build, device)
    with sess:
        for i in range(3):
            sess.run(enqueue, {x: np.arange(3, dtype=np.int32) + i})
        for i in range(3):
            np.testing.assert_array_equal(sess.run(dequeue), np.arange(3) + i)
    assert dequeue.shape.as_list() == [3] and dequeue.dtype == tf.int32


@pytest.mark.parametrize("device", DEVICES)
def test_an_empty_infeed_times_out_naming_the_op_and_device_and_the_next_run_works(device):
    def build():
        x = tf.placeholder(tf.float32, [2])
        return x, tf.contrib.tpu.infeed_enqueue_tuple([x], [[2]]), tf.contrib.tpu.infeed_dequeue_tuple(
            [tf.float32], [[2]], name="next_batch")
    sess, (x, enqueue, (dequeue,)) = _session_with(build, device)
    with sess:
        with pytest.raises(errors.DeadlineExceededError) as info:
            sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=100))
        assert "next_batch (InfeedDequeueTuple)" in str(info.value)
        assert device.split("/device:")[1] in str(info.value) and "waiting for a batch from the infeed" in str(
            info.value)
        sess.run(enqueue, {x: [1.0, 2.0]})  # the aborted dequeue took nothing and left no waiter
        np.testing.assert_array_equal(sess.run(dequeue, options=FAST_FAIL), [1.0, 2.0])


@pytest.mark.parametrize("device", DEVICES)
def test_a_full_infeed_times_out_the_enqueue_and_keeps_its_batches(device):
    def build():
        x = tf.placeholder(tf.float32, [])
        return x, tf.contrib.tpu.infeed_enqueue(x, name="put"), tf.contrib.tpu.infeed_dequeue(tf.float32, [])
    sess, (x, enqueue, dequeue) = _session_with(build, device)
    with sess:
        for i in range(16):
            sess.run(enqueue, {x: float(i)})
        with pytest.raises(errors.DeadlineExceededError, match=r"put \(InfeedEnqueue\) .* full infeed \(16 of 16\)"):
            sess.run(enqueue, {x: 99.0}, options=tf.RunOptions(timeout_in_ms=100))
        assert [float(sess.run(dequeue)) for _ in range(16)] == [float(i) for i in range(16)]


@pytest.mark.parametrize("device", DEVICES)
def test_closing_the_session_cancels_a_waiting_dequeue(device):
    def build():
        return tf.contrib.tpu.infeed_dequeue(tf.float32, [4], name="waits")
    sess, dequeue = _session_with(build, device)
    result = {}

    def run():
        try:
            sess.run(dequeue)
        except errors.OpError as exc:  # noqa: BLE001 - checked below
            result["error"] = exc
    waiter = threading.Thread(target=run)
    waiter.start()
    try:
        waiter.join(0.2)  # (the run waits on the infeed by now, or will find it closed: Cancelled either way)
        sess.close()
        waiter.join(10)
        assert not waiter.is_alive()
    finally:
        sess.close()
    assert isinstance(result.get("error"), errors.CancelledError)


@pytest.mark.parametrize("device", DEVICES)
def test_a_batch_of_other_shapes_or_dtypes_is_an_invalid_argument_naming_the_op_and_device(device):
    def build():
        x = tf.placeholder(tf.float32, None)
        enqueue = tf.contrib.tpu.infeed_enqueue_tuple([x], [[2]], name="put")
        loose = tf.contrib.tpu.infeed_enqueue_tuple([x], [[3]], name="put3")
        return (x, enqueue, loose, tf.contrib.tpu.infeed_dequeue_tuple([tf.float32], [[2]], name="take")[0],
                tf.contrib.tpu.infeed_dequeue(tf.int32, [2], name="ints"))
    sess, (x, enqueue, loose, dequeue, ints) = _session_with(build, device)
    short = device.split("/device:")[1]
    with sess:
        with pytest.raises(errors.InvalidArgumentError, match=rf"put' on .*{short}: inputs are float32\[3\], but "
                                                             r"its shapes attr says float32\[2\]"):
            sess.run(enqueue, {x: [1.0, 2.0, 3.0]})
        sess.run(loose, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(errors.InvalidArgumentError, match=rf"take' on .*{short}: the infeed's next batch is "
                                                             r"float32\[3\], but the op dequeues float32\[2\]"):
            sess.run(dequeue)
        sess.run(enqueue, {x: [5.0, 6.0]})  # the bad batch was dropped: the next one is served
        np.testing.assert_array_equal(sess.run(dequeue, options=FAST_FAIL), [5.0, 6.0])
        sess.run(enqueue, {x: [7.0, 8.0]})
        with pytest.raises(errors.InvalidArgumentError, match=rf"ints' on .*{short}: the infeed's next batch is "
                                                             r"float32\[2\], but the op dequeues int32\[2\]"):
            sess.run(ints)


def test_a_device_ordinal_of_another_device_is_refused():
    def build():
        return tf.contrib.tpu.infeed_enqueue_tuple([tf.constant([1.0])], [[1]], device_ordinal=3, name="elsewhere")
    sess, enqueue = _session_with(build, "/device:SIM:0")
    with sess, pytest.raises(errors.InvalidArgumentError, match="elsewhere.*device_ordinal 3 names another device"):
        sess.run(enqueue)


def test_building_checks_shapes_types_and_layouts():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError):
            tf.contrib.tpu.infeed_enqueue_tuple([x], [[3, 2]])
        with pytest.raises(ValueError, match="fully defined"):
            tf.contrib.tpu.infeed_dequeue_tuple([tf.float32], [[None, 2]])
        with pytest.raises(ValueError, match="one layout"):
            tf.contrib.tpu.infeed_enqueue_tuple([x], [[2, 3]], layouts=[1, 0])
        q = InfeedQueue(number_of_tuple_elements=2)
        with pytest.raises(ValueError, match="set the tuple types"):
            q.generate_dequeue_op()
        with pytest.raises(ValueError, match="shard 0 has 1 tensors"):
            q.generate_enqueue_ops([[x]])
        q.generate_enqueue_ops([[x, tf.zeros([4], tf.int32)]])
        assert [d.name for d in q.tuple_types] == ["float32", "int32"]
        assert repr(q) == "<InfeedQueue InfeedQueue: float32(2, 3), int32(4,)>"
        with pytest.raises(TypeError, match="dtypes"):
            q.generate_enqueue_ops([[tf.zeros([4], tf.int32), x]])


@pytest.mark.parametrize("device", DEVICES)
def test_a_loop_fed_once_that_fails_takes_back_its_batches_and_the_next_run_starts_clean(device):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        xs = tf.placeholder(tf.float32, [5, 2])

        def step(x):  # fails at the third step when asked to
            ok = tf.debugging.assert_less(tf.reduce_sum(x), 100.0, message="step too large")
            with tf.control_dependencies([ok]):
                return tf.reduce_sum(x)
        sums = tf.train.repeat(step, 5, [xs], infeed=True)
    good = np.arange(10, dtype=np.float32).reshape(5, 2)
    bad = good.copy()
    bad[2] = 1000.0
    with tf.Session(graph=g, config=CONFIG) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="step too large"):
            sess.run(sums, {xs: bad}, options=FAST_FAIL)
        infeed = sess.device("/job:localhost/replica:0/task:0" + device).infeed()
        assert len(infeed) == 0  # the batches the failed run had not taken were taken back
        np.testing.assert_allclose(sess.run(sums, {xs: good}, options=FAST_FAIL), good.sum(1))

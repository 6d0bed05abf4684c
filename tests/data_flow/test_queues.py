"""Queues: FIFO/shuffle/padding semantics, blocking ops ended by the step
deadline, session close and queue close, and the queue staying usable after."""
import threading

import numpy as np
import pytest

import graphrt as tf


def test_fifo_order_enqueue_many_dequeue_many_and_size(graph):
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    enq = q.enqueue_many([[[1., 2.], [3., 4.], [5., 6.]], [7, 8, 9]])
    x, y = q.dequeue()
    xs, ys = q.dequeue_many(2)
    assert x.shape.as_list() == [2] and xs.shape.as_list() == [2, 2] and ys.shape.as_list() == [2]
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(q.size()) == 3
        a, b = sess.run([x, y])
        np.testing.assert_array_equal(a, [1., 2.])
        assert b == 7
        a, b = sess.run([xs, ys])
        np.testing.assert_array_equal(a, [[3., 4.], [5., 6.]])
        np.testing.assert_array_equal(b, [8, 9])
        assert sess.run(q.size()) == 0


def test_named_queue_takes_and_gives_dicts(graph):
    q = tf.FIFOQueue(4, [tf.int32, tf.string], shapes=[[], []], names=["n", "s"])
    enq = q.enqueue({"n": 3, "s": "three"})
    out = q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        got = sess.run(out)
    assert got == {"n": 3, "s": b"three"}
    with pytest.raises(ValueError, match="dictionary"):
        q.enqueue((1, "x"))


def test_close_drains_then_out_of_range_with_tf_message(graph):
    q = tf.FIFOQueue(5, [tf.float32], shapes=[[]], name="fifo_queue")
    enq = q.enqueue_many([[1., 2., 3.]])
    x = q.dequeue()
    many = q.dequeue_many(2)
    up_to = q.dequeue_up_to(2)
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(q.close())
        assert sess.run(q.is_closed())
        assert sess.run(x) == 1.0
        with pytest.raises(tf.errors.CancelledError, match=r"is closed\."):
            sess.run(enq)
        # dequeue_many(2) is served (2 left), then up_to gets the short remainder
        np.testing.assert_array_equal(sess.run(many), [2., 3.])
        with pytest.raises(tf.errors.OutOfRangeError) as e:
            sess.run(up_to)
        assert "is closed and has insufficient elements (requested 2, current size 0)" in str(e.value)
        with pytest.raises(tf.errors.OutOfRangeError, match=r"FIFOQueue '_\d+_fifo_queue' is closed and has "
                                                            r"insufficient elements \(requested 1, current size 0\)"):
            sess.run(x)


def test_failed_dequeue_many_puts_its_elements_back(graph):
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 4, current size 3"):
            sess.run(q.dequeue_many(4))
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(4)), [1, 2, 3])


def test_blocking_dequeue_ends_at_the_step_deadline_and_queue_stays_usable(graph):
    q = tf.FIFOQueue(3, [tf.float32], shapes=[[]])
    x = q.dequeue()
    many = q.dequeue_many(2)
    enq = q.enqueue(5.0)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match=r"still waiting:\n  fifo_queue_Dequeue: dequeue of 1 from FIFOQueue "
                                 r"'_\d+_fifo_queue' \(has 0, 0 in the queue\)"):
            sess.run(x, options=tf.RunOptions(timeout_in_ms=100))
        # a partly served dequeue_many that times out gives its element back
        sess.run(enq)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(many, options=tf.RunOptions(timeout_in_ms=100))
        assert sess.run(q.size()) == 1
        assert sess.run(x) == 5.0


def test_operation_timeout_in_config_bounds_a_full_enqueue(graph):
    q = tf.FIFOQueue(1, [tf.float32], shapes=[[]])
    enq = q.enqueue(1.0)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        sess.run(enq)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(enq)
        assert sess.run(q.size()) == 1


def test_dequeue_is_woken_by_an_enqueue_from_another_thread(graph):
    q = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    many = q.dequeue_many(5)  # more than the capacity: served one element at a time
    value = tf.placeholder(tf.int32, [])
    enq = q.enqueue(value)
    with tf.Session() as sess:
        def feed():
            for i in range(5):
                sess.run(enq, {value: i})
        t = threading.Thread(target=feed)
        t.start()
        got = sess.run(many, options=tf.RunOptions(timeout_in_ms=10000))
        t.join(10)
    np.testing.assert_array_equal(got, [0, 1, 2, 3, 4])


def test_close_wakes_a_waiting_dequeue_and_cancels_pending_enqueues(graph):
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    x = q.dequeue()
    enq = q.enqueue(1)
    results = {}
    with tf.Session() as sess:
        def wait(key, fetch):
            try:
                results[key] = sess.run(fetch, options=tf.RunOptions(timeout_in_ms=10000))
            except tf.errors.OpError as e:
                results[key] = e
        t = threading.Thread(target=wait, args=("dequeue", x))
        t.start()
        sess.run(q.close())  # before or after the dequeue started waiting: it ends with OutOfRange
        t.join(10)
        assert isinstance(results["dequeue"], tf.errors.OutOfRangeError)

    q2 = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    enq2 = q2.enqueue(1)
    with tf.Session() as sess:
        sess.run(enq2)
        t = threading.Thread(target=wait, args=("enqueue", enq2))
        t.start()
        sess.run(q2.close(cancel_pending_enqueues=True))
        t.join(10)
        assert not t.is_alive()
        assert isinstance(results["enqueue"], tf.errors.CancelledError)
        assert sess.run(q2.dequeue()) == 1  # what was in stays


def test_session_close_cancels_a_waiting_dequeue(graph):
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    x = q.dequeue()
    sess = tf.Session()
    errs = []
    started = threading.Event()

    def wait():
        started.set()
        try:
            sess.run(x)
        except tf.errors.OpError as e:
            errs.append(e)
    t = threading.Thread(target=wait)
    t.start()
    started.wait()
    while not sess._backend._active_steps:
        threading.Event().wait(0.005)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert isinstance(errs[0], tf.errors.CancelledError)


def test_failure_elsewhere_in_the_step_ends_the_wait(graph):
    q = tf.FIFOQueue(1, [tf.float32], shapes=[[]])
    x = q.dequeue()
    bad = tf.check_numerics(tf.constant(np.float32(np.nan)), "boom")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="boom"):
            sess.run([x, bad], options=tf.RunOptions(timeout_in_ms=10000))


def test_shape_mismatch_is_invalid_argument(graph):
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[2]])
    p = tf.placeholder(tf.float32)
    enq = q.enqueue(p)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape mismatch in tuple component 0. "
                                                                 r"Expected \[2\], got \[3\]"):
            sess.run(enq, {p: [1., 2., 3.]})


def test_dequeue_many_needs_shapes(graph):
    q = tf.FIFOQueue(2, [tf.float32])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have specified"):
            sess.run(q.dequeue_many(1))


def test_shared_name_shares_one_queue_and_checks_its_types(graph):
    a = tf.FIFOQueue(3, [tf.int32], shapes=[[]], shared_name="shared_q")
    b = tf.FIFOQueue(3, [tf.int32], shapes=[[]], shared_name="shared_q")
    c = tf.FIFOQueue(3, [tf.float32], shapes=[[]], shared_name="shared_q")
    with tf.Session() as sess:
        sess.run(a.enqueue(42))
        assert sess.run(b.dequeue()) == 42
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared queue 'shared_q' has component types "
                                                                 "int32 but requested component types were float32"):
            sess.run(c.size())


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed(graph):
    q = tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=7)
    enq = q.enqueue_many([list(range(6))])
    x = q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        got = [sess.run(x) for _ in range(3)]
        with pytest.raises(tf.errors.DeadlineExceededError):  # 3 left == min_after_dequeue
            sess.run(x, options=tf.RunOptions(timeout_in_ms=100))
        sess.run(q.close())
        got += [sess.run(x) for _ in range(3)]
        with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
            sess.run(x)
    assert sorted(got) == list(range(6))
    assert got != list(range(6))


def test_padding_fifo_queue_pads_each_batch(graph):
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], []])
    v = tf.placeholder(tf.int32, [None])
    enq = q.enqueue((v, "x"))
    batch, names = q.dequeue_many(2)
    assert batch.shape.as_list() == [2, None]
    with tf.Session() as sess:
        sess.run(enq, {v: [1, 2, 3]})
        sess.run(enq, {v: [4]})
        got, s = sess.run([batch, names])
    np.testing.assert_array_equal(got, [[1, 2, 3], [4, 0, 0]])
    assert list(s) == [b"x", b"x"]


def test_queue_ops_go_to_the_cpu_next_to_a_simulated_accelerator(graph):
    with tf.device("/device:SIM:0"):
        x = tf.constant([1., 2.]) * 2.0
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[2]])
    enq = q.enqueue(x)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})) as sess:
        sess.run(enq)
        np.testing.assert_array_equal(sess.run(q.dequeue()), [2., 4.])
        assert "CPU" in sess.plan_for(q.size()).placement[q.queue_ref.op.name]


def test_queue_pinned_to_an_accelerator_needs_soft_placement(graph):
    with tf.device("/device:SIM:0"):
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]], name="pinned")
        size = q.size()
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device for operation 'pinned"):
            sess.run(size)
    config = tf.ConfigProto(device_count={"CPU": 1, "SIM": 1}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(size) == 0


def test_dequeue_inside_a_while_loop(graph):
    q = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    enq = q.enqueue_many([[1., 2., 3., 4.]])

    def loop(n):
        return tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + q.dequeue()),
                             [tf.constant(0), tf.constant(0.0)])[1]
    three, five = loop(3), loop(5)
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(three) == 6.0
        with pytest.raises(tf.errors.DeadlineExceededError, match="while_1/fifo_queue_Dequeue: dequeue of 1"):
            sess.run(five, options=tf.RunOptions(timeout_in_ms=100))
        assert sess.run(q.size()) == 0  # a dequeue that finished before the abort took its element, as in TF
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError, match="insufficient elements"):
            sess.run(five)


def test_a_served_wait_leaves_no_abort_callback_on_its_step():
    from graphrt.data_flow.queue_state import QueueState
    from graphrt.runtime.step import Step
    step = Step(1, None, [], 0, 1)
    q = QueueState("q", [tf.int32], [tf.TensorShape([])], 2)
    got = []
    q.dequeue(1, False, lambda err, value: got.append((err, value)), "deq", step, batch=False)
    assert step.waiting_on() == ["deq: dequeue of 1 from FIFOQueue 'q' (has 0, 0 in the queue)"]
    q.enqueue([(np.array(5, np.int32),)], lambda err: got.append(err), "enq", step)
    assert got[0] is None and got[1][0] is None and got[1][1][0] == 5  # the enqueue, then the dequeue
    assert step.waiting_on() == [] and not step._abort_callbacks
    # an abort reaches a wait that is still pending, and only it
    q.dequeue(1, False, lambda err, value: got.append((err, value)), "deq2", step, batch=False)
    step.abort(tf.errors.CancelledError("stop"))
    assert isinstance(got[2][0], tf.errors.CancelledError) and q.size() == 0

"""Queue input pipelines against TensorFlow 2.21 (fixtures/queue_pipeline.json):
element order, the final OutOfRangeError, and the names TF gives the queue ops;
QueueRunner threads stopped by the Coordinator leave no thread behind."""
import json
import os
import re
import threading

import numpy as np
import pytest

import graphrt as tf

FIXTURE = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "queue_pipeline.json")))["cases"]
X = np.arange(20, dtype=np.float32).reshape(10, 2)
Y = np.arange(10, dtype=np.int32) * 10
QUEUE_OPS = {"FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
             "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2",
             "ScalarSummary"}


def slice_batch_smaller():
    xi, yi = tf.train.slice_input_producer([X, Y], shuffle=False, num_epochs=2)
    return tf.train.batch([xi, yi], batch_size=3, allow_smaller_final_batch=True)


def slice_batch_drop():
    xi, yi = tf.train.slice_input_producer([X, Y], shuffle=False, num_epochs=2)
    return tf.train.batch([xi, yi], batch_size=4)


def strings():
    return tf.train.string_input_producer(["a.txt", "b.txt", "c.txt"], shuffle=False, num_epochs=2).dequeue()


def range_up_to():
    return tf.train.range_input_producer(7, shuffle=False, num_epochs=1).dequeue_up_to(3)


def enqueue_many_batch():
    x, y = tf.train.limit_epochs(tf.constant(X), 1), tf.train.limit_epochs(tf.constant(Y), 1)
    return tf.train.batch([x, y], batch_size=4, enqueue_many=True, allow_smaller_final_batch=True, capacity=100)


def dynamic_pad():
    i = tf.train.range_input_producer(5, shuffle=False, num_epochs=1).dequeue()
    return tf.train.batch([tf.range(i + 1)], batch_size=2, dynamic_pad=True, allow_smaller_final_batch=True)


def dict_batch():
    xi, yi = tf.train.slice_input_producer([X, Y], shuffle=False, num_epochs=1)
    return tf.train.batch({"x": xi, "y": yi}, batch_size=5)


def batch_join():
    xi, yi = tf.train.slice_input_producer([X, Y], shuffle=False, num_epochs=1)
    return tf.train.batch_join([[xi, yi]], batch_size=5)


CASES = {f.__name__: f for f in (slice_batch_smaller, slice_batch_drop, strings, range_up_to, enqueue_many_batch,
                                 dynamic_pad, dict_batch, batch_join)}


def drain(fetch):
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while True:
                out.append(sess.run(fetch, options=tf.RunOptions(timeout_in_ms=20000)))
        except tf.errors.OutOfRangeError as e:
            err = e
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert not any(t.is_alive() for t in threads)
    return out, err


def jsonable(v):
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    v = np.asarray(v)
    if v.dtype.kind in "SO":
        return [x.decode() for x in v.ravel().tolist()] if v.ndim else v.item().decode()
    return v.tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_pipeline_matches_tensorflow(name):
    want = FIXTURE[name]
    with tf.Graph().as_default() as g:
        fetch = CASES[name]()
        ours = [(op.name, op.type) for op in g.get_operations() if op.type in QUEUE_OPS]
        values, err = drain(fetch)
    assert jsonable(values) == want["values"]
    # the queue's private name carries a process-wide counter: compare the rest
    pattern = re.escape(re.sub(r"'_\d+_", "'_N_", want["error"])).replace("_N_", r"_\d+_")
    assert re.search(pattern, str(err)), (str(err), want["error"])
    theirs = [(n, t) for n, t in zip(want["op_names"], want["op_types"]) if t in QUEUE_OPS]
    assert ours == theirs


def test_two_runner_threads_stop_cleanly_through_the_coordinator():
    """An endless producer (no num_epochs) with 2 threads filling a small batch queue:
    request_stop cancels the enqueues blocked on the full queue and join returns."""
    before = set(threading.enumerate())
    with tf.Graph().as_default():
        xi, yi = tf.train.slice_input_producer([X, Y], shuffle=True, seed=3)
        xb, yb = tf.train.batch([xi, yi], batch_size=4, num_threads=2, capacity=6)
        closed = [qr.queue.is_closed() for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert len(threads) == 2 + 1 + 1 + 1  # batch: 2 enqueuers; producer: 1; a canceller per runner
            seen = []
            for _ in range(10):
                x, y = sess.run([xb, yb], options=tf.RunOptions(timeout_in_ms=20000))
                np.testing.assert_array_equal(x[:, 0] * 5, y)  # rows stay paired
                seen.extend(y.tolist())
            assert set(seen) <= set(Y.tolist())
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
            assert not any(t.is_alive() for t in threads)
            assert sess.run(closed) == [True, True]  # the cancel ops closed both queues
    leftover = [t for t in threading.enumerate() if t not in before and t.name.startswith("QueueRunner")]
    assert not leftover


def test_runner_error_is_reported_by_join():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [])  # never fed: every enqueue fails
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(p)]))
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert coord.wait_for_stop(20)
            with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder"):
                coord.join(threads, stop_grace_period_secs=10)
            assert not any(t.is_alive() for t in threads)


def test_coordinator_semantics():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError("end of input")  # a clean stop, not an error
    assert coord.should_stop()
    coord.join([])
    coord.clear_stop()
    with coord.stop_on_exception():
        raise ValueError("first")
    coord.request_stop(RuntimeError("second, ignored"))
    with pytest.raises(ValueError, match="first"):
        coord.join([])
    assert coord.joined

    coord = tf.train.Coordinator()
    hang = threading.Event()
    t = threading.Thread(target=hang.wait, args=(30,), name="straggler")
    t.start()
    try:
        coord.request_stop()
        with pytest.raises(RuntimeError, match="threads still running: straggler"):
            coord.join([t], stop_grace_period_secs=0.01)
    finally:
        hang.set()
        t.join()


def test_string_input_producer_rejects_empty_input():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="requires a non-null input tensor"):
            tf.train.string_input_producer([])


def test_count_up_to_stops_at_its_limit():
    with tf.Graph().as_default():
        v = tf.Variable(0, dtype=tf.int64)
        c = tf.count_up_to(v, 2)
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert [sess.run(c), sess.run(c)] == [0, 1]
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                sess.run(c)


def test_shuffle_batch_mixes_and_keeps_every_element_once_per_epoch():
    with tf.Graph().as_default():
        i = tf.train.range_input_producer(20, shuffle=False, num_epochs=1).dequeue()
        b = tf.train.shuffle_batch([i], batch_size=5, capacity=20, min_after_dequeue=10, seed=1,
                                   allow_smaller_final_batch=True)
        values, _ = drain(b)
    flat = np.concatenate(values).tolist()
    assert sorted(flat) == list(range(20)) and flat != list(range(20))

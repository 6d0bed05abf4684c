"""PriorityQueue beyond the TensorFlow golden case (tests/tf1_programs/cases/queues_tables_samplers.py):
ties leave in arrival order, a closed queue's short dequeue_up_to returns what is left (TF's
PriorityQueue drops it with an OutOfRangeError; README), and a shared queue checks its kind."""
import numpy as np
import pytest

import graphrt as tf


def test_equal_priorities_leave_in_arrival_order(graph):
    q = tf.PriorityQueue(8, [tf.string], shapes=[[]])
    fill = q.enqueue_many(([2, 1, 2, 1], ["b1", "a1", "b2", "a2"]))
    take = q.dequeue_many(4)
    with tf.Session() as sess:
        sess.run(fill)
        priorities, names = sess.run(take)
    assert priorities.tolist() == [1, 1, 2, 2] and [n.decode() for n in names] == ["a1", "a2", "b1", "b2"]


def test_a_closed_queue_gives_its_last_elements_to_dequeue_up_to(graph):
    q = tf.PriorityQueue(8, [tf.int32], shapes=[[]])
    fill = q.enqueue_many(([3, 1], [30, 10]))
    up_to = q.dequeue_up_to(5)
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(q.close())
        priorities, values = sess.run(up_to)
        np.testing.assert_array_equal(priorities, [1, 3])
        np.testing.assert_array_equal(values, [10, 30])
        with pytest.raises(tf.errors.OutOfRangeError, match="PriorityQueue '.*' is closed and has insufficient "
                                                            "elements"):
            sess.run(up_to)


def test_a_shared_name_must_name_a_priority_queue(graph):
    first = tf.PriorityQueue(4, [tf.int32], shapes=[[]], shared_name="work")
    other = tf.FIFOQueue(4, [tf.int64, tf.int32], shapes=[[], []], shared_name="work")
    with tf.Session() as sess:
        sess.run(first.size())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared queue 'work' is a PriorityQueue, but "
                                                                 "FIFOQueue was requested"):
            sess.run(other.size())

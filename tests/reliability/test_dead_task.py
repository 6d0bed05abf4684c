"""Dead tasks: a dead task stops only the steps that touch it.

After a worker died, the session listed the devices of every task before each step,
so even steps on live tasks failed with UnavailableError until it came back. Now a
task's device list is refreshed only when a step uses it.
"""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors

T2 = "/job:worker/replica:0/task:2"


def test_steps_on_live_tasks_run_while_another_task_is_dead(make_cluster):
    cluster = make_cluster(3)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/job:worker/task:1"):
            live = tf.multiply(x, 2.0, name="live")
        with tf.device("/job:worker/task:2"):
            doomed = tf.multiply(x, 3.0, name="doomed")
    with tf.Session(cluster.target(0), graph=g, config=tf.ConfigProto(operation_timeout_in_ms=20_000)) as sess:
        np.testing.assert_allclose(sess.run(doomed, {x: [1.0, 2.0]}), [3.0, 6.0])
        cluster.kill(2)
        with pytest.raises(errors.UnavailableError) as raised:
            sess.run(doomed, {x: [1.0, 2.0]})
        assert T2 in raised.value.message
        # Steps that do not touch task 2 run (several times; and a new signature too).
        for i in range(3):
            np.testing.assert_allclose(sess.run(live, {x: [i, 1.0]}), [2.0 * i, 2.0])
        np.testing.assert_allclose(sess.run([live, x], {x: [1.0, 1.0]})[0], [2.0, 2.0])
        # A step that touches it fails fast, naming it, every time it is tried.
        with pytest.raises(errors.UnavailableError) as raised:
            sess.run(doomed, {x: [1.0, 2.0]})
        assert T2 in raised.value.message
        # Back (new incarnations): its graph is registered again and the step works.
        cluster.restart(2)
        np.testing.assert_allclose(sess.run(doomed, {x: [1.0, 2.0]}), [3.0, 6.0])
        np.testing.assert_allclose(sess.run(live, {x: [1.0, 2.0]}), [2.0, 4.0])

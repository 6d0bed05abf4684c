"""A master in the process of its session's target server shares that server's connections
(channel.SharedChannels): one socket and one I/O thread per peer, not two.

Task 0 runs in this process (the test's process cluster starts it as a process, which is killed
and replaced by an in-process server on the same port), task 1 in its own process.
"""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed.channel import ChannelPool, SharedChannels
from graphrt.distributed.cluster import free_port


@pytest.fixture
def local_task0(make_cluster):
    cluster = make_cluster(2)
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    yield cluster, server
    server.stop()


def _master_threads():
    return [t for t in threading.enumerate() if t.name == "graphrt-master" and t.is_alive()]


def _two_task_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/job:worker/task:1"):
            y = tf.multiply(x, 3.0, name="y")
        with tf.device("/job:worker/task:0"):
            z = tf.add(y, 1.0, name="z")
    return g, x, z


def test_a_session_on_its_own_server_uses_the_servers_connections(local_task0):
    cluster, server = local_task0
    g, x, z = _two_task_graph()
    before = len(_master_threads())
    with tf.Session(server.target, graph=g) as sess:
        assert len(_master_threads()) == before  # no pool (and no I/O thread) of the master's own
        for i in range(20):
            feed = np.arange(3, dtype=np.float32) + i
            np.testing.assert_array_equal(sess.run(z, {x: feed}), feed * 3.0 + 1.0)
        # the worker's pool carried the master's RunGraphs to task 1: one connection to it
        pool = server.service.channels
        assert list(pool._peers) == [f"tcp://127.0.0.1:{cluster.ports[1]}"]
    assert not server.service.channels.closed  # closing the session leaves the server's pool alone
    with tf.Session(server.target, graph=g) as sess:  # and the next session uses it again
        np.testing.assert_array_equal(sess.run(z, {x: [1.0, 2.0, 3.0]}), [4.0, 7.0, 10.0])


def test_a_session_with_its_own_connect_timeout_keeps_its_own_pool(local_task0):
    _, server = local_task0
    g, x, z = _two_task_graph()
    config = tf.ConfigProto(operation_timeout_in_ms=5000)
    with tf.Session(server.target, graph=g, config=config) as sess:
        assert len(_master_threads()) >= 1
        np.testing.assert_array_equal(sess.run(z, {x: [0.0, 1.0, 2.0]}), [1.0, 4.0, 7.0])


def test_calls_go_through_an_own_pool_once_the_shared_one_is_closed():
    shared = ChannelPool(name="test-shared")
    made = []

    def own_pool():
        made.append(ChannelPool(name="test-own", connect_timeout=0.3))
        return made[-1]
    channels = SharedChannels(shared, own_pool)
    shared.close()
    dead = f"tcp://127.0.0.1:{free_port()}"
    try:
        with pytest.raises(errors.UnavailableError) as raised:
            channels.request(dead, "GetStatus", timeout=5.0, peer_name="/job:worker/replica:0/task:7")
        assert "/job:worker/replica:0/task:7" in str(raised.value)
        assert len(made) == 1
        with pytest.raises(errors.UnavailableError):
            channels.request(dead, "GetStatus", timeout=5.0)
        assert len(made) == 1  # made once
    finally:
        channels.close()
    assert made[0].closed

"""A master in the process of its session's target server shares that server's connections
(channel.SharedChannels): one socket and one I/O thread per peer, not two.

Task 0 runs in this process (the `local_task0` fixture), task 1 in its own process.
"""
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed.channel import ChannelPool, SharedChannels
from graphrt.distributed.cluster import free_port
from graphrt.rendezvous.remote import RemoteRendezvous


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


def test_a_step_asks_for_its_first_tensors_before_its_rungraphs_go_out(local_task0, monkeypatch):
    """The client task's receives that wait on nothing are asked for when the step starts
    (RemoteRendezvous.prefetch); one inside a loop is asked for when it runs."""
    _, server = local_task0
    asked = []
    prefetch = RemoteRendezvous.prefetch

    def spy(rendezvous, key):
        # whether the client task's RunGraph of this step had started yet
        asked.append((key.edge_name, rendezvous.step_id in server.service._steps))
        prefetch(rendezvous, key)
    monkeypatch.setattr(RemoteRendezvous, "prefetch", spy)
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            a = tf.multiply(tf.constant([1.0, 2.0]), 2.0, name="a")
        with tf.device("/job:worker/task:0"):
            b = tf.add(a, 1.0, name="b")

            def body(i, acc):
                with tf.device("/job:worker/task:1"):
                    doubled = tf.multiply(acc, 2.0, name="doubled")  # crosses to task 1 and back, per iteration
                return i + 1, doubled
            _, looped = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.constant(1.0)])
    with tf.Session(server.target, graph=g) as sess:
        for _ in range(3):
            got_b, got_loop = sess.run([b, looped])
            np.testing.assert_array_equal(got_b, [3.0, 5.0])
            assert got_loop == 8.0
        (graph,) = [r for r in server.service._graphs.values()]
        keys = graph.prefetch_keys(server.service.task)
        # the recv of `a` on task 0 has no input; the loop's recvs have (the frame's control edges)
        assert [k.edge_name.split("_", 2)[-1] for k in keys] == ["a"]
        assert all(k.src_device.startswith("/job:worker/replica:0/task:1/") for k in keys)
        assert asked == [(keys[0].edge_name, False)] * 3  # once per step, before its RunGraph


def test_a_failure_on_the_other_task_still_names_its_node_with_prefetched_tensors(local_task0):
    _, server = local_task0
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        with tf.device("/job:worker/task:1"):
            y = tf.reshape(x, [3], name="bad_reshape")
        with tf.device("/job:worker/task:0"):
            z = tf.add(y, 1.0, name="z")
    with tf.Session(server.target, graph=g) as sess:
        with pytest.raises(errors.InvalidArgumentError) as raised:
            sess.run(z, {x: [1.0, 2.0]})
        assert "bad_reshape" in str(raised.value) and "task:1" in str(raised.value)
        np.testing.assert_array_equal(sess.run(z, {x: [1.0, 2.0, 3.0]}), [2.0, 3.0, 4.0])  # the next step is fine


def test_the_first_tensors_requests_ride_on_the_other_tasks_rungraph(local_task0, monkeypatch):
    cluster, server = local_task0
    sent = []
    call = ChannelPool._call

    def spy(pool, local, address, msg_type, fields, *rest):
        if address.endswith(f":{cluster.ports[1]}"):
            sent.append((msg_type, [key.split(";")[3] for _, key in (fields or {}).get("recv_tensors", [])]))
        return call(pool, local, address, msg_type, fields, *rest)
    monkeypatch.setattr(ChannelPool, "_call", spy)
    g, x, z = _two_task_graph()
    with tf.Session(server.target, graph=g) as sess:
        for i in range(3):
            np.testing.assert_array_equal(sess.run(z, {x: [i, 1.0, 2.0]}), [3.0 * i + 1.0, 4.0, 7.0])
    steps = [s for s in sent if s[0] in ("RunGraph", "RecvTensor")]
    # three steps: three RunGraphs to task 1, each carrying task 0's request for y; no RecvTensor alone
    assert [m for m, _ in steps] == ["RunGraph"] * 3
    assert all(len(keys) == 1 and keys[0].endswith("_y") for _, keys in steps)


def test_the_local_tasks_cleanup_rides_on_the_next_step_and_nothing_is_left(local_task0):
    """After a step across tasks, the task served in this process forgets it with the next step's
    RunGraph (or the deferred flush), like the remote ones: at most one finished step waits."""
    from .harness import wait_until_idle
    _, server = local_task0
    g, x, z = _two_task_graph()
    with tf.Session(server.target, graph=g) as sess:
        held = []
        for i in range(10):
            sess.run(z, {x: [float(i), 0.0, 0.0]})
            held.append(len(server.service.rendezvous.active_steps()))
        assert max(held) <= 1
        assert wait_until_idle(sess, timeout=10)  # the last one is flushed shortly after

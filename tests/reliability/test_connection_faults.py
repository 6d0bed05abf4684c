"""A client's connection pool under faults of its connections.

An address ZeroMQ refuses outright (a host name with a space in it, from a
hand-written ClusterSpec) used to kill the pool's I/O thread inside connect():
the call it was starting was neither queued nor outstanding, so nobody told
its caller, and a session's first step hung past every timeout. And the
grace the I/O thread gives late replies after a disconnect polled the socket
without its lock, while a thread reading that peer itself (read_here) could be
using it: two threads inside one ZeroMQ socket. It did crash: a caller reading
its replies while 500 connections dropped one after another corrupted the heap
(glibc: "corrupted size vs. prev_size") in about one run in ten, the I/O
thread inside that poll and the caller inside its own read of the socket; a
full test run once died of it in the killed-worker test.
"""
import threading
import time

import numpy as np
import pytest
import zmq

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.distributed.channel import ChannelPool

from .peer import FakeWorker, request_outcome

BAD_ADDRESS = "tcp://no such host:1"


def _ok(header):
    return wire.encode_reply(header["id"], fields={"result": {"ok": True}})


def test_an_address_zeromq_refuses_fails_its_call_and_the_pool_goes_on():
    worker = FakeWorker(_ok)
    pool = ChannelPool(name="test-pool")
    try:
        start = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError) as raised:
            pool.request(BAD_ADDRESS, "GetStatus", timeout=30)
        assert time.monotonic() - start < 10
        assert BAD_ADDRESS in raised.value.message and "GetStatus" in raised.value.message
        # Again (the address is not remembered as a peer), and a good peer is served meanwhile.
        with pytest.raises(errors.InvalidArgumentError):
            pool.request(BAD_ADDRESS, "GetStatus", timeout=30)
        assert pool.request(worker.address, "ListDevices", timeout=5).fields["result"] == {"ok": True}
        assert pool.failure is None
    finally:
        pool.close()
        worker.close()


def test_a_session_on_a_cluster_with_a_malformed_address_fails_naming_the_task():
    from graphrt.distributed.cluster import free_port
    cluster = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{free_port()}", "no such host:1"]})
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:worker/task:1"):
                y = tf.constant(np.float32(1.0)) + 1.0
            with tf.device("/job:worker/task:0"):
                z = tf.constant(np.float32(2.0)) * 3.0
        config = tf.ConfigProto(operation_timeout_in_ms=60_000)
        start = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError) as raised:
            with tf.Session(server.target, graph=g, config=config) as sess:  # it learns the devices here
                sess.run(y)
        assert time.monotonic() - start < 10, "the session waited for its timeout"
        assert "/job:worker/replica:0/task:1" in raised.value.message
        assert "no such host:1" in raised.value.message
        # The server goes on: a session that looks at task 0 only runs its steps.
        only_task0 = tf.ConfigProto(device_filters=["/job:worker/task:0"])
        with tf.Session(server.target, graph=g, config=only_task0) as sess:
            assert sess.run(z) == np.float32(6.0)
    finally:
        server.stop()


def test_a_call_the_io_thread_was_starting_when_it_died_is_failed_not_lost():
    worker = FakeWorker(_ok)
    pool = ChannelPool(name="test-pool")
    try:
        def crash(call):
            raise RuntimeError("a bug in the I/O thread")
        pool._start = crash  # the first call to a new peer is started by the I/O thread
        outcome = []
        answered = threading.Event()
        # A call with a callback (as a master's RunGraphs are made): no waiter watches the I/O thread.
        pool.call(worker.address, "GetStatus", callback=lambda error, message: (outcome.append(error),
                                                                                answered.set()))
        assert answered.wait(10), "the call in the I/O thread's hands when it died was never answered"
        assert isinstance(outcome[0], errors.UnavailableError) and "I/O thread died" in outcome[0].message
    finally:
        pool.close()
        worker.close()


def test_the_grace_for_late_replies_after_a_disconnect_polls_the_socket_under_its_lock(monkeypatch):
    ctx = zmq.Context()
    server = ctx.socket(zmq.ROUTER)
    server.setsockopt(zmq.LINGER, 0)
    address = f"tcp://127.0.0.1:{server.bind_to_random_port('tcp://127.0.0.1')}"
    pool = ChannelPool(name="test-pool")
    seen = []  # for each poll of the peer's socket: whether its lock was held
    poll = zmq.Socket.poll

    def recording_poll(sock, *args, **kw):
        peer = pool._peers.get(address)
        if peer is not None and sock is peer.socket:
            seen.append(peer.lock.locked())
        return poll(sock, *args, **kw)
    monkeypatch.setattr(zmq.Socket, "poll", recording_poll)
    try:
        outcome = []
        t = threading.Thread(target=lambda: outcome.append(request_outcome(pool, address, 30)), daemon=True)
        t.start()
        assert server.poll(10_000), "the request never came"
        server.recv_multipart()
        server.close(0)  # the connection drops with the request unanswered
        t.join(10)
        assert not t.is_alive()
        assert isinstance(outcome[0], errors.UnavailableError) and "connection was lost" in outcome[0].message
        assert seen and all(seen), seen
    finally:
        pool.close()
        ctx.term()

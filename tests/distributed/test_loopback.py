"""Processes of one machine connect over a Unix socket (loopback.py): which addresses qualify, that a
client uses one only when a server of its user listens there, that a taken name fails the server's
start, and that a step between processes runs over it (and over TCP with the switch off)."""
import os
import socket
import sys
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import loopback
from graphrt.distributed.cluster import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract Unix sockets are Linux's")


@pytest.fixture
def listening():
    """listening(name) -> a Unix socket of this process listening on the abstract `name`."""
    made = []

    def listen(name):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\0" + name)
        s.listen(4)
        made.append(s)
        return s
    yield listen
    for s in made:
        s.close()


@pytest.mark.parametrize("bind_address, expected", [
    ("127.0.0.1", ["ipc://@graphrt/127.0.0.1:4321"]),
    ("127.0.0.2", ["ipc://@graphrt/127.0.0.2:4321"]),
    ("localhost", ["ipc://@graphrt/127.0.0.1:4321"]),
    ("0.0.0.0", ["ipc://@graphrt/127.0.0.1:4321"]),
    ("*", ["ipc://@graphrt/127.0.0.1:4321"]),
    ("10.1.2.3", []),
    ("example.org", []),
    ("127.0.0.256", []),
])
def test_a_server_also_listens_on_the_unix_socket_of_its_loopback_address(bind_address, expected):
    assert loopback.server_endpoints(bind_address, 4321) == expected


def test_servers_on_port_0_get_no_unix_socket_and_do_not_collide():
    # Port 0 binds whatever port the system picks: a name made of "0" would be every such server's.
    from graphrt.distributed.worker import WorkerService
    assert loopback.server_endpoints("127.0.0.1", 0) == []
    assert loopback.server_endpoints("127.0.0.1", "0") == []
    cluster = {"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    first = WorkerService(cluster, "worker", 0, port=0)
    try:
        second = WorkerService(cluster, "worker", 1, port=0)
        assert first.loopback_endpoints == second.loopback_endpoints == []
        second.stop()
    finally:
        first.stop()


def test_the_switch_turns_it_off_on_both_sides(monkeypatch, listening):
    listening("graphrt/127.0.0.1:4321")
    assert loopback.connect_endpoint("tcp://127.0.0.1:4321") == "ipc://@graphrt/127.0.0.1:4321"
    monkeypatch.setenv(loopback.ENV_SWITCH, "0")
    assert loopback.server_endpoints("127.0.0.1", 4321) == []
    assert loopback.connect_endpoint("tcp://127.0.0.1:4321") == "tcp://127.0.0.1:4321"


def test_a_client_uses_the_unix_socket_only_where_a_server_of_its_user_listens(monkeypatch, listening):
    port = free_port()
    tcp = f"tcp://127.0.0.1:{port}"
    assert loopback.connect_endpoint(tcp) == tcp  # nobody listens: TCP
    listening(f"graphrt/127.0.0.1:{port}")
    assert loopback.connect_endpoint(tcp) == f"ipc://@graphrt/127.0.0.1:{port}"
    assert loopback.connect_endpoint(f"tcp://localhost:{port}") == f"ipc://@graphrt/127.0.0.1:{port}"
    # Another host's address, or a host name that would need a lookup: TCP, whatever listens here.
    assert loopback.connect_endpoint(f"tcp://10.1.2.3:{port}") == f"tcp://10.1.2.3:{port}"
    assert loopback.connect_endpoint(f"tcp://example.org:{port}") == f"tcp://example.org:{port}"
    # A listener of another user (here: this process pretending to be someone else) is never used.
    monkeypatch.setattr(loopback.os, "getuid", lambda: 12345)
    assert loopback.connect_endpoint(tcp) == tcp


def test_a_listener_with_a_full_backlog_means_tcp_at_once():
    """The probe runs on the channel's I/O thread: it must not wait for a listener that accepts nothing."""
    port = free_port()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(f"\0graphrt/127.0.0.1:{port}")
        listener.listen(0)
        filler.connect(f"\0graphrt/127.0.0.1:{port}")  # the one connection a backlog of 0 holds
        start = time.monotonic()
        assert loopback.connect_endpoint(f"tcp://127.0.0.1:{port}") == f"tcp://127.0.0.1:{port}"
        assert time.monotonic() - start < 0.3  # a blocking probe would wait for its timeout
    finally:
        filler.close()
        listener.close()


def test_a_taken_name_fails_the_servers_start_naming_it(listening):
    port = free_port()
    squatter = listening(f"graphrt/127.0.0.1:{port}")
    with pytest.raises(errors.UnavailableError) as raised:
        tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
    assert f"ipc://@graphrt/127.0.0.1:{port} is already in use" in raised.value.message
    assert "/job:worker/replica:0/task:0" in raised.value.message
    # The TCP port was let go with the rest: a server starts there once the name is free.
    squatter.close()
    server = tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
    server.stop()


def test_a_stopped_server_leaves_nothing_behind():
    port = free_port()
    server = tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
    assert f"ipc://@graphrt/127.0.0.1:{port}" in repr(server.service)
    assert loopback.connect_endpoint(f"tcp://127.0.0.1:{port}") == f"ipc://@graphrt/127.0.0.1:{port}"
    server.stop()
    assert loopback.connect_endpoint(f"tcp://127.0.0.1:{port}") == f"tcp://127.0.0.1:{port}"
    again = tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
    again.stop()


@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_a_step_between_processes_runs_over_the_transport_chosen(transport, monkeypatch, make_cluster):
    if transport == "tcp":
        monkeypatch.setenv(loopback.ENV_SWITCH, "0")  # inherited by the worker processes
    cluster = make_cluster(2)
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:1"):
                x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
            with tf.device("/job:worker/task:0"):
                y = tf.reduce_sum(x * 2.0, axis=1)
            with tf.Session(server.target) as sess:
                for _ in range(3):
                    np.testing.assert_array_equal(sess.run(y), [6.0, 24.0])
        address = f"tcp://127.0.0.1:{cluster.ports[1]}"
        endpoint = server.service.channels.connections()[address]
        assert endpoint == (f"ipc://@graphrt/127.0.0.1:{cluster.ports[1]}" if transport == "ipc" else address)
        assert (f"via {endpoint}" in repr(server.service.channels)) == (transport == "ipc")
    finally:
        server.stop()


def test_a_client_that_started_before_its_server_moves_to_the_servers_unix_socket():
    from graphrt.distributed.channel import ChannelPool
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    pool = ChannelPool(connect_timeout=20.0)
    server = None
    try:
        results = []  # a blocking call made before anything listens: it waits in the backlog

        def ask():
            try:
                results.append(pool.request(address, "ListDevices", timeout=20.0))
            except Exception as e:  # noqa: BLE001 - shown by the assertion below
                results.append(e)
        asker = threading.Thread(target=ask)
        asker.start()
        deadline = time.monotonic() + 10
        while address not in pool.connections() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pool.connections()[address] == address  # nobody listened when the peer was opened
        server = tf.train.Server({"worker": [f"127.0.0.1:{port}"]}, "worker", 0)
        asker.join(20)
        assert not asker.is_alive()
        assert not isinstance(results[0], Exception), results[0]
        assert results[0].fields["result"]["pid"] == os.getpid()
        assert pool.connections()[address] == f"ipc://@graphrt/127.0.0.1:{port}"
        assert pool.request(address, "ListDevices", timeout=10.0).fields["result"]["task"] == server.service.task
    finally:
        pool.close()
        if server is not None:
            server.stop()


def test_a_client_whose_server_came_back_without_a_unix_socket_moves_to_tcp(monkeypatch, make_cluster):
    cluster = make_cluster(2)
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    address = f"tcp://127.0.0.1:{cluster.ports[1]}"
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:1"):
                x = tf.constant([1.0, 2.0])
            with tf.device("/job:worker/task:0"):
                y = x * 3.0
            with tf.Session(server.target) as sess:
                np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
                assert server.service.channels.connections()[address].startswith("ipc://")
                monkeypatch.setenv(loopback.ENV_SWITCH, "0")  # for the restarted process only
                cluster.restart(1)
                monkeypatch.delenv(loopback.ENV_SWITCH)
                deadline = time.monotonic() + 20
                while True:  # Unavailable while the connection moves, then Aborted: the graphs went with the process
                    try:
                        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
                        break
                    except (errors.UnavailableError, errors.AbortedError):
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
                assert server.service.channels.connections()[address] == address
                np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
    finally:
        server.stop()

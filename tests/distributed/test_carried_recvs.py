"""RecvTensor requests that ride on a RunGraph (its `recv_tensors`): the worker answers each as if it
had come alone, with its own Reply; if the step cannot start they fail with it, and malformed ones
are refused like any malformed field."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.distributed.cluster import free_port

from ..reliability.peer import RawPeer


@pytest.fixture
def two_servers():
    ports = [free_port()]
    while len(ports) < 2:
        port = free_port()
        if port not in ports:
            ports.append(port)
    spec = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    servers = [tf.train.Server(spec, "worker", i) for i in range(2)]
    yield servers
    for s in servers:
        s.stop()


@pytest.fixture
def registered(two_servers):
    """(task 1's server, its graph handle, the key its _Send sends under) for a graph whose constant
    goes from task 1 to task 0, registered by a session that stays open."""
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            c = tf.constant([1.5, 2.5], name="c")
        with tf.device("/job:worker/task:0"):
            d = tf.add(c, 1.0, name="d")
        with tf.Session(two_servers[0].target) as sess:
            np.testing.assert_array_equal(sess.run(d), [2.5, 3.5])
            ((handle, graph),) = two_servers[1].service._graphs.items()
            (send,) = [n for part in graph.partition_graphs for n in part.node if n.op == "_Send"]
            a = send.attrs
            key = f"{a['send_device']};{int(a['send_device_incarnation']) & (2 ** 64 - 1):016x};" \
                  f"{a['recv_device']};{a['tensor_name']};0:0"
            yield two_servers[1], handle, key


def test_a_rungraph_answers_the_recv_tensors_it_carries(registered):
    server, handle, key = registered
    with RawPeer(server.service.endpoint) as peer:
        peer.send(wire.encode("RunGraph", 5, {"graph_handle": handle, "step_id": 4242, "timeout_ms": 5000,
                                              "recv_tensors": [[77, key]]}))
        replies = {r.id: r for r in peer.replies(limit=2)}
        assert sorted(replies) == [5, 77]
        assert replies[77].error is None
        np.testing.assert_array_equal(replies[77].values[0], [1.5, 2.5])
        assert replies[5].error is None
        # the carried request was served in the step's rendezvous: a second ask for it is a duplicate
        again = peer.ask(wire.encode("RecvTensor", 8, {"step_id": 4242, "key": key}))
        assert isinstance(again.error, errors.AbortedError) and "Duplicated" in again.error.message
        peer.send(wire.encode("CleanupStep", 0, {"step_id": 4242}))


def test_carried_recv_tensors_fail_with_a_step_that_cannot_start(registered):
    server, _, key = registered
    with RawPeer(server.service.endpoint) as peer:
        peer.send(wire.encode("RunGraph", 5, {"graph_handle": "ffffffffffffffff", "step_id": 4343,
                                              "recv_tensors": [[77, key], [78, key + "x"]]}))
        replies = {r.id: r for r in peer.replies(limit=3)}
        assert sorted(replies) == [5, 77, 78]
        assert "Graph handle is not found" in replies[5].error.message
        for i in (77, 78):  # no hang: told at once, as consequences of the RunGraph's failure
            error = replies[i].error
            assert isinstance(error, errors.AbortedError) and errors.is_derived(error)
            assert "did not start" in error.message and "Graph handle is not found" in error.message


def test_a_bad_carried_key_fails_only_its_own_request(registered):
    server, handle, key = registered
    with RawPeer(server.service.endpoint) as peer:
        peer.send(wire.encode("RunGraph", 5, {"graph_handle": handle, "step_id": 4444, "timeout_ms": 5000,
                                              "recv_tensors": [[70, "not a key"], [71, key]]}))
        replies = {r.id: r for r in peer.replies(limit=3)}
        assert sorted(replies) == [5, 70, 71]
        assert isinstance(replies[70].error, errors.InvalidArgumentError)
        assert replies[71].error is None and replies[5].error is None
        peer.send(wire.encode("CleanupStep", 0, {"step_id": 4444}))


@pytest.mark.parametrize("pulls", [
    "x", [[0, "k"]], [[1]], [[1, 2]], [["1", "k"]], [[1, "k", 3]], [[1 << 63, "k"]], [{"id": 1}]])
def test_malformed_recv_tensors_are_refused(pulls):
    frames = wire.encode("RunGraph", 5, {"graph_handle": "h", "step_id": 1, "recv_tensors": pulls})
    with pytest.raises(wire.WireError, match=r"RunGraph.recv_tensors must be a list of at most \d+ \[request id, "
                                             r"key\] pairs"):
        wire.decode(frames)

"""Poison messages: no message silences a worker, no reply kills a client's pool.

A spec declaring a zero-size tensor of an absurd shape used to make numpy raise a
ValueError inside the decoder: the worker's serving thread ended (the process lived
on, deaf), and the same bytes in a reply killed a client's I/O thread so that every
later request hung. Now both sides answer such bytes with an error and go on.
"""
import json
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.distributed.channel import ChannelPool
from graphrt.rendezvous import parse_key

from .peer import FakeWorker, RawPeer, request_outcome

HUGE = [0, 2 ** 62, 2 ** 62]
POISON_SPECS = [
    {"dtype": "float32", "shape": HUGE},
    {"dtype": "string", "shape": HUGE},
    {"py": {"array": {"dtype": "float64", "shape": HUGE, "b64": ""}}},
    {"py": {"list": [1, {"array": {"dtype": "string", "shape": HUGE, "b64": ""}}]}},
    {"dtype": "int8", "shape": [0, 2 ** 63 - 1, 2 ** 63 - 1, 2 ** 63 - 1]},
]


def poison(msg_type, request_id, spec, fields=None):
    header = {"v": wire.PROTOCOL_VERSION, "type": msg_type, "id": request_id, "tensors": [spec]}
    header.update(fields or {})
    return [json.dumps(header).encode(), b""]


@pytest.mark.parametrize("spec", POISON_SPECS, ids=["float", "string", "host-array", "nested-host", "int8"])
def test_decoding_a_poison_spec_is_a_wire_error(spec):
    with pytest.raises(wire.WireError) as raised:
        wire.decode(poison("GetStatus", 1, spec))
    assert "larger than the maximum message size" in raised.value.message


def test_any_decoder_failure_is_a_wire_error(monkeypatch):
    # A bug deep in the decoder (here: numpy failing) still reaches the caller as a WireError.
    def broken(*args, **kwargs):
        raise ValueError("numpy says no")
    monkeypatch.setattr(wire.np, "frombuffer", broken)
    frames = wire.encode("RunGraph", 3, {"graph_handle": "h", "step_id": 1}, [np.ones(2, np.float32)])
    with pytest.raises(wire.WireError) as raised:
        wire.decode([bytes(f) for f in frames])
    assert "ValueError: numpy says no" in raised.value.message


def test_a_worker_answers_poison_specs_and_keeps_serving(make_cluster):
    cluster = make_cluster(2)
    with RawPeer(cluster.target(0)) as peer:
        requests = []
        for i, spec in enumerate(POISON_SPECS):
            requests.append(poison("GetStatus", 10 + i, spec))
            requests.append(poison("RunGraph", 100 + i, spec, {"graph_handle": "h", "step_id": 5}))
            requests.append(poison("RecvTensor", 200 + i, spec, {"step_id": 5, "key": "k"}))
        for frames in requests:
            peer.send(frames)
        replies = peer.replies(limit=len(requests))
        assert sorted(r.id for r in replies) == sorted(json.loads(f[0])["id"] for f in requests)
        for reply in replies:
            assert isinstance(reply.error, errors.InvalidArgumentError), reply
            assert "larger than the maximum message size" in reply.error.message
        status = peer.ask(wire.encode("GetStatus", 7)).fields["result"]
        assert status["bad_messages"] >= len(requests)
    assert cluster.procs[0].poll() is None
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            y = tf.constant([1.0, 2.0]) * 3.0
        with tf.device("/job:worker/task:0"):
            z = y + 1.0
    with tf.Session(cluster.target(0), graph=g) as sess:
        np.testing.assert_allclose(sess.run(z), [4.0, 7.0])


def test_a_failing_handler_is_answered_and_the_loop_goes_on(local_server):
    service = local_server.service
    real = service._dispatch
    calls = []

    def flaky(frames):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in a handler")
        return real(frames)

    service._dispatch = flaky
    with RawPeer(local_server.target) as peer:
        reply = peer.ask(wire.encode("GetStatus", 5))
        assert isinstance(reply.error, errors.InternalError) and "RuntimeError" in reply.error.message
        status = peer.ask(wire.encode("GetStatus", 6)).fields["result"]
    assert status["handler_failures"] == 1


def test_a_failing_binary_recv_tensor_handler_is_answered_and_the_loop_goes_on(local_server):
    # The serving loop hands binary RecvTensors to their handler directly, past _dispatch_safely: a bug
    # there must be answered and counted the same way.
    service = local_server.service
    real = service._dispatch_recv_tensor
    calls = []

    def flaky(identity, head, frames):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in the RecvTensor handler")
        return real(identity, head, frames)

    service._dispatch_recv_tensor = flaky
    device = service.devices[0]
    key = f"{device.name};{device.incarnation:016x};{device.name};edge_flaky;0:0"
    service.rendezvous.find_or_create(78).send(parse_key(key), np.arange(2.0))
    with RawPeer(local_server.target) as peer:
        peer.send([_binary_recv_tensor(21, 78, key.encode())])
        reply = peer.replies(limit=1)[0]
        assert reply.id == 21
        assert isinstance(reply.error, errors.InternalError) and "RuntimeError" in reply.error.message
        peer.send([_binary_recv_tensor(22, 78, key.encode())])
        reply = peer.replies(limit=1)[0]
        assert reply.id == 22 and reply.error is None
        np.testing.assert_array_equal(reply.values[0], np.arange(2.0))
        status = peer.ask(wire.encode("GetStatus", 6)).fields["result"]
    assert len(calls) == 2 and status["handler_failures"] == 1


def _binary_recv_tensor(request_id, step_id, key, version=wire.PROTOCOL_VERSION, padding=bytes(6)):
    return bytes([wire.BINARY_RECV_TENSOR, version]) + padding + request_id.to_bytes(8, "little") \
        + step_id.to_bytes(8, "little") + key


def test_binary_recv_tensors_are_checked_and_answered_like_any_message(local_server):
    # The worker reads a binary RecvTensor on its own path (without decode's Message): the same checks,
    # the same error replies, and a served request gets the binary tensor reply.
    service = local_server.service
    device = service.devices[0]
    key = f"{device.name};{device.incarnation:016x};{device.name};edge_bin;0:0"
    service.rendezvous.find_or_create(77).send(parse_key(key), np.arange(3.0))
    bad = [
        (_binary_recv_tensor(11, 77, key.encode(), version=1), errors.InvalidArgumentError,
         "Unsupported protocol version 1"),
        (_binary_recv_tensor(12, 77, key.encode(), padding=b"\1" + bytes(5)), errors.InvalidArgumentError,
         "padding bytes must be zero"),
        (_binary_recv_tensor(13, 2 ** 63, key.encode()), errors.InvalidArgumentError, "must be integers in [0, 2**63)"),
        (_binary_recv_tensor(14, 77, b"k\xc3"), errors.InvalidArgumentError, "RecvTensor.key is not valid UTF-8"),
        (_binary_recv_tensor(15, 77, b"not a key"), errors.InvalidArgumentError, "not a key"),
        (_binary_recv_tensor(16, 77, key.replace(f"{device.incarnation:016x}", "0" * 16).encode()),
         errors.AbortedError, "expects a different device incarnation"),
    ]
    with RawPeer(local_server.target) as peer:
        before = peer.ask(wire.encode("GetStatus", 1)).fields["result"]["bad_messages"]
        for frames, cls, words in bad:
            peer.send([frames])
            reply = peer.replies(limit=1)[0]
            assert reply.id == int.from_bytes(frames[8:16], "little")
            assert isinstance(reply.error, cls) and words in reply.error.message, (words, reply.error)
        after = peer.ask(wire.encode("GetStatus", 2)).fields["result"]["bad_messages"]
        assert after - before == 4  # the malformed headers; a bad key or incarnation is a well-formed request
        peer.send([_binary_recv_tensor(20, 77, key.encode())])
        reply = peer.replies(limit=1)[0]
        assert reply.id == 20 and reply.error is None and reply.values[0].tolist() == [0.0, 1.0, 2.0]
    service.rendezvous.cleanup(77)


def test_a_dead_serving_loop_stops_the_server_instead_of_leaving_it_deaf():
    server = tf.train.Server.create_local_server()
    try:
        def die(frames):
            raise SystemExit("the loop itself fails")
        server.service._dispatch_safely = die
        with RawPeer(server.target) as peer:
            peer.send(wire.encode("GetStatus", 5))
            assert server.join(timeout=5.0)
        assert isinstance(server.failure, errors.UnavailableError)
        assert "stopped serving" in server.failure.message and server.task_name in server.failure.message
    finally:
        server.stop()


# -- the client side ------------------------------------------------------------------------------

def test_a_poison_reply_fails_its_call_and_the_pool_keeps_working():
    def answer(header):
        if header["type"] == "GetStatus":
            return poison(wire.REPLY, header["id"], POISON_SPECS[0], {"error": None})
        return wire.encode_reply(header["id"], fields={"result": {"ok": True}})

    worker = FakeWorker(answer)
    pool = ChannelPool(name="test-pool")
    try:
        with pytest.raises(errors.InternalError) as raised:
            pool.request(worker.address, "GetStatus", timeout=5)
        assert "Malformed reply" in raised.value.message
        for _ in range(3):
            assert pool.request(worker.address, "ListDevices", timeout=5).fields["result"] == {"ok": True}
        # a poison reply nobody waits for (id 0) is dropped, and the pool still works
        pool.send_oneway(worker.address, "GetStatus")
        assert pool.request(worker.address, "ListDevices", timeout=5).fields["result"] == {"ok": True}
    finally:
        pool.close()
        worker.close()


def test_a_pool_whose_io_thread_dies_fails_every_waiter_and_every_later_call():
    release = threading.Event()

    def answer(header):
        release.wait(10)
        return wire.encode_reply(header["id"])

    worker = FakeWorker(answer)
    pool = ChannelPool(name="test-pool")
    try:
        waiting = []
        t = threading.Thread(target=lambda: waiting.append(request_outcome(pool, worker.address, 5)), daemon=True)
        t.start()

        def crash():
            raise RuntimeError("a bug in the I/O thread")
        pool._expire = crash   # the next deadline check kills the I/O thread
        pool.call(worker.address, "GetStatus", timeout=0.01)
        t.join(5)
        assert not t.is_alive(), "a waiting request hung after the I/O thread died"
        assert isinstance(waiting[0], errors.UnavailableError), waiting
        assert "I/O thread died" in waiting[0].message
        later = request_outcome(pool, worker.address, 5)
        assert isinstance(later, errors.UnavailableError) and "I/O thread died" in later.message
    finally:
        release.set()
        pool.close()
        worker.close()

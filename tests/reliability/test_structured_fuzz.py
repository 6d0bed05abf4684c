"""Fuzzing with a fixed seed: valid messages of every type, mutated (not only random bytes).

Decoding any of them raises WireError or succeeds (never another exception: that is
what killed workers and client pools); a worker fed 10,000 of them answers each
with a well-formed reply, never fails inside a handler, keeps serving and still runs
a correct step afterwards.
"""
import numpy as np

import graphrt as tf
from graphrt.distributed import wire

from .mutations import fuzzed, valid_messages
from .peer import RawPeer

SEED = 20261125
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _decodes_or_wire_error(frames, expect):
    try:
        wire.decode(frames, 1 << 20, expect=expect)
        return True
    except wire.WireError:
        return False


def test_decoders_raise_only_wire_errors_on_mutated_requests_and_replies():
    requests, replies = valid_messages(DEVICE, 0x1234)
    mutated_requests = fuzzed(SEED, 10_000, requests)
    mutated_replies = fuzzed(SEED + 1, 10_000, replies)
    ok = sum(_decodes_or_wire_error(m, wire.MESSAGE_TYPES) for m in mutated_requests)
    ok_replies = sum(_decodes_or_wire_error(m, {wire.REPLY}) for m in mutated_replies)
    # Most mutations are refused, some survive (a changed step id is still a valid request).
    assert 0 < ok < 9_000 and 0 < ok_replies < 9_000, (ok, ok_replies)


def test_a_worker_answers_ten_thousand_mutated_messages_and_keeps_serving(local_server):
    service = local_server.service
    device = service.devices[0]
    requests, _ = valid_messages(device.name, device.incarnation)
    messages = fuzzed(SEED, 10_000, requests)
    with RawPeer(local_server.target) as peer:
        before = peer.ask(wire.encode("GetStatus", 10 ** 12)).fields["result"]
        expected = 0
        for i, frames in enumerate(messages):
            peer.send(frames)
            if i % 1000 == 999:
                peer.replies(quiet_ms=0)   # read what is there (every reply must decode)
        status = peer.ask(wire.encode("GetStatus", 10 ** 12 + 1), timeout_ms=60_000).fields["result"]
        assert status["messages"] - before["messages"] >= len(messages)
        assert status["handler_failures"] == 0     # every failure was a typed error reply, none a crash
        assert status["bad_messages"] - before["bad_messages"] >= len(messages) // 2
        expected = status["step_table"]
        assert expected["unowned"] <= 256
    assert local_server.failure is None
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 3.0 + 1.0
    with tf.Session(local_server.target, graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [4.0, 7.0])

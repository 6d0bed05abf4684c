"""py_func tokens: py_func callbacks cannot be triggered by a remote peer.

Tokens used to be sequential (pyfunc_0, ...): a peer registering a graph that named
one ran a callback of the program hosting the server. Tokens are now random, and a
graph registered over the network may only call callbacks the host granted.
"""
import re

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.framework.graph_def import GraphDef, NodeDef
from graphrt.ops import py_func_registry

from .peer import RawPeer


def test_tokens_are_random_and_unguessable():
    g = tf.Graph()
    with g.as_default():
        ops = [tf.py_func(lambda a: a, [tf.constant(1.0)], tf.float32).op for _ in range(3)]
    tokens = [op.get_attr("token") for op in ops]
    assert len(set(tokens)) == 3
    for token in tokens:
        assert re.fullmatch(r"pyfunc_[0-9a-f]{32}", token), token
    assert not any(t in tokens for t in ("pyfunc_0", "pyfunc_1", "pyfunc_2"))


def _register_request(server, token, request_id=3):
    device = server.service.devices[0].name
    graph_def = GraphDef([
        NodeDef("x", "Const", [], device, {"dtype": tf.float32, "value": np.ones(2, np.float32)}),
        NodeDef("call", "PyFunc", ["x"], device, {"token": token, "Tin": [tf.float32], "Tout": [tf.float32]}),
    ])
    return wire.encode("RegisterGraph", request_id, {"graph_def": graph_def.to_dict()})


def test_a_remote_peer_cannot_register_a_graph_calling_the_hosts_callback(local_server):
    called = []
    g = tf.Graph()
    with g.as_default():
        out = tf.py_func(lambda a: called.append(1) or a, [tf.constant([1.0, 2.0])], tf.float32)
    token = out.op.get_attr("token")
    with RawPeer(local_server.target) as peer:
        reply = peer.ask(_register_request(local_server, token))
        assert isinstance(reply.error, errors.InvalidArgumentError)
        assert token in reply.error.message and "has not granted" in reply.error.message
        assert reply.error.node == "call"
        # Granted by the hosting program: now a remote graph may call it.
        py_func_registry.grant(out)
        try:
            reply = peer.ask(_register_request(local_server, token, 4))
            assert reply.error is None
            handle = reply.fields["result"]["graph_handle"]
            run = peer.ask(wire.encode("RunGraph", 5, {"graph_handle": handle, "step_id": 77}))
            assert run.error is None and called == [1]
        finally:
            py_func_registry.revoke(out)
    assert not py_func_registry.is_granted(token)


def test_a_session_of_the_hosting_program_still_runs_its_own_py_funcs(local_server):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.py_func(lambda a: (a * 10).astype(np.float32), [x], tf.float32)
    with tf.Session(local_server.target, graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0, 3.0]}), [10.0, 20.0, 30.0])


def test_grant_refuses_what_is_not_a_callback_of_this_process():
    with pytest.raises(errors.NotFoundError):
        py_func_registry.grant("pyfunc_" + "0" * 32)
    with pytest.raises(TypeError):
        py_func_registry.grant(object())

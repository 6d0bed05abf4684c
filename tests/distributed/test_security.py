"""CURVE: with it on, only clients holding an authorized key pair (and the
server's public key) can list devices, register or run graphs; everyone
else fails fast with UnavailableError and changes nothing on the server."""
import os
import time

import numpy as np
import pytest
import zmq.auth

import graphrt as tf
from graphrt import errors
from graphrt.distributed.channel import ChannelPool
from graphrt.distributed.security import CurveClient

T0 = "/job:worker/replica:0/task:0"


@pytest.fixture
def keys(tmp_path):
    certs, authorized = tmp_path / "certs", tmp_path / "authorized"
    certs.mkdir()
    authorized.mkdir()
    for name in ("server", "client", "rogue"):
        zmq.auth.create_certificates(str(certs), name)
    os.rename(certs / "client.key", authorized / "client.key")  # only the client's public key is authorized
    return {"server_secret": str(certs / "server.key_secret"), "server_public": str(certs / "server.key"),
            "client_secret": str(certs / "client.key_secret"), "client_public": str(authorized / "client.key"),
            "rogue_secret": str(certs / "rogue.key_secret"), "authorized": str(authorized)}


def graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/job:worker/task:1"):
            y = x * 2.0
        with tf.device("/job:worker/task:0"):
            z = y + 1.0
    return g, x, z


def test_only_authorized_clients_can_register_or_run(make_cluster, keys):
    cluster = make_cluster(2, extra_args=["--curve-secret-key", keys["server_secret"],
                                          "--curve-authorized", keys["authorized"]])
    g, x, z = graph()
    good = tf.ConfigProto(curve_server_public_key=keys["server_public"],
                          curve_client_secret_key=keys["client_secret"],
                          curve_client_public_key=keys["client_public"])
    with tf.Session(cluster.target(0), graph=g, config=good) as sess:
        # the workers talk to each other over CURVE too (the cluster's key pair)
        np.testing.assert_allclose(sess.run(z, {x: [1.0, 2.0]}), [3.0, 5.0])
        graphs_before = sess.status()[T0]["graphs"]

        # a client without CURVE: the handshake fails at once, not when the 60 s timeout runs out
        start = time.monotonic()
        with pytest.raises(errors.UnavailableError) as raised:
            tf.Session(cluster.target(0), graph=g, config=tf.ConfigProto(operation_timeout_in_ms=60_000))
        assert time.monotonic() - start < 30
        assert "security handshake failed" in raised.value.message

        # a client with a CURVE key pair the server does not know: rejected
        rogue = tf.ConfigProto(curve_server_public_key=keys["server_public"],
                               curve_client_secret_key=keys["rogue_secret"], operation_timeout_in_ms=5000)
        with pytest.raises(errors.UnavailableError) as raised:
            tf.Session(cluster.target(0), graph=g, config=rogue)
        assert "rejected this client's CURVE credentials" in raised.value.message

        # neither can register or run a graph, even talking to the service directly
        address = f"tcp://127.0.0.1:{cluster.ports[0]}"
        graph_def = {"node": [{"name": "c", "op": "NoOp", "device": f"{T0}/device:CPU:0"}]}
        for curve in (None, CurveClient.from_config(rogue)):
            pool = ChannelPool(curve=curve, connect_timeout=3)
            try:
                with pytest.raises(errors.UnavailableError):
                    pool.request(address, "RegisterGraph", {"graph_def": graph_def}, timeout=3)
                with pytest.raises(errors.UnavailableError):
                    pool.request(address, "RunGraph", {"graph_handle": "0000000000000001", "step_id": 1},
                                 timeout=3)
            finally:
                pool.close()
        assert sess.status()[T0]["graphs"] == graphs_before
        np.testing.assert_allclose(sess.run(z, {x: [0.0, 1.0]}), [1.0, 3.0])

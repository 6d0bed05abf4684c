"""Bounded worker state: anonymous peers cannot grow a worker's memory without bound.

20,000 RecvTensor requests for made-up steps, 20,000 AbortSteps and 2,000
RegisterGraphs used to add about 580 MiB to a worker, never returned. Now unknown
steps live in a capped, expiring table, aborts of unknown steps in a bounded LRU,
and registrations under a quota (least recently used graphs are evicted), so 50,000 hostile messages leave the worker's RSS
within 50 MiB of where it started (the bound this test holds it to), and it still serves.
"""
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.framework.graph_def import GraphDef, NodeDef

from .peer import RawPeer

MIB = 1 << 20


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def hostile_messages(device, incarnation, n_recv=20_000, n_abort=20_000, n_register=2_000, n_cleanup=8_000):
    """50,000 well-formed requests from a peer no master knows, interleaved by kind."""
    graph = GraphDef([NodeDef("c", "Const", [], device, {"dtype": tf.float32,
                                                         "value": np.arange(64, dtype=np.float32)})]).to_dict()
    kinds = []
    for i in range(max(n_recv, n_abort, n_register, n_cleanup)):
        if i < n_recv:
            key = f"{device};{incarnation:016x};{device};edge_{i}_x;0:0"
            kinds.append(wire.encode("RecvTensor", 1 + 4 * i, {"step_id": 10 ** 9 + i, "key": key}))
        if i < n_abort:
            kinds.append(wire.encode("AbortStep", 2 + 4 * i, {"step_id": 2 * 10 ** 9 + i, "error": {
                "code": errors.CANCELLED, "message": "m" * 1000}}))
        if i < n_register:
            kinds.append(wire.encode("RegisterGraph", 3 + 4 * i, {"graph_def": graph}))
        if i < n_cleanup:
            kinds.append(wire.encode("CleanupStep", 4 + 4 * i, {"step_id": 3 * 10 ** 9 + i}))
    return kinds


def test_fifty_thousand_hostile_messages_leave_rss_within_50_mib(make_cluster, capsys):
    cluster = make_cluster(1)
    pid = cluster.procs[0].pid
    with RawPeer(cluster.target(0)) as peer:
        info = peer.ask(wire.encode("ListDevices", 1)).fields["result"]["devices"][0]
        peer.ask(wire.encode("GetStatus", 2))
        start = rss_bytes(pid)
        messages = hostile_messages(info["name"], info["incarnation"])
        assert len(messages) == 50_000
        replies = 0
        for i, frames in enumerate(messages):
            peer.send(frames)
            if i % 500 == 499:  # read what is there, so neither side buffers everything
                while peer.sock.poll(0):
                    peer.sock.recv_multipart()
                    replies += 1
        status = peer.ask(wire.encode("GetStatus", 3), timeout_ms=60_000).fields["result"]
        end = rss_bytes(pid)
        with capsys.disabled():
            print(f"\nworker RSS: start {start / MIB:.1f} MiB, after 50,000 hostile messages {end / MIB:.1f} MiB "
                  f"(+{(end - start) / MIB:.1f} MiB); step table {status['step_table']}, graphs {status['graphs']}")
        assert end - start < 50 * MIB, (start, end)
        table = status["step_table"]
        assert table["unowned"] <= 256 and table["aborted"] <= 4096 and table["evicted"] >= 20_000 - 256
        assert status["graphs"] == 1024 and status["graph_quota"]["evicted"] == 2000 - 1024
        assert len(status["rendezvous_steps"]) <= 256
    # And it still serves a real session (its registration evicts the oldest hostile graph).
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 2.0
    with tf.Session(cluster.target(0), graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    assert os.path.exists(f"/proc/{pid}")


def test_a_session_whose_graph_was_evicted_registers_it_again(local_server):
    local_server.service.graph_quota.max_graphs = 1
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x + 1.0
    with tf.Session(local_server.target, graph=g) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [2.0, 3.0])
        with RawPeer(local_server.target) as peer:   # someone else's registration evicts ours
            assert peer.ask(wire.encode("RegisterGraph", 1, {"graph_def": GraphDef([]).to_dict()})).error is None
        with pytest.raises(errors.AbortedError, match="Graph handle is not found"):
            sess.run(y, {x: [1.0, 2.0]})
        np.testing.assert_allclose(sess.run(y, {x: [5.0, 6.0]}), [6.0, 7.0])

"""Lesser faults: a session closed mid-step leaves nothing on its workers, a busy
port is a graphrt error naming the address, SIM allocations are checked before a host
buffer is built."""
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distributed import wire
from graphrt.distributed.cluster import create_local_cluster

from ..client.test_ops_for_tests import block_until_aborted
from .peer import RawPeer


def _status(server):
    with RawPeer(server.target) as peer:
        return peer.ask(wire.encode("GetStatus", 1)).fields["result"]


def _idle(servers, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [_status(s) for s in servers]
        if all(s["rendezvous_steps"] == [] and s["running_steps"] == [] for s in states):
            return states
        time.sleep(0.02)
    return states


def test_closing_a_session_mid_step_leaves_no_rendezvous_on_any_worker():
    workers, _ = create_local_cluster(2, 0)
    try:
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:worker/task:1"):
                hang = block_until_aborted(tf.constant([1.0, 2.0]), name="hang")
            with tf.device("/job:worker/task:0"):
                out = hang + 1.0
        for _ in range(3):
            sess = tf.Session(workers[0].target, graph=g)
            outcome = []

            def run():
                try:
                    sess.run(out)
                except errors.OpError as e:
                    outcome.append(e)
            t = threading.Thread(target=run, daemon=True)
            t.start()
            deadline = time.monotonic() + 10
            while not _status(workers[1])["running_steps"] and time.monotonic() < deadline:
                time.sleep(0.01)
            sess.close()
            t.join(10)
            assert not t.is_alive() and isinstance(outcome[0], errors.CancelledError), outcome
        states = _idle(workers)
        assert [s["rendezvous_steps"] for s in states] == [[], []], states
        assert [s["step_table"]["unowned"] for s in states] == [0, 0]
    finally:
        for w in workers:
            w.stop()


def test_a_server_on_a_busy_port_raises_a_graphrt_error_naming_the_address(local_server):
    address = local_server.target[len("zmq://"):]
    with pytest.raises(errors.UnavailableError) as raised:
        tf.train.Server({"worker": [address]}, "worker", 0)
    assert f"tcp://{address}" in raised.value.message and "already in use" in raised.value.message


@pytest.mark.parametrize("make", [lambda: tf.zeros([40000, 40000]) + 1.0, lambda: tf.random_uniform([40000, 40000])],
                         ids=["fill", "random"])
def test_a_tensor_too_big_for_a_sim_arena_fails_before_the_host_builds_it(make):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/device:SIM:0"):
            big = make()
    outcome = []

    def run():
        try:
            with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
                sess.run(big)
        except errors.OpError as e:
            outcome.append(e)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)   # building 6.4 GB on the host first (and waiting 10 s for frees) was the bug
    assert not t.is_alive() and isinstance(outcome[0], errors.ResourceExhaustedError), outcome
    assert "6400000000 bytes" in outcome[0].message and "Allocator (sim:0)" in outcome[0].message

import json
import threading
import time

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.client import local_backend as session_lib
from graphrt.client.timeline import Timeline

from .test_ops_for_tests import block_until_aborted, blocking_events, fail

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def three_device_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [4, 4], name="x")
            a = tf.matmul(x, x, name="a")
        with tf.device("/cpu:1"):
            b = tf.add(tf.nn.relu(a, name="b1"), tf.tanh(a, name="b2"), name="b")
        with tf.device("/cpu:2"):
            c = tf.multiply(a, 3.0, name="c")
        with tf.device("/cpu:0"):
            out = tf.add(b, c, name="out")
    return g, x, out


def reference(xv):
    a = xv @ xv
    return np.maximum(a, 0) + np.tanh(a) + a * 3


def config(n=3, **kw):
    return tf.ConfigProto(device_count={"CPU": n}, **kw)


@pytest.fixture
def rendezvous_log(monkeypatch):
    made = []
    real = session_lib.LocalRendezvous

    def record(step_id):
        r = real(step_id)
        made.append(r)
        return r
    monkeypatch.setattr(session_lib, "LocalRendezvous", record)
    return made


def test_devices_from_config_have_full_names_and_incarnations():
    with tf.Session(graph=tf.Graph(), config=config(3)) as sess:
        devs = sess.list_devices()
    assert [d.name for d in devs] == [CPU.format(i) for i in range(3)]
    assert len({d.incarnation for d in devs}) == 3 and all(d.incarnation > 0 for d in devs)


def test_split_graph_gives_the_same_values_as_numpy():
    g, x, out = three_device_graph()
    xv = np.random.RandomState(0).randn(4, 4).astype(np.float32)
    with tf.Session(graph=g, config=config()) as sess:
        for _ in range(3):
            np.testing.assert_allclose(sess.run(out, {x: xv}), reference(xv), rtol=1e-5)


def test_rendezvous_tables_are_empty_after_every_step(rendezvous_log):
    g, x, out = three_device_graph()
    with g.as_default(), tf.device("/cpu:1"):
        bad = fail(out, message="kernel exploded")
    with tf.Session(graph=g, config=config()) as sess:
        sess.run(out, {x: np.eye(4, dtype=np.float32)})
        with pytest.raises(errors.InvalidArgumentError, match="kernel exploded"):
            sess.run(bad, {x: np.eye(4, dtype=np.float32)})
        sess.run(out, {x: np.eye(4, dtype=np.float32)})
    assert len(rendezvous_log) == 3
    assert [r.num_items() for r in rendezvous_log] == [0, 0, 0]


def test_partition_graphs_in_run_metadata_are_what_ran():
    g, x, out = three_device_graph()
    with tf.Session(graph=g, config=config()) as sess:
        md = tf.RunMetadata()
        sess.run(out, {x: np.eye(4, dtype=np.float32)}, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=md)
        plan = sess.plan_for(out, {x: 0})
    assert len(md.partition_graphs) == 3
    assert [pg.to_json() for pg in md.partition_graphs] == [pg.to_json() for pg in plan.partition_graphs]
    by_device = {pg.node[0].device: pg for pg in md.partition_graphs}
    counts = {dev: (sum(n.op == "_Send" for n in pg.node), sum(n.op == "_Recv" for n in pg.node))
              for dev, pg in by_device.items()}
    assert counts == {CPU.format(0): (2, 2), CPU.format(1): (1, 1), CPU.format(2): (1, 1)}
    send = next(n for n in by_device[CPU.format(1)].node if n.op == "_Send")
    assert send.attr["recv_device"].s == CPU.format(0).encode()
    assert send.attr["tensor_name"].s.startswith(b"edge_")


def test_full_trace_records_every_node_with_transfers_and_makes_a_chrome_trace():
    g, x, out = three_device_graph()
    with tf.Session(graph=g, config=config()) as sess:
        md = tf.RunMetadata()
        sess.run(out, {x: np.eye(4, dtype=np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    devices = {d.device: d for d in md.step_stats.dev_stats}
    assert set(devices) == {CPU.format(i) for i in range(3)}
    names = {ns.node_name: ns for ns in devices[CPU.format(1)].node_stats}
    assert {"b1", "b2", "b"} <= set(names)
    assert any(ns.op == "_Recv" for ns in names.values()) and any(ns.op == "_Send" for ns in names.values())
    b = names["b"]
    assert b.output[0].requested_bytes == 64 and b.output[0].shape == (4, 4)
    assert b.thread_id > 0 and b.all_start_micros > 0 and b.all_end_rel_micros >= 0
    assert b.timeline_label == "b = AddV2(b1, b2)"
    trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f" and e.get("bp") == "e"}
    assert starts and set(starts) == set(ends)
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    send_recv_flows = [i for i in starts if starts[i]["name"].startswith("edge_")]
    assert len(send_recv_flows) == 4  # a->cpu1, a->cpu2, b->cpu0, c->cpu0
    for i in send_recv_flows:
        assert processes[starts[i]["pid"]] != processes[ends[i]["pid"]]
    ops = [e for e in events if e.get("ph") == "X"]
    assert {"MatMul", "_Send", "_Recv", "Relu"} <= {e["name"] for e in ops}


def test_hung_step_fails_with_deadline_exceeded_naming_the_waiting_key():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
            stuck = block_until_aborted(x * 2.0, name="stuck")
        with tf.device("/cpu:1"):
            y = tf.identity(stuck, name="y")
    with tf.Session(graph=g, config=config(2)) as sess:
        t0 = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError) as e:
            sess.run(y, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=300))
        assert time.monotonic() - t0 < 20  # the 300 ms deadline, not the test kernel's own 30 s limit
        msg = str(e.value)
        assert "300 ms" in msg and "recv waiting" in msg
        assert "edge_" in msg and "_stuck" in msg
        assert CPU.format(0) in msg and CPU.format(1) in msg
        assert sess.run(x * 3.0, {x: 2.0}) == 6.0  # the session keeps working


def test_operation_timeout_from_config_applies_to_every_run():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/cpu:1"):
            y = block_until_aborted(x, name="y")
    with tf.Session(graph=g, config=config(2, operation_timeout_in_ms=200)) as sess:
        with pytest.raises(errors.DeadlineExceededError, match="200 ms"):
            sess.run(y, {x: 1.0})


def test_error_on_one_device_stops_the_others_and_reports_the_root_cause():
    # cpu:2 runs a kernel that would go on for 30 s; cpu:1 fails; the step must
    # end at once with cpu:1's error, not a consequence of the abort.
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/cpu:1"):
            broken = fail(x, message="device 1 failed", name="broken")
        with tf.device("/cpu:2"):
            waiting = block_until_aborted(x, name="waiting")
        with tf.device("/cpu:0"):
            total = tf.add(waiting, broken, name="total")
    with tf.Session(graph=g, config=config(3)) as sess:
        t0 = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError) as e:
            sess.run(total, {x: 1.0})
        assert time.monotonic() - t0 < 20  # stopped by the abort, not by the test kernel's own 30 s limit
        assert "device 1 failed" in str(e.value)
        assert e.value.node == "broken"
        assert "node broken (TestFail) on " + CPU.format(1) in str(e.value)


def test_session_runs_multi_device_steps_from_many_threads():
    g, x, out = three_device_graph()
    results = {}
    with tf.Session(graph=g, config=config()) as sess:
        def work(i):
            xv = np.full((4, 4), i / 10, np.float32)
            results[i] = [np.allclose(sess.run(out, {x: xv}), reference(xv), rtol=1e-5) for _ in range(20)]
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert len(results) == 8 and all(all(r) for r in results.values())


def test_closing_a_session_cancels_its_running_step():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/cpu:1"):
            y = block_until_aborted(x, name="y")
    sess = tf.Session(graph=g, config=config(2))
    caught = []

    def run():
        try:
            sess.run(y, {x: 1.0})
        except errors.OpError as e:
            caught.append(e)
    blocked = blocking_events("y")
    t = threading.Thread(target=run)
    t.start()
    assert blocked.started.wait(60)  # the step is running: its kernel on cpu:1 blocks
    sess.close()
    t.join(60)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], errors.CancelledError)
    assert blocked.returned.is_set() and blocked.released_by_abort
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(y, {x: 1.0})


def test_log_device_placement(capsys):
    g, x, out = three_device_graph()
    with tf.Session(graph=g, config=config(log_device_placement=True)) as sess:
        sess.run(out, {x: np.eye(4, dtype=np.float32)})
    printed = capsys.readouterr().out
    assert f"a: (MatMul): {CPU.format(0)}" in printed
    assert f"b1: (Relu): {CPU.format(1)}" in printed


def test_control_dependency_on_another_device_orders_the_run():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:1"):
            v = tf.Variable(0.0, name="v")
            inc = tf.assign_add(v, 1.0)
        with tf.device("/cpu:0"), tf.control_dependencies([inc]):
            seen = v.read_value() * 1.0
        init = tf.global_variables_initializer()
    with tf.Session(graph=g, config=config(2)) as sess:
        sess.run(init)
        values = [sess.run(seen) for _ in range(3)]
        assert values == [1.0, 2.0, 3.0]

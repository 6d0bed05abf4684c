"""The frame-aware executor: frames and iterations, dead tensors, loops and
conds split over devices (control loops, frame:iter rendezvous keys, is_dead
across devices), parallel_iterations, freeing per-iteration values, and the
errors (dead fetches, errors inside loops, timeouts, malformed frames)."""
import tracemalloc

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.graph_def import GraphDef, NodeDef
from graphrt.ops.control_flow_ops import switch
from graphrt.partition import control_flow, partitioner
from graphrt.rendezvous.local import LocalRendezvous
from graphrt.runtime import compiled_loop, frame_executor

XV = np.array([0.5, -1.0, 2.0], np.float32)
TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})
FAST_FAIL = tf.RunOptions(timeout_in_ms=10000)  # a bug fails the test instead of hanging it
CF_OPS = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}


def _partition_graphs(sess, fetches, feed):
    md = tf.RunMetadata()
    out = sess.run(fetches, feed, options=tf.RunOptions(timeout_in_ms=10000, output_partition_graphs=True),
                   run_metadata=md)
    return out, md.partition_graphs


def _split_loop(graph):
    """acc = x; repeat n times: acc = acc * 1.5 + x, the body on /cpu:1, the loop (LoopCond) on /cpu:0."""
    x = tf.placeholder(tf.float32, [3], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    with tf.device("/cpu:0"):
        def body(i, a):
            with tf.device("/cpu:1"):
                a = a * 1.5 + x
            return i + 1, a
        _, acc = tf.while_loop(lambda i, a: i < n, body, [0, tf.zeros([3])])
        grad = tf.gradients(tf.reduce_sum(acc), x)[0]
    return x, n, acc, grad


# -- executor selection and partition graphs ---------------------------------------------------

def test_simple_graphs_keep_the_simple_propagator(graph):
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    c = tf.cond(x > 0, lambda: x, lambda: -x)
    with tf.Session() as sess:
        assert not sess.plan_for(y, {x: 1.0}).executors[0].uses_frames
        assert sess.plan_for(c, {x: 1.0}).executors[0].uses_frames


def test_partition_graphs_show_the_control_flow_ops(graph):
    x, n, acc, grad = _split_loop(graph)
    with tf.Session(config=TWO_CPUS) as sess:
        (av, gv), parts = _partition_graphs(sess, [acc, grad], {x: XV, n: 4})
    np.testing.assert_allclose(av, [4.0625, -8.125, 16.25])
    np.testing.assert_allclose(gv, [8.125] * 3)
    by_device = {p.node[0].device: p for p in parts}
    leader = by_device["/job:localhost/replica:0/task:0/device:CPU:0"]
    other = by_device["/job:localhost/replica:0/task:0/device:CPU:1"]
    assert CF_OPS <= {node.op for node in leader.node}
    # The body's device runs its own control loop, driven by the LoopCond sent from the leader.
    cloop = [node for node in other.node if node.name.startswith("_cloop")]
    assert {node.op for node in cloop} >= {"Enter", "Merge", "Switch", "NextIteration"}
    assert "LoopCond" not in {node.op for node in other.node}
    recvs = [node for node in other.node if node.op == "_Recv"]
    assert any(inp.startswith("^_cloop") for r in recvs for inp in r.input)  # recvs run once per iteration
    # what the loop sends may be dead (its last iteration's body); the fed x, upstream of every Switch, never is
    assert {r.attrs["_src"] for r in recvs if r.attrs.get("_may_be_dead")} == {
        "while/Identity", "while/Identity_1", "while/LoopCond"}
    assert {r.attrs["_src"] for r in recvs if not r.attrs.get("_may_be_dead")} == {"_arg_x_0_0"}


def test_a_branch_only_partition_tracks_deadness(graph):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/cpu:0"):
        def true_fn():
            with tf.device("/cpu:1"):
                return tf.sin(x) * 3.0
        c = tf.cond(p, true_fn, lambda: x - 1.0)
    with tf.Session(config=TWO_CPUS) as sess:
        for taken in (True, False, True):
            value, parts = _partition_graphs(sess, c, {p: taken, x: XV})
            np.testing.assert_allclose(value, np.sin(XV) * 3 if taken else XV - 1, rtol=1e-6)
        branch = [g for g in parts if g.node[0].device.endswith("CPU:1")][0]
        assert not CF_OPS & {node.op for node in branch.node}  # no control-flow op, yet it may see dead tensors
        plan = sess.plan_for(c, {p: True, x: XV})
        assert all(ex.uses_frames for ex in plan.executors)


# -- loops and conds over two devices ---------------------------------------------------------

def test_loop_split_over_two_devices(graph):
    x, n, acc, grad = _split_loop(graph)
    with tf.Session(config=TWO_CPUS) as sess:
        for nv in (0, 1, 4, 9):
            av, gv = sess.run([acc, grad], {x: XV, n: nv}, options=FAST_FAIL)
            np.testing.assert_allclose(av, XV * sum(1.5 ** k for k in range(nv)), rtol=1e-6)
            np.testing.assert_allclose(gv, [sum(1.5 ** k for k in range(nv))] * 3, rtol=1e-6)


def test_nested_loops_split_over_two_devices_with_gradients(graph):
    x = tf.placeholder(tf.float64, [3])
    with tf.device("/cpu:0"):
        def outer(i, a):
            def inner(j, b):
                with tf.device("/cpu:1"):
                    b = tf.sin(b) * x + 0.5
                return j + 1, b
            _, b = tf.while_loop(lambda j, b: j < i + 1, inner, [0, a])
            with tf.device("/cpu:1"):
                b = b * x
            return i + 1, b
        _, y = tf.while_loop(lambda i, a: i < 3, outer, [0, x])
        loss = tf.reduce_sum(y)
    grad = tf.gradients(loss, x, colocate_gradients_with_ops=True)[0]  # the gradient loops span devices too
    xv = np.array([0.3, -0.6, 0.9])
    with tf.Session(config=TWO_CPUS) as sess:
        lv, gv = sess.run([loss, grad], {x: xv}, options=FAST_FAIL)
        numeric = [(sess.run(loss, {x: xv + d}) - sess.run(loss, {x: xv - d})) / 2e-6
                   for d in np.eye(3) * 1e-6]
    b = xv.copy()
    for i in range(3):
        for _ in range(i + 1):
            b = np.sin(b) * xv + 0.5
        b = b * xv
    assert lv == pytest.approx(b.sum())
    np.testing.assert_allclose(gv, numeric, rtol=1e-5)


def test_cond_split_over_two_devices_takes_each_branch(graph):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/cpu:0"):
        def true_fn():
            with tf.device("/cpu:1"):
                return x * 2.0
        c = tf.cond(p, true_fn, lambda: tf.exp(x))
        grad = tf.gradients(tf.reduce_sum(c), x)[0]
    with tf.Session(config=TWO_CPUS) as sess:
        for taken in (True, False, False, True):
            cv, gv = sess.run([c, grad], {p: taken, x: XV}, options=FAST_FAIL)
            want = (XV * 2, [2.0] * 3) if taken else (np.exp(XV), np.exp(XV))
            np.testing.assert_allclose(cv, want[0], rtol=1e-6)
            np.testing.assert_allclose(gv, want[1], rtol=1e-6)


def test_cond_inside_a_loop_with_branches_on_both_devices(graph):
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/cpu:0"):
        def body(i, a):
            def t():
                with tf.device("/cpu:1"):
                    return a * x + 1.0
            return i + 1, tf.cond(tf.equal(i % 3, 0), t, lambda: tf.sin(a) - x)
        _, y = tf.while_loop(lambda i, a: i < 7, body, [0, tf.ones([3])])
    a = np.ones(3, np.float32)
    for i in range(7):
        a = a * XV + 1 if i % 3 == 0 else np.sin(a) - XV
    with tf.Session(config=TWO_CPUS) as sess:
        np.testing.assert_allclose(sess.run(y, {x: XV}, options=FAST_FAIL), a, rtol=1e-5)


def test_loop_iterations_use_frame_iter_rendezvous_keys(graph, monkeypatch):
    x, n, acc, _ = _split_loop(graph)
    sent = []
    real_send = LocalRendezvous.send

    def send(self, key, value, is_dead=False):
        sent.append((key.edge_name, key.frame_id, key.iter_id, is_dead))
        return real_send(self, key, value, is_dead)
    monkeypatch.setattr(LocalRendezvous, "send", send)
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(acc, {x: XV, n: 3}, options=FAST_FAIL)
    frame = frame_executor.frame_id(0, 0, "while/while_context")
    in_loop = [s for s in sent if s[1] != 0]
    assert in_loop and {s[1] for s in in_loop} == {frame}
    body_values = [s for s in in_loop if "mul" in s[0] or "add" in s[0]]
    assert sorted({s[2] for s in body_values}) == [0, 1, 2, 3]
    # The last iteration's body is dead on every device: its values cross as dead.
    assert {s[3] for s in body_values if s[2] == 3} == {True}
    assert {s[3] for s in body_values if s[2] < 3} == {False}
    loop_conds = [s for s in in_loop if "LoopCond" in s[0]]
    assert sorted(s[2] for s in loop_conds) == [0, 1, 2, 3]


def test_frame_ids_are_deterministic_and_distinct():
    a = frame_executor.frame_id(0, 0, "while/while_context")
    assert a == frame_executor.frame_id(0, 0, "while/while_context") and a != 0
    assert a < 2 ** 64
    ids = {frame_executor.frame_id(a, i, "while/while/while_context") for i in range(100)}
    assert len(ids) == 100  # one per parent iteration: the inner loop's keys never collide


# -- parallel_iterations and memory ---------------------------------------------------------

def _overlapping_loop(parallel_iterations):
    x = tf.placeholder(tf.float32, [3])
    # The counter races ahead while the heavier chain on `a` lags behind.
    return x, tf.while_loop(lambda i, a: i < 30, lambda i, a: (i + 1, tf.sin(tf.cos(tf.sin(a))) + x * 0.1),
                            [0, tf.zeros([3])], parallel_iterations=parallel_iterations)


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_parallel_iterations_bounds_iterations_in_flight(graph, monkeypatch, parallel_iterations):
    monkeypatch.setattr(compiled_loop, "ENABLED", False)  # iterations in flight: the frame executor's
    x, loop = _overlapping_loop(parallel_iterations)
    seen = []
    real = frame_executor.FrameRun._increment_iteration

    def increment(self, frame):
        ok = real(self, frame)
        seen.append(len(frame.iterations))
        return ok
    monkeypatch.setattr(frame_executor.FrameRun, "_increment_iteration", increment)
    with tf.Session() as sess:
        i, a = sess.run(loop, {x: XV})
    assert i == 30 and len(seen) == 30
    assert max(seen) <= parallel_iterations
    if parallel_iterations > 1:
        assert max(seen) > 1  # iterations did overlap


def test_parallel_iterations_1_and_10_give_equal_results(graph):
    x = tf.placeholder(tf.float32, [3])
    results = []
    for pi in (1, 10):
        def body(i, a, b):
            c = tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(b), lambda: b * 0.5)
            return i + 1, a * 0.5 + c, b + x * tf.cast(i, tf.float32)
        results.append(tf.while_loop(lambda i, a, b: i < 25, body, [0, tf.zeros([3]), tf.ones([3])],
                                     parallel_iterations=pi))
    with tf.Session() as sess:
        one, ten = sess.run(results, {x: XV})
    for u, v in zip(one, ten):
        np.testing.assert_array_equal(u, v)


def test_per_iteration_values_are_freed(graph):
    # 200 iterations each make a 4 MB tensor; kept, they would need 800 MB.
    big = 1_000_000
    total = tf.while_loop(lambda i, s: i < 200,
                          lambda i, s: (i + 1, s + tf.reduce_sum(tf.fill([big], tf.cast(i, tf.float32)))),
                          [0, 0.0], parallel_iterations=2)[1]
    with tf.Session() as sess:
        sess.run(total)
        tracemalloc.start()
        try:
            value = sess.run(total)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert value == pytest.approx(big * sum(range(200)), rel=1e-5)
    assert peak < 40 * 4 * big / 10  # a few iterations' worth, not 200


# -- errors ---------------------------------------------------------------------------------

def test_fetching_a_dead_tensor_names_the_fetch(graph):
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    f, t = switch(x, p, name="gate")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(t, {x: XV, p: True}), XV)
        with pytest.raises(errors.InvalidArgumentError, match=r"Retval\[0\] does not have value: the fetch "
                                                              r"'gate:1' is dead"):
            sess.run(t, {x: XV, p: False})
        with pytest.raises(errors.InvalidArgumentError, match="'gate:0' is dead"):
            sess.run([t, f], {x: XV, p: True})


def test_fetching_a_dead_tensor_from_another_device(graph):
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    with tf.device("/cpu:1"):
        _, t = switch(x, p)
        y = t * 2.0
    with tf.Session(config=TWO_CPUS) as sess:
        with pytest.raises(errors.InvalidArgumentError, match="is dead"):
            sess.run(y, {x: XV, p: False}, options=FAST_FAIL)
        np.testing.assert_array_equal(sess.run(y, {x: XV, p: True}, options=FAST_FAIL), XV * 2)


def test_fetching_inside_a_loop_is_an_error(graph):
    seen = {}

    def body(i):
        seen["inner"] = i * 2
        return i + 1
    tf.while_loop(lambda i: i < 3, body, [0])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="inside the while loop"):
            sess.run(seen["inner"])


@pytest.mark.parametrize("split", [False, True])
def test_an_error_inside_a_loop_aborts_the_step(graph, split):
    n = tf.placeholder(tf.int32, [])
    with tf.device("/cpu:0"):
        def body(i):
            with tf.device("/cpu:1" if split else "/cpu:0"):
                j = tf.math.floordiv(100, 5 - i) * 0 + i + 1  # divides by zero in iteration 5
            return j
        out = tf.while_loop(lambda i: i < n, body, [0])
    with tf.Session(config=TWO_CPUS) as sess:
        assert sess.run(out, {n: 5}, options=FAST_FAIL) == 5
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            sess.run(out, {n: 8}, options=FAST_FAIL)
        assert sess.run(out, {n: 3}, options=FAST_FAIL) == 3  # the session is still usable


@pytest.mark.parametrize("split", [False, True])
def test_an_infinite_loop_times_out(graph, split):
    with tf.device("/cpu:0"):
        def body(i):
            with tf.device("/cpu:1" if split else "/cpu:0"):
                return i + 1
        forever = tf.while_loop(lambda i: tf.constant(True), body, [0])
    with tf.Session(config=TWO_CPUS) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(forever, options=tf.RunOptions(timeout_in_ms=300))


def test_a_cross_device_loop_needs_a_loop_cond():
    nodes = [
        NodeDef("c", "Const", [], "/cpu:0", {"dtype": tf.float32, "value": np.float32(1)}),
        NodeDef("enter", "Enter", ["c"], "/cpu:0", {"T": tf.float32, "frame_name": "F"}),
        NodeDef("body", "Identity", ["enter"], "/cpu:1", {"T": tf.float32}),
        NodeDef("exit", "Exit", ["body"], "/cpu:1", {"T": tf.float32}),
    ]
    placement = {"c": "A", "enter": "A", "body": "B", "exit": "B"}
    with pytest.raises(errors.InvalidArgumentError, match="A cross-device loop must have a pivot predicate: F"):
        partitioner.partition(GraphDef(nodes), placement, {})


def test_inputs_from_different_frames_are_rejected():
    nodes = [
        NodeDef("c", "Const", [], "", {"dtype": tf.float32, "value": np.float32(1)}),
        NodeDef("enter", "Enter", ["c"], "", {"T": tf.float32, "frame_name": "F"}),
        NodeDef("mix", "AddV2", ["enter", "c"], "", {"T": tf.float32}),
    ]
    with pytest.raises(errors.InvalidArgumentError, match="'mix' .* has inputs from different frames"):
        control_flow.control_flow_info(nodes)


def test_frame_repr_names_the_frame_id_and_live_iterations():
    static = frame_executor.StaticFrame("while/while_context", None)
    frame = frame_executor.FrameState(static, frame_executor.frame_id(0, 0, "while/while_context"), None, None, 10)
    text = repr(frame)
    assert "while/while_context" in text and f"{frame.frame_id:016x}" in text and "[0]" in text

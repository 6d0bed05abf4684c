"""Compiled while-loops (runtime/compiled_loop.py) against the frame
executor they replace for single-device loops."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.runtime import compiled_loop, graph_executor
from graphrt.runtime.compiled_loop import CompiledLoopRun
from graphrt.runtime.frame_executor import FrameRun

FAST_FAIL = tf.RunOptions(timeout_in_ms=20000)  # a bug fails the test instead of hanging it


@pytest.fixture(autouse=True, params=[0, 3], ids=["hot", "profiled"])
def profiled_runs(request, monkeypatch):
    """An executor's first runs measure each kernel (a separate code path): every test runs with
    executors that are past them and with executors in them."""
    monkeypatch.setattr(graph_executor, "PROFILED_RUNS", request.param)
    return request.param


def _run(build, compiled, feed_values=(), runs=2, device="/device:CPU:0"):
    """Builds a graph with `build` (returns (fetches, feed placeholders)), runs it `runs`
    times; returns (values per run, the executors' loop plans, their run classes)."""
    saved = compiled_loop.ENABLED
    compiled_loop.ENABLED = compiled
    try:
        with tf.Graph().as_default():
            with tf.device(device):
                fetches, placeholders = build()
            feed = dict(zip(placeholders, feed_values))
            with tf.Session(config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
                sess.run(tf.global_variables_initializer())
                values = [sess.run(fetches, feed, options=FAST_FAIL) for _ in range(runs)]
                plan = sess.plan_for(fetches, feed)
                plans = [getattr(ex, "loop_plan", None) for ex in plan.executors]
                kinds = {ex._run_class for ex in plan.executors}
        return values, plans, kinds
    finally:
        compiled_loop.ENABLED = saved


def _assert_same(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _compare(build, feed_values=(), expect_compiled=True, device="/device:CPU:0"):
    got, plans, kinds = _run(build, True, feed_values, device=device)
    want, plans_d, _ = _run(build, False, feed_values, device=device)
    assert all(p is None for p in plans_d)
    if expect_compiled:
        assert any(p is not None for p in plans) and compiled_loop.run_class in kinds
    else:
        assert all(p is None for p in plans) and compiled_loop.run_class not in kinds
    _assert_same(got, want)
    return got[0]


def _counter():
    n = tf.placeholder(tf.int32, [], name="n")
    i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.999 + 1.0),
                         [tf.constant(0), tf.constant(0.0)])
    return [i, a], [n]


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_counter_and_accumulator(n):
    i, a = _compare(_counter, [np.int32(n)])
    assert i == n
    expected = np.float32(0)
    for _ in range(n):
        expected = expected * np.float32(0.999) + np.float32(1)
    assert a == expected and a.dtype == np.float32


def test_tensors_that_change_shape():
    def build():
        x = tf.placeholder(tf.float32, [3], name="x")
        _, acc = tf.while_loop(lambda i, acc: i < 5, lambda i, acc: (i + 1, tf.concat([acc, acc * 2.0], 0)),
                               [tf.constant(0), x], shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
        return [acc], [x]
    x = np.array([1, 2, 3], np.float32)
    (acc,) = _compare(build, [x])
    want = x
    for _ in range(5):
        want = np.concatenate([want, want * 2])
    np.testing.assert_array_equal(acc, want)


def test_loop_invariants_and_two_loops_in_sequence():
    def build():
        x = tf.placeholder(tf.float32, [2, 2], name="x")
        w = tf.constant([[0.5, 0.0], [0.0, 2.0]])
        _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tf.matmul(y, w) + x), [tf.constant(0), x])
        _, z = tf.while_loop(lambda j, z: j < 3, lambda j, z: (j + 1, z - tf.reduce_sum(y)), [tf.constant(0), y])
        return [y, z], [x]
    x = np.array([[1, 2], [3, 4]], np.float32)
    y, z = _compare(build, [x])
    want = x
    for _ in range(4):
        want = want @ np.array([[0.5, 0], [0, 2]], np.float32) + x
    np.testing.assert_allclose(y, want)
    np.testing.assert_allclose(z, want - 3 * want.sum(), rtol=1e-6)


def test_maximum_iterations():
    def build():
        i = tf.while_loop(lambda i: i < 1000, lambda i: i + 2, [tf.constant(0)], maximum_iterations=6)
        return [i], []
    assert _compare(build)[0] == 12


def test_a_loop_value_whose_result_is_unused():
    def build():
        n = tf.placeholder(tf.int32, [], name="n")
        i, _ = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, tf.concat([a, a], 0)),
                             [tf.constant(0), tf.ones([1])], shape_invariants=[tf.TensorShape([]),
                                                                                tf.TensorShape([None])])
        return [i], [n]
    assert _compare(build, [np.int32(5)])[0] == 5


def test_a_loop_updating_a_ref_variable_is_compiled():
    """A variable living outside the loop (RefEnter) is read and updated in order, each iteration."""
    def build():
        v = tf.Variable(0, name="v")
        loop = tf.while_loop(lambda i: i < 4, lambda i: tf.identity(i + 1) + 0 * tf.assign_add(v, 1), [0])
        with tf.control_dependencies([loop]):
            read = tf.identity(v)
        return [read], []
    values, plans, _ = _run(build, True)
    values_d, _, _ = _run(build, False)
    assert any(p is not None for p in plans)
    _assert_same(values, values_d)
    assert values[1][0] == 8  # each run adds 4


def test_a_training_loop_with_reads_and_updates_of_variables_is_compiled():
    def build():
        w = tf.Variable(np.ones([3, 1], np.float32), name="w")
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)

        def body(i, total):
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - 1.0))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.control_dependencies([train]):
                return i + 1, total + tf.identity(loss)
        loop = tf.while_loop(lambda i, t: i < 5, body, [0, 0.0])
        with tf.control_dependencies(loop):
            after = tf.identity(w.value())
        return [loop[1], after], []
    values = _compare(build)
    assert values[0] > 0 and values[1].shape == (3, 1)


def test_a_loop_writing_a_variable_with_assign_sub_gives_the_frame_executors_values():
    def build():
        v = tf.Variable(100.0, name="v")
        loop = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + tf.assign_sub(v, 2.0)), [0, 0.0])
        return [loop[1]], []
    assert _compare(build)[0] == 98.0 + 96.0 + 94.0


def test_cond_inside_a_loop_falls_back_with_the_same_values():
    def build():
        n = tf.placeholder(tf.int32, [], name="n")
        _, s = tf.while_loop(lambda i, s: i < n,
                             lambda i, s: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: s + i, lambda: s - 1)),
                             [tf.constant(0), tf.constant(0)])
        return [s], [n]
    assert _compare(build, [np.int32(9)], expect_compiled=False)[0] == 0 + 2 + 4 + 6 + 8 - 4


def test_cond_outside_loops_and_nested_loops_fall_back():
    def cond_build():
        p = tf.placeholder(tf.bool, [], name="p")
        return [tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(2))], [p]
    assert _compare(cond_build, [True], expect_compiled=False)[0] == 1

    def nested_build():
        out = tf.while_loop(lambda i, s: i < 3,
                            lambda i, s: (i + 1, tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j),
                                                               [0, s])[1]),
                            [0, 0])
        return list(out), []
    assert _compare(nested_build, expect_compiled=False) == [3, 1]


def test_loop_gradients_with_stacks_fall_back_and_agree():
    def build():
        x = tf.placeholder(tf.float32, [3], name="x")
        _, acc = tf.while_loop(lambda i, acc: i < 4, lambda i, acc: (i + 1, acc * x), [tf.constant(0), tf.ones([3])])
        grad = tf.gradients(tf.reduce_sum(acc), x)[0]
        return [acc, grad], [x]
    x = np.array([1, 2, 3], np.float32)
    acc, grad = _compare(build, [x], expect_compiled=False)
    np.testing.assert_allclose(acc, x ** 4)
    np.testing.assert_allclose(grad, 4 * x ** 3)


def test_parallel_iterations_do_not_matter():
    def build(p):
        def b():
            i, a = tf.while_loop(lambda i, a: i < 50, lambda i, a: (i + 1, a * 1.5 - i_float(i)),
                                 [tf.constant(0), tf.constant(1.0)], parallel_iterations=p)
            return [i, a], []
        return b

    def i_float(i):
        return tf.cast(i, tf.float32)
    one = _compare(build(1))
    ten = _compare(build(10))
    _assert_same(one, ten)


def test_an_error_in_the_body_names_the_node():
    def build():
        x = tf.placeholder(tf.float32, [None], name="x")
        out = tf.while_loop(lambda i, y: i < 3,
                            lambda i, y: (i + 1, tf.reshape(y, [2, 2], name="bad_reshape")), [0, x],
                            shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])
        return list(out), [x]
    for compiled in (True, False):
        with pytest.raises(errors.InvalidArgumentError, match="bad_reshape"):
            _run(build, compiled, [np.ones(3, np.float32)])


def test_a_non_scalar_condition_is_an_error():
    def build():
        x = tf.placeholder(tf.bool, None, name="x")
        out = tf.while_loop(lambda i: x, lambda i: i + 1, [0])
        return [out], [x]
    for compiled in (True, False):
        with pytest.raises(errors.InvalidArgumentError, match="must be a scalar"):
            _run(build, compiled, [np.array([True, False])])


def test_an_endless_loop_stops_at_the_deadline():
    with tf.Graph().as_default():
        forever = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1, [0])
        with tf.Session() as sess:
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(forever, options=tf.RunOptions(timeout_in_ms=300))
            assert sess.plan_for(forever, {}).executors[0]._run_class is compiled_loop.run_class
            assert sess.run(tf.constant(3)) == 3  # the session is still usable


def test_traced_steps_run_on_the_frame_executor_with_the_same_stats():
    def names(compiled):
        compiled_loop.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                (i, a), (n,) = _counter()
                with tf.Session() as sess:
                    md = tf.RunMetadata()
                    out = sess.run([i, a], {n: 3}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                   run_metadata=md)
            return out, sorted(s.node_name for d in md.step_stats.dev_stats for s in d.node_stats)
        finally:
            compiled_loop.ENABLED = True
    out_c, names_c = names(True)
    out_d, names_d = names(False)
    _assert_same(out_c, out_d)
    assert names_c == names_d and any(name.startswith("while/") for name in names_c)


def test_run_classes_and_repr():
    with tf.Graph().as_default():
        (i, a), (n,) = _counter()
        with tf.Session() as sess:
            sess.run([i, a], {n: 5})
            ex = sess.plan_for([i, a], {n: 5}).executors[0]
    plan = ex.loop_plan
    assert plan.loops == ("while/while_context",)
    loop = [u for u in plan.units if isinstance(u, compiled_loop.LoopPlan)][0]
    assert "while/while_context" in repr(loop) and "2 loop variables" in repr(loop)
    assert issubclass(CompiledLoopRun, object) and FrameRun is not CompiledLoopRun


# -- loops of a SIM device: one launch on its compute stream ---------------------------------

def _sim_loop_plans(plans):
    loops = [u for p in plans if p is not None for u in p.units if isinstance(u, compiled_loop.LoopPlan)]
    return [loop for loop in loops if loop.stream is not None]


def test_a_loop_on_a_sim_device_runs_on_its_compute_stream_with_the_frame_executors_values():
    def build():
        n = tf.placeholder(tf.int32, [], name="n")
        x = tf.placeholder(tf.float32, [3], name="x")
        i, a = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, tf.tanh(a) * 1.5 + x), [0, x])
        return [i, a], [n, x]
    feed = [np.int32(7), np.array([0.1, -2.0, 3.0], np.float32)]
    got = _compare(build, feed, device="/device:SIM:0")
    _, plans, _ = _run(build, True, feed, device="/device:SIM:0")
    assert len(_sim_loop_plans(plans)) == 1  # the placeholders arrive by _Recv: the partition is compiled too
    want = feed[1]
    for _ in range(7):
        want = np.tanh(want) * 1.5 + feed[1]
    assert got[0] == 7
    np.testing.assert_allclose(got[1], want, rtol=1e-6)


def test_a_loop_on_a_sim_device_updates_a_variable_each_iteration():
    def build():
        v = tf.Variable(np.zeros(2, np.float32), name="v")
        loop = tf.while_loop(lambda i: i < 5, lambda i: tf.identity(i + 1) + 0 * tf.cast(
            tf.reduce_sum(tf.assign_add(v, [1.0, 2.0])), tf.int32), [0])
        with tf.control_dependencies([loop]):
            read = tf.identity(v.value())
        return [read], []
    values, plans, _ = _run(build, True, device="/device:SIM:0")
    values_d, _, _ = _run(build, False, device="/device:SIM:0")
    assert _sim_loop_plans(plans)
    _assert_same(values, values_d)
    np.testing.assert_array_equal(values[1][0], [10.0, 20.0])  # each run adds 5 x [1, 2]


def test_an_error_in_a_sim_devices_loop_names_the_node():
    def build():
        x = tf.placeholder(tf.float32, [None], name="x")
        out = tf.while_loop(lambda i, y: i < 3,
                            lambda i, y: (i + 1, tf.reshape(y, [2, 2], name="bad_reshape")), [0, x],
                            shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])
        return list(out), [x]
    for compiled in (True, False):
        with pytest.raises(errors.InvalidArgumentError, match="bad_reshape"):
            _run(build, compiled, [np.ones(3, np.float32)], device="/device:SIM:0")


def test_a_sim_devices_loop_whose_condition_is_a_constant_stops_at_the_deadline():
    with tf.Graph().as_default():
        with tf.device("/device:SIM:0"):
            forever = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1.0, [0.0])
        with tf.Session(config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(forever, options=tf.RunOptions(timeout_in_ms=300))
            assert _sim_loop_plans([ex.loop_plan for ex in sess.plan_for(forever, {}).executors
                                    if getattr(ex, "loop_plan", None) is not None])
            assert sess.run(tf.constant(3)) == 3  # the session and the device's stream are still usable


def test_a_loop_reading_a_value_received_from_another_device_is_compiled():
    """A `_Recv` at the root of the looping partition (not downstream of any Switch): the run waits for it
    without holding up what does not need it, as the dataflow executor would."""
    def run(compiled):
        compiled_loop.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                x = tf.placeholder(tf.float32, [2], name="x")
                with tf.device("/cpu:1"):
                    scaled = x * 2.0
                with tf.device("/cpu:0"):
                    _, out = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a + scaled), [0, x])
                    sent_back = x + 1.0  # values go both ways between the two partitions
                with tf.device("/cpu:1"):
                    other = sent_back * 3.0
                with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
                    values = sess.run([out, other], {x: [1.0, -1.0]}, options=FAST_FAIL)
                    plans = [getattr(ex, "loop_plan", None) for ex in sess.plan_for([out, other],
                                                                                   {x: [1.0, -1.0]}).executors]
            return values, plans
        finally:
            compiled_loop.ENABLED = True
    (out, other), plans = run(True)
    (out_d, other_d), _ = run(False)
    assert any(p is not None and p.has_async for p in plans)
    np.testing.assert_array_equal(out, out_d)
    np.testing.assert_allclose(out, [9.0, -9.0])
    np.testing.assert_allclose(other, [6.0, 0.0])


def test_a_sim_devices_loop_with_modelled_kernel_costs_gives_the_frame_executors_values():
    def run(compiled):
        compiled_loop.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                with tf.device("/device:SIM:0"):
                    x = tf.placeholder(tf.float32, [4], name="x")
                    _, out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 0.5 + x), [0, x])
                config = tf.ConfigProto(device_count={"SIM": 1},
                                        sim_options={"kernel_launch_latency": 1e-4, "kernel_bandwidth": 1e9})
                with tf.Session(config=config) as sess:
                    value = sess.run(out, {x: np.arange(4, dtype=np.float32)}, options=FAST_FAIL)
                    plans = [getattr(ex, "loop_plan", None) for ex in sess.plan_for(
                        out, {x: np.arange(4, dtype=np.float32)}).executors]
            return value, plans
        finally:
            compiled_loop.ENABLED = True
    value, plans = run(True)
    want, _ = run(False)
    assert _sim_loop_plans(plans)
    np.testing.assert_array_equal(value, want)
    np.testing.assert_allclose(value, np.arange(4) * (1 + 0.5 + 0.25 + 0.125))


def test_a_loop_drops_its_reads_of_a_variable_so_updates_happen_in_place(monkeypatch):
    """A read of a variable held until the next iteration made every update copy the buffer
    (copy on write); the loop drops the read after its last reader, as the host schedule does."""
    from graphrt.ops import state_ops
    copies = []
    exclusive = state_ops.VariableState.exclusive

    def counting(self):
        owned = exclusive(self)
        copies.append(not owned)
        return owned
    monkeypatch.setattr(state_ops.VariableState, "exclusive", counting)

    def build():
        v = tf.Variable(np.ones(3, np.float32), name="v")
        acc = tf.Variable(np.zeros(3, np.float32), name="acc")

        def body(i, carried):
            read = tf.identity(v.value())
            total = tf.reduce_sum(read)
            with tf.control_dependencies([total]):  # every reader of the read runs before the update
                apply = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients([(read * 0.5, v)])
            with tf.control_dependencies([apply]):
                return i + 1, carried + total
        return list(tf.while_loop(lambda i, c: i < 4, body, [0, 0.0])) + [acc], []
    values, plans, _ = _run(build, True)
    assert any(p is not None for p in plans)
    assert copies and not any(copies[len(copies) // 2:])  # the hot runs update in place
    values_d, _, _ = _run(build, False)
    _assert_same(values, values_d)


def test_a_variable_read_carried_to_the_next_iteration_is_kept():
    def build():
        v = tf.Variable(np.arange(3, dtype=np.float32), name="v")

        def body(i, last):
            read = tf.identity(v.value())
            with tf.control_dependencies([read]):
                update = tf.assign_add(v, [1.0, 1.0, 1.0])
            with tf.control_dependencies([update]):
                return i + 1, read  # the read before the update, carried
        return list(tf.while_loop(lambda i, last: i < 3, body, [0, tf.zeros(3)])), []
    values, _, _ = _run(build, True)
    values_d, _, _ = _run(build, False)
    _assert_same(values, values_d)
    np.testing.assert_array_equal(values[0][1], [2.0, 3.0, 4.0])  # read at the third iteration


def test_a_sim_loops_kept_values_are_never_overwritten_by_reused_memory():
    """Each iteration frees temporaries of the same size as the values the loop keeps (in a
    TensorArray, in loop variables, in a variable, read before its update): freed memory is
    reused at once, so a value released too early would be overwritten by a later one."""
    c = np.array([0.5, -1.0, 2.0, 3.0], np.float32)

    def build():
        v = tf.Variable(np.ones(4, np.float32), name="v")
        k = tf.constant(c)
        ta = tf.TensorArray(tf.float32, size=6)

        def body(i, a, before, ta):
            t = (a * 2.0 + k) - 1.0  # temporaries of a's size, dropped within the iteration
            read = tf.identity(v.value())
            with tf.control_dependencies([read]):
                update = tf.assign_add(v, t)
            with tf.control_dependencies([update]):
                return i + 1, t * 0.5, read, ta.write(i, t)
        i, a, before, ta = tf.while_loop(lambda i, *_: i < 6, body, [0, tf.zeros(4), tf.zeros(4), ta])
        with tf.control_dependencies([i]):
            after = tf.identity(v.value())
        return [a, before, ta.stack(), after, k], []
    got, plans, _ = _run(build, True, device="/device:SIM:0", runs=1)
    want, _, _ = _run(build, False, device="/device:SIM:0", runs=1)
    assert _sim_loop_plans(plans)
    _assert_same(got, want)
    a, v, written = np.zeros(4, np.float32), np.ones(4, np.float32), []
    for _ in range(6):
        t = (a * 2.0 + c) - 1.0
        before, v = v, v + t
        written.append(t)
        a = t * 0.5
    a_got, before_got, stack_got, after_got, k_got = got[0]
    np.testing.assert_array_equal(a_got, a)
    np.testing.assert_array_equal(before_got, before)
    np.testing.assert_array_equal(stack_got, np.stack(written))
    np.testing.assert_array_equal(after_got, v)
    np.testing.assert_array_equal(k_got, c)  # the constant the loop's kernels viewed every iteration


def test_a_sim_loop_gives_back_every_temporary_it_allocates():
    with tf.Graph().as_default():
        with tf.device("/device:SIM:0"):
            x = tf.placeholder(tf.float32, [8], name="x")
            _, y = tf.while_loop(lambda i, y: i < 50, lambda i, y: (i + 1, tf.tanh(y) * 0.5 + x), [0, x])
        with tf.Session(config=tf.ConfigProto(device_count={"SIM": 1})) as sess:
            feed = {x: np.linspace(-1, 1, 8).astype(np.float32)}
            sess.run(y, feed, options=FAST_FAIL)
            allocator = sess.device("/job:localhost/replica:0/task:0/device:SIM:0").executor.allocator
            before = allocator.stats()
            sess.run(y, feed, options=FAST_FAIL)
            after = allocator.stats()
    assert after.bytes_in_use == before.bytes_in_use  # nothing of the run is left in use
    # Two temporaries an iteration, 100 in all: the loop's reuse pool hands out the buffers of the
    # iteration before, so the allocator sees a few allocations (the first iteration's) ...
    assert after.num_allocs - before.num_allocs < 20
    assert after.peak_bytes_in_use == before.peak_bytes_in_use  # ... and the same peak every run


def _loop_plans(plans):
    return [u for p in plans if p is not None for u in p.units if isinstance(u, compiled_loop.LoopPlan)]


@pytest.mark.parametrize("device", ["/device:CPU:0", "/device:SIM:0"])
def test_pure_kernels_of_loop_invariants_run_once(device):
    def build():
        x = tf.placeholder(tf.float32, [4], name="x")

        def body(i, acc):
            scaled = tf.reshape(x, [2, 2], name="scaled") * 3.0  # reads only x: the same every iteration
            noise = tf.random_uniform([2, 2], seed=1, name="noise")  # stateful: a new value every iteration
            return i + 1, acc + scaled + tf.floor(noise) + tf.cast(i, tf.float32)
        return list(tf.while_loop(lambda i, acc: i < 4, body, [0, tf.zeros([2, 2])])), [x]
    feed = [np.arange(4, dtype=np.float32)]
    got = _compare(build, feed, device=device)
    np.testing.assert_array_equal(got[1], 4 * 3.0 * feed[0].reshape(2, 2) + (0 + 1 + 2 + 3))
    _, plans, _ = _run(build, True, feed, device=device)
    loop, = _loop_plans(plans)
    first = {e[5].op for e in loop.first}
    body = {e[5].op for e in loop.body}
    assert {"Reshape", "Mul"} <= first and "RandomUniform" in body and not first & {"RandomUniform", "AddV2"}
    assert "hoisted" in repr(loop)


@pytest.mark.parametrize("device", ["/device:CPU:0", "/device:SIM:0"])
def test_a_hoisted_kernel_runs_only_if_the_loop_does(device):
    def build():
        x = tf.placeholder(tf.float32, [None], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        out = tf.while_loop(lambda i, y: i < n,
                            lambda i, y: (i + 1, y + tf.reduce_sum(tf.reshape(x, [3, 3], name="bad"))), [0, 0.0])
        return list(out), [x, n]
    x = np.ones(4, np.float32)  # cannot be 3 x 3
    for compiled in (True, False):
        values, _, _ = _run(build, compiled, [x, 0], runs=1, device=device)
        assert values[0][0] == 0 and values[0][1] == 0.0  # no iteration: the bad reshape never ran
        with pytest.raises(errors.InvalidArgumentError, match="bad"):
            _run(build, compiled, [x, 1], runs=1, device=device)

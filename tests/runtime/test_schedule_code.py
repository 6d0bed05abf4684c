"""Generated straight-line code for compiled schedules (runtime/schedule_code.py):
the untimed steps after the profiled ones run it, with the list walk's
values, errors, frees and stops."""
import weakref

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.runtime import schedule_code
from graphrt.runtime.device import Device
from graphrt.runtime.graph_executor import PROFILED_RUNS, GraphExecutor
from graphrt.runtime.step import Step


def _past_profiling(fn):
    return [fn() for _ in range(PROFILED_RUNS + 2)][-1]


def _model_values(max_entries, monkeypatch):
    monkeypatch.setattr(schedule_code, "MAX_ENTRIES", max_entries)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 4], name="x")
        w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
        parts = tf.split(tf.matmul(x, w), 3, axis=1)  # several outputs
        total = tf.add_n([tf.reduce_sum(p) for p in parts]) + tf.constant(0.5)
        bump = tf.assign_add(w, tf.ones_like(w))  # reads and writes the variable
        with tf.Session() as sess:
            sess.run(w.initializer)
            feed = {x: np.ones((2, 4), np.float32)}
            values = [sess.run([parts[1], total, bump], feed) for _ in range(PROFILED_RUNS + 3)]
            (ex,) = sess.plan_for([parts[1], total, bump], feed).executors
    return values, ex.schedule.code


def test_generated_code_gives_the_list_walks_values(monkeypatch):
    generated, code = _model_values(schedule_code.MAX_ENTRIES, monkeypatch)
    walked, no_code = _model_values(0, monkeypatch)
    assert code is not None and no_code is None
    assert "def run(step, deferred):" in code.source
    for run_g, run_w in zip(generated, walked):
        for a, b in zip(run_g, run_w):
            np.testing.assert_array_equal(a, b)


def test_failing_kernel_in_generated_code_names_its_node():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        out = tf.identity(tf.matmul(x * 1.0, y, name="bad_matmul") * 2.0, name="after")
        good = {x: np.ones((2, 3), np.float32), y: np.ones((3, 1), np.float32)}
        with tf.Session() as sess:
            _past_profiling(lambda: sess.run(out, good))
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(out, {x: np.ones((2, 3), np.float32), y: np.ones((2, 3), np.float32)})
            assert sess.plan_for(out, good).executors[0].schedule.code is not None
            np.testing.assert_array_equal(sess.run(out, good), np.full((2, 1), 6.0, np.float32))
    assert info.value.node == "bad_matmul" and "bad_matmul" in str(info.value)


def test_values_are_freed_after_their_last_use_in_generated_code():
    seen = []

    def make():
        a = np.ones(1000, np.float32)
        seen.append(weakref.ref(a))
        return a

    def last_reader(a):
        return np.float32(a.sum())

    def check(s):
        seen.append(seen[-1]() is None)
        return s

    with tf.Graph().as_default():
        a = tf.py_func(make, [], tf.float32)
        s = tf.py_func(last_reader, [a], tf.float32)
        out = tf.py_func(check, [s], tf.float32)
        with tf.Session() as sess:
            assert _past_profiling(lambda: sess.run(out)) == 1000
            assert sess.plan_for(out).executors[0].schedule.code is not None
    assert seen[-1] is True


def test_generated_code_stops_before_the_next_kernel_when_the_step_failed():
    ran = []

    with tf.Graph().as_default() as g:
        first = tf.py_func(lambda: ran.append("first") or np.float32(1), [], tf.float32, name="first")
        tf.py_func(lambda v: ran.append("second") or v, [first], tf.float32, name="second")
    ex = GraphExecutor(g.as_graph_def(), Device("/job:localhost/replica:0/task:0/device:CPU:0"))
    for k in range(PROFILED_RUNS + 1):
        step = Step(k, None, [], 0, 1)
        ex.run_async(step)
        assert step.error is None
    assert ex.schedule.code is not None and ran == ["first", "second"] * (PROFILED_RUNS + 1)
    del ran[:]
    step = Step(99, None, [], 0, 1)
    step.abort(errors.DeadlineExceededError("Timed out waiting for the step"))
    run = ex.run_async(step)
    assert step.done and ran == [] and run.failed
    assert isinstance(step.error, errors.DeadlineExceededError)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_inlined_scalar_operators_match_the_dataflow_executor(dtype):
    from graphrt.runtime import compiled_schedule

    big = np.iinfo(dtype).max if np.dtype(dtype).kind == "i" else np.finfo(dtype).max

    def run(compiled):
        compiled_schedule.ENABLED = compiled
        try:
            with tf.Graph().as_default():
                x = tf.placeholder(dtype, [], name="x")
                y = tf.placeholder(dtype, [], name="y")
                v = tf.placeholder(dtype, [2], name="v")  # not a scalar: the kernel's own path
                s = x + y  # overflows: wraps (ints) or goes to inf (floats), as numpy does
                fetches = [s, s - x, x * y, tf.less(x, y), tf.greater_equal(s, y), tf.equal(x, x),
                           tf.not_equal(x, y), tf.less_equal(y, x), tf.greater(s, x), v + x, x - v]
                feed = {x: dtype(big), y: dtype(3), v: np.array([1, 2], dtype)}
                with tf.Session() as sess:
                    values = [sess.run(fetches, feed) for _ in range(PROFILED_RUNS + 2)]
                    code = sess.plan_for(fetches, feed).executors[0].schedule
            return values, code
        finally:
            compiled_schedule.ENABLED = True

    with np.errstate(all="ignore"):
        compiled, schedule = run(True)
        dataflow, _ = run(False)
    assert " + " in schedule.code.source and " < " in schedule.code.source
    for run_c, run_d in zip(compiled, dataflow):
        for a, b in zip(run_c, run_d):
            assert type(a) is type(b)
            np.testing.assert_array_equal(a, b)


def test_variables_and_identities_in_generated_code_read_the_current_value():
    # Untimed steps start with the variable's state in a register (its kernel only returns it) and
    # write Identity as an assignment: each step must still read the value the variable has then.
    from graphrt.ops.state_ops import VariableState
    with tf.Graph().as_default():
        w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
        out = tf.stop_gradient(tf.identity(w) * 2.0, name="out")
        set_w = tf.assign(w, tf.placeholder_with_default(np.array([5.0, 6.0], np.float32), [2]))
        with tf.Session() as sess:
            sess.run(w.initializer)
            np.testing.assert_array_equal(_past_profiling(lambda: sess.run(out)), [2.0, 4.0])
            sess.run(set_w)
            np.testing.assert_array_equal(sess.run(out), [10.0, 12.0])
            (ex,) = sess.plan_for(out).executors
            code = ex.schedule.code
            assert code is not None
            (state,) = [r for r in ex.schedule.registers if isinstance(r, VariableState)]
            assert state.name == "w" and "read(" in code.source
            state.value = None  # as if never initialized: the read names its node, as the list walk does
            with pytest.raises(errors.FailedPreconditionError, match="uninitialized value w") as info:
                sess.run(out)
    assert info.value.node == "w/read"

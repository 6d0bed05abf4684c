"""Variables and their updates: initialization, assign/assign_add/assign_sub, ordering
with control dependencies, re-initialization, and value isolation (fetched arrays and
constants never alias variable state)."""
import numpy as np
import pytest

import graphrt as tf


@pytest.fixture
def sess(graph):
    with tf.Session(graph=graph) as s:
        yield s


def test_variable_builds_tf1_ops(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.op.name == "v" and v.op.type == "VariableV2"
    # the element type, as TF2's compat.v1 reports it; the variable op's output is the ref
    assert v.dtype == tf.float32 and v.op.outputs[0].dtype == tf.dtypes.float32_ref
    assert v.shape.as_list() == [2]
    assert v.initializer.name == "v/Assign" and v.initializer.type == "Assign"
    assert v.initial_value.op.name == "v/initial_value"
    assert v.value().op.name == "v/read" and v.value().dtype == tf.float32
    assert [op.name for op in graph.get_operations()] == ["v/initial_value", "v", "v/Assign", "v/read"]
    u = tf.Variable(lambda: tf.ones([3]), name="u")
    assert u.initial_value.op.name == "u/Initializer/ones"
    with tf.name_scope("scope"):
        s = tf.Variable(0, name="v")
    assert s.op.name == "scope/v" and s.dtype.base_dtype == tf.int32
    w = tf.Variable(1.0, name="v")
    assert w.op.name == "v_1"


def test_reads_inside_control_dependencies_happen_after_them(graph):
    v = tf.Variable(1.0, name="v")
    inc = tf.assign_add(v, 1.0)
    plain = v * 10.0
    with tf.control_dependencies([inc]):
        after = v * 10.0
        also_after = tf.identity(v)
    assert plain.op.inputs[0].op.name == "v/read"          # the shared snapshot
    read = after.op.inputs[0].op
    assert read.type == "Identity" and read.name != "v/read" and inc.op in read.control_inputs
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([after, also_after]) == [20.0, 2.0]
        assert sess.run(plain) == 20.0


def test_variable_needs_a_shape_and_a_value(graph):
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    with pytest.raises(ValueError, match="initial_value must have a shape specified"):
        tf.Variable(tf.placeholder(tf.float32, [None]))
    free = tf.Variable(tf.placeholder_with_default([1.0], [None]), validate_shape=False)
    assert free.shape.ndims is None


def test_uninitialized_variable_is_failed_precondition_naming_it(graph, sess):
    v = tf.Variable([1.0, 2.0], name="weights")
    y = v * 2.0
    for fetch in (y, v, v.value()):
        with pytest.raises(tf.errors.FailedPreconditionError, match="Attempting to use uninitialized value weights"):
            sess.run(fetch)
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])


def test_initializers_and_reports(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(tf.zeros([2, 2]), name="w")
    i = tf.Variable(7, name="i")
    d = tf.Variable(v.initialized_value() * 2, name="d")
    report = tf.report_uninitialized_variables()
    flag = tf.is_variable_initialized(v)
    assert sorted(sess.run(report).tolist()) == [b"d", b"i", b"v", b"w"]
    assert not sess.run(flag)
    sess.run(d.initializer)  # initialized_value runs v's initializer first
    np.testing.assert_array_equal(sess.run(d), [2.0, 4.0])
    assert bool(sess.run(flag))
    sess.run(tf.variables_initializer([w]))
    assert sorted(sess.run(report).tolist()) == [b"i"]
    sess.run(tf.global_variables_initializer())
    assert sess.run(report).tolist() == []
    assert sess.run(i) == 7


def test_global_variables_initializer_reruns_and_resets(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    c = tf.Variable(0, name="count")
    step = tf.group(tf.assign_add(v, [1.0, 1.0]), tf.assign_add(c, 1))
    init = tf.global_variables_initializer()
    sess.run(init)
    for _ in range(3):
        sess.run(step)
    np.testing.assert_array_equal(sess.run(v), [4.0, 5.0])
    assert sess.run(c) == 3
    sess.run(init)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    assert sess.run(c) == 0


def test_initializer_with_nothing_is_a_no_op(graph, sess):
    init = tf.global_variables_initializer()
    assert init.type == "NoOp"
    assert sess.run(init) is None


def test_assign_family_values_and_dtypes(graph, sess):
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
    i = tf.Variable(np.array([10, 20], np.int64), name="i")
    sess.run(tf.global_variables_initializer())
    out = sess.run(tf.assign(v, [5.0, 6.0]))
    np.testing.assert_array_equal(out, [5.0, 6.0])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [6.0, 7.0])
    np.testing.assert_array_equal(sess.run(tf.assign_sub(v, [0.5, 2.0])), [5.5, 5.0])
    np.testing.assert_array_equal(sess.run(v.assign(v * 2.0)), [11.0, 10.0])
    np.testing.assert_array_equal(sess.run(v.assign_add([1.0, 1.0])), [12.0, 11.0])
    np.testing.assert_array_equal(sess.run(v.assign_sub([2.0, 1.0])), [10.0, 10.0])
    out = sess.run(i.assign_add([1, 2]))
    np.testing.assert_array_equal(out, [11, 22])
    assert out.dtype == np.int64
    assert sess.run(i.assign([3, 4], read_value=False)) is None
    np.testing.assert_array_equal(sess.run(i), [3, 4])


def test_assign_static_and_runtime_shape_checks(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match=r"Dimension mismatch: \[2\] vs \[3\]"):
        tf.assign(v, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="requires that input 'ref' be a mutable tensor"):
        tf.assign(v.value(), [1.0, 2.0])
    with pytest.raises(TypeError, match="Expected float32"):
        tf.assign(v, ["a", "b"])
    p = tf.placeholder(tf.float32, [None])
    a = tf.assign(v, p, name="set_v")
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Assign requires shapes of both tensors to match") \
            as info:
        sess.run(a, {p: [1.0, 2.0, 3.0]})
    assert info.value.node == "set_v"
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])  # unchanged by the failed assign


def test_assign_without_validate_shape_reshapes(graph, sess):
    v = tf.Variable(tf.placeholder_with_default([1.0], [None]), validate_shape=False, name="v")
    sess.run(v.initializer)
    sess.run(tf.assign(v, [1.0, 2.0, 3.0], validate_shape=False))
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0, 3.0])


def test_assign_add_to_uninitialized_is_failed_precondition(graph, sess):
    v = tf.Variable([1.0], name="acc")
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value acc"):
        sess.run(tf.assign_add(v, [1.0]))


def test_control_dependencies_order_reads_and_updates(graph, sess):
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    read_before = tf.identity(v)  # a snapshot of v, taken before the update below
    with tf.control_dependencies([read_before]):
        update = tf.assign_add(v, 10.0)
    with tf.control_dependencies([update]):
        read_after = v.read_value()  # a new read, made after the update (tf.identity(v) would reuse v/read)
    for k in range(3):
        before, after, _ = sess.run([read_before, read_after, update])
        assert before == 1.0 + 10.0 * k
        assert after == 11.0 + 10.0 * k


def test_chain_of_dependent_updates_runs_in_order(graph, sess):
    v = tf.Variable(2.0, name="v")
    sess.run(v.initializer)
    double = tf.assign(v, v * 2.0)
    with tf.control_dependencies([double]):
        plus = tf.assign_add(v, 1.0)
    with tf.control_dependencies([plus]):
        minus = tf.assign_sub(v, 0.5)
    assert sess.run(minus) == 2.0 * 2.0 + 1.0 - 0.5
    assert sess.run(v) == 4.5


def test_counter_with_control_dependencies_over_many_runs(graph, sess):
    c = tf.Variable(0, name="c")
    inc = tf.assign_add(c, 1)
    with tf.control_dependencies([inc]):
        out = c.read_value()
    sess.run(c.initializer)
    assert [int(sess.run(out)) for _ in range(5)] == [1, 2, 3, 4, 5]


def test_variable_state_is_per_session(graph):
    v = tf.Variable(1.0, name="v")
    inc = tf.assign_add(v, 1.0)
    with tf.Session(graph=graph) as a, tf.Session(graph=graph) as b:
        a.run(v.initializer)
        b.run(v.initializer)
        a.run(inc)
        a.run(inc)
        assert a.run(v) == 3.0
        assert b.run(v) == 1.0


def test_load_and_eval(graph):
    v = tf.Variable([1.0, 2.0], name="v")
    sess = tf.Session(graph=graph)  # not entered: not the default session
    try:
        with pytest.raises(ValueError, match="No default session"):
            v.value().eval()
        v.load([5.0, 6.0], sess)
        np.testing.assert_array_equal(v.eval(session=sess), [5.0, 6.0])
        with sess.as_default():
            np.testing.assert_array_equal(v.eval(), [5.0, 6.0])
            np.testing.assert_array_equal((v * 2.0).eval(), [10.0, 12.0])
    finally:
        sess.close()


def test_variable_operators_and_indexing(graph, sess):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
    sess.run(v.initializer)
    got = sess.run({"add": v + 1.0, "rmul": 2.0 * v, "neg": -v, "mm": v @ v, "row": v[1], "lt": v < 2.5,
                    "read": v.read_value(), "conv": tf.convert_to_tensor(v)})
    np.testing.assert_array_equal(got["add"], [[2, 3], [4, 5]])
    np.testing.assert_array_equal(got["rmul"], [[2, 4], [6, 8]])
    np.testing.assert_array_equal(got["neg"], [[-1, -2], [-3, -4]])
    np.testing.assert_array_equal(got["mm"], [[7, 10], [15, 22]])
    np.testing.assert_array_equal(got["row"], [3, 4])
    np.testing.assert_array_equal(got["lt"], [[True, True], [False, False]])
    np.testing.assert_array_equal(got["read"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(got["conv"], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type 'int32'"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    with pytest.raises(TypeError, match="not iterable"):
        iter(v)


# -- isolation of values ----------------------------------------------------------------------

def test_fetched_value_is_a_snapshot(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    inc = tf.assign_add(v, [10.0, 10.0])
    sess.run(v.initializer)
    before = sess.run(v)
    read = sess.run(v.value())
    sess.run(inc)
    np.testing.assert_array_equal(before, [1.0, 2.0])
    np.testing.assert_array_equal(read, [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(v), [11.0, 12.0])


def test_mutating_a_fetched_value_does_not_change_the_variable(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    got = sess.run(v)
    got[0] = 99.0  # fetched arrays are the caller's own, writeable arrays
    updated = sess.run(tf.assign_add(v, [1.0, 1.0]))
    updated[1] = -99.0
    np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])


def test_assigned_value_fetched_in_the_same_step_is_not_aliased(graph, sess):
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    s = tf.constant([1.0, 2.0, 3.0]) + tf.constant([1.0, 1.0, 1.0])
    assign = tf.assign(v, s)
    inc = tf.assign_add(v, [1.0, 1.0, 1.0])
    sess.run(v.initializer)
    assigned, fetched_s = sess.run([assign, s])
    fetched_s[0] = 99.0
    assigned[1] = 77.0
    np.testing.assert_array_equal(sess.run(v), [2.0, 3.0, 4.0])
    sess.run(inc)  # may update in place: the fetched copy must not see it
    np.testing.assert_array_equal(fetched_s, [99.0, 3.0, 4.0])
    np.testing.assert_array_equal(sess.run(v), [3.0, 4.0, 5.0])


def test_in_place_updates_never_corrupt_constants(graph, sess):
    c = tf.constant([1.0, 2.0], name="c")
    v = tf.Variable(c, name="v")
    w = tf.Variable(tf.zeros([2]), name="w")
    set_w = tf.assign(w, tf.identity(c))
    inc_v = tf.assign_add(v, [100.0, 100.0])
    inc_w = tf.assign_add(w, c)
    sess.run(tf.global_variables_initializer())
    sess.run(set_w)
    for _ in range(3):
        sess.run([inc_v])
        sess.run([inc_w])
    np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(v.initial_value), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(v), [301.0, 302.0])
    np.testing.assert_array_equal(sess.run(w), [4.0, 8.0])
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_fed_arrays_are_not_aliased_or_frozen(graph, sess):
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    p = tf.placeholder(tf.float32, [2])
    assign = tf.assign(v, p)
    inc = tf.assign_add(v, [1.0, 1.0])
    sess.run(v.initializer)
    data = np.array([5.0, 6.0], np.float32)
    sess.run(assign, {p: data})
    sess.run(inc)
    np.testing.assert_array_equal(data, [5.0, 6.0])  # the user's feed is untouched
    data[0] = -1.0  # and still writeable
    np.testing.assert_array_equal(sess.run(v), [6.0, 7.0])


def test_use_locking_is_accepted(graph, sess):
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    assert sess.run(tf.assign_add(v, 1.0, use_locking=True)) == 2.0
    assert sess.run(tf.assign(v, 5.0, use_locking=False)) == 5.0


# -- control ops: group, tuple, no_op, Assert, Print, check_numerics ------------------------------

def test_group_runs_all_its_inputs(graph, sess):
    a = tf.Variable(0, name="a")
    b = tf.Variable(0, name="b")
    sess.run(tf.global_variables_initializer())
    both = tf.group(tf.assign_add(a, 1), [tf.assign_add(b, 2)], name="both")
    assert both.type == "NoOp" and both.name == "both"
    assert sess.run(both) is None
    assert sess.run([a, b]) == [1, 2]
    assert tf.no_op(name="nothing").type == "NoOp"
    with pytest.raises(ValueError, match="Unknown keyword arguments"):
        tf.group(both, colour="red")


def test_tuple_gates_every_output_on_all_inputs(graph, sess):
    v = tf.Variable(1.0, name="v")
    sess.run(v.initializer)
    update = tf.assign_add(v, 1.0)
    x = tf.constant(5.0)
    gated_x, gated_update = tf.tuple([x, update])
    assert sess.run(gated_x) == 5.0
    assert sess.run(v) == 2.0  # fetching one output of the tuple ran the update too
    with_dep = tf.with_dependencies([update], x * 2.0)
    assert sess.run(with_dep) == 10.0
    assert sess.run(v) == 3.0
    assert sess.run(gated_update) == 4.0


def test_assert_fails_the_step_with_its_data(graph, sess):
    x = tf.placeholder(tf.float32, [2], name="x")
    check = tf.Assert(tf.reduce_all(x > 0), [x], name="positive")
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: \[\[ ?1\. -2\.\]\]") as info:
        sess.run(y, {x: [1.0, -2.0]})
    assert info.value.node == "positive"


@pytest.mark.parametrize("bad, kind", [(np.nan, "NaN"), (np.inf, "Inf"), (-np.inf, "Inf")])
def test_check_numerics(graph, sess, bad, kind):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.check_numerics(x, "bad input", name="numerics")
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"bad input : Tensor had {kind} values") as info:
        sess.run(y, {x: [1.0, bad]})
    assert info.value.node == "numerics"
    g, = tf.gradients(tf.reduce_sum(y * 3.0), x)
    np.testing.assert_array_equal(sess.run(g, {x: [1.0, 2.0]}), [3.0, 3.0])


def test_print_passes_its_input_through(graph, sess, capfd):
    x = tf.constant([1.0, 2.0])
    y = tf.Print(x, [x * 2.0], message="doubled: ", name="show")
    np.testing.assert_array_equal(sess.run(y * 1.0), [1.0, 2.0])
    assert "doubled: [2. 4.]" in capfd.readouterr().err
    g, = tf.gradients(tf.reduce_sum(y * y), x)
    np.testing.assert_array_equal(sess.run(g), [2.0, 4.0])

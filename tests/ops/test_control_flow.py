"""cond, case and while_loop: the graphs they build (TF1's op names and
structure), their values, their errors, and their gradients against central
finite differences (float64, tests/ops/gradcheck.py)."""
import collections

import numpy as np
import pytest

import graphrt as tf
from graphrt.ops import control_flow_util as util
from tests.ops.gradcheck import check_gradients

XV = np.array([0.5, -1.0, 2.0], np.float32)


def _ops(g, op_type):
    return [op for op in g.get_operations() if op.type == op_type]


# -- the conformance case --------------------------------------------------------------------

def test_conformance_case_values_and_gradients():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [3])
        c = tf.cond(p, lambda: x * 2.0, lambda: tf.exp(x))
        gc = tf.gradients(tf.reduce_sum(c), x)[0]
        n = tf.placeholder(tf.int32, [])
        _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5 + x), [tf.constant(0), tf.zeros([3])])
        ga = tf.gradients(tf.reduce_sum(acc), x)[0]
        fib = tf.while_loop(lambda i, a, b: i < 10, lambda i, a, b: (i + 1, b, a + b),
                            [tf.constant(0), tf.constant(0), tf.constant(1)])
    with tf.Session(graph=g) as sess:
        cv, gv = sess.run([c, gc], {p: True, x: XV})
        np.testing.assert_allclose(cv, XV * 2)
        np.testing.assert_allclose(gv, [2, 2, 2])
        cv, gv = sess.run([c, gc], {p: False, x: XV})
        np.testing.assert_allclose(cv, np.exp(XV), rtol=1e-6)
        np.testing.assert_allclose(gv, np.exp(XV), rtol=1e-6)
        av, gv = sess.run([acc, ga], {n: 4, x: XV})
        np.testing.assert_allclose(av, [4.0625, -8.125, 16.25])
        np.testing.assert_allclose(gv, [8.125] * 3)  # 1 + 1.5 + 1.5^2 + 1.5^3
        np.testing.assert_allclose(sess.run(acc, {n: 0, x: XV}), [0, 0, 0])
        assert tuple(int(v) for v in sess.run(fib)) == (10, 55, 89)


# -- graph structure --------------------------------------------------------------------------

def test_cond_builds_tf1_ops_and_names():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [3])
        c = tf.cond(p, lambda: x * 2.0, lambda: tf.exp(x))
    names = {op.name for op in g.get_operations()}
    assert {"cond/Switch", "cond/switch_t", "cond/switch_f", "cond/pred_id", "cond/Merge",
            "cond/mul/Switch", "cond/Exp/Switch"} <= names
    assert c.op.type == "Merge" and c.op.name == "cond/Merge"
    const = g.get_operation_by_name("cond/mul/y")
    assert [op.name for op in const.control_inputs] == ["cond/switch_t"]  # runs (and dies) with its branch
    assert g.get_operation_by_name("cond/mul")._control_flow_context.branch == 1  # ops carry their context
    assert g.get_operation_by_name("cond/Exp")._control_flow_context.branch == 0
    assert len(g.get_collection(tf.GraphKeys.COND_CONTEXT)) == 2


def test_while_builds_tf1_ops_and_frame():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        i, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + x), [0, tf.zeros([3])],
                             parallel_iterations=7)
    for name in ("while/Enter", "while/Enter_1", "while/Merge", "while/Merge_1", "while/LoopCond", "while/Switch",
                 "while/Switch_1", "while/Identity", "while/Identity_1", "while/NextIteration",
                 "while/NextIteration_1", "while/Exit", "while/Exit_1"):
        g.get_operation_by_name(name)
    enters = _ops(g, "Enter")
    frame = {e.get_attr("frame_name") for e in enters}
    assert frame == {"while/while_context"}
    assert all(e.get_attr("parallel_iterations") == 7 for e in enters)
    invariant = g.get_operation_by_name("while/add_1/Enter")  # `a + x`: x enters as a loop invariant
    assert invariant.get_attr("is_constant") and invariant.inputs[0] is x
    assert not g.get_operation_by_name("while/Enter").get_attr("is_constant")
    merge = g.get_operation_by_name("while/Merge")
    assert merge.inputs[1].op.type == "NextIteration"  # the back edge
    assert util.is_loop_switch(g.get_operation_by_name("while/Switch"))
    assert i.op.type == "Exit" and a.op.type == "Exit"
    assert g.get_collection(tf.GraphKeys.WHILE_CONTEXT)[0].name == "while/while_context"


def test_cond_switch_inside_loop_is_a_cond_switch():
    g = tf.Graph()
    with g.as_default():
        tf.while_loop(lambda i: i < 3, lambda i: tf.cond(i > 1, lambda: i + 1, lambda: i + 2), [0])
    switches = _ops(g, "Switch")
    loop = [s for s in switches if util.is_loop_switch(s)]
    cond = [s for s in switches if util.is_cond_switch(s)]
    assert [s.name for s in loop] == ["while/Switch"]
    assert len(cond) >= 2 and not set(loop) & set(cond)


# -- values -----------------------------------------------------------------------------------

def test_cond_structures_and_python_values():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [])
        out = tf.cond(p, lambda: {"a": x + 1, "b": (x, 7.0)}, lambda: {"a": x - 1, "b": (x * 3, 8.0)})
        single = tf.cond(p, lambda: [x], lambda: [x * 2])  # singletons unpack unless strict
        strict = tf.cond(p, lambda: [x], lambda: [x * 2], strict=True)
    with tf.Session(graph=g) as sess:
        r = sess.run(out, {p: True, x: 2.0})
        assert r["a"] == 3 and r["b"][0] == 2 and r["b"][1] == 7
        r = sess.run(out, {p: False, x: 2.0})
        assert r["a"] == 1 and r["b"][0] == 6 and r["b"][1] == 8
        assert sess.run(single, {p: False, x: 2.0}) == 4
        assert sess.run(strict, {p: False, x: 2.0}) == [4]


def test_cond_errors():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        p = tf.placeholder(tf.bool, [])
        with pytest.raises(TypeError, match="Python bool"):
            tf.cond(True, lambda: x, lambda: x)
        with pytest.raises(TypeError, match="callable"):
            tf.cond(p, x, lambda: x)
        # TF 2's class and words: a TypeError naming both branches' outputs and the difference
        with pytest.raises(TypeError, match="(?s)same number, type, and overall structure.*same nested structure"):
            tf.cond(p, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError, match="(?s)overall structure.*have different types"):
            tf.cond(p, lambda: x, lambda: tf.constant(1))
        with pytest.raises(TypeError, match="(?s)overall structure.*same sequence type"):
            tf.cond(p, lambda: [x, x], lambda: (x, x))
        with pytest.raises(ValueError, match="must have a return value"):
            tf.cond(p, lambda: None, lambda: x)


def test_case():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        c = tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10)], default=lambda: x + 100)
        ex = tf.case([(x < 0, lambda: x - 1), (x < 1, lambda: x + 1)], exclusive=True)
    with tf.Session(graph=g) as sess:
        assert [float(sess.run(c, {x: v})) for v in (-2.0, 0.5, 3.0)] == [2.0, 5.0, 103.0]
        assert float(sess.run(ex, {x: 0.5})) == 1.5
        assert float(sess.run(ex, {x: -0.5})) == -1.5


def test_nested_while_loops():
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [])

        def outer(i, total):
            _, inner_sum = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j * i), [0, 0])
            return i + 1, total + inner_sum
        _, total = tf.while_loop(lambda i, t: i < n, outer, [0, 0])
    with tf.Session(graph=g) as sess:
        for nv in (0, 1, 5, 9):
            assert sess.run(total, {n: nv}) == sum(j * i for i in range(nv) for j in range(i))


def test_cond_inside_while_and_while_inside_cond():
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [])
        p = tf.placeholder(tf.bool, [])
        collatz = tf.while_loop(lambda k, steps: k > 1,
                                lambda k, steps: (tf.cond(tf.equal(k % 2, 0), lambda: k // 2, lambda: 3 * k + 1),
                                                  steps + 1), [n, 0])
        inside = tf.cond(p, lambda: tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2), [0, 1])[1],
                         lambda: n * 100)
    with tf.Session(graph=g) as sess:
        assert sess.run(collatz, {n: 27})[1] == 111
        assert sess.run(inside, {n: 5, p: True}) == 32
        assert sess.run(inside, {n: 5, p: False}) == 500  # the loop in the untaken branch dies cleanly


def test_maximum_iterations_stops_an_infinite_loop():
    g = tf.Graph()
    with g.as_default():
        m = tf.placeholder(tf.int32, [])
        forever = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1, [0], maximum_iterations=m)
        pair = tf.while_loop(lambda i, a: i < 100, lambda i, a: (i + 1, a * 2.0), [0, 1.0], maximum_iterations=5)
    with tf.Session(graph=g) as sess:
        assert sess.run(forever, {m: 1000}) == 1000
        assert sess.run(forever, {m: 0}) == 0
        i, a = sess.run(pair)
        assert i == 5 and a == 32.0


def test_loop_var_shape_change_is_a_value_error_naming_it():
    g = tf.Graph()
    with g.as_default():
        start = tf.ones([2], name="start")
        with pytest.raises(ValueError, match="'start:0' enters the loop with shape \\(2,\\), but has shape \\(4,\\)"):
            tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.concat([a, a], 0)), [0, start])
        counter = tf.constant(0, name="counter")
        # TF 2's while_loop rejects a dtype change at build time, as a TypeError.
        with pytest.raises(TypeError, match="Loop var counter:0 enters the loop with type <dtype: 'int32'> but has "
                                            "type <dtype: 'float32'> after 1 iteration"):
            tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [counter])
        with pytest.raises(ValueError, match="same structure"):
            tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1,), [0, start])
        grown = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.concat([a, a], 0)), [0, start],
                              shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])[1]
        assert grown.shape.as_list() == [None]
    with tf.Session(graph=g) as sess:
        assert sess.run(grown).shape == (16,)


def test_loop_structures():
    g = tf.Graph()
    with g.as_default():
        Pair = collections.namedtuple("Pair", "i a")
        single = tf.while_loop(lambda i: i < 5, lambda i: i + 2, [0])
        same = tf.while_loop(lambda i: i < 5, lambda i: [i + 2], [0], return_same_structure=True)
        nt = tf.while_loop(lambda i, a: i < 3, lambda i, a: Pair(i + 1, a * 2), Pair(0, 1.0))
        nested = tf.while_loop(lambda i, ab: i < 3, lambda i, ab: (i + 1, (ab[0] + 1, ab[1] * 2)), (0, (0, 1)))
    with tf.Session(graph=g) as sess:
        assert sess.run(single) == 6
        assert sess.run(same) == [6]
        r = sess.run(nt)
        assert isinstance(r, Pair) and r.i == 3 and r.a == 8.0
        assert sess.run(nested)[1] == (3, 8)


def test_assign_inside_a_loop_body_updates_the_variable_every_iteration():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0)
        n = tf.placeholder(tf.int32, [])

        def body(i):
            with tf.control_dependencies([tf.assign_add(v, 1.5)]):
                return i + 1
        count = tf.while_loop(lambda i: i < n, body, [0])
        init = tf.global_variables_initializer()
    assert _ops(g, "RefEnter")  # the variable enters the loop as a reference
    with tf.Session(graph=g) as sess:
        sess.run(init)
        assert sess.run(count, {n: 4}) == 4
        assert sess.run(v) == 6.0


# -- gradients against finite differences --------------------------------------------------

RNG = np.random.RandomState(7)


def test_cond_gradients_both_branches():
    for taken in (True, False):
        check_gradients(lambda x, y: tf.cond(tf.constant(taken), lambda: x * y + tf.sin(x),
                                             lambda: tf.exp(y) * x - y), RNG.uniform(-1, 1, 3),
                        RNG.uniform(-1, 1, 3))


def test_cond_gradient_through_only_one_branch_is_zero_on_the_other():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [2])
        y = tf.placeholder(tf.float32, [2])
        c = tf.cond(p, lambda: x * 3.0, lambda: y * 5.0)
        gx, gy = tf.gradients(tf.reduce_sum(c), [x, y])
    with tf.Session(graph=g) as sess:
        feed = {x: [1, 2], y: [3, 4]}
        assert sess.run([gx, gy], {p: True, **feed})[0].tolist() == [3, 3]
        assert sess.run([gx, gy], {p: True, **feed})[1].tolist() == [0, 0]
        assert sess.run([gx, gy], {p: False, **feed})[0].tolist() == [0, 0]
        assert sess.run([gx, gy], {p: False, **feed})[1].tolist() == [5, 5]


def test_while_gradient_wrt_invariant_and_initial_value():
    def loop(x, a0):
        return tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * tf.tanh(x) + x * x), [0, a0])[1]
    check_gradients(loop, RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3))


def test_nested_while_gradient():
    def loop(x):
        def outer(i, a):
            _, b = tf.while_loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, tf.sin(b) * x + 0.5), [0, a])
            return i + 1, b * x
        return tf.while_loop(lambda i, a: i < 3, outer, [0, x])[1]
    check_gradients(loop, RNG.uniform(-1, 1, 3))


def test_cond_inside_while_gradient():
    def loop(x):
        def body(i, a):
            return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a * x, lambda: a + tf.sin(x * a))
        return tf.while_loop(lambda i, a: i < 5, body, [0, tf.ones_like(x)])[1]
    check_gradients(loop, RNG.uniform(-1, 1, 3))


def test_while_inside_cond_gradient():
    for taken in (True, False):
        def fn(x):
            return tf.cond(tf.constant(taken),
                           lambda: tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x])[1],
                           lambda: tf.square(x))
        check_gradients(fn, RNG.uniform(-1, 1, 3))


def test_while_gradient_with_unknown_shapes():
    def loop(x):
        flat = tf.reshape(x, tf.placeholder_with_default(np.array([-1], np.int32), [None]))
        return tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * flat + 1.0), [0, flat])[1]
    check_gradients(loop, RNG.uniform(-1, 1, 4))


def test_back_prop_false_has_no_gradient():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x], back_prop=False)[1]
        assert tf.gradients(y, x) == [None]


def test_training_through_a_loop():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(0.5)
        _, out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * w + 1.0), [0, tf.constant(1.0)])
        loss = tf.square(out - 3.0)  # out = w^3 + w^2 + w + 1
        gw = tf.gradients(loss, w)[0]
        train = tf.train.GradientDescentOptimizer(0.02).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        assert sess.run(gw) == pytest.approx(2 * (1.875 - 3.0) * (3 * 0.25 + 2 * 0.5 + 1))
        losses = []
        for _ in range(40):
            sess.run(train)
            losses.append(sess.run(loss))
        assert all(b < a for a, b in zip(losses[:10], losses[1:10]))
        assert losses[-1] < 1e-4
        wv = sess.run(w)
        assert sess.run(loss) == pytest.approx((wv ** 3 + wv ** 2 + wv + 1 - 3.0) ** 2, rel=1e-4)

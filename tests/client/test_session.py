"""Session.run: fetch structures, feeds, errors (class and message), recovery after
errors, plan caching, concurrent runs, dtype preservation, lifetime."""
import collections
import threading

import numpy as np
import pytest

import graphrt as tf
from graphrt.client import local_backend as session_lib


@pytest.fixture
def model(graph):
    """x -> y = sum(2x) plus a variable and an initializer."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.reduce_sum(x * 2.0, name="y")
    v = tf.Variable([1.0, 2.0], name="v")
    init = tf.global_variables_initializer()
    return collections.namedtuple("Model", "x y v init")(x, y, v, init)


@pytest.fixture
def sess(graph):
    with tf.Session(graph=graph) as s:
        yield s


ONES = np.ones((2, 3), np.float32)


# -- fetch structures ----------------------------------------------------------------------

def test_single_tensor_and_operation(model, sess):
    assert sess.run(model.y, {model.x: ONES}) == 12.0
    assert sess.run(model.init) is None
    assert sess.run(model.init.name) is None  # an op name
    np.testing.assert_array_equal(sess.run("v:0"), [1.0, 2.0])  # a tensor name


def test_nested_lists_tuples_dicts_namedtuples(model, sess):
    Pair = collections.namedtuple("Pair", "first second")
    fetches = {
        "list": [model.y, (model.init, "y:0")],
        "pair": Pair(model.y, model.v),
        "ordered": collections.OrderedDict([("b", model.y), ("a", [model.v])]),
        "nested": {"deep": [[model.y], ()]},
    }
    out = sess.run(fetches, {model.x: ONES})
    assert isinstance(out, dict) and set(out) == set(fetches)
    assert isinstance(out["list"], list) and isinstance(out["list"][1], tuple)
    assert out["list"][0] == 12.0 and out["list"][1] == (None, 12.0)
    assert isinstance(out["pair"], Pair) and out["pair"].first == 12.0
    np.testing.assert_array_equal(out["pair"].second, [1.0, 2.0])
    assert isinstance(out["ordered"], collections.OrderedDict) and list(out["ordered"]) == ["b", "a"]
    assert out["ordered"]["b"] == 12.0
    assert out["nested"] == {"deep": [[12.0], ()]}


def test_same_tensor_fetched_twice(model, sess):
    a, b = sess.run([model.y, model.y], {model.x: ONES})
    assert a == b == 12.0


def test_fetch_results_are_numpy_values_with_graph_dtypes(model, sess):
    i = tf.constant([1, 2], tf.int64)
    s = tf.constant("text")
    out = sess.run({"y": model.y, "i": i, "b": i > 1, "s": s, "vec": model.x * 1.0}, {model.x: ONES})
    assert type(out["y"]) is np.float32  # scalars come back as numpy scalars, as in TF
    assert out["i"].dtype == np.int64 and out["b"].dtype == np.bool_
    assert out["s"] == b"text"
    assert isinstance(out["vec"], np.ndarray) and out["vec"].dtype == np.float32


# -- feeds ---------------------------------------------------------------------------------------

def test_feed_conversions_keep_the_placeholder_dtype(model, sess):
    for value in (ONES.astype(np.float64), ONES.tolist(), ONES.astype(np.int32)):
        out = sess.run(model.x * 1.0, {model.x: value})
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, ONES)
    k = tf.placeholder(tf.int32, [], name="k")
    assert sess.run(k + 1, {k: 4}) == 5
    assert sess.run(k + 1, {k: 2.5}) == 3  # as TF's client: a float feed truncates
    with pytest.raises(TypeError, match="is not compatible with Tensor type"):
        sess.run(k + 1, {k: 2 ** 40})
    with pytest.raises(ValueError, match="could not convert string to float"):
        sess.run(model.y, {model.x: [["a", "b", "c"]]})


def test_python_float_feeds_into_float32(graph, sess):
    lr = tf.placeholder(tf.float32, [], name="lr")
    np.testing.assert_allclose(sess.run(lr * 2.0, {lr: 0.05}), 0.1)


def test_float_feeds_that_are_exact_in_float32(graph, sess):
    lr = tf.placeholder(tf.float32, [], name="lr")
    assert sess.run(lr * 2.0, {lr: 0.5}) == 1.0
    assert sess.run(lr * 2.0, {lr: np.float32(0.05)}) == np.float32(0.05) * 2
    assert sess.run(lr * 2.0, {lr: 3}) == 6.0


def test_feed_by_name_and_bad_feed_keys(model, sess):
    assert sess.run(model.y, {"x:0": ONES}) == 12.0
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor.*refers to an Operation"):
        sess.run(model.y, {"x": ONES})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(model.y, {"nope:0": ONES})
    with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor object"):
        sess.run(model.y, {model.x: model.x * 1.0})


def test_feeding_a_tensor_from_another_graph_fails(model, sess):
    other = tf.Graph()
    with other.as_default():
        foreign = tf.placeholder(tf.float32, [])
    with pytest.raises(ValueError, match="not an element of this session's graph"):
        sess.run(model.y, {model.x: ONES, foreign: 1.0})


def test_feeding_any_tensor_replaces_it(graph, sess):
    a = tf.placeholder(tf.float32, [], name="a")
    b = a * 2.0
    c = b + 1.0
    assert sess.run(c, {a: 1.0}) == 3.0
    assert sess.run(c, {b: 10.0}) == 11.0  # a need not be fed: b's producer is cut off
    k = tf.constant(5.0)
    assert sess.run(k * 2.0, {k: 1.0}) == 2.0  # even a constant


def test_fed_tensors_are_not_computed(graph, sess):
    idx = tf.placeholder(tf.int32, [], name="idx")
    looked_up = tf.gather(tf.constant([1.0, 2.0, 3.0]), idx, name="lookup")
    out = looked_up * 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
        sess.run(out, {idx: 7})  # running `lookup` with this index would fail...
    assert sess.run(out, {idx: 7, looked_up: 4.0}) == 8.0  # ...so it must not run when fed
    v = tf.Variable(1.0, name="never_initialized")
    assert sess.run(v.value() + 1.0, {v.value(): 2.0}) == 3.0  # reading it would fail too


def test_feeding_a_variable_value_in_a_step(graph, sess):
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    doubled = v * 2.0
    np.testing.assert_array_equal(sess.run(doubled, {v: [5.0, 5.0]}), [10.0, 10.0])
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])  # the variable itself is unchanged


def test_feeds_are_not_kept_or_modified(model, sess):
    data = np.ones((2, 3), np.float32)
    out = sess.run(model.x * 1.0, {model.x: data})
    out[0, 0] = 50.0
    assert data[0, 0] == 1.0
    data[0, 0] = 7.0  # the user's array stays writeable and the next run sees the new value
    assert sess.run(model.y, {model.x: data}) == 24.0


def test_fetching_a_fed_tensor_returns_the_fed_value(model, sess):
    np.testing.assert_array_equal(sess.run(model.x, {model.x: ONES}), ONES)


def test_fetching_a_fed_tensor_with_other_fetches(model, sess):
    fed, y = sess.run([model.x, model.y], {model.x: ONES})
    np.testing.assert_array_equal(fed, ONES)
    assert y == 12.0
    fed[0, 0] = 3.0  # a copy, not the runtime's read-only view
    assert sess.run(model.y, {model.x: ONES}) == 12.0


def test_empty_fetch_structures(model, sess):
    assert sess.run([]) == []
    assert sess.run({}) == {}


# -- errors and recovery -----------------------------------------------------------------------

def test_missing_feed_names_the_placeholder(model, sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"You must feed a value for placeholder tensor 'x' with dtype float32 and shape "
                             r"\[\?,3\]") as info:
        sess.run(model.y)
    assert info.value.node == "x"
    assert info.value.error_code == tf.errors.INVALID_ARGUMENT


def test_feed_of_wrong_shape_is_value_error(model, sess):
    # TensorFlow 2.21 compat.v1's exact text
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(2, 4\) for Tensor x:0, which has shape "
                                         r"\(None, 3\)$"):
        sess.run(model.y, {model.x: np.ones((2, 4))})
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\)"):
        sess.run(model.y, {model.x: np.ones(3)})


def test_feed_checks_hold_after_the_keys_were_resolved(graph, sess):
    # A session remembers a feed_dict's keys once checked; every value is still checked each run.
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    k = tf.placeholder(tf.int32, [2], name="k")
    y = tf.reduce_sum(x) + tf.cast(tf.reduce_sum(k), tf.float32)
    for _ in range(2):
        assert sess.run(y, {x: ONES, k: [1, 2]}) == 9.0
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(3,\) for Tensor k:0, which has shape \(2,\)$"):
        sess.run(y, {x: ONES, k: [1, 2, 3]})
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(2, 4\) for Tensor x:0"):
        sess.run(y, {x: np.ones((2, 4)), k: [1, 2]})
    with pytest.raises(ValueError, match=r"^Cannot feed value of shape \(3,\) for Tensor x:0"):
        sess.run(y, {x: np.ones(3), k: [1, 2]})
    with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor object"):
        sess.run(y, {x: ONES, k: k + 1})
    assert sess.run(y, {k: [0, 0], x: ONES * 2.0}) == 12.0  # the same keys in another order
    assert sess.run(y, {x: ONES, k: np.array([5, 5], np.int64)}) == 16.0  # converted as before


def test_uninitialized_variable_names_it(model, sess):
    with pytest.raises(tf.errors.FailedPreconditionError, match="Attempting to use uninitialized value v"):
        sess.run(model.v)
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
        sess.run(model.v * 2.0)


@pytest.mark.parametrize("fetch, error, message", [
    ("nope:0", ValueError, "The operation, 'nope', does not exist in the graph"),
    ("nope", ValueError, "refers to an Operation not in the graph"),
    ("y:7", ValueError, "only has 1 outputs"),
    ("y:x", ValueError, "looks a like a Tensor name, but is not a valid one"),
    (12345, TypeError, "Fetch argument 12345 has invalid type"),
    (None, TypeError, "Fetch argument None has invalid type"),
    ([1.5], TypeError, "Fetch argument 1.5 has invalid type"),
    ({"k": object()}, TypeError, "has invalid type"),
])
def test_bad_fetches(model, sess, fetch, error, message):
    with pytest.raises(error, match=message):
        sess.run(fetch, {model.x: ONES})


def test_fetch_from_another_graph_is_value_error(model, sess):
    with tf.Graph().as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="is not an element of this graph"):
        sess.run(foreign)


def test_runtime_kernel_failure_names_the_node(graph, sess):
    k = tf.placeholder(tf.int32, [], name="k")
    g = tf.gather(tf.constant([1.0, 2.0, 3.0]), k, name="bad_gather")
    with pytest.raises(tf.errors.InvalidArgumentError, match="7 is not in \\[0, 3\\)") as info:
        sess.run(g, {k: 7})
    assert info.value.node == "bad_gather"
    assert "bad_gather" in str(info.value)  # the message quotes the node, as TF's [[node ...]]
    assert "GatherV2" in str(info.value)


def test_session_keeps_working_after_each_kind_of_error(model, sess):
    k = tf.placeholder(tf.int32, [], name="k")
    g = tf.gather(tf.constant([1.0, 2.0]), k)
    failures = [
        (lambda: sess.run(model.y), tf.errors.InvalidArgumentError),
        (lambda: sess.run(model.y, {model.x: np.ones((1, 4))}), ValueError),
        (lambda: sess.run(model.v), tf.errors.FailedPreconditionError),
        (lambda: sess.run("nope:0"), ValueError),
        (lambda: sess.run(g, {k: 9}), tf.errors.InvalidArgumentError),
    ]
    for fail, error in failures:
        with pytest.raises(error):
            fail()
        assert sess.run(model.y, {model.x: ONES}) == 12.0
        assert sess.run(g, {k: 1}) == 2.0
    sess.run(model.init)
    np.testing.assert_array_equal(sess.run(model.v), [1.0, 2.0])


def test_failed_step_does_not_apply_later_updates(graph, sess):
    v = tf.Variable(0.0, name="v")
    k = tf.placeholder(tf.int32, [])
    bad = tf.gather(tf.constant([1.0]), k)
    with tf.control_dependencies([bad]):
        inc = tf.assign_add(v, 1.0)
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(inc, {k: 3})
    assert sess.run(v) == 0.0
    sess.run(inc, {k: 0})
    assert sess.run(v) == 1.0


def test_closed_session_is_runtime_error(model, graph):
    s = tf.Session(graph=graph)
    assert s.run(model.y, {model.x: ONES}) == 12.0
    s.close()
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        s.run(model.y, {model.x: ONES})
    s.close()  # closing twice is fine


def test_running_an_empty_graph_is_a_runtime_error_as_in_tf():
    with tf.Graph().as_default() as g, tf.Session(graph=g) as s:
        for fetches in ([], {}):
            with pytest.raises(RuntimeError, match="The Session graph is empty"):
                s.run(fetches)
        c = tf.constant(3)
        assert s.run([]) == [] and s.run(c) == 3


def test_context_manager_closes_and_sets_defaults(model, graph):
    with tf.Session(graph=graph) as s:
        assert tf.get_default_session() is s
        assert s.run(model.y, {model.x: ONES}) == 12.0
        assert model.y.eval({model.x: ONES}) == 12.0
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(model.y, {model.x: ONES})


def test_errors_are_op_errors_with_codes():
    assert issubclass(tf.errors.InvalidArgumentError, tf.errors.OpError)
    assert tf.errors.FailedPreconditionError("m").error_code == tf.errors.FAILED_PRECONDITION
    err = tf.errors.InvalidArgumentError(None, None, "message")  # TF's (node_def, op, message) form
    assert str(err) == "message" and err.message == "message"


def test_session_arguments_are_checked(graph):
    with pytest.raises(TypeError, match="graph must be a tf.Graph"):
        tf.Session(graph="nope")
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        tf.Session(graph=graph, config={"device_count": 2})


# -- caching, concurrency, dtypes ------------------------------------------------------------------

def test_executors_are_built_once_per_signature(model, sess, monkeypatch):
    built = []
    real = session_lib.GraphExecutor

    def counting(*args, **kwargs):
        built.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(session_lib, "GraphExecutor", counting)
    for _ in range(5):
        assert sess.run(model.y, {model.x: ONES}) == 12.0
    assert len(built) == 1
    for _ in range(3):
        sess.run([model.y], {model.x: ONES})  # same fetched tensors and feeds: same plan
        sess.run({"k": model.y}, {model.x: ONES})
    assert len(built) == 1
    sess.run([model.y, model.x * 3.0], {model.x: ONES})  # new fetches: a new plan
    assert len(built) == 2
    sess.run(model.init)
    sess.run(model.init)
    assert len(built) == 3
    plan = sess.plan_for(model.y, {model.x: ONES})
    assert plan is sess.plan_for(model.y, {model.x: ONES})
    assert plan is not sess.plan_for(model.y, {model.x * 2.0: ONES})


def test_concurrent_runs_from_eight_threads(graph):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), name="w")
    y = tf.matmul(tf.tanh(x), w) + tf.reduce_mean(x)
    results, errors = {}, []
    with tf.Session(graph=graph) as sess:
        sess.run(w.initializer)
        barrier = threading.Barrier(8)

        def worker(i):
            try:
                data = np.full((3, 4), i, np.float32) + np.arange(4, dtype=np.float32)
                barrier.wait()
                results[i] = [(data, sess.run(y, {x: data})) for _ in range(25)]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    w_np = np.arange(8, dtype=np.float32).reshape(4, 2)
    assert sorted(results) == list(range(8))
    for i, runs in results.items():
        for data, got in runs:
            np.testing.assert_allclose(got, np.tanh(data) @ w_np + data.mean(), rtol=1e-5)


def test_concurrent_first_runs_of_different_signatures(graph):
    x = tf.placeholder(tf.float32, [], name="x")
    outs = [x * float(k) + float(k) for k in range(8)]  # eight signatures, all new
    results, errors = {}, []
    with tf.Session(graph=graph) as sess:
        barrier = threading.Barrier(8)

        def worker(k):
            try:
                barrier.wait()
                results[k] = [float(sess.run(outs[k], {x: float(j)})) for j in range(10)]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for k in range(8):
        assert results[k] == [j * k + k for j in range(10)]


def test_concurrent_assign_add_loses_no_updates(graph):
    v = tf.Variable(0, name="counter")
    inc = tf.assign_add(v, 1, use_locking=True)
    with tf.Session(graph=graph) as sess:
        sess.run(v.initializer)
        threads = [threading.Thread(target=lambda: [sess.run(inc.op) for _ in range(50)]) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 400


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64, tf.float16])
def test_dtype_preserved_end_to_end(graph, sess, dtype):
    p = tf.placeholder(dtype, [None], name="p")
    outs = [p + p, p * p, tf.reduce_sum(p), tf.reduce_max(p), tf.concat([p, p], 0), tf.reshape(p, [-1, 1]),
            tf.gather(p, [0]), tf.identity(p), -p, tf.abs(p), tf.maximum(p, p), tf.stack([p, p]), p[1:]]
    got = sess.run(outs, {p: np.array([1, 2, 3])})
    for t, value in zip(outs, got):
        assert t.dtype == dtype
        assert np.asarray(value).dtype == dtype.np, t.op.type


def test_interactive_session_is_default(graph):
    x = tf.constant(3.0)
    s = tf.InteractiveSession(graph=graph)
    try:
        assert tf.get_default_session() is s
        assert x.eval() == 3.0
    finally:
        s.close()
    assert tf.get_default_session() is not s

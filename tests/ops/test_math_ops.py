"""Math ops against numpy: values, dtypes and static shapes, broadcasting (hypothesis),
reductions, matmul, casts, comparisons, and the integer edge cases TF defines."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphrt as tf
from tests.helpers import run


def _erf(x):
    return np.vectorize(math.erf)(x)


RNG = np.random.RandomState(0)
POSITIVE = RNG.uniform(0.5, 3.0, size=(2, 3))
ANY = RNG.uniform(-3.0, 3.0, size=(2, 3))

UNARY = [
    ("negative", np.negative, ANY),
    ("abs", np.abs, ANY),
    ("square", np.square, ANY),
    ("sqrt", np.sqrt, POSITIVE),
    ("rsqrt", lambda x: 1 / np.sqrt(x), POSITIVE),
    ("exp", np.exp, ANY),
    ("expm1", np.expm1, ANY),
    ("log", np.log, POSITIVE),
    ("log1p", np.log1p, POSITIVE),
    ("tanh", np.tanh, ANY),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), ANY),
    ("sign", np.sign, np.array([-2.0, 0.0, 3.0])),
    ("reciprocal", np.reciprocal, POSITIVE),
    ("floor", np.floor, ANY),
    ("ceil", np.ceil, ANY),
    ("round", np.round, np.array([-2.5, -1.5, -0.4, 0.5, 1.5, 2.5, 2.6])),  # half to even, as TF
    ("sin", np.sin, ANY),
    ("cos", np.cos, ANY),
    ("erf", _erf, ANY),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ref, x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_ops_match_numpy_and_keep_dtype(graph, name, ref, x, dtype):
    x = x.astype(dtype)
    y = getattr(tf, name)(tf.constant(x))
    assert y.dtype == tf.as_dtype(dtype)
    assert y.shape.as_list() == list(x.shape)
    got = run(y)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=1e-6 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-12)


def test_sigmoid_is_stable_at_extremes(graph):
    got = run(tf.sigmoid(tf.constant([-1000.0, -50.0, 0.0, 50.0, 1000.0])))
    np.testing.assert_allclose(got, [0.0, 1.9287498e-22, 0.5, 1.0, 1.0], rtol=1e-6)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_unary_ops(graph, dtype):
    x = np.array([-3, 0, 2, 7], dtype)
    ops = {"negative": -x, "abs": np.abs(x), "square": x * x, "sign": np.sign(x), "round": x}
    got = run({k: getattr(tf, k)(tf.constant(x)) for k in ops})
    for k, want in ops.items():
        assert got[k].dtype == dtype, k
        np.testing.assert_array_equal(got[k], want, err_msg=k)


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "tanh", "sigmoid", "floor", "erf"])
def test_float_only_unary_ops_reject_integers(graph, name):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        getattr(tf, name)(tf.constant([1, 2]))


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("realdiv", np.true_divide),
    ("truediv", np.true_divide), ("divide", np.true_divide), ("div", np.true_divide),
    ("floordiv", np.floor_divide), ("floormod", np.mod), ("pow", np.power), ("maximum", np.maximum),
    ("minimum", np.minimum), ("squared_difference", lambda x, y: (x - y) ** 2),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_ops_match_numpy_and_keep_dtype(graph, name, ref, dtype):
    x = RNG.uniform(0.5, 3.0, size=(2, 3)).astype(dtype) * np.array([1, 1 if name == "pow" else -1, 1], dtype)
    y = RNG.uniform(0.5, 2.0, size=(3,)).astype(dtype)
    z = getattr(tf, name)(tf.constant(x), tf.constant(y))
    assert z.dtype == tf.as_dtype(dtype)
    assert z.shape.as_list() == [2, 3]
    got = run(z)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref(x.astype(np.float64), y.astype(np.float64)),
                               rtol=2e-6 if dtype == np.float32 else 1e-12)


def test_operators_build_the_right_ops(graph):
    a = tf.constant([6.0, -7.0], name="a")
    b = tf.constant([4.0, 2.0], name="b")
    exprs = {"add": a + b, "sub": a - b, "mul": a * b, "truediv": a / b, "floordiv": a // b, "mod": a % b,
             "pow": a ** 2, "neg": -a, "abs": abs(a), "radd": 1.0 + a, "rsub": 1.0 - a, "rmul": 2.0 * a,
             "rtruediv": 1.0 / b, "rpow": 2.0 ** b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
             "np_left": np.float32(2.0) * a}
    got = run(exprs)
    av, bv = np.array([6.0, -7.0], np.float32), np.array([4.0, 2.0], np.float32)
    want = {"add": av + bv, "sub": av - bv, "mul": av * bv, "truediv": av / bv, "floordiv": av // bv,
            "mod": av % bv, "pow": av ** 2, "neg": -av, "abs": abs(av), "radd": 1 + av, "rsub": 1 - av,
            "rmul": 2 * av, "rtruediv": 1 / bv, "rpow": 2 ** bv, "lt": av < bv, "le": av <= bv, "gt": av > bv,
            "ge": av >= bv, "np_left": 2 * av}
    for k in want:
        np.testing.assert_allclose(got[k], want[k], err_msg=k)
        assert got[k].dtype == want[k].dtype, k
    assert exprs["add"].op.type == "AddV2" and exprs["rsub"].op.type == "Sub"
    assert exprs["rsub"].op.inputs[1] is a  # reflected operator keeps operand order
    assert isinstance(exprs["np_left"], tf.Tensor)


def test_matmul_operator_and_logical_operators(graph):
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    t = tf.constant([True, True, False])
    f = tf.constant([True, False, False])
    got = run({"mm": m @ m, "and": t & f, "or": t | f, "xor": t ^ f, "not": ~f})
    np.testing.assert_array_equal(got["mm"], [[7, 10], [15, 22]])
    np.testing.assert_array_equal(got["and"], [True, False, False])
    np.testing.assert_array_equal(got["or"], [True, True, False])
    np.testing.assert_array_equal(got["xor"], [False, True, False])
    np.testing.assert_array_equal(got["not"], [False, True, True])


# -- integers ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_semantics(graph, dtype):
    x = np.array([7, -7, 7, -7], dtype)
    y = np.array([2, 2, -2, -2], dtype)
    a, b = tf.constant(x), tf.constant(y)
    got = run({"floordiv": tf.floordiv(a, b), "floormod": tf.floormod(a, b), "div": tf.div(a, b),
               "op_floordiv": a // b, "op_mod": a % b, "truediv": tf.truediv(a, b), "op_truediv": a / b})
    np.testing.assert_array_equal(got["floordiv"], [3, -4, -4, 3])
    np.testing.assert_array_equal(got["floormod"], [1, 1, -1, -1])
    np.testing.assert_array_equal(got["div"], [3, -4, -4, 3])  # tf.div: Python 2 (floor) semantics
    np.testing.assert_array_equal(got["op_floordiv"], got["floordiv"])
    np.testing.assert_array_equal(got["op_mod"], got["floormod"])
    for k in ("floordiv", "floormod", "div", "op_floordiv", "op_mod"):
        assert got[k].dtype == dtype, k
    np.testing.assert_allclose(got["truediv"], x / y)
    assert got["truediv"].dtype == np.float64  # int32/int64 -> float64, as TF
    assert got["op_truediv"].dtype == np.float64


def test_small_int_truediv_is_float32(graph):
    assert tf.truediv(tf.constant([1, 2], tf.int16), tf.constant([2, 2], tf.int16)).dtype == tf.float32
    assert (tf.constant([1], tf.uint8) / tf.constant([2], tf.uint8)).dtype == tf.float32


def test_realdiv_is_floating_only(graph):
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.realdiv(tf.constant([1]), tf.constant([2]))


@pytest.mark.parametrize("fn", [tf.floordiv, tf.floormod, tf.div, lambda a, b: a // b],
                         ids=["floordiv", "floormod", "div", "operator"])
def test_integer_division_by_zero_is_invalid_argument(graph, fn):
    k = tf.placeholder(tf.int32, [2], name="k")
    out = fn(tf.constant([4, 5]), k)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero") as info:
            sess.run(out, {k: [1, 0]})
        assert info.value.node == out.op.name
        want = [0, 1] if fn is tf.floormod else [2, 2]
        np.testing.assert_array_equal(sess.run(out, {k: [2, 2]}), want)


def test_float_division_by_zero_gives_inf_and_nan(graph):
    got = run(tf.constant([1.0, -1.0, 0.0]) / tf.constant([0.0, 0.0, 0.0]))
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


def test_integer_pow(graph):
    got = run(tf.pow(tf.constant([2, 3, -2]), tf.constant([3, 0, 3])))
    np.testing.assert_array_equal(got, [8, 1, -8])
    assert got.dtype == np.int32
    k = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
            sess.run(tf.pow(tf.constant(2), k), {k: -1})


def test_python_literals_take_the_tensor_dtype(graph):
    x = tf.constant([1.0, 2.0], tf.float64)
    assert (x + 1).dtype == tf.float64
    i = tf.constant([1, 2], tf.int64)
    assert (i * 2).dtype == tf.int64
    with pytest.raises(TypeError, match="Expected int64"):
        i * 2.5  # a lossy conversion is refused
    with pytest.raises(TypeError, match="does not match type int32 of argument 'x'"):
        tf.add(tf.constant(1), tf.constant(1.0))


# -- broadcasting (hypothesis) ------------------------------------------------------------

_BCAST_OPS = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("maximum", np.maximum),
              ("minimum", np.minimum), ("squared_difference", lambda a, b: (a - b) ** 2), ("less", np.less),
              ("equal", np.equal)]


@settings(max_examples=40, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       op=st.sampled_from(_BCAST_OPS), data=st.data())
def test_binary_broadcasting_matches_numpy(shapes, op, data):
    name, ref = op
    (sa, sb), result = shapes.input_shapes, shapes.result_shape
    a = data.draw(hnp.arrays(np.float32, sa, elements=st.floats(-10, 10, width=32)))
    b = data.draw(hnp.arrays(np.float32, sb, elements=st.floats(-10, 10, width=32)))
    g = tf.Graph()
    with g.as_default():
        pa = tf.placeholder(tf.float32, sa)
        pb = tf.placeholder(tf.float32, sb)
        z = getattr(tf, name)(pa, pb)
        z_partial = getattr(tf, name)(tf.placeholder(tf.float32, [None] * len(sa)), pb)
    assert z.shape.as_list() == list(result)
    assert z_partial.shape.ndims == len(result)
    with tf.Session(graph=g) as sess:
        got = sess.run(z, {pa: a, pb: b})
    want = ref(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_incompatible_static_shapes_fail_at_build_time(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4.*'add'"):
        tf.constant(np.ones((2, 3))) + tf.constant(np.ones((2, 4)))


def test_incompatible_runtime_shapes_are_invalid_argument(graph):
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.float32, [None])
    s = a + b
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(s, {a: np.ones(3), b: np.ones(4)})
        assert info.value.node == s.op.name
        assert sess.run(s, {a: np.ones(3), b: np.ones(1)}).tolist() == [2.0, 2.0, 2.0]


# -- comparisons, logic, selection --------------------------------------------------------

def test_comparisons_give_bool(graph):
    a = tf.constant([1, 2, 3])
    b = tf.constant([2, 2, 2])
    got = run([tf.less(a, b), tf.less_equal(a, b), tf.greater(a, b), tf.greater_equal(a, b), tf.equal(a, b),
               tf.not_equal(a, b)])
    assert [g.tolist() for g in got] == [[True, False, False], [True, True, False], [False, False, True],
                                         [False, True, True], [False, True, False], [True, False, True]]
    assert all(g.dtype == np.bool_ for g in got)


def test_logical_ops_require_bool(graph):
    with pytest.raises(TypeError, match="bool"):
        tf.logical_and(tf.constant([1]), tf.constant([0]))
    got = run([tf.logical_and([True, False], [True, True]), tf.logical_or([True, False], [False, False]),
               tf.logical_not([True, False]), tf.logical_xor([True, False, True], [True, True, False])])
    assert [g.tolist() for g in got] == [[True, False], [True, False], [False, True], [False, True, True]]


def test_where_select_and_v2(graph):
    cond = tf.constant([True, False])
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.constant([[10.0, 20.0], [30.0, 40.0]])
    rows = tf.where(cond, x, y)  # TF1: a vector condition picks whole rows
    same = tf.where(tf.constant([[True, False], [False, True]]), x, y)
    v2 = tf.where_v2(cond, x, 0.0)  # v2 broadcasts the condition as numpy does (over columns)
    coords = tf.where(tf.constant([[True, False], [False, True]]))
    got = run([rows, same, v2, coords])
    np.testing.assert_array_equal(got[0], [[1, 2], [30, 40]])
    np.testing.assert_array_equal(got[1], [[1, 20], [30, 4]])
    np.testing.assert_array_equal(got[2], [[1, 0], [3, 0]])
    np.testing.assert_array_equal(got[3], [[0, 0], [1, 1]])
    assert got[3].dtype == np.int64
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(cond, x)


def test_select_runtime_shape_errors(graph):
    c = tf.placeholder(tf.bool, [None])
    s = tf.where(c, tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'cond' and 'then' must have the same size"):
            sess.run(s, {c: [True, False, True]})


def test_clip_add_n_and_count_nonzero(graph):
    x = tf.constant([[-2.0, 0.5], [3.0, 0.0]])
    got = run({"clip": tf.clip_by_value(x, -1.0, 1.0), "add_n": tf.add_n([x, x, x]),
               "one": tf.add_n([x]), "nz": tf.count_nonzero(x), "nz_axis": tf.count_nonzero(x, axis=1)})
    np.testing.assert_array_equal(got["clip"], [[-1, 0.5], [1, 0]])
    np.testing.assert_array_equal(got["add_n"], [[-6, 1.5], [9, 0]])
    np.testing.assert_array_equal(got["one"], [[-2, 0.5], [3, 0]])
    assert got["nz"] == 3 and got["nz"].dtype == np.int64
    np.testing.assert_array_equal(got["nz_axis"], [2, 1])
    with pytest.raises(ValueError, match="non-empty list"):
        tf.add_n([])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_large_maximum_and_minimum_with_a_scalar_match_numpy_bit_for_bit(graph, dtype):
    """Maximum/Minimum of a large float array and a scalar run through blocks of the scalar
    (ops/math_kernels.blockwise_with_scalar): across block boundaries, with the scalar on either
    side, in place into a fresh input or into a new array, NaN and signed zeros as numpy gives."""
    from graphrt.ops import math_kernels
    n = 2 * math_kernels._BLOCK + 123
    value = RNG.uniform(-2, 2, size=(n,)).astype(dtype)
    value[::1001] = np.nan
    value[5::997] = -0.0
    value[7::991] = 0.0
    x = tf.placeholder(dtype, [n])
    lo, hi, zero = (tf.constant(dtype(v)) for v in (-0.5, 0.75, 0.0))
    fetches = {"clip": tf.clip_by_value(x, -0.5, 0.75), "max_left": tf.maximum(zero, x),
               "max_right": tf.maximum(x, zero), "min_fresh": tf.minimum(x * 1.0, hi),
               "max_lo": tf.maximum(lo, x + 0.0)}
    want = {"clip": np.maximum(np.minimum(value, dtype(0.75)), dtype(-0.5)),
            "max_left": np.maximum(dtype(0), value), "max_right": np.maximum(value, dtype(0)),
            "min_fresh": np.minimum(value * dtype(1), dtype(0.75)), "max_lo": np.maximum(dtype(-0.5), value + dtype(0))}
    before = value.copy()
    got = run(fetches, {x: value})
    np.testing.assert_array_equal(value, before)  # a fed array is never written into
    for name, w in want.items():
        assert got[name].dtype == dtype and got[name].shape == (n,), name
        np.testing.assert_array_equal(got[name], w, err_msg=name)
        np.testing.assert_array_equal(np.signbit(got[name]), np.signbit(w), err_msg=name)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint64, np.bool_])
def test_branch_free_select_gives_where_bit_for_bit(dtype):
    """ops/math_kernels.select picks bits instead of branching: across block boundaries, for
    every element width, NaN payloads and signed zeros kept, any nonzero bool byte true."""
    from graphrt.ops import math_kernels
    n = 2 * math_kernels._BLOCK + 77
    rng = np.random.default_rng(4)
    raw = rng.integers(0, 256, size=(2, n * np.dtype(dtype).itemsize), dtype=np.uint8)
    x, y = (row.view(dtype) for row in raw)
    if dtype == np.bool_:
        x, y = x != 0, y != 0
    cond = rng.integers(0, 2, size=n).astype(bool)
    got = math_kernels.select(cond, x, y)
    want = np.where(cond, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    odd = cond.view(np.uint8).copy()
    odd[odd == 1] = 7  # a bool byte other than 1 is still true
    np.testing.assert_array_equal(math_kernels.select(odd.view(np.bool_), x, y).view(np.uint8), want.view(np.uint8))


def test_where_sigmoid_and_activations_on_large_inputs_match_numpy(graph):
    x0 = RNG.uniform(-6, 6, size=(64, 1000)).astype(np.float32)
    x0[0, :5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    x = tf.placeholder(tf.float32, x0.shape)
    got = run({"where": tf.where(x > 0, x, -x), "sigmoid": tf.sigmoid(x), "elu": tf.nn.elu(x),
               "leaky": tf.nn.leaky_relu(x, alpha=1.5)}, {x: x0})
    np.testing.assert_array_equal(got["where"], np.where(x0 > 0, x0, -x0))
    e = np.exp(-np.abs(x0))
    np.testing.assert_array_equal(got["sigmoid"], np.where(x0 >= 0, 1 / (1 + e), e / (1 + e)))
    np.testing.assert_array_equal(got["elu"], np.where(x0 < 0, np.expm1(np.minimum(x0, 0)), x0))
    np.testing.assert_array_equal(got["leaky"], np.where(x0 > 0, x0, x0 * np.float32(1.5)))


def test_maximum_with_a_scalar_on_integers_and_small_arrays(graph):
    big = np.arange(-5000, 5000, dtype=np.int32)
    np.testing.assert_array_equal(run(tf.maximum(tf.constant(big), 7)), np.maximum(big, 7))
    np.testing.assert_array_equal(run(tf.minimum(tf.constant([3.0, -1.0]), 0.0)), [0.0, -1.0])


def test_add_n_does_not_write_into_its_inputs(graph):
    a = tf.constant([1.0, 2.0])
    s = tf.add_n([a, a, a])
    with tf.Session() as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(s), [3.0, 6.0])
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])


def test_range(graph):
    got = run([tf.range(5), tf.range(1, 7, 2), tf.range(5, 0, -2), tf.range(0.0, 1.0, 0.25),
               tf.range(3, dtype=tf.int64)])
    assert [g.tolist() for g in got] == [[0, 1, 2, 3, 4], [1, 3, 5], [5, 3, 1], [0.0, 0.25, 0.5, 0.75], [0, 1, 2]]
    assert [g.dtype for g in got] == [np.int32, np.int32, np.int32, np.float32, np.int64]
    assert tf.range(1, 7, 2).shape.as_list() == [3]
    n = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        assert sess.run(tf.range(n), {n: 4}).tolist() == [0, 1, 2, 3]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Requires start <= limit when delta > 0"):
            sess.run(tf.range(n, 0), {n: 4})


# -- reductions --------------------------------------------------------------------------

X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10.0
REDUCTIONS = [("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max), ("reduce_min", np.min),
              ("reduce_prod", lambda x, axis=None, keepdims=False: np.prod(x / 10.0, axis=axis, keepdims=keepdims))]


@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 2], (1, -1), [0, 1, 2], []])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name, ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_match_numpy(graph, name, ref, axis, keepdims):
    x = X3 / 10.0 if name == "reduce_prod" else X3
    y = getattr(tf, name)(tf.constant(x), axis=axis, keepdims=keepdims)
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    want = ref(X3, axis=np_axis, keepdims=keepdims) if name == "reduce_prod" else \
        ref(x, axis=np_axis, keepdims=keepdims)
    assert y.shape.as_list() == list(np.shape(want))
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_reduction_keep_dims_alias_and_reduction_indices(graph):
    x = tf.constant(X3)
    a = tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    assert a.shape.as_list() == [2, 1, 4]
    np.testing.assert_allclose(run(a), X3.sum(1, keepdims=True))
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'reduction_indices'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


def test_reduction_with_unknown_rank_and_fed_axis(graph):
    x = tf.placeholder(tf.float32, None)
    axis = tf.placeholder(tf.int32, [None])
    total = tf.reduce_sum(x)
    partial = tf.reduce_max(x, axis=axis)
    with tf.Session() as sess:
        assert sess.run(total, {x: X3}) == X3.sum()
        np.testing.assert_array_equal(sess.run(partial, {x: X3, axis: [0, 2]}), X3.max(axis=(0, 2)))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension"):
            sess.run(partial, {x: X3, axis: [3]})


def test_reduction_axis_out_of_range_at_build_time(graph):
    with pytest.raises(ValueError, match="Invalid reduction dimension 3"):
        tf.reduce_sum(tf.constant(X3), axis=3)


def test_integer_reductions(graph):
    x = np.array([[1, -2, 4], [7, 5, -6]], np.int32)
    t = tf.constant(x)
    got = run({"sum": tf.reduce_sum(t, 1), "mean": tf.reduce_mean(t, 1), "max": tf.reduce_max(t),
               "prod": tf.reduce_prod(t, 0), "mean_all": tf.reduce_mean(t)})
    np.testing.assert_array_equal(got["sum"], [3, 6])
    np.testing.assert_array_equal(got["mean"], [1, 2])  # integer mean truncates
    assert got["max"] == 7
    np.testing.assert_array_equal(got["prod"], [7, -10, -24])
    assert got["mean_all"] == 1  # 9 // 6
    assert {v.dtype for v in got.values()} == {np.dtype(np.int32)}


def test_integer_mean_truncates_towards_zero(graph):
    assert run(tf.reduce_mean(tf.constant([-3, -4]))) == -3  # -7 / 2 = -3.5 -> -3


def test_bool_reductions(graph):
    b = tf.constant([[True, False], [True, True]])
    got = run([tf.reduce_all(b, 1), tf.reduce_any(b, 0), tf.reduce_all(b), tf.reduce_any(tf.logical_not(b))])
    assert [np.asarray(g).tolist() for g in got] == [[False, True], [True, True], False, True]
    with pytest.raises(TypeError, match="expects a bool tensor"):
        tf.reduce_all(tf.constant([1.0]))


def test_empty_reductions(graph):
    e = tf.constant(np.zeros((0, 3), np.float32))
    got = run([tf.reduce_sum(e), tf.reduce_max(e, 0), tf.reduce_min(e, 0), tf.reduce_prod(e, 0)])
    assert got[0] == 0.0
    np.testing.assert_array_equal(got[1], [-np.inf] * 3)
    np.testing.assert_array_equal(got[2], [np.inf] * 3)
    np.testing.assert_array_equal(got[3], [1.0] * 3)


def test_reduce_logsumexp(graph):
    x = np.array([[1000.0, 1000.0], [-1.0, 2.0]], np.float32)
    got = run([tf.reduce_logsumexp(tf.constant(x), axis=1), tf.reduce_logsumexp(tf.constant(x[1])),
               tf.reduce_logsumexp(tf.constant(x), axis=1, keepdims=True)])
    np.testing.assert_allclose(got[0], [1000.0 + np.log(2.0), np.log(np.exp(-1.0) + np.exp(2.0))], rtol=1e-6)
    assert np.ndim(got[1]) == 0 and got[2].shape == (2, 1)


def test_reduce_logsumexp_with_infinities(graph):
    x = tf.constant([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 0.0]])
    np.testing.assert_allclose(run(tf.reduce_logsumexp(x, axis=1)), [-np.inf, np.inf, 0.0])


def test_argmax_argmin(graph):
    x = tf.constant([[1.0, 5.0, 5.0], [7.0, -1.0, 0.0]])
    got = run([tf.argmax(x, 1), tf.argmin(x, 0), tf.argmax(x), tf.argmax(x, 1, output_type=tf.int32),
               tf.argmax(x, dimension=1)])
    assert got[0].tolist() == [1, 0]  # ties: the first index
    assert got[1].tolist() == [0, 1, 1]
    assert got[2].tolist() == [1, 0, 0]
    assert got[0].dtype == np.int64 and got[3].dtype == np.int32
    assert got[4].tolist() == [1, 0]
    with pytest.raises(ValueError, match=r"Expected dimension in the range \[-2, 2\), but got 2"):
        tf.argmax(x, 2)


def test_cumsum_cumprod(graph):
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    t = tf.constant(x)
    got = run({"sum": tf.cumsum(t, 1), "sum0": tf.cumsum(t), "excl": tf.cumsum(t, 1, exclusive=True),
               "rev": tf.cumsum(t, 1, reverse=True), "both": tf.cumsum(t, 1, exclusive=True, reverse=True),
               "prod": tf.cumprod(t, 1), "prod_excl": tf.cumprod(t, 1, exclusive=True)})
    np.testing.assert_array_equal(got["sum"], np.cumsum(x, 1))
    np.testing.assert_array_equal(got["sum0"], np.cumsum(x, 0))
    np.testing.assert_array_equal(got["excl"], [[0, 1, 3], [0, 4, 9]])
    np.testing.assert_array_equal(got["rev"], [[6, 5, 3], [15, 11, 6]])
    np.testing.assert_array_equal(got["both"], [[5, 3, 0], [11, 6, 0]])
    np.testing.assert_array_equal(got["prod"], np.cumprod(x, 1))
    np.testing.assert_array_equal(got["prod_excl"], [[1, 1, 2], [1, 4, 20]])
    assert got["sum"].dtype == np.float32


# -- matmul ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transposes(graph, ta, tb):
    a = RNG.randn(2, 3).astype(np.float32)
    b = RNG.randn(3, 4).astype(np.float32)
    a_in = a.T.copy() if ta else a
    b_in = b.T.copy() if tb else b
    y = tf.matmul(a_in, b_in, transpose_a=ta, transpose_b=tb)
    assert y.shape.as_list() == [2, 4]
    got = run(y)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


def test_matmul_int_and_static_shape_errors(graph):
    got = run(tf.matmul(tf.constant([[1, 2]]), tf.constant([[3], [4]])))
    assert got.tolist() == [[11]] and got.dtype == np.int32
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.matmul(tf.ones([2, 3]), tf.ones([4, 5]))
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.matmul(tf.placeholder(tf.float32, [2, 2]), tf.placeholder(tf.float32, [2]))


def test_matmul_with_unknown_batch(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.matmul(x, tf.ones([3, 2]))
    assert y.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.matmul(tf.placeholder_with_default(np.ones((2, 2), np.float32), [None, None]),
                               tf.ones([3, 2])))
        assert sess.run(y, {x: np.ones((5, 3))}).shape == (5, 2)


@pytest.mark.parametrize("adj_x, adj_y", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul(graph, adj_x, adj_y):
    a = RNG.randn(2, 1, 3, 4)
    b = RNG.randn(5, 4, 2)
    a_in = np.swapaxes(a, -1, -2) if adj_x else a
    b_in = np.swapaxes(b, -1, -2) if adj_y else b
    y = tf.matmul(a_in, b_in, adjoint_a=adj_x, adjoint_b=adj_y)
    assert y.op.type == "BatchMatMulV2"
    assert y.shape.as_list() == [2, 5, 3, 2]
    np.testing.assert_allclose(run(y), np.matmul(a, b), rtol=1e-10)


# -- casts ------------------------------------------------------------------------------------

def test_cast(graph):
    x = tf.constant([-1.7, -0.5, 0.5, 2.9])
    got = run({"i32": tf.cast(x, tf.int32), "f64": tf.to_double(x), "b": tf.cast(x, tf.bool),
               "from_bool": tf.cast(tf.constant([True, False]), tf.float32), "i64": tf.to_int64(x),
               "u8": tf.cast(tf.constant([1, 255, 256]), tf.uint8)})
    np.testing.assert_array_equal(got["i32"], [-1, 0, 0, 2])  # truncation towards zero
    assert got["i32"].dtype == np.int32 and got["i64"].dtype == np.int64
    assert got["f64"].dtype == np.float64
    np.testing.assert_array_equal(got["b"], [True, True, True, True])
    np.testing.assert_array_equal(got["from_bool"], [1.0, 0.0])
    np.testing.assert_array_equal(got["u8"], [1, 255, 0])


def test_cast_to_same_dtype_is_the_same_tensor(graph):
    x = tf.constant([1.0])
    assert tf.cast(x, tf.float32) is x
    assert tf.to_float(x) is x


def test_cast_nan_and_inf_to_int(graph):
    got = run(tf.cast(tf.constant([np.nan, np.inf, -np.inf, 3.0]), tf.int32))
    assert got.dtype == np.int32
    assert got[3] == 3

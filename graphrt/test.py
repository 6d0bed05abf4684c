"""`tf.test` (TF1): a TestCase whose tests each start on a fresh default graph,
with sessions on it and numpy-array asserts; gradient checks (theoretical
Jacobians from `tf.gradients` against central differences); and what the
build and the machine offer (GPU questions answer for graphrt's `cuda`
platform: cupy and a visible GPU)."""
import contextlib
import os
import re
import tempfile
import unittest

import numpy as np

from . import errors
from .client.session import Session
from .framework import dtypes
from .framework.default_session import get_default_session
from .framework.graph import Tensor, get_default_graph, reset_default_graph
from .gradients import gradients
from .ops.array_ops import placeholder
from .ops.random_ops import DEFAULT_GRAPH_SEED, set_random_seed

_TEMP_DIR = []


def get_temp_dir():
    """One temporary directory per process, made on first use (as TF's)."""
    if not _TEMP_DIR:
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="graphrt_test_"))
    return _TEMP_DIR[0]


def main(argv=None):
    """Runs the tests of `__main__` (unittest's runner)."""
    return unittest.main(argv=argv)


def _cuda():
    from .executor.platform import get_platform
    return get_platform("cuda")


def is_built_with_cuda():
    """Whether graphrt can drive CUDA here: cupy imports (graphrt's `cuda` extra)."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


is_built_with_gpu_support = is_built_with_cuda


def is_built_with_rocm():
    return False


def is_built_with_xla():
    return False


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether a GPU device can be made: cupy and at least one visible GPU."""
    platform = _cuda()
    return platform.unavailable_reason() is None and platform.device_count() > 0


def gpu_device_name():
    """'/device:GPU:0' when a GPU is available, else ''."""
    return "/device:GPU:0" if is_gpu_available() else ""


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of `y` with respect to `x`, each of shape
    [x size, y size]; for a list `x`, a list of such pairs. The theoretical one backpropagates
    each one-hot `dy`; the numerical one is central differences of step `delta` around
    `x_init_value` (random when not given), run in the default session."""
    xs = x if isinstance(x, (list, tuple)) else [x]
    shapes = x_shape if isinstance(x, (list, tuple)) else [x_shape]
    inits = x_init_value if isinstance(x, (list, tuple)) else [x_init_value]
    if inits is None:
        inits = [None] * len(xs)
    sess = get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session: run it under `with tf.Session():`")
    if init_targets is not None:
        sess.run(init_targets)
    values = [np.asarray(v, dtype=t.dtype.base_dtype.np).reshape(s) if v is not None else
              np.random.random_sample(s).astype(t.dtype.base_dtype.np) for t, s, v in zip(xs, shapes, inits)]
    feed = dict(extra_feed_dict or {})
    y_size = int(np.prod(y_shape))
    with y.graph.as_default():  # (the graph y lives in takes the grad_ys placeholder)
        dy = placeholder(y.dtype.base_dtype, list(y_shape), name="gradient_checker_dy")
        grads = gradients(y, xs, grad_ys=dy)
    out = []
    for t, value, grad in zip(xs, values, grads):
        base = {**feed, **{xt: v for xt, v in zip(xs, values)}}
        theoretical = np.zeros((value.size, y_size))
        if grad is not None:
            for j in range(y_size):
                onehot = np.zeros(y_size, y.dtype.base_dtype.np)
                onehot[j] = 1
                got = sess.run(grad, {**base, dy: onehot.reshape(y_shape)})
                theoretical[:, j] = _dense(got, value.shape).ravel()
        numerical = np.zeros((value.size, y_size))
        for i in range(value.size):
            up, down = value.copy(), value.copy()
            up.flat[i] += delta
            down.flat[i] -= delta
            y_up = sess.run(y, {**base, t: up})
            y_down = sess.run(y, {**base, t: down})
            numerical[i, :] = (np.asarray(y_up, np.float64) - np.asarray(y_down, np.float64)).ravel() / (2 * delta)
        out.append((theoretical, numerical))
    return out if isinstance(x, (list, tuple)) else out[0]


def _dense(value, shape):
    """A gradient's value as a dense array (IndexedSlices summed into place)."""
    if hasattr(value, "indices") and hasattr(value, "values"):
        dense = np.zeros(shape, dtype=np.asarray(value.values).dtype)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        return dense
    return np.asarray(value)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None):
    """The largest |theoretical - numerical| over the Jacobians of `compute_gradient`."""
    pairs = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = pairs if isinstance(pairs, list) else [pairs]
    return max((float(np.max(np.abs(t - n))) if t.size else 0.0) for t, n in pairs)


class _NotATest:
    """A method that unittest's loader, which collects callables named `test*`, passes over."""

    def __init__(self, method):
        self.method = method

    def __get__(self, obj, cls=None):
        return self if obj is None else self.method.__get__(obj, cls)


class TestCase(unittest.TestCase):
    """TF1's test case: every test starts on a fresh default graph with graph seed 87654321
    (and numpy seeded the same); `session()` / `cached_session()` run on it."""

    def setUp(self):
        super().setUp()
        self._cached = None
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        set_random_seed(DEFAULT_GRAPH_SEED)

    def tearDown(self):
        if self._cached is not None:
            self._cached[1].close()
            self._cached = None
        super().tearDown()

    def get_temp_dir(self):
        path = os.path.join(get_temp_dir(), re.sub(r"[^\w.]", "_", self.id()))
        os.makedirs(path, exist_ok=True)
        return path

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new session on `graph` (the default graph), its default session for the block."""
        if force_gpu and not is_gpu_available():
            self.skipTest("no GPU available")
        graph = graph or get_default_graph()
        sess = Session(graph=graph, config=config)
        try:
            with graph.as_default(), sess.as_default():
                yield sess
        finally:
            sess.close()

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One session per test (made on first use, closed at tearDown), the default in the block."""
        if force_gpu and not is_gpu_available():
            self.skipTest("no GPU available")
        graph = graph or get_default_graph()
        if self._cached is None or self._cached[0] is not graph:
            if self._cached is not None:
                self._cached[1].close()
            self._cached = (graph, Session(graph=graph, config=config))
        sess = self._cached[1]
        with graph.as_default(), sess.as_default():
            yield sess

    test_session = _NotATest(cached_session)  # TF1's older name; a loader must not run it as a test

    def evaluate(self, tensors):
        """`tensors` run in the default session (or this test's cached one)."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    # -- asserts ---------------------------------------------------------------------------
    def _value(self, a):
        if isinstance(a, (Tensor,)) or hasattr(a, "initializer"):
            return self.evaluate(a)
        return a

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's names
        a, b = self._value(a), self._value(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertEqual(sorted(a), sorted(b), msg)
            for k in a:
                self.assertAllClose(a[k], b[k], rtol, atol, msg)
            return
        if isinstance(a, (list, tuple)) and a and not np.isscalar(a[0]) and not isinstance(a[0], (list, tuple)) \
                and not hasattr(a[0], "shape"):
            a = np.asarray(a)
        a, b = np.asarray(a), np.asarray(b)
        if np.float16 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, 1e-3), max(atol, 1e-3)
        self.assertEqual(a.shape, b.shape, msg or f"Shape mismatch: expected {a.shape}, got {b.shape}")
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa: N802
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        a, b = np.asarray(self._value(a)), np.asarray(self._value(b))
        if np.float32 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.float16 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        a, b = np.asarray(self._value(a)), np.asarray(self._value(b))
        self.assertEqual(a.shape, b.shape, msg or f"Shape mismatch: expected {a.shape}, got {b.shape}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertLess(np.max(self._value(a)), comparison_target)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertGreater(np.min(self._value(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertLessEqual(np.max(self._value(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertGreaterEqual(np.min(self._value(a)), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        target = np.asarray(self._value(target))
        low = target > lower_bound if open_lower_bound else target >= lower_bound
        high = target < upper_bound if open_upper_bound else target <= upper_bound
        bad = ~(low & high)
        if bad.any():
            raise AssertionError(f"{int(bad.sum())} of {target.size} elements outside the range "
                                 f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                                 f"{')' if open_upper_bound else ']'}: {target[bad][:10]}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}" + (f" ({msg})" if msg else ""))

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertEqual(list(np.shape(np_array)), tf_tensor.get_shape().as_list(), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        target = np.asarray(self._value(target))
        self.assertEqual(target.dtype, dtypes.as_dtype(expected_dtype).np)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                text = e.message if isinstance(e, errors.OpError) else str(e)
                return re.search(expected_err_re_or_predicate, text) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e).__name__}: {e} does not match "
                                     f"{expected_err_re_or_predicate!r}") from e
        else:
            raise AssertionError(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

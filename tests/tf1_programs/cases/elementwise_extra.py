"""The elementwise math beyond the basic ops: trigonometric and hyperbolic functions and their
inverses, erfc, rint, truncatemod, floor_div, scalar_mul, log_sigmoid, the complex parts on real
and complex inputs, xlogy/xdivy/xlog1py, multiply_no_nan, reciprocal_no_nan, nextafter,
softplus/softsign under tf.math, and tf.bitwise: values (domain edges, zeros, NaN and
infinities), names, static shapes, gradients (broadcasting binary ops included) and the errors
at graph build and at run time."""

UNARY = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc", "rint",
         "log_sigmoid", "conj", "real", "imag", "angle"]
MATH_UNARY = ["reciprocal_no_nan", "softplus", "softsign"]
MATH_BINARY = ["xlogy", "xdivy", "xlog1py", "multiply_no_nan", "nextafter"]
TOP_ONLY = ["truncatemod", "floor_div"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def err(fn, message=False):
    try:
        fn()
    except Exception as e:
        return type(e).__name__ + (": " + str(e).splitlines()[0] if message else "")
    return "no error"


def _float_ops(tf, np, dt):
    """The values of every float op on inputs of type dt (placeholders; feeds returned)."""
    npdt = dt.as_numpy_dtype
    xs = np.array([-100.0, -3.7, -2.0, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 1.5, 2.0, 2.5, 3.7, 100.0], npdt)
    x = tf.placeholder(dt, [None], name="x")
    t = {}
    for n in UNARY:
        t[n] = getattr(tf, n)(x)
    for n in UNARY[:12]:
        t["math_" + n] = getattr(tf.math, n)(x)
    for n in MATH_UNARY:
        t[n] = getattr(tf.math, n)(x)
    t["rint_halves"] = tf.rint(tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.4], dt))
    t["scalar_mul"] = tf.scalar_mul(3, x)
    t["math_scalar_mul"] = tf.math.scalar_mul(tf.constant(-0.5, dt), x)

    # binary: all pairs of a few special values (zeros of both signs, +-1, NaN, infinities)
    specials = np.array([-np.inf, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan], npdt)
    a = np.repeat(specials, specials.size)
    b = np.tile(specials, specials.size)
    p = tf.placeholder(dt, [None], name="p")
    q = tf.placeholder(dt, [None], name="q")
    t["atan2"] = tf.atan2(p, q)
    t["math_atan2"] = tf.math.atan2(y=p, x=q)
    t["xlogy"] = tf.math.xlogy(p, q)
    t["xdivy"] = tf.math.xdivy(p, q)
    t["xlog1py"] = tf.math.xlog1py(p, q)
    t["mul_no_nan"] = tf.math.multiply_no_nan(p, q)
    t["truncatemod"] = tf.truncatemod(p, q)
    t["floor_div"] = tf.floor_div(p, q)
    na = tf.math.nextafter(p, q)
    t["nextafter"] = na
    # one ulp is below the comparison's tolerance: compare the bits through an equality (TF's CPU
    # comparisons flush denormals to zero, so the steps from +-0 are only compared as values)
    t["nextafter_is_numpy"] = tf.equal(na, tf.constant(np.nextafter(a, b)))
    t["floor_div_inexact"] = tf.floor_div(tf.constant([1.0, -1.0, 0.7], dt), tf.constant([0.1, 0.1, 0.1], dt))
    feed = {x: xs, p: a, q: b}
    return t, feed


def _gradients(tf, np, dt):
    npdt = dt.as_numpy_dtype
    rng = np.random.RandomState(5)
    g = {}
    feed = {}
    inside = tf.placeholder(dt, [6], name="inside")     # in (-1, 1): asin, acos, atanh
    feed[inside] = np.array([-0.9, -0.5, -0.1, 0.0, 0.4, 0.8], npdt)
    above = tf.placeholder(dt, [6], name="above")       # in (1, inf): acosh
    feed[above] = np.array([1.1, 1.5, 2.0, 3.0, 7.0, 20.0], npdt)
    anyx = tf.placeholder(dt, [6], name="anyx")
    feed[anyx] = np.array([-3.0, -1.2, -0.3, 0.0, 0.7, 2.5], npdt)
    w = tf.constant(np.arange(1, 7, dtype=npdt))
    for n, src in (("tan", anyx), ("asin", inside), ("acos", inside), ("atan", anyx), ("sinh", anyx),
                   ("cosh", anyx), ("asinh", anyx), ("acosh", above), ("atanh", inside), ("erfc", anyx),
                   ("log_sigmoid", anyx), ("conj", anyx), ("real", anyx)):
        g[n] = tf.gradients(tf.reduce_sum(getattr(tf, n)(src) * w), src)[0]
    for n, src in (("reciprocal_no_nan", anyx), ("softplus", anyx), ("softsign", anyx)):
        g[n] = tf.gradients(tf.reduce_sum(getattr(tf.math, n)(src) * w), src)[0]
    g["scalar_mul"] = tf.gradients(tf.reduce_sum(tf.scalar_mul(2.5, anyx) * w), anyx)[0]
    # no gradient: None, as TF gives
    g["rint"] = tf.gradients(tf.reduce_sum(tf.rint(anyx)), anyx)[0]
    g["imag"] = tf.gradients(tf.reduce_sum(tf.imag(anyx)), anyx)[0]
    g["angle"] = tf.gradients(tf.reduce_sum(tf.angle(anyx)), anyx)[0]
    g["floor_div"] = tf.gradients(tf.reduce_sum(tf.floor_div(anyx, 2.0)), anyx)

    # broadcasting binary ops: [2, 3] with [3], both ways round
    m = tf.placeholder(dt, [2, 3], name="m")
    v = tf.placeholder(dt, [3], name="v")
    feed[m] = np.array([[0.0, 1.5, -2.0], [0.5, 0.0, 3.0]], npdt)       # zeros for xlogy/xdivy/xlog1py
    feed[v] = np.array([0.7, 2.0, 1.3], npdt)
    pos = tf.placeholder(dt, [2, 3], name="pos")
    feed[pos] = np.abs(rng.randn(2, 3)).astype(npdt) + np.array(0.5, npdt)
    wm = tf.constant(np.arange(1, 7, dtype=npdt).reshape(2, 3))
    for n, fn in (("atan2", tf.atan2), ("xlogy", tf.math.xlogy), ("xdivy", tf.math.xdivy),
                  ("xlog1py", tf.math.xlog1py), ("mul_no_nan", tf.math.multiply_no_nan),
                  ("nextafter", tf.math.nextafter)):
        g[n + "_mv"] = tf.gradients(tf.reduce_sum(fn(m, v) * wm), [m, v])
        g[n + "_vm"] = tf.gradients(tf.reduce_sum(fn(v, pos) * wm), [v, pos])
    # mul_no_nan with zeros in y: the gradient of x is 0 there
    g["mul_no_nan_zero_y"] = tf.gradients(tf.reduce_sum(tf.math.multiply_no_nan(v, m) * wm), [v, m])
    return g, feed


def _integers(tf, np):
    t = {}
    for dt in (tf.int8, tf.int32, tf.int64, tf.uint8):
        npdt = dt.as_numpy_dtype
        signed = dt != tf.uint8
        xs = np.array([-128, -77, -5, -1, 0, 1, 5, 77, 127] if signed else [0, 1, 5, 77, 128, 200, 255], npdt)
        ys = np.array([3, -1, 12, 0, 7, 6, -128, 99, -2] if signed else [3, 255, 12, 0, 7, 6, 128], npdt)
        bits = dt.size * 8
        amounts = np.arange(xs.size) % bits  # in range: [0, bits)
        k = dt.name
        x, y = tf.constant(xs), tf.constant(ys)
        t[k + "_and"] = tf.bitwise.bitwise_and(x, y)
        t[k + "_or"] = tf.bitwise.bitwise_or(x, y)
        t[k + "_xor"] = tf.bitwise.bitwise_xor(x, y)
        t[k + "_invert"] = tf.bitwise.invert(x)
        t[k + "_left"] = tf.bitwise.left_shift(x, tf.constant(amounts.astype(npdt)))
        t[k + "_right"] = tf.bitwise.right_shift(x, tf.constant(amounts.astype(npdt)))
        t[k + "_left_top"] = tf.bitwise.left_shift(x, tf.constant(np.full(xs.size, bits - 1, npdt)))
        t[k + "_right_top"] = tf.bitwise.right_shift(x, tf.constant(np.full(xs.size, bits - 1, npdt)))
        t[k + "_left_scalar"] = tf.bitwise.left_shift(x, tf.constant(npdt(3)))
    t["bitwise_py"] = tf.bitwise.bitwise_and(12, 10)
    a, b = tf.constant([12, -7, 0]), tf.constant([10, 3, -1])
    t["op_and"], t["op_or"], t["op_xor"], t["op_invert"] = a & b, a | b, a ^ b, ~a
    t["op_rand"], t["op_ror"] = 6 & a, 6 | a
    u = tf.constant(np.array([12, 200], np.uint8))
    t["op_invert_uint8"] = ~u
    bt, bf = tf.constant([True, True, False]), tf.constant([True, False, False])
    t["op_bool_and"], t["op_bool_or"], t["op_bool_xor"], t["op_bool_not"] = bt & bf, bt | bf, bt ^ bf, ~bt
    for dt in (tf.int32, tf.int64):
        npdt = dt.as_numpy_dtype
        a = tf.constant(np.array([7, -7, 7, -7, 0, 9, -9, 2147483647], npdt))
        b = tf.constant(np.array([3, 3, -3, -3, 5, 1, 4, 10], npdt))
        t[dt.name + "_truncatemod"] = tf.truncatemod(a, b)
        t[dt.name + "_floor_div"] = tf.floor_div(a, b)
    for dt in (tf.int8, tf.uint8):
        t[dt.name + "_floor_div"] = tf.floor_div(tf.constant(np.array([7, 100, 0], dt.as_numpy_dtype)),
                                                 tf.constant(np.array([2, 3, 9], dt.as_numpy_dtype)))
    t["floor_div_bcast"] = tf.floor_div(tf.constant([[7, -7], [9, -9]]), tf.constant([2, -4]))
    t["int_scalar_mul"] = tf.scalar_mul(3, tf.constant([1, -2, 4]))
    t["int_conj"] = tf.conj(tf.constant([1, -2]))
    t["int_real"] = tf.real(tf.constant([1, -2]))
    t["int_imag"] = tf.imag(tf.constant([1, -2]))
    return t


def _build_errors(tf, np):
    i32 = tf.constant([1, -2, 3])
    f32 = tf.constant([0.5, -1.0])
    out = {}
    for n in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc", "rint",
              "log_sigmoid"):
        out[n + "_int"] = err(lambda n=n: getattr(tf, n)(i32))
    out["atan2_int"] = err(lambda: tf.atan2(i32, i32))
    for n in ("xlogy", "xdivy", "xlog1py", "multiply_no_nan", "nextafter"):
        out[n + "_int"] = err(lambda n=n: getattr(tf.math, n)(i32, i32))
    for n in ("reciprocal_no_nan", "softplus", "softsign"):
        out[n + "_int"] = err(lambda n=n: getattr(tf.math, n)(i32))
    f16 = tf.constant([1.0], tf.float16)
    out["nextafter_f16"] = err(lambda: tf.math.nextafter(f16, f16))
    out["truncatemod_int8"] = err(lambda: tf.truncatemod(tf.constant([1], tf.int8), tf.constant([1], tf.int8)))
    out["truncatemod_mixed"] = err(lambda: tf.truncatemod(i32, f32))
    for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        out[n + "_float"] = err(lambda n=n: getattr(tf.bitwise, n)(f32, f32))
        out[n + "_mixed"] = err(lambda n=n: getattr(tf.bitwise, n)(i32, tf.constant([1, 2, 3], tf.int64)))
    out["invert_float"] = err(lambda: tf.bitwise.invert(f32))
    out["invert_bool"] = err(lambda: tf.bitwise.invert(tf.constant([True])))
    out["scalar_mul_vector"] = err(lambda: tf.scalar_mul([1.0, 2.0], f32), message=True)
    out["scalar_mul_matrix"] = err(lambda: tf.scalar_mul(tf.ones([1, 1]), f32))
    out["angle_int"] = err(lambda: tf.angle(i32))
    out["real_string"] = err(lambda: tf.real(tf.constant(["a"])), message=True)
    out["conj_string"] = err(lambda: tf.conj(tf.constant(["a"])), message=True)
    out["conj_bool"] = err(lambda: tf.conj(tf.constant([True])), message=True)
    out["atan2_shapes"] = err(lambda: tf.atan2(tf.ones([2, 3]), tf.ones([2])))
    out["xlogy_shapes"] = err(lambda: tf.math.xlogy(tf.ones([4]), tf.ones([3])))
    out["truncatemod_no_gradient"] = err(lambda: tf.gradients(tf.truncatemod(f32, f32), f32))
    return out


def _complex(tf, np):
    t = {}
    for dt in (tf.complex64, tf.complex128):
        z = tf.constant(np.array([1 + 2j, -3 - 4j, -1 + 0j, 0 - 1j], dt.as_numpy_dtype))
        k = dt.name
        t[k + "_real"] = tf.real(z)
        t[k + "_imag"] = tf.imag(z)
        t[k + "_angle"] = tf.angle(z)
        t[k + "_conj"] = tf.conj(z)
        t[k + "_math_conj"] = tf.math.conj(z)
        loss = tf.reduce_sum(tf.real(z) * [1.0, 2.0, 3.0, 4.0] + tf.imag(z) * [-1.0, 0.5, 2.0, 1.0] + tf.angle(z))
        t[k + "_grad"] = tf.gradients(loss, z)[0]
        t[k + "_conj_grad"] = tf.gradients(tf.real(tf.conj(z) * z), z)[0]
    return t


def run(tf, np):
    out = {}
    out["api"] = {
        "top": {n: hasattr(tf, n) for n in UNARY + ["atan2", "scalar_mul"] + TOP_ONLY + MATH_UNARY + MATH_BINARY},
        "math": {n: hasattr(tf.math, n) for n in UNARY + ["atan2", "scalar_mul"] + MATH_UNARY + MATH_BINARY},
        "bitwise": {n: hasattr(tf.bitwise, n) for n in BITWISE},
    }
    for dt in (tf.float32, tf.float64):
        g = tf.Graph()
        with g.as_default():
            t, feed = _float_ops(tf, np, dt)
            grads, gfeed = _gradients(tf, np, dt)
            feed.update(gfeed)
            res = {
                "shapes": {k: (v.shape.as_list() if v.shape.ndims is not None else "unknown") for k, v in t.items()},
                "dtypes": {k: v.dtype.name for k, v in t.items()},
                "grad_none": {k: ([x is None for x in v] if isinstance(v, list) else v is None)
                              for k, v in grads.items()},
            }
            if dt == tf.float32:
                res["names"] = {k: v.name for k, v in t.items()}
                bshape = {
                    "atan2": tf.atan2(tf.ones([2, 1, 3]), tf.ones([4, 1])).shape.as_list(),
                    "xlogy": tf.math.xlogy(tf.ones([2, 3]), tf.ones([3])).shape.as_list(),
                    "mul_no_nan": tf.math.multiply_no_nan(tf.ones([3]), tf.ones([2, 1])).shape.as_list(),
                    "nextafter": tf.math.nextafter(tf.ones([5, 1]), tf.ones([1, 2])).shape.as_list(),
                    "shift": tf.bitwise.left_shift(tf.ones([3, 1], tf.int32), tf.ones([2], tf.int32)).shape.as_list(),
                }
                res["broadcast_shapes"] = bshape
            with tf.Session(graph=g) as sess:
                res["values"] = sess.run(t, feed)
                res["grads"] = sess.run({k: v for k, v in grads.items()
                                         if v is not None and not (isinstance(v, list) and None in v)}, feed)
        out[dt.name] = res

    g = tf.Graph()
    with g.as_default():
        ints = _integers(tf, np)
        cplx = _complex(tf, np)
        out["int_dtypes"] = {k: v.dtype.name for k, v in ints.items()}
        out["operator_names"] = {k: v.name for k, v in ints.items() if k.startswith("op_") and k != "op_bool_xor"}
        out["complex_dtypes"] = {k: v.dtype.name for k, v in cplx.items()}
        out["build_errors"] = _build_errors(tf, np)
        tm0 = tf.truncatemod(tf.constant([7, 3]), tf.constant([0, 1]))
        fd0 = tf.floor_div(tf.constant([7, 3]), tf.constant([0, 1]))
        tm0f = tf.truncatemod(tf.constant([7.0, -3.0]), tf.constant([0.0, 2.0]))
        with tf.Session(graph=g) as sess:
            out["int_values"] = sess.run(ints)
            out["complex_values"] = sess.run(cplx)
            out["truncatemod_by_zero"] = err(lambda: sess.run(tm0))
            out["floor_div_by_zero"] = err(lambda: sess.run(fd0))
            out["truncatemod_float_by_zero"] = sess.run(tm0f)
    return out

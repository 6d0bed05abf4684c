"""Control flow and gradients, cases a differential sweep against TensorFlow found
wrong: gradients through integer tensors (None) and of complex ys (grad_ys needed),
tf.hessians (a loop over rows, so unknown shapes work; None derivatives are an
error), the gradient of a gather of a loop's result, tf.case without a default
(an assert when no predicate holds) and with a dict of pairs, a loop variable whose
dtype changes (TypeError), and TensorArrays: the static length of a fixed-size
array's stack, and map_fn over strings."""


def build_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is the result
        return type(e).__name__
    return "no error"


def run_error(sess, fetch):
    try:
        sess.run(fetch)
    except Exception as e:  # noqa: BLE001 - the class is the result
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0])
        n = tf.constant(3)
        out["int_grads"] = {"cast": str(tf.gradients(tf.cast(x, tf.int32), x)),
                            "int_x": str(tf.gradients(n * 2, n))}
        out["complex_ys"] = build_error(lambda: tf.gradients(tf.complex(x, x), x))
        out["grad_ys_dtype"] = build_error(lambda: tf.gradients(x * 2.0, x, grad_ys=tf.constant([1, 2])))

        m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        hm = tf.hessians(tf.reduce_sum(m ** 3), m)[0]
        p = tf.placeholder(tf.float32, None)
        hp = tf.hessians(tf.reduce_sum(p ** 3), p)[0]
        out["hessians"] = {"matrix": hm, "matrix_shape": str(hm.shape), "unknown_shape": str(hp.shape),
                           "linear": build_error(lambda: tf.hessians(tf.reduce_sum(x * 2.0), x)),
                           "unconnected": build_error(lambda: tf.hessians(tf.reduce_sum(x ** 2), [x, m]))}

        params = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        _, y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * 2.0), (0, params))
        gather_grad = tf.gradients(tf.reduce_sum(tf.gather(y, [0, 0, 2])), params)[0]

        k = tf.constant(5)
        no_default = tf.case([(k < 1, lambda: tf.constant(1)), (k < 3, lambda: tf.constant(2))])
        k0 = tf.constant(0)
        by_dict = tf.case({k0 < 1: lambda: tf.constant(1), k0 < 3: lambda: tf.constant(2)},
                          default=lambda: tf.constant(3), exclusive=False)
        out["case_errors"] = {
            "empty": build_error(lambda: tf.case([], default=lambda: tf.constant(7))),
            "list_pair": build_error(lambda: tf.case([[k < 1, lambda: tf.constant(1)]])),
            "int_pred": build_error(lambda: tf.case([(k, lambda: tf.constant(1))], default=lambda: k))}
        out["loop_dtype_change"] = build_error(
            lambda: tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.int64) + 1, [tf.constant(0)]))

        ta = tf.TensorArray(tf.float32, size=3).write(0, [1.0]).write(1, [2.0]).write(2, [3.0])
        stacked = ta.stack()
        words = tf.map_fn(lambda s: tf.strings.length(s), tf.constant(["a", "bcd", ""]), dtype=tf.int32)
        with tf.Session() as sess:
            out["hessian_unknown"] = sess.run(hp, {p: np.array([1.0, 2.0], np.float32)})
            out["hessians"]["matrix"] = sess.run(hm)
            out["gather_grad"] = sess.run(gather_grad)
            out["case"] = {"no_default": run_error(sess, no_default), "dict": sess.run(by_dict)}
            out["ta"] = {"stack": sess.run(stacked), "shape": str(stacked.shape), "size": sess.run(ta.size())}
            out["map_strings"] = sess.run(words)
    return out

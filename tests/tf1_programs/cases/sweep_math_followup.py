"""Math and clipping found wrong by a differential sweep against TensorFlow (follow-up):
clip_by_value/clip_by_norm/clip_by_global_norm of IndexedSlices (their values are clipped),
clip_by_value's bounds that broadcast t larger (ValueError), clip_by_norm's negative clip_norm,
global_norm of nothing, add_n of IndexedSlices, cumsum/cumprod with a float axis (TypeError),
div_no_nan of integers (cast to floating point), tensordot of an operand of unknown rank, reducing
a scalar over axis 0 (ValueError) and argmax of a scalar (built; InvalidArgumentError at run)."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def meta(t):
    return {"name": t.name, "op": t.op.type, "dtype": t.dtype.name, "shape": str(t.shape)}


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        c = tf.constant

        def slices():
            return tf.IndexedSlices(c([[1., 5.], [3., -4.]]), c([0, 2]), c([3, 2]))

        s = c(3.)
        out["build_errors"] = {
            "clip_bound_bcast_min": err(lambda: tf.clip_by_value(c([1., 2.]), c([[0.], [1.]]), 3.)),
            "clip_bound_bcast_max": err(lambda: tf.clip_by_value(c([1., 2.]), 0., c([[0.], [1.]]))),
            "cumsum_float_axis": err(lambda: tf.cumsum(c([[1., 2.]]), 1.0)),
            "cumprod_float_axis": err(lambda: tf.cumprod(c([[1., 2.]]), 1.0)),
            "sum_scalar_ax0": err(lambda: tf.reduce_sum(s, 0)),
            "mean_scalar_ax0": err(lambda: tf.reduce_mean(s, 0)),
            "max_scalar_ax0_tensor": err(lambda: tf.reduce_max(s, c(0))),
            "all_scalar_ax0": err(lambda: tf.reduce_all(c(True), 0)),
            "lse_scalar_ax0": err(lambda: tf.reduce_logsumexp(s, 0)),
            "count_nonzero_scalar_ax0": err(lambda: tf.count_nonzero(s, 0)),
        }
        t = {}
        slice_results = {
            "clip_by_value_is": tf.clip_by_value(slices(), -1., 2.),
            "clip_by_norm_is": tf.clip_by_norm(slices(), 2.),
        }
        clipped, gnorm = tf.clip_by_global_norm([slices(), c([1., 2.]), None], 2.)
        slice_results["clip_by_global_norm_is"] = clipped[0]
        t["clip_by_global_norm_dense"] = clipped[1]
        t["clip_by_global_norm_norm"] = gnorm
        t["global_norm_is"] = tf.global_norm([slices()])
        t["global_norm_empty"] = tf.global_norm([])
        t["global_norm_nones"] = tf.global_norm([None])
        t["clip_by_norm_neg"] = tf.clip_by_norm(c([3., 4.]), -1.)
        t["clip_by_norm_neg_tensor"] = tf.clip_by_norm(c([3., 4.]), c(-1.))
        t["clip_by_norm_f64_norm"] = tf.clip_by_norm(c([3., 4.]), c(2., tf.float64))
        t["add_n_is"] = tf.add_n([slices(), slices()])
        t["add_n_is_dense"] = tf.add_n([slices(), tf.ones([3, 2])])
        t["cumsum_int64_axis"] = tf.cumsum(c([[1., 2.]]), c(1, tf.int64))
        for dt in (tf.int8, tf.uint8, tf.int16, tf.int32, tf.int64):
            t[f"div_no_nan_{dt.name}"] = tf.div_no_nan(c([7, -7, 0, 6], dt) if not dt.is_unsigned else c([7, 7, 0, 6], dt),
                                                       c([2, 2, 0, 3], dt))
        t["div_no_nan_py"] = tf.div_no_nan(3, 0)
        t["div_no_nan_py_x"] = tf.div_no_nan(3, c([0., 2.]))
        unk_a = tf.placeholder(tf.float32)
        unk_b = tf.placeholder(tf.float32)
        t["tensordot_unk_int"] = tf.tensordot(unk_a, tf.ones([3, 4]), 1)
        t["tensordot_unk_b"] = tf.tensordot(tf.ones([2, 3]), unk_b, 1)
        t["tensordot_unk_lists"] = tf.tensordot(unk_a, tf.ones([3, 4]), [[1], [0]])
        t["tensordot_unk_both"] = tf.tensordot(unk_a, unk_b, [[-1], [0]])
        t["tensordot_unk_outer"] = tf.tensordot(unk_a, tf.ones([2]), 0)
        t["sum_scalar_empty_axes"] = tf.reduce_sum(s, [])
        argmax_s = tf.argmax(s)
        argmin_s = tf.argmin(s, 0)
        argmax_v = tf.argmax(c([3.]), 1)
        argmax_unk_axis = tf.argmax(tf.ones([2, 3, 4]), tf.placeholder(tf.int32))
        out["meta"] = {k: meta(v) for k, v in t.items()}
        out["slices_meta"] = {k: {"values": meta(v.values), "shape": str(v.shape)} for k, v in slice_results.items()}
        out["arg_meta"] = [meta(x) for x in (argmax_s, argmin_s, argmax_v, argmax_unk_axis)]
        feed = {unk_a: np.arange(6, dtype=np.float32).reshape(2, 3), unk_b: np.ones((3, 4), np.float32)}
        with tf.Session() as sess:
            out["values"] = sess.run(t, feed)
            sl = sess.run(slice_results)
            out["slices"] = {k: [v.values, v.indices, v.dense_shape] for k, v in sl.items()}
            out["run_errors"] = {"argmax_scalar": err(lambda: sess.run(argmax_s)),
                                 "argmin_scalar": err(lambda: sess.run(argmin_s)),
                                 "argmax_vector_axis1": err(lambda: sess.run(argmax_v))}
    return out

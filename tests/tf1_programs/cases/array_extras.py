"""Array, scatter and search ops (graphrt/array_extras and gather/boolean_mask): values,
gradients, static shapes and error classes."""


def _err(tf, fn):
    try:
        fn()
        return "none"
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        t = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
        idx = tf.constant([[0, 1], [2, 3], [0, 1]])
        upd = tf.constant([10.0, 20.0, 30.0])
        rows = tf.constant([[2], [0]])
        row_upd = tf.constant([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
        ts = {
            "ts_update": tf.tensor_scatter_nd_update(t, rows, row_upd),
            "ts_add": tf.tensor_scatter_nd_add(t, idx, upd),
            "ts_sub": tf.tensor_scatter_sub(t, idx, upd),
            "ts_min": tf.tensor_scatter_nd_min(t, idx, tf.constant([-1.0, 100.0, 0.5])),
            "ts_max": tf.tensor_scatter_nd_max(t, idx, tf.constant([-1.0, 100.0, 0.5])),
            "ts_alias": tf.tensor_scatter_update(t, rows, row_upd),
        }
        x = tf.placeholder(tf.float32, [3, 4])
        u = tf.placeholder(tf.float32, [3])
        for k in ("update", "add", "sub", "min", "max"):
            fn = getattr(tf, "tensor_scatter_nd_" + k)
            y = fn(x, idx, u * (u if k in ("min", "max") else 1.0))
            gx, gu = tf.gradients(tf.reduce_sum(y * y), [x, u])
            ts["grad_x_" + k], ts["grad_u_" + k] = gx, gu
        out["ts_type"] = ts["ts_add"].op.type
        out["ts_min_type"] = ts["ts_min"].op.type
        out["ts_shape"] = str(ts["ts_update"].shape)

        seq = tf.constant([[1.0, 3.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0]])
        vals = tf.constant([[3.0, 0.0, 8.0], [4.0, 5.0, -1.0]])
        ss = {
            "ss_left": tf.searchsorted(seq, vals),
            "ss_right": tf.searchsorted(seq, vals, side="right", out_type=tf.int64),
            "ss_1d": tf.searchsorted([1, 2, 4], [0, 2, 5]),
        }
        sd_out, sd_idx = tf.setdiff1d([5, 1, 9, 1, 4], [1, 4], index_dtype=tf.int64)
        uy, ui, uc = tf.unique_with_counts(tf.constant([4, 2, 4, 7, 2, 4]), out_idx=tf.int64)
        hv = tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 4.99, 2.5, 10.0])
        misc = {
            "sd_out": sd_out, "sd_idx": sd_idx, "u_y": uy, "u_idx": ui, "u_count": uc,
            "hist": tf.histogram_fixed_width(hv, [0.0, 5.0], nbins=5),
            "hist_i64": tf.histogram_fixed_width(tf.constant([1, 2, 9, -3]), [0, 5], 5, dtype=tf.int64),
            "hist_bins": tf.histogram_fixed_width_bins(tf.reshape(hv, [2, 4]), [0.0, 5.0], nbins=5),
            "unravel_vec": tf.unravel_index([1, 5, 4], [2, 3]),
            "unravel_scalar": tf.unravel_index(tf.constant(7, tf.int64), tf.constant([2, 4], tf.int64)),
            "sat_f2i": tf.saturate_cast(tf.constant([-1e10, 3.7, 1e10, -2.5]), tf.int32),
            "sat_i2u8": tf.saturate_cast(tf.constant([-300, 3, 300]), tf.uint8),
            "sat_f2u8": tf.saturate_cast(tf.constant([-3.0, 254.6, 900.0]), tf.uint8),
            "bitcast_down": tf.bitcast(tf.constant([1.0, 2.0]), tf.uint8),
            "bitcast_up": tf.bitcast(tf.constant(np.arange(8, dtype=np.uint8).reshape(2, 4)), tf.int32),
            "bitcast_same": tf.bitcast(tf.constant([1.0, -2.0]), tf.int32),
            "pstack": tf.parallel_stack([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]), tf.constant([5.0, 6.0])]),
        }
        sn = tf.shape_n([tf.zeros([2]), tf.zeros([3, 4, 1])], out_type=tf.int64)
        misc["shape_n0"], misc["shape_n1"] = sn[0], sn[1]
        out["bitcast_shapes"] = [str(misc["bitcast_down"].shape), str(misc["bitcast_up"].shape)]
        out["unravel_shape"] = str(misc["unravel_vec"].shape)
        out["pstack_shape"] = str(misc["pstack"].shape)
        out["hist_shape"] = str(misc["hist"].shape)

        p = tf.placeholder(tf.float32, [None, 3])
        e = tf.ensure_shape(p, [2, None])
        out["ensure_static"] = str(e.shape)
        out["ensure_type"] = e.op.type
        misc["ensure_grad"] = tf.gradients(tf.reduce_sum(e * 3.0), p)[0]

        # gather with batch_dims, batch_gather, boolean_mask (N-D, axis)
        params = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        bidx = tf.constant([[2, 0], [1, 1]])
        gp = tf.placeholder(tf.float32, [2, 3, 4])
        gb = {
            "gather_bd1": tf.gather(params, bidx, batch_dims=1),
            "gather_bd1_axis2": tf.gather(params, tf.constant([[3, 0, 1], [2, 2, 0]]), axis=2, batch_dims=1),
            "gather_bd2": tf.gather(params, tf.constant([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]]),
                                    batch_dims=2),
            "gather_bd_neg": tf.gather(params, bidx, batch_dims=-1),
            "gather_bd_eq": tf.gather(params, tf.constant([2, 0]), batch_dims=1),
            "batch_gather": tf.batch_gather(params, bidx),
            "gather_bd_grad": tf.gradients(tf.reduce_sum(tf.gather(gp, bidx, axis=1, batch_dims=1) ** 2), gp)[0],
        }
        out["gather_bd_shapes"] = [str(gb[k].shape) for k in ("gather_bd1", "gather_bd1_axis2", "gather_bd2",
                                                              "gather_bd_eq")]
        mask2 = tf.constant([[True, False, True], [False, True, True]])
        mask_axis = tf.constant([False, True, True, False])
        bm = {
            "bmask_2d": tf.boolean_mask(params, mask2),
            "bmask_axis": tf.boolean_mask(params, mask_axis, axis=2),
            "bmask_2d_axis1": tf.boolean_mask(params, tf.constant([[True, False, False, True], [False, True, True,
                                                                   False], [True, True, True, True]]), axis=1),
            "bmask_grad": tf.gradients(tf.reduce_sum(tf.boolean_mask(gp, mask2) ** 2), gp)[0],
        }
        out["bmask_shapes"] = [str(bm[k].shape) for k in ("bmask_2d", "bmask_axis", "bmask_2d_axis1")]

        # segment products and their gradients (zeros: none, one, two in a segment)
        data = tf.placeholder(tf.float32, [6, 2])
        seg = {
            "seg_prod": tf.segment_prod(data, [0, 0, 1, 1, 1, 3]),
            "useg_prod": tf.unsorted_segment_prod(data, [2, 0, -1, 2, 0, 2], 4),
            "math_useg_prod": tf.math.unsorted_segment_prod(data, [1, 1, 1, 0, 0, 0], 2),
        }
        seg["seg_grad"] = tf.gradients(tf.reduce_sum(seg["seg_prod"] * [[1.0, 2.0]]), data)[0]
        seg["useg_grad"] = tf.gradients(tf.reduce_sum(seg["useg_prod"] * [[1.0, 2.0]]), data)[0]
        out["seg_shape"] = str(seg["seg_prod"].shape)
        out["useg_shape"] = str(seg["useg_prod"].shape)

        # variable scatters
        v = tf.Variable(np.arange(1, 7, dtype=np.float32).reshape(3, 2))
        w = tf.Variable(np.arange(1, 7, dtype=np.float32).reshape(3, 2))
        bv = tf.Variable(np.zeros((2, 4), np.float32))
        vi = tf.Variable([10, 20, 30])
        init = tf.global_variables_initializer()
        nd_upd = tf.scatter_nd_update(v, [[0, 1], [2, 0]], [100.0, 200.0])
        nd_add = tf.scatter_nd_add(v, [[1]], [[0.5, 0.5]])
        nd_sub = tf.scatter_nd_sub(v, [[1, 1], [1, 1]], [1.0, 2.0])
        smul = tf.scatter_mul(w, [0, 2, 0], [[2.0, 3.0], [0.5, 0.5], [10.0, 10.0]])
        sdiv = tf.scatter_div(w, [1], [[4.0, 8.0]])
        smin = tf.scatter_min(w, [2, 2], [[0.0, 9.0], [-1.0, 100.0]])
        smax = tf.scatter_max(w, [1], [[7.0, -7.0]])
        sdiv_int = tf.scatter_div(vi, [0, 2], [3, -4])
        bsu = tf.batch_scatter_update(bv, [[1, 3], [0, 2]], [[1.0, 2.0], [3.0, 4.0]])

    with tf.Session(graph=g) as sess:
        feed = {x: np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0, u: np.array([2.0, -3.0, 1.5], np.float32)}
        out.update(sess.run(ts, feed))
        out.update(sess.run(ss))
        out.update(sess.run(misc, {p: np.ones((2, 3), np.float32)}))
        out.update(sess.run(gb, {gp: np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5}))
        out.update(sess.run(bm, {gp: np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5}))
        dv = np.array([[1, 2], [3, 0], [2, 0], [0, 5], [4, 0], [6, 7]], np.float32)
        out.update(sess.run(seg, {data: dv}))
        sess.run(init)
        out["nd_upd"] = sess.run(nd_upd)
        out["nd_add"] = sess.run(nd_add)
        out["nd_sub"] = sess.run(nd_sub)
        out["smul"] = sess.run(smul)
        out["sdiv"] = sess.run(sdiv)
        out["smin"] = sess.run(smin)
        out["smax"] = sess.run(smax)
        out["sdiv_int"] = sess.run(sdiv_int)
        out["bsu"] = sess.run(bsu)
        out["err_ensure_run"] = _err(tf, lambda: sess.run(e, {p: np.ones((3, 3), np.float32)}))
        out["err_ts_oob"] = _err(tf, lambda: sess.run(tf.tensor_scatter_nd_update(
            x, tf.placeholder_with_default([[5, 0]], [None, 2]), [1.0]), feed))
        out["err_unravel_oob"] = _err(tf, lambda: sess.run(tf.unravel_index(
            tf.placeholder_with_default([1, 7], [None]), [2, 3])))
        out["err_hist_range"] = _err(tf, lambda: sess.run(tf.histogram_fixed_width(
            hv, tf.placeholder_with_default([2.0, 1.0], [2]), 5)))
        out["err_useg_oob"] = _err(tf, lambda: sess.run(tf.unsorted_segment_prod(
            data, tf.placeholder_with_default([0, 1, 2, 3, 4, 9], [None]), 4), {data: dv}))
        out["err_seg_unsorted"] = _err(tf, lambda: sess.run(tf.segment_prod(
            data, tf.placeholder_with_default([1, 0, 1, 1, 1, 1], [None])), {data: dv}))
        out["err_uwc_2d"] = _err(tf, lambda: sess.run(tf.unique_with_counts(
            tf.placeholder_with_default([[1, 2]], [None, None]))[0]))
        out["err_ss_batch"] = _err(tf, lambda: sess.run(tf.searchsorted(
            tf.placeholder_with_default(np.zeros((2, 3), np.float32), [None, None]),
            tf.placeholder_with_default(np.zeros((3, 2), np.float32), [None, None]))))
    with tf.Graph().as_default():
        out["err_ensure_build"] = _err(tf, lambda: tf.ensure_shape(tf.zeros([3]), [4]))
        out["err_bitcast_shape"] = _err(tf, lambda: tf.bitcast(tf.zeros([3, 3], tf.uint8), tf.float32))
        out["err_ts_shape"] = _err(tf, lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[1]], [1.0, 2.0]))
        out["err_ss_side"] = _err(tf, lambda: tf.searchsorted([1.0, 2.0], [1.5], side="mid"))
        out["err_bmask_scalar"] = _err(tf, lambda: tf.boolean_mask(tf.zeros([2]), True))
        out["err_bmask_shape"] = _err(tf, lambda: tf.boolean_mask(tf.zeros([2, 3]), [[True, False]]))
        out["err_gather_bd_rank"] = _err(tf, lambda: tf.gather(tf.zeros([2, 3, 4]), tf.zeros([2, 2], tf.int32),
                                                               batch_dims=3))
    return out

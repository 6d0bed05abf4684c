"""Dilated convolutions (conv2d dilations, atrous_conv2d and its transpose, tf.nn.convolution,
conv1d, tf.layers dilation_rate), local response normalization, tf.nn.fused_batch_norm (training
and inference, NHWC and NCHW), space_to_batch(_nd)/batch_to_space(_nd), tf.nn.pool and 1-D pools:
values, static shapes, gradients and errors."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(11)
    xv = rng.randn(2, 9, 10, 3).astype(np.float32)
    fv = rng.randn(3, 2, 3, 4).astype(np.float32)
    sv = rng.randn(2, 7, 3).astype(np.float32)
    g = tf.Graph()
    out = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 9, 10, 3], name="x")
        f = tf.constant(fv)
        seq = tf.constant(sv)
        scale = tf.constant([0.5, 1.5, 2.0])
        offset = tf.constant([0.1, -0.2, 0.3])
        dil_same = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", dilations=[1, 2, 3, 1])
        dil_valid = tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 3, 2, 1])
        atrous = tf.nn.atrous_conv2d(x, f, 2, "SAME")
        atrous_t = tf.nn.atrous_conv2d_transpose(atrous, f, tf.shape(x), 2, "SAME")
        conv_nd = tf.nn.convolution(x, f, "VALID", dilation_rate=[2, 2])
        conv_strided = tf.nn.convolution(x, f, "SAME", strides=[2, 1])
        conv1d_dil = tf.nn.conv1d(seq, tf.constant(rng.randn(3, 3, 2).astype(np.float32)), 1, "SAME", dilations=2)
        lrn = tf.nn.lrn(x, depth_radius=1, bias=1.5, alpha=0.3, beta=0.75)
        lrn_default = tf.nn.local_response_normalization(x)
        p_any = tf.placeholder(tf.float32)
        lrn_any = tf.nn.lrn(p_any)
        bn_y, bn_mean, bn_var = tf.nn.fused_batch_norm(x, scale, offset, epsilon=0.01)
        bn_inf = tf.nn.fused_batch_norm(x, scale, offset, mean=[0.1, 0.2, 0.3], variance=[1.0, 2.0, 0.5],
                                        is_training=False)[0]
        x_nchw = tf.transpose(x, [0, 3, 1, 2])
        bn_nchw = tf.nn.fused_batch_norm(x_nchw, scale, offset, data_format="NCHW")[0]
        s2b = tf.space_to_batch_nd(x, [3, 2], [[0, 0], [0, 0]])
        s2b_pad = tf.space_to_batch(x, [[1, 2], [1, 1]], 2)
        b2s = tf.batch_to_space_nd(s2b, [3, 2], [[0, 0], [0, 0]])
        b2s_crop = tf.batch_to_space(s2b_pad, [[1, 2], [1, 1]], 2)
        pool_max = tf.nn.pool(x, [2, 3], "MAX", "SAME", strides=[2, 2])
        pool_avg = tf.nn.pool(x, [3, 3], "AVG", "VALID")
        max1d = tf.nn.max_pool1d(seq, 2, 2, "SAME")
        avg1d = tf.nn.avg_pool1d(seq, 3, 1, "VALID")
        layer = tf.layers.conv2d(x, 2, 3, padding="same", dilation_rate=2,
                                 kernel_initializer=tf.constant_initializer(0.05), name="dilated")
        t = {"dil_same": dil_same, "dil_valid": dil_valid, "atrous": atrous, "atrous_t": atrous_t,
             "conv_nd": conv_nd, "conv_strided": conv_strided, "conv1d_dil": conv1d_dil, "lrn": lrn,
             "lrn_default": lrn_default, "bn_y": bn_y, "bn_mean": bn_mean, "bn_var": bn_var, "bn_inf": bn_inf,
             "bn_nchw": bn_nchw, "s2b": s2b, "s2b_pad": s2b_pad, "b2s": b2s, "b2s_crop": b2s_crop,
             "pool_max": pool_max, "pool_avg": pool_avg, "max1d": max1d, "avg1d": avg1d, "layer": layer}
        w = {k: tf.constant(rng.randn(*v.shape.as_list()).astype(np.float32))
             for k, v in t.items() if v.shape.is_fully_defined() and k not in ("bn_mean", "bn_var")}
        w["x_like"] = tf.constant(rng.randn(2, 9, 10, 3).astype(np.float32))
        loss = (tf.reduce_sum(dil_same * w["dil_same"]) + tf.reduce_sum(dil_valid * w["dil_valid"])
                + tf.reduce_sum(atrous_t * w["x_like"]) + tf.reduce_sum(lrn * w["x_like"])
                + tf.reduce_sum(bn_y * w["x_like"]) + tf.reduce_sum(bn_inf * w["x_like"] * 0.5)
                + tf.reduce_sum(tf.transpose(bn_nchw, [0, 2, 3, 1]) * w["x_like"] * 0.25)
                + tf.reduce_sum(s2b_pad * tf.reduce_mean(w["x_like"])) + tf.reduce_sum(tf.square(conv1d_dil)))
        grads = tf.gradients(loss, [x, f, scale, offset])
        t["grad_x"], t["grad_f"], t["grad_scale"], t["grad_offset"] = grads
        out["static_shapes"] = {k: str(v.shape.as_list()) for k, v in t.items()
                                if k in ("dil_same", "dil_valid", "atrous", "conv_nd", "s2b", "s2b_pad", "b2s",
                                         "b2s_crop", "pool_max", "max1d", "avg1d", "conv1d_dil")}
        out["errors"] = {
            "atrous_rate0": err(lambda: tf.nn.atrous_conv2d(x, f, 0, "SAME")),
            "conv_stride_and_rate": err(lambda: tf.nn.convolution(x, f, "SAME", strides=[2, 2],
                                                                  dilation_rate=[2, 2])),
            "s2b_indivisible": err(lambda: tf.space_to_batch_nd(x, [2, 3], [[0, 0], [0, 0]])),
            "b2s_batch": err(lambda: tf.batch_to_space_nd(tf.zeros([3, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]])),
            "layer_stride_and_rate": err(lambda: tf.layers.conv2d(x, 2, 3, strides=2, dilation_rate=2)),
            "bn_inference_needs_stats": err(lambda: tf.nn.fused_batch_norm(x, scale, offset, is_training=False)),
        }
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            out["values"] = sess.run(t, {x: xv})
            out["run_errors"] = {
                "dil_batch": err(lambda: sess.run(tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", dilations=[2, 1, 1, 1]),
                                                  {x: xv})),
                "lrn_rank": err(lambda: sess.run(lrn_any, {p_any: np.ones([2, 3], np.float32)})),
            }
    return out

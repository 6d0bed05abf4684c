"""3-D convolution and pooling, max pooling with argmax and grayscale morphology:
tf.nn.conv3d (strides, SAME/VALID, dilations), conv3d_transpose, conv3d_backprop_filter_v2,
max_pool3d, avg_pool3d, max_pool_with_argmax (Targmax, include_batch_in_index), dilation2d,
erosion2d, the tf.layers 3-D layers; values, first and second gradients, static shapes and
error classes."""


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class name is the result
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(7)
    out = {}
    xv = rng.randn(2, 5, 6, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 6, 4, 3], name="x")
        f = tf.constant(rng.randn(3, 2, 2, 3, 4).astype(np.float32))
        convs = [tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "SAME"),
                 tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "VALID"),
                 tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1]),
                 tf.nn.conv3d(x, filter=f, strides=[1, 2, 3, 1, 1], padding="SAME")]
        tf_ = tf.constant(rng.randn(2, 3, 2, 2, 3).astype(np.float32))
        deconv = tf.nn.conv3d_transpose(x, tf_, [2, 10, 12, 8, 2], [1, 2, 2, 2, 1], "SAME")
        deconv_v = tf.nn.conv3d_transpose(x, tf_, tf.stack([tf.shape(x)[0], 6, 8, 5, 2]), [1, 1, 1, 1, 1],
                                          "VALID")
        bf = tf.nn.conv3d_backprop_filter_v2(x, [3, 2, 2, 3, 4], convs[0], [1, 1, 1, 1, 1], "SAME")
        pools = [tf.nn.max_pool3d(x, 2, 2, "SAME"), tf.nn.max_pool3d(x, [2, 3, 2], [1, 2, 1], "VALID"),
                 tf.nn.avg_pool3d(x, 3, 2, "SAME"), tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID")]
        x2 = x[:, 0]
        mp, am = tf.nn.max_pool_with_argmax(x2, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        mpb, amb = tf.nn.max_pool_with_argmax(x2, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", Targmax=tf.int32,
                                              include_batch_in_index=True)
        k = tf.constant(rng.randn(2, 3, 3).astype(np.float32))
        dil = tf.nn.dilation2d(x2, k, [1, 1, 1, 1], [1, 2, 1, 1], "SAME")
        dil2 = tf.nn.dilation2d(x2, k, [1, 2, 1, 1], [1, 1, 1, 1], "VALID")
        ero = tf.nn.erosion2d(x2, k, [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
        ys = convs + [deconv, deconv_v, bf] + pools + [mp, dil, dil2, ero]
        w = [tf.constant(rng.randn(*y.shape.as_list()[1:]).astype(np.float32)) for y in ys]
        loss = sum(tf.reduce_sum(y * wi) for y, wi in zip(ys, w))
        gx, gf, gtf, gk = tf.gradients(loss, [x, f, tf_, k])
        # second order through the backprop ops' own gradients, in float64 (float32 sums of this size
        # round beyond the golden's tolerance where they cancel); TF has no second gradients for the
        # argmax and morphology backprops, and its 3-D pools are float32 only (checked below)
        x64, f64, t64 = (tf.cast(t, tf.float64) for t in (x, f, tf_))
        c64 = [tf.nn.conv3d(x64, f64, [1, 1, 1, 1, 1], "SAME"),
               tf.nn.conv3d(x64, f64, [1, 2, 1, 2, 1], "VALID"),
               tf.nn.conv3d_transpose(x64, t64, [2, 10, 12, 8, 2], [1, 2, 2, 2, 1], "SAME")]
        c64.append(tf.nn.conv3d_backprop_filter_v2(x64, [3, 2, 2, 3, 4], c64[0], [1, 1, 1, 1, 1], "SAME"))
        loss_c = sum(tf.reduce_sum(y * tf.cast(tf.constant(rng.randn(*y.shape.as_list()[1:])), tf.float64))
                     for y in c64)
        gx_c, gf_c = tf.gradients(loss_c, [x64, f64])
        gg = tf.gradients(tf.reduce_sum(gx_c * gx_c) + tf.reduce_sum(gf_c * gf_c), [x64, f64])
        pool_g = tf.gradients(tf.reduce_sum(pools[0] * pools[0]), x)[0]
        pool_gg = tf.gradients(tf.reduce_sum(pool_g * pool_g), x)[0]
        avg_g = tf.gradients(tf.reduce_sum(pools[2] * pools[2]), x)[0]
        avg_gg = tf.gradients(tf.reduce_sum(avg_g * avg_g), x)[0]
        tie = tf.constant(np.array([1, 3, 3, 2, 1, 3, 0, 3], np.float32).reshape(1, 2, 2, 2, 1))
        tie_y = tf.nn.max_pool3d(tie, 2, 2, "VALID")
        tie_g = tf.gradients(tie_y, tie)[0]
        tie_gg = tf.gradients(tie_g, tie, grad_ys=tf.constant(np.arange(1, 9, dtype=np.float32)
                                                               .reshape(1, 2, 2, 2, 1)))[0]
        with tf.Session() as sess:
            out["values"] = sess.run(ys, {x: xv})
            out["argmax"] = sess.run([am, mpb, amb], {x: xv})
            out["grads"] = sess.run([gx, gf, gtf, gk], {x: xv})
            out["second"] = sess.run(gg + [pool_gg, avg_gg], {x: xv})
            out["ties"] = sess.run([tie_y, tie_g, tie_gg])
        out["static_shapes"] = [str(y.shape) for y in ys] + [str(am.shape)]
        out["dtypes"] = [am.dtype.name, amb.dtype.name]
        out["op_types"] = [t.op.type for t in (convs[0], deconv, bf, pools[0], pools[2], mp, dil)]
        out["grad_op_types"] = sorted({op.type for op in tf.get_default_graph().get_operations()
                                       if op.type.startswith(("Conv3D", "MaxPool", "AvgPool", "Dilation2D"))})
    with tf.Graph().as_default():
        xl = tf.constant(xv)
        init = tf.constant_initializer
        y1 = tf.layers.conv3d(xl, 4, (2, 3, 2), strides=(1, 2, 1), padding="same", activation=tf.nn.relu,
                              kernel_initializer=init(rng.uniform(-.3, .3, (2, 3, 2, 3, 4)).astype(np.float32)),
                              bias_initializer=init(0.1))
        y2 = tf.layers.conv3d_transpose(xl, 2, 2, strides=2, padding="valid",
                                        kernel_initializer=init(rng.uniform(-.3, .3, (2, 2, 2, 2, 3))
                                                                .astype(np.float32)))
        y3 = tf.layers.max_pooling3d(xl, 2, 2, padding="same")
        y4 = tf.layers.average_pooling3d(xl, (2, 2, 1), (1, 2, 1))
        layer = tf.layers.Conv3D(2, 1, kernel_initializer=init(0.5), name="pointwise")
        y5 = layer(xl)
        grads = tf.gradients(sum(tf.reduce_sum(y * y) for y in (y1, y2, y5)), tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["layers"] = sess.run([y1, y2, y3, y4, y5])
            out["layer_grads"] = sess.run(grads)
        out["layer_names"] = [v.name for v in tf.trainable_variables()]
        out["layer_shapes"] = [str(y.shape) for y in (y1, y2, y3, y4, y5)]
    with tf.Graph().as_default():
        x5 = tf.ones([1, 4, 4, 4, 2])
        f5 = tf.ones([2, 2, 2, 2, 3])
        p = tf.placeholder(tf.float32)
        with tf.Session() as sess:
            out["errors"] = [
                _err(lambda: tf.nn.conv3d(x5, f5, [1, 1, 1, 1], "VALID")),
                _err(lambda: tf.nn.conv3d(x5, f5, [1, 1, 1, 1, 1], "FULL")),
                _err(lambda: tf.nn.conv3d(x5, tf.ones([2, 2, 2, 3, 3]), [1, 1, 1, 1, 1], "VALID")),
                _err(lambda: tf.nn.conv3d(tf.ones([1, 4, 4, 4]), f5, [1, 1, 1, 1, 1], "VALID")),
                _err(lambda: tf.nn.conv3d(x5, tf.ones([5, 1, 1, 2, 3]), [1, 1, 1, 1, 1], "VALID")),
                _err(lambda: tf.nn.conv3d(x5, f5, [1, 0, 1, 1, 1], "VALID")),
                _err(lambda: tf.nn.conv3d(tf.ones([1, 2, 2, 2, 1], tf.int32), tf.ones([1, 1, 1, 1, 1], tf.int32),
                                          [1, 1, 1, 1, 1], "VALID")),
                _err(lambda: sess.run(tf.nn.conv3d(x5, f5, [2, 1, 1, 1, 1], "VALID"))),
                _err(lambda: sess.run(tf.nn.conv3d(x5, f5, [1, 1, 1, 1, 1], "VALID", dilations=[2, 1, 1, 1, 1]))),
                _err(lambda: sess.run(tf.nn.conv3d(x5, tf.ones([2, 2, 2, 1, 4]), [1, 1, 1, 1, 1], "VALID"))),
                _err(lambda: sess.run(tf.nn.conv3d(p, f5, [1, 1, 1, 1, 1], "VALID"), {p: np.ones((1, 3, 3, 3))})),
                _err(lambda: tf.nn.max_pool3d(tf.ones([2, 2, 2, 2]), 1, 1, "VALID")),
                _err(lambda: tf.nn.max_pool3d(x5, [1, 1], 1, "VALID")),
                _err(lambda: tf.nn.max_pool3d(x5, 5, 1, "VALID")),
                _err(lambda: tf.nn.max_pool3d(tf.ones([1, 2, 2, 2, 1], tf.float64), 2, 2, "VALID")),
                _err(lambda: sess.run(tf.nn.max_pool3d(x5, [1, 1, 1, 1, 2], 1, "VALID"))),
                _err(lambda: sess.run(tf.nn.avg_pool3d(x5, [2, 1, 1, 1, 1], 1, "VALID"))),
                _err(lambda: tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 1]), 2, 2, "VALID")),
                _err(lambda: tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 1]), [2, 2], [2, 2], "VALID")),
                _err(lambda: tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 1]), [1, 2, 2, 1], [1, 2, 2, 1],
                                                        "VALID", data_format="NCHW")),
                _err(lambda: tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 1]), [1, 2, 2, 1], [1, 2, 2, 1],
                                                        "VALID", Targmax=tf.float32)),
                _err(lambda: sess.run(tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 2]), [1, 2, 2, 2],
                                                                 [1, 2, 2, 2], "VALID"))),
                _err(lambda: tf.nn.dilation2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 3]), [1, 1, 1, 1],
                                              [1, 1, 1, 1], "SAME")),
                _err(lambda: tf.nn.dilation2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2]), [1, 1, 1, 1],
                                              [1, 1, 1, 1], "SAME")),
                _err(lambda: sess.run(tf.nn.dilation2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 2]), [1, 1, 1, 2],
                                                       [1, 1, 1, 1], "SAME"))),
            ]
            mi, ai = tf.nn.max_pool_with_argmax(tf.constant(rng.randint(-5, 5, (2, 4, 5, 2)).astype(np.int32)),
                                                [1, 2, 2, 1], [1, 1, 2, 1], "SAME")
            di = tf.nn.dilation2d(tf.constant(rng.randint(-5, 5, (1, 4, 4, 1)).astype(np.int32)),
                                  tf.constant(rng.randint(-2, 2, (2, 2, 1)).astype(np.int32)), [1, 1, 1, 1],
                                  [1, 1, 1, 1], "VALID")
            out["int_values"] = sess.run([mi, ai, di])
    return out

"""tf.map_fn, tf.scan, tf.foldl, tf.foldr: over a tensor and over nested
structures, map_fn with `dtype=` for another output structure, scan with and
without an initializer, reversed and with a tuple state, folds both ways;
gradients of losses through them w.r.t. a variable, a placeholder and a
captured tensor; the static shapes of the results, and a placeholder whose
leading dimension is known only when it is fed."""


def run(tf, np):
    rng = np.random.RandomState(11)
    xv = rng.randn(5, 3).astype(np.float32)
    yv = rng.randn(5).astype(np.float32)
    zv = rng.randn(7, 2).astype(np.float32)
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [5, 3], name="x")
        y = tf.placeholder(tf.float32, [5], name="y")
        z = tf.placeholder(tf.float32, [None, 2], name="z")
        w = tf.Variable(rng.randn(3, 2).astype(np.float32), name="w")
        ints = tf.constant(np.arange(1, 7, dtype=np.int32))

        m_square = tf.map_fn(lambda r: r * r, x)
        m_tuple_in = tf.map_fn(lambda xy: tf.reduce_sum(xy[0]) * xy[1], (x, y), dtype=tf.float32)
        m_tuple_out = tf.map_fn(lambda r: (tf.reduce_max(r), tf.cast(tf.argmax(r), tf.int32)), x,
                                dtype=(tf.float32, tf.int32))
        m_matmul = tf.map_fn(lambda r: tf.tanh(tf.matmul(tf.expand_dims(r, 0), w))[0], x)
        m_dict = tf.map_fn(lambda d: {"a": d["a"] + 1.0, "b": d["b"] * 2.0}, {"a": x, "b": y})
        m_unknown = tf.map_fn(lambda r: tf.reduce_sum(r * r), z)
        out["map"] = {"square": m_square, "tuple_in": m_tuple_in, "tuple_out": m_tuple_out,
                      "matmul": m_matmul, "dict": m_dict, "unknown": m_unknown}

        s_plain = tf.scan(lambda a, r: a + r, x)
        s_init = tf.scan(lambda a, r: a * 0.5 + r, x, initializer=tf.ones([3]))
        s_rev = tf.scan(lambda a, r: a + r, x, reverse=True)
        s_rev_init = tf.scan(lambda a, v: a * v + 1.0, y, initializer=tf.constant(0.5), reverse=True)
        # A Fibonacci-style tuple state; the output is structured as the initializer. (Not a bare
        # `ab[1]` passed through: TensorFlow 2's while_v2 gets that gradient wrong, graphrt does not.)
        s_tuple = tf.scan(lambda ab, v: (ab[1] * 0.9, ab[0] + ab[1] * v), y,
                          initializer=(tf.constant(0.0), tf.constant(1.0)))
        s_elems_tuple = tf.scan(lambda a, xy: (a[0] + xy[0], a[1] * xy[1]), (x, y))
        s_unknown = tf.scan(lambda a, r: tf.maximum(a, r), z)
        s_ints = tf.scan(lambda a, v: a * v, ints)
        out["scan"] = {"plain": s_plain, "init": s_init, "reverse": s_rev, "reverse_init": s_rev_init,
                       "tuple_state": s_tuple, "tuple_elems": s_elems_tuple, "unknown": s_unknown, "ints": s_ints}

        f_l = tf.foldl(lambda a, r: a * 0.5 + r, x)
        f_l_init = tf.foldl(lambda a, v: a * 2.0 + v, y, initializer=tf.constant(1.0))
        f_r = tf.foldr(lambda a, r: a * 0.5 + r, x)
        f_r_init = tf.foldr(lambda a, v: a * 2.0 + v, y, initializer=tf.constant(1.0))
        f_tuple = tf.foldl(lambda acc, xy: (acc[0] + tf.reduce_sum(xy[0]), acc[1] + xy[1]), (x, y),
                           initializer=(tf.constant(0.0), tf.constant(0.0)))
        f_unknown = tf.foldr(lambda a, r: a - r, z, initializer=tf.zeros([2]))
        f_ints = tf.foldl(lambda a, v: a + v, ints)
        out["fold"] = {"l": f_l, "l_init": f_l_init, "r": f_r, "r_init": f_r_init, "tuple": f_tuple,
                       "unknown": f_unknown, "ints": f_ints}

        # Gradients through the loops, w.r.t. a variable inside fn, the elems and an initializer.
        loss_map = tf.reduce_sum(m_matmul * m_matmul)
        loss_scan = tf.reduce_sum(s_init * s_init) + tf.reduce_sum(s_tuple[1])
        h0 = tf.placeholder_with_default(tf.constant([0.1, -0.2]), [2])
        s_rnn = tf.scan(lambda h, r: tf.tanh(tf.matmul(tf.expand_dims(r, 0), w)[0] + h), x, initializer=h0)
        loss_rnn = tf.reduce_sum(s_rnn[-1] * s_rnn[-1]) + tf.reduce_sum(f_unknown * f_unknown)
        out["grads"] = {
            "map_w_x": tf.gradients(loss_map, [w, x]),
            "scan_x_y": tf.gradients(loss_scan, [x, y]),
            "rnn_w_x_h0": tf.gradients(loss_rnn, [w, x, h0]),
            "unknown_z": tf.gradients(loss_rnn, z)[0],
            "fold_x": tf.gradients(f_l + f_r, x)[0],
        }

        shapes = {"map_square": m_square, "map_tuple_in": m_tuple_in, "map_tuple_out_0": m_tuple_out[0],
                  "map_unknown": m_unknown, "scan_plain": s_plain, "scan_tuple_1": s_tuple[1],
                  "scan_unknown": s_unknown, "fold_l": f_l, "fold_unknown": f_unknown, "scan_rnn": s_rnn}
        static = {k: [-1 if d is None else d for d in v.shape.as_list()] for k, v in shapes.items()}

        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(out, {x: xv, y: yv, z: zv})
            out["fed_shorter"] = sess.run([m_unknown, s_unknown, f_unknown], {x: xv, y: yv, z: zv[:3]})
    out["static_shapes"] = static
    return out

"""The long tail of TF1 top-level names: dynamic_partition / dynamic_stitch (values,
gradients, static shapes, run-time errors), invert_permutation's checks, complex casts,
clip_by_average_norm, static and dynamic broadcast shapes, the remaining check_ops asserts
(build-time errors and run-time InvalidArgumentErrors), verify_tensor_all_finite,
add_check_numerics_ops, gradients with unconnected_gradients="zero", op_scope, vectorized_map,
required_space_to_batch_paddings, tf.nest, error codes, the tf.nn aliases and compositions
(depthwise backprops, conv1d_transpose, conv_transpose, avg_pool_v2 / max_pool_v2,
compute_average_loss, batch_norm_with_global_normalization) and tf.math.erfcinv.
timestamp's value is a clock, so only its dtype and shape are compared."""


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class name is the result
        return type(e).__name__
    return "no error"


def _partition_stitch(tf, np, out):
    rng = np.random.RandomState(3)
    with tf.Graph().as_default(), tf.Session() as sess:
        data = tf.constant(rng.randn(6, 3).astype(np.float32))
        parts = tf.dynamic_partition(data, [2, 0, 1, 0, 2, 2], 3)
        out["dp_shapes"] = [str(p.shape) for p in parts]
        loss = tf.reduce_sum(parts[0] * 2.0) + tf.reduce_sum(parts[2] * parts[2])
        out["dp"], out["dp_grad"] = sess.run([parts, tf.gradients(loss, data)[0]])
        d2 = tf.constant(rng.randn(2, 3, 2).astype(np.float32))
        p2 = tf.dynamic_partition(d2, [[0, 1, 1], [1, 0, 1]], 2)
        out["dp_2d"] = sess.run(p2)
        out["dp_2d_shapes"] = [str(p.shape) for p in p2]
        idx = [tf.constant([0, 4]), tf.constant([[1, 3], [2, 5]])]
        vals = [tf.constant(rng.randn(2, 2).astype(np.float32)), tf.constant(rng.randn(2, 2, 2).astype(np.float32))]
        st = tf.dynamic_stitch(idx, vals)
        out["ds_shape"] = str(st.shape)
        out["ds"] = sess.run(st)
        out["ds_grad"] = sess.run(tf.gradients(tf.reduce_sum(st * st), vals))
        dup = tf.dynamic_stitch([[0, 1], [1, 2]], [[1.0, 2.0], [3.0, 4.0]])
        out["ds_dup"] = sess.run(dup)
        pl = tf.placeholder(tf.int32)
        out["ds_unknown_shape"] = str(tf.dynamic_stitch([pl], [tf.zeros([3, 2])]).shape)
        gap = tf.dynamic_stitch([pl], [[1.0, 2.0]])
        out["ds_gap"] = sess.run(gap, {pl: [0, 3]})
        out["ds_err_range"] = _err(lambda: sess.run(gap, {pl: [0, -1]}))
        out["ds_err_shape"] = _err(lambda: sess.run(gap, {pl: [0, 1, 2]}))
        pp = tf.placeholder(tf.int32)
        dpp = tf.dynamic_partition([1.0, 2.0], pp, 2)
        out["dp_err_range"] = _err(lambda: sess.run(dpp, {pp: [0, 2]}))
        out["dp_err_shape"] = _err(lambda: sess.run(dpp, {pp: [0, 1, 1]}))
        out["dp_err_static"] = _err(lambda: tf.dynamic_partition(tf.zeros([3]), tf.zeros([2], tf.int32), 2))
        out["ds_err_static"] = _err(lambda: tf.dynamic_stitch([[0, 1], [2]], [tf.zeros([2, 3]), tf.zeros([1, 4])]))
        out["ds_err_len"] = _err(lambda: tf.dynamic_stitch([[0, 1], [2]], [tf.zeros([2, 3])]))
        ip = tf.placeholder(tf.int32)
        inv = tf.invert_permutation(ip)
        out["inv"] = sess.run(tf.math.invert_permutation([3, 0, 2, 1]))
        out["inv_int64"] = sess.run(tf.invert_permutation(tf.constant([1, 2, 0], tf.int64)))
        for label, v in (("dup", [0, 0, 1]), ("range", [0, 3, 1]), ("rank", [[0, 1]])):
            out["inv_err_" + label] = _err(lambda v=v: sess.run(inv, {ip: v}))
        out["inv_err_static"] = _err(lambda: tf.invert_permutation([[0, 1]]))


def _casts_and_shapes(tf, np, out):
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.complex([1.0, 2.0], [3.0, -1.0])
        c64 = tf.to_complex64([1.0, 2.0])
        c128 = tf.to_complex128(tf.constant([1.0], tf.float64))
        out["complex_dtypes"] = [c.dtype.name, c64.dtype.name, c128.dtype.name, c64.op.name]
        out["complex"], out["c64"] = sess.run([c, c64])
        out["complex_err"] = _err(lambda: tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64)))
        t = tf.constant([[3.0, 4.0], [1.0, -2.0]])
        cl = tf.clip_by_average_norm(t, 0.5)
        out["clip_avg_name"] = cl.op.name
        out["clip_avg"] = sess.run([cl, tf.clip_by_average_norm(t, 100.0)])
        a, b = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
        bd = tf.broadcast_dynamic_shape(a, b)
        out["bds"] = sess.run(bd, {a: [2, 1, 3], b: [4, 1]})
        out["bds_op"] = bd.op.type
        out["bds_static"] = str(tf.broadcast_dynamic_shape([2, 1], [3, 1, 1]).shape)
        out["bds_err"] = _err(lambda: sess.run(bd, {a: [2, 3], b: [4]}))
        out["bss"] = [str(tf.broadcast_static_shape(tf.TensorShape(x), tf.TensorShape(y))) for x, y in
                      (([2, 1], [None, 3]), ([5, 1, 3], [4, 1]), ([None], [1]), (None, [2]), ([1, None], [3, 1]))]
        out["bss_err"] = _err(lambda: tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3, 3])))
        out["is_numeric"] = [tf.is_numeric_tensor(v) for v in (tf.constant(1), tf.constant(True),
                                                                tf.constant("a"), 1.0, tf.constant(1.5))]
        ts = tf.timestamp()
        out["timestamp"] = [ts.dtype.name, str(ts.shape), ts.op.type, bool(sess.run(ts) > 1e9)]
        gc = tf.guarantee_const(tf.constant([1.0, 2.0]))
        out["guarantee_const"] = [gc.op.type, sess.run(gc)]
        x = tf.constant(2.0)
        out["guarantee_const_grad"] = _err(lambda: tf.gradients(tf.guarantee_const(x) * 3.0, x))
        out["ctis"] = sess.run(tf.convert_to_tensor_or_indexed_slices([1, 2]))
        vf = tf.verify_tensor_all_finite(tf.constant([1.0, 2.0]), "finite")
        out["verify"] = sess.run(vf)
        out["verify_err"] = _err(lambda: sess.run(tf.verify_tensor_all_finite(tf.constant([np.inf]), "bad")))
        out["erfcinv"] = sess.run(tf.math.erfcinv([0.1, 0.5, 1.0, 1.7]))
    with tf.Graph().as_default(), tf.Session() as sess:
        p = tf.placeholder(tf.float32)
        y = tf.log(p) * 2.0
        check = tf.add_check_numerics_ops()
        out["check_numerics_ok"] = sess.run([y, check], {p: 4.0})[0]
        out["check_numerics_err"] = _err(lambda: sess.run([y, check], {p: -1.0}))


def _asserts(tf, np, out):
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32)
        near = tf.assert_near(x, [1.0, 2.0], rtol=0.0, atol=0.01)
        out["near_ok"] = _err(lambda: sess.run(near, {x: [1.001, 2.0]}))
        out["near_bad"] = _err(lambda: sess.run(near, {x: [1.1, 2.0]}))
        out["near_default_tol"] = _err(lambda: sess.run(tf.assert_near(tf.constant([1.0]), [1.0 + 1e-7])))
        r = tf.placeholder(tf.float32)
        rin = tf.assert_rank_in(r, [1, 3])
        out["rank_in_ok"] = _err(lambda: sess.run(rin, {r: [1.0]}))
        out["rank_in_bad"] = _err(lambda: sess.run(rin, {r: [[1.0]]}))
        out["rank_in_static"] = _err(lambda: tf.assert_rank_in(tf.zeros([2, 2]), [1, 3]))
        out["rank_in_static_ok"] = tf.assert_rank_in(tf.zeros([2, 2]), [1, 2]).type
        out["scalar"] = _err(lambda: tf.assert_scalar(tf.zeros([2])))
        out["scalar_ok"] = sess.run(tf.assert_scalar(3.0))
        out["integer"] = _err(lambda: tf.assert_integer(tf.zeros([2])))
        out["integer_ok"] = tf.assert_integer(tf.constant([1])).type
        out["proper_iterable"] = [_err(lambda v=v: tf.assert_proper_iterable(v))
                                  for v in ([1], (1,), "ab", np.zeros(2), tf.constant([1]), 3)]
        out["same_float"] = [tf.assert_same_float_dtype([tf.constant(1.0), tf.constant(2.0)]).name,
                             tf.assert_same_float_dtype().name,
                             tf.assert_same_float_dtype(None, tf.float64).name,
                             _err(lambda: tf.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])),
                             _err(lambda: tf.assert_same_float_dtype([tf.constant(1)]))]


def _graph_helpers(tf, np, out):
    with tf.Graph().as_default(), tf.Session() as sess:
        out["aggregation"] = [tf.AggregationMethod.ADD_N, tf.AggregationMethod.DEFAULT,
                              tf.AggregationMethod.EXPERIMENTAL_TREE, tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N]
        out["unconnected"] = [tf.UnconnectedGradients.NONE.value, tf.UnconnectedGradients.ZERO.value]
        a = tf.constant([1.0, 2.0])
        b = tf.constant([[3.0]])
        g = tf.gradients(a * 2.0, [a, b], unconnected_gradients="zero")
        out["grad_zero"] = sess.run(g)
        out["grad_none"] = tf.gradients(a * 2.0, [b])[0] is None
        g2 = tf.gradients(a * 2.0, [b], unconnected_gradients=tf.UnconnectedGradients.ZERO)
        out["grad_zero_enum"] = sess.run(g2)
        v = tf.Variable(1.0)
        w = tf.get_local_variable("w", initializer=2.0)
        sess.run([tf.initialize_variables([v]), tf.initialize_local_variables()])
        out["init"] = sess.run([v, w])
        with tf.op_scope([a], "outer", "dflt") as scope:
            out["op_scope"] = [scope, tf.identity(a).op.name]
        with tf.op_scope([a], None, "dflt") as scope:
            out["op_scope_default"] = scope
        with tf.container("c1") as cname:
            out["container"] = str(cname)
        vm = tf.vectorized_map(lambda e: tf.reduce_sum(e * e), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        out["vectorized_map"] = sess.run(vm)
        vm2 = tf.vectorized_map(lambda e: (e[0], tf.cast(e[1], tf.int32)), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        out["vectorized_map_tuple"] = sess.run(vm2)
        pads, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
        out["s2b_paddings"] = sess.run([pads, crops])
        ish = tf.placeholder(tf.int32, [2])
        pads2, crops2 = tf.required_space_to_batch_paddings(ish, [4, 4])
        out["s2b_dynamic"] = sess.run([pads2, crops2], {ish: [6, 9]})
    s = {"b": [1, (2, None)], "a": 3}
    out["nest_flatten"] = str(tf.nest.flatten(s))
    out["nest_pack"] = str(tf.nest.pack_sequence_as(s, [10, 20, 30, 40]))
    out["nest_map"] = str(tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]))
    out["nest_is_nested"] = [tf.nest.is_nested(v) for v in ("ab", (), None, {"a": 1}, [1])]
    out["nest_errors"] = [_err(lambda: tf.nest.assert_same_structure([1, 2], (1, 2))),
                          _err(lambda: tf.nest.assert_same_structure([1, 2], [1, [2]])),
                          _err(lambda: tf.nest.assert_same_structure([1, 2], [1, 2, 3])),
                          _err(lambda: tf.nest.assert_same_structure({"a": 1}, {"b": 1})),
                          _err(lambda: tf.nest.pack_sequence_as([1, 2], [1])),
                          _err(lambda: tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False))]
    out["nest_map_loose"] = str(tf.nest.map_structure(lambda x, y: x * y, [1, 2], (3, 4), check_types=False))
    out["error_codes"] = [tf.errors.error_code_from_exception_type(tf.errors.NotFoundError),
                          tf.errors.exception_type_from_error_code(3).__name__,
                          _err(lambda: tf.errors.exception_type_from_error_code(99))]
    out["version_types"] = [type(tf.VERSION).__name__, type(tf.GIT_VERSION).__name__,
                            type(tf.COMPILER_VERSION).__name__, type(tf.GRAPH_DEF_VERSION).__name__,
                            tf.GRAPH_DEF_VERSION_MIN_CONSUMER, tf.GRAPH_DEF_VERSION_MIN_PRODUCER]


def _nn(tf, np, out):
    rng = np.random.RandomState(11)
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant(rng.randn(2, 5, 5, 3).astype(np.float32))
        f = tf.constant(rng.randn(3, 3, 3, 2).astype(np.float32))
        y = tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME")
        dy = tf.constant(rng.randn(2, 5, 5, 6).astype(np.float32))
        bf = tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 3, 2], dy, [1, 1, 1, 1], "SAME")
        bi = tf.nn.depthwise_conv2d_native_backprop_input([2, 5, 5, 3], f, dy, [1, 1, 1, 1], "SAME")
        gf, gx = tf.gradients(y, [f, x], grad_ys=dy)
        out["dw_backprops"] = sess.run([bf, bi, gf, gx])
        out["dw_ops"] = [bf.op.type, bi.op.type, str(bf.shape), str(bi.shape)]
        x1 = tf.constant(rng.randn(2, 4, 3).astype(np.float32))
        f1 = tf.constant(rng.randn(3, 5, 3).astype(np.float32))
        t1 = tf.nn.conv1d_transpose(x1, f1, [2, 8, 5], 2, "SAME")
        out["conv1d_transpose"] = [str(t1.shape), sess.run(t1)]
        t1b = tf.nn.conv_transpose(x1, f1, [2, 8, 5], 2)
        f2 = tf.constant(rng.randn(2, 2, 4, 3).astype(np.float32))
        t2 = tf.nn.conv_transpose(x, f2, [2, 10, 10, 4], [1, 2, 2, 1])
        out["conv_transpose"] = sess.run([t1b, t2])
        out["conv_transpose_err"] = _err(lambda: tf.nn.conv_transpose(x, f2, [2, 10], 1))
        out["conv1d_transpose_grad"] = sess.run(tf.gradients(tf.reduce_sum(t1 * t1), [x1, f1]))
        pools = [tf.nn.avg_pool_v2(x1, 2, 2, "VALID"), tf.nn.max_pool_v2(x1, 2, 1, "SAME"),
                 tf.nn.avg_pool_v2(x, [2, 2], [1, 2, 2, 1], "SAME"), tf.nn.max_pool_v2(x, 3, 2, "VALID"),
                 tf.nn.max_pool_v2(tf.reshape(x, [2, 5, 5, 3, 1]), 2, 2, "SAME")]
        out["pools_v2"] = sess.run(pools)
        out["pools_v2_shapes"] = [str(p.shape) for p in pools]
        out["pool_v2_err"] = _err(lambda: tf.nn.max_pool_v2(tf.zeros([2, 3]), 2, 2, "SAME"))
        loss = tf.constant([1.0, 2.0, 3.0, 4.0])
        out["avg_loss"] = sess.run([tf.nn.compute_average_loss(loss),
                                    tf.nn.compute_average_loss(loss, global_batch_size=8),
                                    tf.nn.compute_average_loss(loss, sample_weight=[1.0, 0.0, 2.0, 1.0]),
                                    tf.nn.compute_average_loss(tf.zeros([0])),
                                    tf.nn.scale_regularization_loss(tf.constant([1.0, 2.5]))])
        out["avg_loss_err"] = _err(lambda: tf.nn.compute_average_loss(tf.constant(1.0)))
        t = tf.constant(rng.randn(4, 3).astype(np.float32))
        m, v = tf.constant([0.1, 0.2, 0.3]), tf.constant([1.0, 2.0, 0.5])
        beta, gamma = tf.constant([0.0, 1.0, -1.0]), tf.constant([2.0, 0.5, 1.0])
        out["bn_global"] = sess.run([
            tf.nn.batch_norm_with_global_normalization(t, m, v, beta, gamma, 0.001, True),
            tf.nn.batch_norm_with_global_normalization(t, m, v, beta, gamma, 0.001, False)])


def run(tf, np):
    out = {}
    _partition_stitch(tf, np, out)
    _casts_and_shapes(tf, np, out)
    _asserts(tf, np, out)
    _graph_helpers(tf, np, out)
    _nn(tf, np, out)
    return out

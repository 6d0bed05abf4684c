"""Edge cases of tf.nn found by a differential sweep against TensorFlow: softmax over an empty
class axis and out-of-range axes, the cross-entropies' graph structure (output names, float16
computed in float32), the sparse cross-entropy's second derivative, selu's second derivative,
VALID windows larger than the input, max pooling over -inf, in_top_k and top_k with NaN,
complex l2_normalize, fused_batch_norm's epsilon and static shapes, embedding_lookup max_norm,
conv2d_transpose's static batch: values, names, static shapes, gradients and errors."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(5)
    out = {}
    g = tf.Graph()
    with g.as_default():
        lg = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
        lb = tf.constant((rng.rand(2, 3, 4) ** 2).astype(np.float32))
        l2 = tf.constant(rng.randn(2, 3).astype(np.float32))
        p2 = tf.constant(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], np.float32))
        empty = tf.constant(np.zeros((2, 0), np.float32))
        sm_empty, lsm_empty = tf.nn.softmax(empty), tf.nn.log_softmax(empty)
        sm_axis_t = tf.nn.softmax(lg, axis=tf.constant(1))
        out["softmax_axis_error"] = err(lambda: tf.nn.softmax(lg, axis=3))
        out["log_softmax_dim_error"] = err(lambda: tf.nn.log_softmax(lg, dim=-4))

        x_v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=p2, logits=l2)
        x_v2_3d = tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, axis=1)
        x_v1 = tf.nn.softmax_cross_entropy_with_logits(labels=p2, logits=l2, name="myloss")
        l16 = tf.constant(rng.randn(2, 3).astype(np.float16))
        x_f16 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.cast(p2, tf.float16), logits=l16)
        out["v1_axis_error"] = err(lambda: tf.nn.softmax_cross_entropy_with_logits(labels=lb, logits=lg, axis=1))
        sp_f16 = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2], logits=l16)
        p_unk = tf.placeholder(tf.float32)
        sp_unk = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1, 2], [3, 0, 1]], logits=p_unk)
        sp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2], logits=l2)
        sp_g = tf.gradients(sp, l2)[0]
        sp_gg = tf.gradients(sp_g * sp_g, l2)[0]
        out["weighted_shape_error"] = err(lambda: tf.nn.weighted_cross_entropy_with_logits(
            labels=tf.constant([1.0, 0.0, 1.0]), logits=l2, pos_weight=2.0))

        act = tf.constant(np.array([-20.0, -1.0, 0.0, 1.0, 20.0], np.float32))
        selu = tf.nn.selu(act)
        selu_g = tf.gradients(selu, act)[0]
        selu_gg = tf.gradients(selu_g, act)[0]

        img = tf.constant(rng.randn(1, 3, 3, 2).astype(np.float32))
        out["conv_valid_error"] = err(lambda: tf.nn.conv2d(img, tf.ones([4, 4, 2, 1]), [1, 1, 1, 1], "VALID"))
        out["pool_valid_error"] = err(lambda: tf.nn.max_pool(img, [1, 4, 4, 1], [1, 1, 1, 1], "VALID"))
        out["avg_pool_valid_error"] = err(lambda: tf.nn.avg_pool(img, [1, 2, 4, 1], [1, 2, 2, 1], "VALID"))
        out["depthwise_valid_error"] = err(lambda: tf.nn.depthwise_conv2d(img, tf.ones([4, 1, 2, 1]),
                                                                          [1, 1, 1, 1], "VALID"))
        ninf = tf.constant(np.full((1, 4, 4, 1), -np.inf, np.float32))
        mp_same = tf.nn.max_pool(ninf, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        mp_valid = tf.nn.max_pool(ninf, [1, 3, 3, 1], [1, 2, 2, 1], "VALID")
        mp_g = tf.gradients(mp_same, ninf, grad_ys=tf.constant([[[[1.0], [2.0]], [[3.0], [4.0]]]]))[0]
        mp_pool2d = tf.nn.max_pool2d(img, 2, 2, "SAME")

        preds = tf.constant(np.array([[0.1, 0.3, 0.3, 0.2], [np.nan, 0.1, 0.2, 0.3],
                                      [0.1, np.inf, 0.2, -np.inf]], np.float32))
        itk = tf.nn.in_top_k(preds, [1, 3, 2], 2)
        itk_named = tf.nn.in_top_k(preds, [1, 3, 2], 2, name="itk")
        tk_x = tf.constant(np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [np.nan, 1.0, np.inf, -np.inf, 0.0]], np.float32))
        tk_v, tk_i = tf.nn.top_k(tk_x, 3)
        tk1_v, tk1_i = tf.nn.top_k(tk_x, 1)

        cx = tf.constant(np.array([[1 + 2j, 3 - 1j], [0.5j, 2.0]], np.complex64))
        l2n_c = tf.nn.l2_normalize(cx, 1)

        seq = tf.constant(rng.randn(2, 7, 3).astype(np.float32))
        c1d = tf.nn.conv1d(seq, tf.constant(rng.randn(3, 3, 2).astype(np.float32)), 2, "SAME")

        bx = tf.placeholder(tf.float32, [None, None, None, 3])
        bvar = tf.constant(np.array([1e-6, 1e-3, 1.0], np.float32))
        bn = tf.nn.fused_batch_norm(bx, tf.ones([3]), tf.zeros([3]), tf.zeros([3]), bvar, epsilon=1e-7,
                                    is_training=False)
        bn_tr = tf.nn.fused_batch_norm(bx, tf.ones([3]), tf.zeros([3]), epsilon=1e-7)
        out["bn_static"] = [str(t.shape) for t in list(bn) + list(bn_tr)]

        params = tf.constant((np.arange(21, dtype=np.float32).reshape(7, 3) / 5.0 - 2))
        emb = tf.nn.embedding_lookup(params, [[0, 5], [2, 4]])
        emb_clip = tf.nn.embedding_lookup(params, [0, 6, 3], max_norm=1.0)
        emb_g = tf.gradients(tf.reduce_sum(emb_clip * emb_clip), params)[0]

        os_ = tf.placeholder(tf.int32, [4])
        convt = tf.nn.conv2d_transpose(tf.constant(rng.randn(1, 3, 3, 4).astype(np.float32)),
                                       tf.constant(rng.randn(3, 3, 2, 4).astype(np.float32)), os_, [1, 2, 2, 1])
        out["convt_static"] = str(convt.shape)

        named = {"x_v2": x_v2, "x_v2_3d": x_v2_3d, "x_v1": x_v1, "x_f16": x_f16, "sp_f16": sp_f16,
                 "sp_unk": sp_unk, "itk": itk, "itk_named": itk_named, "c1d": c1d, "mp_pool2d": mp_pool2d,
                 "bn_y": bn[0], "emb": emb, "emb_clip": emb_clip}
        out["names"] = {k: [t.name, t.dtype.name, str(t.shape)] for k, t in named.items()}
        with tf.Session() as s:
            fetch = dict(named, sm_empty=sm_empty, lsm_empty=lsm_empty, sm_axis_t=sm_axis_t, sp_g=sp_g,
                         sp_gg=sp_gg, selu_g=selu_g, selu_gg=selu_gg, mp_same=mp_same, mp_valid=mp_valid,
                         mp_g=mp_g, tk_v=tk_v, tk_i=tk_i, tk1_v=tk1_v, tk1_i=tk1_i, l2n_c=l2n_c,
                         bn_tr_y=bn_tr[0], emb_g=emb_g, convt=convt)
            vals = s.run(fetch, {p_unk: rng.randn(2, 3, 4).astype(np.float32),
                                 bx: (rng.randn(2, 2, 2, 3) * 1e-3).astype(np.float32),
                                 os_: [1, 6, 6, 2]})
        out["values"] = vals
    return out

"""roll, meshgrid, repeat, space_to_depth/depth_to_space, the tf.math statistics and counting
functions (reduce_std/variance/euclidean_norm, monotonicity, polyval, cumulative_logsumexp,
unsorted_segment_mean/sqrt_n, bincount, confusion_matrix, accumulate_n) and the tf.nn compositions
(swish, crelu, sufficient_statistics, normalize_moments, weighted_moments, log_poisson_loss):
values, static shapes, gradients and errors."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(5)
    xv = rng.randn(3, 4).astype(np.float32)
    imv = rng.randn(2, 4, 6, 3).astype(np.float32)
    g = tf.Graph()
    out = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [3, 4], name="x")
        im = tf.placeholder(tf.float32, [None, 4, 6, 3], name="im")
        w = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
        t = {
            "roll": tf.roll(x, 1, 0),
            "roll2": tf.roll(x, [2, -1], [1, 0]),
            "roll_same_axis": tf.roll(x, [1, 2], [1, 1]),
            "mesh_xy": tf.meshgrid(tf.range(3), tf.range(2)),
            "mesh_ij": tf.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0], indexing="ij"),
            "rep_flat": tf.repeat([[1, 2], [3, 4]], 2),
            "rep_axis": tf.repeat(x, [1, 0, 2], axis=0),
            "rep_axis1": tf.repeat(x, 2, axis=1),
            "s2d": tf.space_to_depth(im, 2),
            "d2s": tf.depth_to_space(tf.space_to_depth(im, 2), 2),
            "nn_s2d": tf.nn.space_to_depth(im, 2),
            "var": tf.math.reduce_variance(x),
            "var1": tf.math.reduce_variance(x, axis=1, keepdims=True),
            "std0": tf.math.reduce_std(x, 0),
            "enorm": tf.math.reduce_euclidean_norm(x, 1),
            "nondec": tf.math.is_non_decreasing([1, 2, 2, 5]),
            "nondec_f": tf.math.is_non_decreasing([[1.0, 3.0], [2.0, 4.0]]),
            "strict": tf.math.is_strictly_increasing([1, 2, 2, 5]),
            "strict_1": tf.is_strictly_increasing([7]),
            "polyval": tf.math.polyval([2.0, -1.0, 0.5], x),
            "clse": tf.math.cumulative_logsumexp(x, axis=1),
            "clse_ex_rev": tf.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True),
            "seg_mean": tf.math.unsorted_segment_mean(x, [2, 0, 2], 4),
            "seg_sqrt_n": tf.unsorted_segment_sqrt_n(x, [1, 1, 0], 3),
            "bincount": tf.math.bincount([1, 1, 3, 0, 7]),
            "bincount_len": tf.bincount([1, 1, 3, 0, 7], minlength=10),
            "bincount_max": tf.bincount([1, 1, 3, 0, 7], maxlength=4),
            "bincount_w": tf.bincount([1, 1, 3], weights=[0.5, 1.5, 2.0]),
            "confusion": tf.confusion_matrix([1, 2, 4], [2, 2, 4]),
            "confusion_n": tf.math.confusion_matrix([0, 1, 1], [1, 1, 2], num_classes=4, weights=[1.0, 2.0, 3.0],
                                                    dtype=tf.float32),
            "accumulate_n": tf.accumulate_n([x, w, x]),
            "swish": tf.nn.swish(x),
            "crelu": tf.nn.crelu(x),
            "crelu0": tf.nn.crelu(x, axis=0),
            "suff": tf.nn.sufficient_statistics(x, [0])[:3],
            "suff_shift": tf.nn.sufficient_statistics(x, [1], shift=tf.constant(0.5), keep_dims=True)[:3],
            "norm_moments": tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0, 1], shift=tf.constant(0.1))),
            "wmoments": tf.nn.weighted_moments(x, [1], tf.constant([[1.0, 2.0, 0.0, 1.0]])),
            "wmoments_keep": tf.nn.weighted_moments(x, 0, tf.constant([[1.0], [0.0], [3.0]]), keep_dims=True),
            "poisson": tf.nn.log_poisson_loss(tf.constant([0.0, 1.0, 2.0, 5.0]), tf.constant([0.1, 0.5, 1.0, 2.0])),
            "poisson_full": tf.nn.log_poisson_loss(tf.constant([0.0, 1.0, 2.0, 5.0]),
                                                   tf.constant([0.1, 0.5, 1.0, 2.0]), compute_full_loss=True),
            "math_softmax": tf.math.softmax(x),
            "math_log_softmax": tf.math.log_softmax(x),
            "math_l2n": tf.math.l2_normalize(x, 1),
            "math_zero_fraction": tf.math.zero_fraction(tf.nn.relu(x)),
        }
        loss = (tf.reduce_sum(tf.roll(x, [1, 2], [0, 1]) * w) + tf.reduce_sum(tf.repeat(x, [1, 0, 2], axis=0))
                + tf.reduce_sum(tf.space_to_depth(im, 2) * tf.range(12, dtype=tf.float32))
                + tf.reduce_sum(tf.nn.swish(x) * w) + tf.math.reduce_std(x)
                + tf.reduce_sum(tf.math.cumulative_logsumexp(x, axis=1))
                + tf.reduce_sum(tf.math.unsorted_segment_mean(x, [2, 0, 2], 4) * tf.range(4.0)[:, None])
                + tf.reduce_sum(tf.nn.crelu(x) * tf.concat([w, w], 1)))
        gx, gim = tf.gradients(loss, [x, im])
        t["grad_x"], t["grad_im"] = gx, gim
        shapes = {k: [v.shape.as_list() if v.shape.ndims is not None else None for v in
                      (list(val) if isinstance(val, (list, tuple)) else [val])]
                  for k, val in t.items() if k in ("s2d", "d2s", "rep_axis1", "mesh_xy", "roll", "var1", "crelu0")}
        out["static_shapes"] = {k: str(v) for k, v in shapes.items()}
        out["errors"] = {
            "s2d_odd": err(lambda: tf.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)),
            "d2s_depth": err(lambda: tf.depth_to_space(tf.zeros([1, 2, 2, 3]), 2)),
            "var_int": err(lambda: tf.math.reduce_variance(tf.constant([1, 2]))),
            "polyval_not_list": err(lambda: tf.math.polyval((1.0, 2.0), x)),
            "mesh_indexing": err(lambda: tf.meshgrid([1], [2], indexing="xz")),
            "poisson_shapes": err(lambda: tf.nn.log_poisson_loss(tf.zeros([2]), tf.zeros([3]))),
        }
        with tf.Session(graph=g) as sess:
            out["values"] = sess.run(t, {x: xv, im: imv})
            out["run_errors"] = {
                "roll_axis": err(lambda: sess.run(tf.roll(x, 1, 2), {x: xv})),
                "confusion_bound": err(lambda: sess.run(tf.confusion_matrix([0, 3], [1, 1], num_classes=2))),
            }
    return out

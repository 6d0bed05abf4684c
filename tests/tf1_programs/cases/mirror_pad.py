"""tf.pad with mode REFLECT and SYMMETRIC (MirrorPad): values, static shapes, first and second
gradients, and the run-time error for paddings too large."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(3)
    xv = rng.randn(2, 4, 5).astype(np.float32)
    g = tf.Graph()
    out = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 4, 5], name="x")
        any_x = tf.placeholder(tf.float32, name="any_x")
        pads = [[0, 1], [3, 2], [1, 4]]
        t = {"reflect": tf.pad(x, [[1, 1], [3, 2], [2, 4]], mode="REFLECT"),
             "symmetric": tf.pad(x, pads, mode="SYMMETRIC"),
             "symmetric_lower": tf.pad(x, [[1, 0], [0, 0], [5, 5]], mode="symmetric"),
             "reflect_1d": tf.pad(tf.constant([1.0, 2.0, 3.0]), [[2, 2]], "REFLECT"),
             "int_reflect": tf.pad(tf.constant([[1, 2, 3], [4, 5, 6]]), [[1, 1], [2, 2]], "REFLECT")}
        w = {k: tf.constant(rng.randn(*v.shape.as_list()).astype(np.float32)) for k, v in t.items()}
        loss = tf.reduce_sum(t["reflect"] * w["reflect"]) + tf.reduce_sum(t["symmetric"] * w["symmetric"]) \
            + tf.reduce_sum(tf.square(t["symmetric_lower"]))
        gx = tf.gradients(loss, x)[0]
        t["grad"] = gx
        t["grad_grad"] = tf.gradients(tf.reduce_sum(gx * gx), x)[0]
        out["static_shapes"] = {k: str(v.shape.as_list()) for k, v in t.items()}
        out["unknown_rank"] = str(tf.pad(any_x, [[1, 1]], "REFLECT").shape)
        out["errors"] = {"mode": err(lambda: tf.pad(x, pads, mode="WRAP"))}
        with tf.Session(graph=g) as sess:
            out["values"] = sess.run(t, {x: xv})
            out["run_errors"] = {
                "reflect_too_large": err(lambda: sess.run(tf.pad(any_x, [[3, 0]], "REFLECT"), {any_x: [1.0, 2.0, 3.0]})),
                "symmetric_edge": err(lambda: sess.run(tf.pad(any_x, [[3, 0]], "SYMMETRIC"), {any_x: [1.0, 2.0, 3.0]})),
                "symmetric_too_large": err(lambda: sess.run(tf.pad(any_x, [[4, 0]], "SYMMETRIC"),
                                                            {any_x: [1.0, 2.0, 3.0]})),
            }
    return out

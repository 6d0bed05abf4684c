"""Variables, initializers, optimizers, layers, losses and savers at their edges: sparse
RMSProp touches only the looked-up rows, nesterov momentum in half precision, causal conv1d,
dropout at rate 0, initializer configs and float-only initializers, assert_variables_initialized,
checkpoint scalars as numpy scalars/bytes, a Saver naming one variable twice."""
import os
import shutil
import tempfile


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return "no error"


def _sparse_rms(tf, np, centered):
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], np.float32), name="w")
        loss = tf.reduce_sum(tf.square(tf.gather(w, [0, 2, 0])))
        opt = tf.train.RMSPropOptimizer(0.1, decay=0.8, momentum=0.5, epsilon=0.01, centered=centered)
        train = opt.minimize(loss)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(train)
            return {"w": s.run(w), "slots": s.run({k: opt.get_slot(w, k) for k in opt.get_slot_names()})}


def run(tf, np):
    out = {"rms": _sparse_rms(tf, np, False), "rms_centered": _sparse_rms(tf, np, True)}
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float16), name="w")
        train = tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True).minimize(tf.reduce_sum(w * w * w))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(4):
                s.run(train)
            out["nesterov_f16"] = s.run(w)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant((np.arange(2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3) % 5) / 5.0)
        y = tf.layers.conv1d(x, 2, 3, dilation_rate=2, padding="causal",
                             kernel_initializer=tf.constant_initializer(np.arange(18) / 10.0))
        out["causal_shape"] = str(y.shape)
        out["causal_conv2d"] = err(lambda: tf.layers.conv2d(tf.zeros([1, 4, 4, 1]), 1, 2, padding="causal"))
        d0 = tf.layers.dropout(x, 0.0, training=True)
        out["dropout0"] = [d0.op.type, d0.name]
        out["configs"] = [tf.constant_initializer(3.0).get_config(), tf.zeros_initializer().get_config(),
                          tf.variance_scaling_initializer().get_config(),
                          tf.glorot_uniform_initializer(seed=3).get_config(),
                          tf.random_normal_initializer(1.0, 2.0).get_config(),
                          tf.orthogonal_initializer(2.0).get_config()]
        out["int_normal"] = err(lambda: tf.random_normal_initializer(dtype=tf.int32))
        out["int_vs"] = err(lambda: tf.variance_scaling_initializer(dtype=tf.int32))
        v = tf.Variable([1.0, 2.0], name="v")
        u = tf.Variable(1, name="u")
        try:  # TF raises OperatorNotAllowedInGraphError, a TypeError
            bool(v)
            out["bool_var"] = "no error"
        except TypeError:
            out["bool_var"] = "TypeError"
        check = tf.assert_variables_initialized()
        out["assert_init"] = [check.op.type, str(check.shape)]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            out["causal"] = s.run(y)
            out["assert_after"] = s.run(check)
            d = tempfile.mkdtemp()
            try:
                sv = tf.Variable(b"hi", name="s")
                s.run(sv.initializer)
                path = tf.train.Saver([v, u, sv]).save(s, os.path.join(d, "m"), write_meta_graph=False)
                r = tf.train.NewCheckpointReader(path)
                out["scalars"] = [type(r.get_tensor("u")).__name__, type(r.get_tensor("s")).__name__,
                                  r.get_tensor("s")]
                s.run(u.assign(7))
                tf.train.Saver([u, sv]).restore(s, path)
                out["restored"] = s.run([u, sv])
            finally:
                shutil.rmtree(d)
        out["same_var_twice"] = err(lambda: tf.train.Saver({"x": v, "y": v}))
    return out

"""tf.custom_gradient (inputs, several outputs, variables), grad_pass_through, make_template,
switch_case, py_function / numpy_function, is_tensor, get_static_value, dimension_value /
dimension_at_index, init_scope and the Summary protos: values, names, gradients and errors."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    g = tf.Graph()
    out = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")

        @tf.custom_gradient
        def clip_grad(v):
            def grad(dy):
                return tf.clip_by_value(dy, -0.5, 0.5)
            return v * v, grad

        @tf.custom_gradient
        def two_outputs(a, b):
            def grad(da, db):
                return da * 10.0 + db, db * 100.0
            return (a + b, a * b), grad

        w = tf.get_variable("w", [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]), use_resource=True)

        @tf.custom_gradient
        def scaled(v):
            def grad(dy, variables=None):
                return dy * 2.0, [dy * 3.0 for _ in variables]
            return v * w, grad

        y1 = clip_grad(x)
        s, p = two_outputs(x, x * 2.0)
        y3 = scaled(x)
        rounded = tf.grad_pass_through(tf.round)(x * 1.5)
        t = tf.make_template("tmpl", lambda v: tf.get_variable("k", [], initializer=tf.ones_initializer()) * v)
        m1, m2 = t(x), t(x * 2.0)
        idx = tf.placeholder(tf.int32, [], name="idx")
        sw = tf.switch_case(idx, [lambda: tf.constant(10.0), lambda: tf.constant(20.0), lambda: tf.constant(30.0)])
        sw_dict = tf.switch_case(idx, {1: lambda: x[0], 0: lambda: x[1]}, default=lambda: x[2])
        npf = tf.numpy_function(lambda a: (a * 2).astype(np.float32), [x], tf.float32)
        pyf = tf.py_function(lambda a: a.numpy() + 1.0, [x], tf.float32)
        with tf.control_dependencies([y1]):
            with tf.init_scope():
                free = tf.constant(7.0, name="free")
        grads = {
            "clip": tf.gradients(tf.reduce_sum(y1 * 3.0), x)[0],
            "two": tf.gradients(tf.reduce_sum(s) + tf.reduce_sum(p), x)[0],
            "scaled": tf.gradients(tf.reduce_sum(y3), [x, w]),
            "pass": tf.gradients(tf.reduce_sum(rounded), x)[0],
            "tmpl": tf.gradients(m1 + m2, x)[0],
        }
        out["names"] = {"m1": m1.name, "m2": m2.name, "tmpl_vars": [v.name for v in t.trainable_variables],
                        "scope": t.variable_scope_name, "free_controls": len(free.op.control_inputs)}
        out["queries"] = {
            "is_tensor": [tf.is_tensor(x), tf.is_tensor(w), tf.is_tensor(np.ones(2)), tf.is_tensor(3.0)],
            "static": tf.get_static_value(tf.constant([1, 2]) * 2),
            "static_none": str(tf.get_static_value(x)),
            "dim": tf.dimension_value(tf.TensorShape([4, None])[0]),
            "dim_none": str(tf.dimension_value(tf.TensorShape([4, None])[1])),
            "dim_at": str(tf.dimension_at_index(tf.TensorShape([4, 5]), 1)),
        }
        summ = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)])
        out["summary_bytes"] = summ.SerializeToString()
        out["errors"] = {
            "no_variables_kwarg": err(lambda: tf.custom_gradient(lambda v: (v * w, lambda dy: dy))(x)),
            "switch_bad_index": err(lambda: tf.switch_case(tf.constant(1.0), [lambda: x])),
            "template_no_name": err(lambda: tf.make_template(None, lambda: x)),
            "switch_keys_gap": err(lambda: tf.switch_case(idx, {1: lambda: x[0], 4: lambda: x[1]})),
        }
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: np.array([0.4, -1.2, 2.0], np.float32), idx: 1}
            out["values"] = sess.run({"y1": y1, "s": s, "p": p, "y3": y3, "rounded": rounded, "m1": m1, "m2": m2,
                                      "sw": sw, "sw_dict": sw_dict, "npf": npf, "pyf": pyf, "grads": grads}, feed)
            out["switch_other"] = [sess.run([sw, sw_dict], {x: feed[x], idx: i}) for i in (0, 2, 4, 7, -1)]
    return out

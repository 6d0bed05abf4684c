"""Fake quantization (quantization-aware training): FakeQuantWithMinMaxArgs over bit widths,
narrow ranges and ranges away from zero (nudged so 0.0 is a level), the Vars forms with min and
max as trainable variables (their gradients, a few SGD steps), the per-channel form on a conv
kernel, and the gradient ops called directly."""


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is the output
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    rng = np.random.RandomState(21)
    xs = (rng.randn(64) * 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xs)
        for i, kw in enumerate([{}, dict(min=-1.0, max=1.0), dict(min=-0.3, max=2.7, num_bits=4),
                                dict(min=0.1, max=2.0, narrow_range=True), dict(min=-2.0, max=-0.5, num_bits=3),
                                dict(min=-5.0, max=5.0, num_bits=16)]):
            out[f"args_{i}"] = tf.quantization.fake_quant_with_min_max_args(x, **kw)
        out["args_grad"] = tf.gradients(tf.reduce_sum(tf.fake_quant_with_min_max_args(x, -1.5, 1.0) * x), x)[0]
        out["args_gradient_op"] = tf.quantization.fake_quant_with_min_max_args_gradient(
            tf.ones_like(x), x, min=-1.0, max=0.5)

        inputs = tf.constant(rng.randn(8, 5).astype(np.float32))
        labels = tf.constant(rng.randn(8, 3).astype(np.float32))
        w = tf.Variable(rng.randn(5, 3).astype(np.float32) * 0.5, name="w")
        act_min = tf.Variable(-1.0, name="act_min")
        act_max = tf.Variable(1.0, name="act_max")
        w_q = tf.quantization.fake_quant_with_min_max_vars_per_channel(
            w, tf.reduce_min(w, axis=0), tf.reduce_max(w, axis=0), num_bits=6)
        h = tf.quantization.fake_quant_with_min_max_vars(tf.matmul(inputs, w_q), act_min, act_max, num_bits=5)
        loss = tf.reduce_mean(tf.square(h - labels))
        grads = tf.gradients(loss, [w, act_min, act_max])
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        out["static_shapes"] = [str(t.shape) for t in (w_q, h)]

        kernel = tf.constant(rng.randn(3, 3, 2, 4).astype(np.float32))
        per_channel = tf.quantization.fake_quant_with_min_max_vars_per_channel(
            kernel, [-1.0, -0.5, -2.0, 0.0], [1.0, 0.5, 0.5, 3.0], num_bits=4, narrow_range=True)
        pc_grads = tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient(
            tf.ones_like(kernel), kernel, [-1.0, -0.5, -2.0, 0.0], [1.0, 0.5, 0.5, 3.0], num_bits=4)
        vars_grads = tf.quantization.fake_quant_with_min_max_vars_gradient(
            tf.constant(rng.randn(64).astype(np.float32)), x, -1.0, 1.5)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for key in [k for k in out if k.startswith("args")]:
                out[key] = sess.run(out[key])
            out["qat_before"] = sess.run([loss, grads])
            for _ in range(3):
                sess.run(train)
            out["qat_after"] = sess.run([loss, w, act_min, act_max])
            out["per_channel"] = sess.run([per_channel, pc_grads])
            out["vars_gradient_op"] = sess.run(vars_grads)
            out["errors"] = [
                _error(lambda: sess.run(tf.fake_quant_with_min_max_args(x, min=1.0, max=0.0))),
                _error(lambda: sess.run(tf.fake_quant_with_min_max_args(x, num_bits=1))),
            ]
            out["reversed_vars"] = sess.run(tf.fake_quant_with_min_max_vars(x, 1.0, 0.0))
    return out

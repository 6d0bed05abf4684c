"""tf.nn.depthwise_conv2d, tf.nn.separable_conv2d and tf.layers.separable_conv2d (same and
valid padding, strides 1 and 2, depth multipliers 1 and 2) with gradients; tf.nn.conv1d and
tf.layers.separable_conv1d."""


def run(tf, np):
    rng = np.random.RandomState(16)
    xv = rng.randn(2, 6, 5, 3).astype(np.float32)
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6, 5, 3], name="x")
        dw = tf.constant(rng.randn(3, 3, 3, 2).astype(np.float32))
        pw = tf.constant(rng.randn(1, 1, 6, 4).astype(np.float32))
        y1 = tf.nn.depthwise_conv2d(x, dw, [1, 2, 2, 1], "SAME")
        y2 = tf.nn.depthwise_conv2d(x, dw[:, :2, :, :1], [1, 1, 1, 1], "VALID")
        y3 = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME")
        y4 = tf.layers.separable_conv2d(
            x, 5, (3, 2), strides=(2, 1), padding="valid", depth_multiplier=2, activation=tf.nn.relu,
            depthwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (3, 2, 3, 2)).astype(np.float32)),
            pointwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (1, 1, 6, 5)).astype(np.float32)),
            bias_initializer=tf.constant_initializer(0.05), name="sep")
        y5 = tf.layers.separable_conv2d(
            x, 2, 3, padding="same",
            depthwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (3, 3, 3, 1)).astype(np.float32)),
            pointwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (1, 1, 3, 2)).astype(np.float32)))
        seq = tf.reshape(x, [-1, 10, 9])
        y6 = tf.nn.conv1d(seq, tf.constant(rng.randn(3, 9, 4).astype(np.float32)), stride=2, padding="SAME")
        y7 = tf.layers.separable_conv1d(
            seq, 3, 3, strides=2, padding="same", depth_multiplier=2,
            depthwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (3, 9, 2)).astype(np.float32)),
            pointwise_initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (1, 18, 3)).astype(np.float32)),
            bias_initializer=tf.constant_initializer(-0.1))
        ys = (y1, y2, y3, y4, y5, y6, y7)
        loss = sum(tf.reduce_sum(y * y) for y in ys)
        grads = tf.gradients(loss, [x, dw, pw] + tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["values"] = sess.run(list(ys), {x: xv})
            out["grads"] = sess.run(grads, {x: xv})
            out["names"] = [v.name for v in tf.trainable_variables()]
            out["static_shapes"] = [str(y.shape) for y in ys]
            out["op_names"] = [y.op.name for y in (y1, y2, y3)]
    return out

"""tf.nn.conv2d_transpose and tf.layers.conv2d_transpose (same and valid padding,
strides 1 and 2), with gradients; conv1d layers."""


def run(tf, np):
    rng = np.random.RandomState(21)
    xv = rng.randn(2, 3, 4, 3).astype(np.float32)
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4, 3], name="x")
        f = tf.constant(rng.randn(3, 3, 5, 3).astype(np.float32))
        y1 = tf.nn.conv2d_transpose(x, f, [2, 6, 8, 5], strides=[1, 2, 2, 1], padding="SAME")
        y2 = tf.nn.conv2d_transpose(x, f, tf.stack([tf.shape(x)[0], 5, 6, 5]), strides=[1, 1, 1, 1],
                                    padding="VALID")
        kinit = tf.constant_initializer(rng.uniform(-0.3, 0.3, (3, 3, 4, 3)).astype(np.float32))
        y3 = tf.layers.conv2d_transpose(x, 4, 3, strides=2, padding="same", kernel_initializer=kinit,
                                        bias_initializer=tf.constant_initializer(0.1), activation=tf.nn.relu,
                                        name="deconv")
        k2 = tf.constant_initializer(rng.uniform(-0.3, 0.3, (2, 3, 2, 3)).astype(np.float32))
        y4 = tf.layers.conv2d_transpose(x, 2, (2, 3), strides=(2, 1), padding="valid", kernel_initializer=k2)
        seq = tf.reshape(x, [-1, 12, 3])
        y5 = tf.layers.conv1d(seq, 4, 3, strides=2, padding="same",
                              kernel_initializer=tf.constant_initializer(0.05))
        loss = sum(tf.reduce_sum(y * y) for y in (y1, y2, y3, y4, y5))
        grads = tf.gradients(loss, [x] + tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["values"] = sess.run([y1, y2, y3, y4, y5], {x: xv})
            out["grads"] = sess.run(grads, {x: xv})
            out["names"] = [v.name for v in tf.trainable_variables()]
            out["static_shapes"] = [str(y.shape) for y in (y3, y4)]
    return out

"""Graph functions called from a graph (Defun): several outputs, a captured tensor, an
overloaded (untyped) Defun, a python_grad_func, and gradients through the calls."""


def defun_class(tf):
    if getattr(tf, "__name__", "").startswith("graphrt"):
        from graphrt.framework.function import Defun
    else:
        from tensorflow.python.framework.function import Defun
    return Defun


def run(tf, np):
    Defun = defun_class(tf)  # noqa: N806 - the TF name
    out = {}
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2], name="a")
        b = tf.constant([3.0, -1.0])
        w = tf.constant(2.5)

        @Defun(tf.float32, tf.float32)
        def f(x, y):
            return x * y + tf.sin(x)

        @Defun(tf.float32)
        def stats(x):
            return x * w, tf.reduce_sum(tf.square(x))

        @Defun()
        def plus_one(v):
            return v + 1

        def clipped_grad(op, grad):
            return [tf.clip_by_value(grad, -0.5, 0.5)]

        @Defun(tf.float32, python_grad_func=clipped_grad)
        def identity_clip_grad(x):
            return tf.identity(x)

        z = f(a, b)
        p, q = stats(z)
        loss = tf.reduce_sum(p) + q + tf.reduce_sum(identity_clip_grad(a * 3.0))
        grads = tf.gradients(loss, [a, b])
        ints = plus_one(tf.constant([1, 2]))
        floats = plus_one(tf.constant(1.5))
        with tf.Session() as sess:
            feed = {a: np.array([0.5, -2.0], np.float32)}
            out["values"] = sess.run([z, p, q, loss], feed)
            out["grads"] = sess.run(grads, feed)
            out["overloaded"] = sess.run([ints, floats])
            out["dtypes"] = [ints.dtype.name, floats.dtype.name]
    return out

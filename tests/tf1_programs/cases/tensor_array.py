"""tf.TensorArray: write/read/stack/unstack/gather/scatter/split/concat/size in and
out of while loops, dynamic_size, clear_after_read=False, identity, and gradients
through all of them (including reads of one element twice, and elements that get
no gradient); errors for out-of-range indices and unwritten elements. (TF 2 runs
these programs with TensorList-based arrays, which neither clear after a read nor
reject a second write; graphrt keeps TF1's rules, tested in tests/tensor_array.)"""


def err(sess, fetch, feeds=None):
    try:
        sess.run(fetch, feeds)
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(7)
    xv = rng.randn(5, 3).astype(np.float32)
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [5, 3], name="x")
        w = tf.constant(rng.randn(3, 3).astype(np.float32))
        # A loop reading an unstacked array and writing squares and running sums.
        inp = tf.TensorArray(tf.float32, size=5).unstack(x)
        acc = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

        def body(i, total, acc):
            v = tf.tanh(tf.matmul(tf.expand_dims(inp.read(i), 0), w))[0]
            total = total + v
            return i + 1, total, acc.write(i, total * v)
        _, total, acc = tf.while_loop(lambda i, *_: i < 5, body, (0, tf.zeros([3]), acc))
        stacked = acc.stack()
        size = acc.size()
        loss = tf.reduce_sum(stacked * stacked) + tf.reduce_sum(total)
        out["loop"] = {"stacked": stacked, "size": size, "grads": tf.gradients(loss, [x, w])}

        # gather / scatter / split / concat and their gradients, outside loops.
        ta = tf.TensorArray(tf.float32, size=4, clear_after_read=False)
        ta = ta.scatter([3, 0, 2, 1], tf.reshape(x[:4] * 2.0, [4, 3]))
        gathered = ta.gather([1, 3, 0])
        twice = ta.read(2) + ta.read(2)
        sp = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=False).split(tf.reshape(x, [15]), [4, 5, 6])
        concat = sp.concat()
        piece = sp.read(1)
        unused = tf.TensorArray(tf.float32, size=3, element_shape=[3]).unstack(x[:3] * 3.0)
        one = unused.read(1)
        loss2 = (tf.reduce_sum(gathered * gathered) + tf.reduce_sum(twice * x[0]) +
                 tf.reduce_sum(concat * tf.range(15.0)) + tf.reduce_sum(piece) + tf.reduce_sum(one * one))
        out["ops"] = {"gathered": gathered, "twice": twice, "concat": concat, "piece": piece,
                      "grad": tf.gradients(loss2, x)[0], "ident": ta.identity().read(0)}

        # A loop that builds an array element by element and a second loop that reads it back.
        ta3 = tf.TensorArray(tf.float32, size=5, element_shape=[3])
        _, ta3 = tf.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t.write(i, x[i] * tf.cast(i, tf.float32))),
                               [0, ta3])
        _, s3 = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + ta3.read(i) ** 2), [0, tf.zeros([3])])
        out["two_loops"] = {"sum": s3, "grad": tf.gradients(tf.reduce_sum(s3), x)[0]}

        bad = tf.TensorArray(tf.float32, size=2)
        with tf.Session() as sess:
            out = sess.run(out, {x: xv})
            out["errors"] = {
                "out_of_range": err(sess, bad.write(5, [2.0]).flow),
                "unwritten_unknown_shape": err(sess, tf.TensorArray(tf.float32, size=2).read(1)),
                "unwritten_known_shape": sess.run(tf.TensorArray(tf.float32, size=2, element_shape=[2]).read(1)),
            }
    return out

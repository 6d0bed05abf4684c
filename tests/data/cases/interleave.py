"""Dataset.interleave (cycle and block lengths; inner datasets of different lengths, so
slots empty and refill at different times), with the end of the sequence."""


def drain(tf, sess, element, limit=200):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out
    return out + ["no end"]


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        base = tf.data.Dataset.from_tensor_slices(np.array([3, 1, 4, 0, 2, 5], dtype=np.int64))
        a = base.interleave(lambda n: tf.data.Dataset.range(n).map(lambda i: n * 10 + i), cycle_length=2,
                            block_length=2)
        b = base.interleave(lambda n: tf.data.Dataset.from_tensors(n).repeat(n), cycle_length=3, block_length=1)
        c = tf.data.Dataset.range(1, 4).interleave(
            lambda n: tf.data.Dataset.range(n).map(lambda i: (n, i)), cycle_length=4, block_length=3).batch(4)
        nexts = [d.make_one_shot_iterator().get_next() for d in (a, b, c)]
        with tf.Session() as sess:
            for key, n in zip("abc", nexts):
                out[key] = drain(tf, sess, n)
    return out

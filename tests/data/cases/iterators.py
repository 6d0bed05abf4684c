"""tf.data iterators and sources: an initializable iterator fed through a placeholder and
re-initialized, a reinitializable iterator (from_structure) switched between datasets, a
feedable iterator (from_string_handle), from_generator, TextLineDataset, cache, prefetch,
map with captured tensors and num_parallel_calls, and the compat.v1 structure helpers."""
import os
import tempfile


def text(value):
    import numpy as np
    if isinstance(value, dict):
        return {k: text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([v.decode() for v in value.ravel()]).reshape(value.shape)
    return value


def drain(tf, sess, element, feed=None, limit=50):
    out = []
    for _ in range(limit):
        try:
            out.append(text(sess.run(element, feed)))
        except tf.errors.OutOfRangeError:
            return out
    return out + ["no end"]


def run(tf, np):
    out = {}
    tmp = tempfile.mkdtemp()
    first, second = os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")
    with open(first, "w") as f:
        f.write("alpha beta\n\ngamma\r\ndelta")
    with open(second, "w") as f:
        f.write("one\ntwo\n")
    g = tf.Graph()
    with g.as_default():
        limit = tf.placeholder(tf.int64, [], name="limit")
        scale = tf.placeholder(tf.float32, [], name="scale")
        offset = tf.constant([0.5, -0.5])
        ds = tf.data.Dataset.range(limit).map(
            lambda i: tf.cast(i, tf.float32) * scale + offset, num_parallel_calls=2).prefetch(2)
        it = ds.make_initializable_iterator()
        x = it.get_next()
        out["init_structure"] = [str(tf.compat.v1.data.get_output_types(ds)),
                                 str(tf.compat.v1.data.get_output_shapes(ds)),
                                 str(tf.compat.v1.data.get_output_types(it)),
                                 str(x.shape)]

        train = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.int32)).map(lambda v: (v, v * v))
        val = tf.data.Dataset.from_tensors((np.int32(-1), np.int32(1))).repeat(2)
        reinit = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        r = reinit.get_next()
        to_train = reinit.make_initializer(train)
        to_val = reinit.make_initializer(val)

        handle = tf.placeholder(tf.string, [], name="handle")
        evens = tf.data.Dataset.range(0, 20, 2)
        odds = tf.data.Dataset.range(1, 20, 2).repeat()
        feedable = tf.data.Iterator.from_string_handle(handle, evens.output_types, evens.output_shapes)
        f_next = feedable.get_next()
        evens_it = evens.make_one_shot_iterator()
        odds_it = odds.make_initializable_iterator()

        def gen():
            for n in range(1, 5):
                yield (np.arange(n, dtype=np.float64), "w%d" % n)
        from_gen = tf.data.Dataset.from_generator(gen, (tf.float32, tf.string), (tf.TensorShape([None]),
                                                                                 tf.TensorShape([])))
        gen_next = from_gen.padded_batch(3, padded_shapes=([4], [])).make_one_shot_iterator().get_next()

        lines = tf.data.Dataset.zip((tf.data.Dataset.range(100), tf.data.TextLineDataset([first, second])))
        lines = lines.map(lambda i, s: {"n": i, "line": s})
        lines_next = lines.make_one_shot_iterator().get_next()

        cached = tf.data.Dataset.from_tensor_slices(np.array([1.0, 2.0, 3.0], np.float32)).map(
            lambda v: v * 10.0).cache().repeat(2)
        cached_next = cached.make_one_shot_iterator().get_next()

        with tf.Session() as sess:
            sess.run(it.initializer, {limit: 3, scale: 2.0})
            out["init_a"] = drain(tf, sess, x)
            sess.run(it.initializer, {limit: 2, scale: -1.0})
            out["init_b"] = drain(tf, sess, x)
            sess.run(to_train)
            out["reinit_train"] = [sess.run(r) for _ in range(3)]
            sess.run(to_val)
            out["reinit_val"] = drain(tf, sess, r)
            sess.run(to_train)
            out["reinit_train_again"] = sess.run(r)
            evens_h, odds_h = sess.run([evens_it.string_handle(), odds_it.string_handle()])
            sess.run(odds_it.initializer)
            seq = []
            for step in range(6):
                h = evens_h if step % 2 == 0 else odds_h
                seq.append(sess.run(f_next, {handle: h}))
            out["feedable"] = seq
            out["generator"] = drain(tf, sess, gen_next)
            out["lines"] = drain(tf, sess, lines_next)
            out["cached"] = drain(tf, sess, cached_next)
    return out

"""A tf.data pipeline mixing map, filter, batch, padded_batch, repeat, take, skip and zip
over tuple and dict elements: its exact element sequence, its static structure, and
OutOfRangeError at the end (and again on the next run)."""


def text(value):
    """Byte-string arrays as unicode arrays (goldens hold no object arrays)."""
    import numpy as np
    if isinstance(value, dict):
        return {k: text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([v.decode() for v in value.ravel()]).reshape(value.shape)
    return value


def drain(tf, sess, element, limit=100):
    out = []
    for _ in range(limit):
        try:
            out.append(text(sess.run(element)))
        except tf.errors.OutOfRangeError:
            try:
                sess.run(element)
                again = "no error"
            except tf.errors.OutOfRangeError:
                again = "OutOfRangeError"
            return {"elements": out, "end": "OutOfRangeError", "again": again}
    return {"elements": out, "end": "no end"}


def structure(ds):
    return {"types": str(ds.output_types), "shapes": str(ds.output_shapes)}


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        xs = np.arange(12, dtype=np.float32).reshape(6, 2)
        ys = np.array([3, 1, 4, 1, 5, 9], dtype=np.int32)
        ds = tf.data.Dataset.from_tensor_slices((xs, ys))
        ds = ds.map(lambda x, y: (x * 2.0 + tf.cast(y, tf.float32), y + 1))
        ds = ds.filter(lambda x, y: tf.not_equal(y % 2, 0))
        ds = ds.repeat(2).skip(1).take(7).batch(3)
        out["a_structure"] = structure(ds)
        a = ds.make_one_shot_iterator().get_next()

        words = tf.data.Dataset.from_tensor_slices({"id": np.arange(5, dtype=np.int64),
                                                    "len": np.array([2, 0, 3, 1, 4], dtype=np.int32)})
        seqs = words.map(lambda d: {"id": d["id"], "seq": tf.range(d["len"]) + 1})
        padded = seqs.padded_batch(2, padded_shapes={"id": [], "seq": [None]})
        out["b_structure"] = structure(padded)
        b = padded.make_one_shot_iterator().get_next()

        padded_fixed = seqs.map(lambda d: d["seq"]).padded_batch(2, padded_shapes=[5], padding_values=-1,
                                                                  drop_remainder=True)
        out["c_structure"] = structure(padded_fixed)
        c = padded_fixed.make_one_shot_iterator().get_next()

        left = tf.data.Dataset.range(10).map(lambda i: i * i)
        right = tf.data.Dataset.from_tensor_slices(np.array([b"a", b"b", b"c", b"d"]))
        zipped = tf.data.Dataset.zip((left, (right, tf.data.Dataset.range(100, 90, -3))))
        zipped = zipped.batch(2, drop_remainder=True)
        out["d_structure"] = structure(zipped)
        d = zipped.make_one_shot_iterator().get_next()

        nested = tf.data.Dataset.range(1, 4).flat_map(
            lambda n: tf.data.Dataset.from_tensors(n).repeat(n)).concatenate(tf.data.Dataset.range(7, 9))
        out["e_structure"] = structure(nested)
        e = nested.make_one_shot_iterator().get_next()

        with tf.Session() as sess:
            out["a"] = drain(tf, sess, a)
            out["b"] = drain(tf, sess, b)
            out["c"] = drain(tf, sess, c)
            out["d"] = drain(tf, sess, d)
            out["e"] = drain(tf, sess, e)
    return out

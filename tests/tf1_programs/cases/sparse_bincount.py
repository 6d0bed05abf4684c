"""tf.sparse.bincount over vectors, matrices by row, weights, binary output, minlength and
maxlength, and SparseTensor inputs, with the dtypes TF gives its counts."""


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        v1 = tf.constant([3, 1, 3, 7, 0], tf.int64)
        v2 = tf.constant([[1, 2, 2], [0, 5, 1]], tf.int32)
        w2 = tf.constant([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]])
        sp = tf.SparseTensor([[0, 1], [0, 3], [2, 0]], tf.constant([4, 4, 2], tf.int64), [3, 5])
        cases = {
            "vector": tf.sparse.bincount(v1),
            "minlength": tf.sparse.bincount(v1, minlength=10),
            "maxlength": tf.sparse.bincount(v1, maxlength=4),
            "binary": tf.sparse.bincount(v1, binary_output=True),
            "matrix_all": tf.sparse.bincount(v2),
            "matrix_rows": tf.sparse.bincount(v2, axis=-1),
            "matrix_weighted": tf.sparse.bincount(v2, weights=w2, axis=-1),
            "matrix_clipped": tf.sparse.bincount(v2, axis=-1, minlength=8, maxlength=3),
            "sparse_rows": tf.sparse.bincount(sp, axis=-1),
            "sparse_all": tf.sparse.bincount(sp),
            "sparse_binary": tf.sparse.bincount(sp, axis=-1, binary_output=True),
        }
        with tf.Session() as sess:
            for key, st in cases.items():
                value = sess.run(st)
                out[key] = {"indices": value.indices, "values": value.values, "dense_shape": value.dense_shape}
            try:
                sess.run(tf.sparse.bincount(tf.constant([-1, 2])))
                out["negative"] = "no error"
            except Exception as e:  # noqa: BLE001
                out["negative"] = type(e).__name__
        try:
            tf.sparse.bincount(v1, axis=1)
            out["axis"] = "no error"
        except Exception as e:  # noqa: BLE001
            out["axis"] = type(e).__name__
    return out

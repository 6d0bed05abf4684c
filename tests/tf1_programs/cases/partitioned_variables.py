"""Partitioned variables: the three partitioners' answers, get_variable(partitioner=...) parts
(names, shapes, slice specs, values, axis 0 and 1, uneven splits), the whole as a tensor, its
gradients, embedding_lookup over the parts ("mod" and "div"), Adam's slots as slices, assign,
create_partitioned_variables, reuse, tf.layers under a partitioning scope, a Saver round trip
(also into another partitioning), and the errors of wrong uses."""
import os
import tempfile


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are the output
        return f"{type(e).__name__}: {e}"
    return "no error"


def run(tf, np):
    out = {}
    rng = np.random.RandomState(0)
    table = rng.randn(11, 3).astype(np.float32)
    weights = rng.randn(6, 4).astype(np.float32)
    wide = rng.randn(3, 5).astype(np.float32)
    xs = rng.randn(2, 6).astype(np.float32)

    out["partitions"] = {
        "fixed": tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]), dtype=tf.float32),
        "fixed_short": tf.fixed_size_partitioner(5)(shape=tf.TensorShape([3, 4]), dtype=tf.float32),
        "fixed_axis1": tf.fixed_size_partitioner(2, axis=1)(shape=tf.TensorShape([3, 4]), dtype=tf.float32),
        "axis_size": tf.variable_axis_size_partitioner(100)(tf.TensorShape([1000, 7]), tf.float32),
        "axis_size_strings": tf.variable_axis_size_partitioner(100)(tf.TensorShape([10, 7]), tf.string),
        "axis_size_max": tf.variable_axis_size_partitioner(100, max_shards=4)(tf.TensorShape([1000, 7]),
                                                                               tf.float32),
        "axis_size_int64": tf.variable_axis_size_partitioner(64, axis=1)(tf.TensorShape([2, 30]), tf.int64),
        "min_max": tf.min_max_variable_partitioner(max_partitions=3, axis=1, min_slice_size=8)(
            tf.TensorShape([4, 20]), tf.float32),
        "min_max_default": tf.min_max_variable_partitioner()(tf.TensorShape([4, 20]), tf.float32),
        "min_max_many": tf.min_max_variable_partitioner(max_partitions=100, min_slice_size=64)(
            tf.TensorShape([50, 4]), tf.float64),
    }
    out["partitioner_errors"] = [
        _error(lambda: tf.variable_axis_size_partitioner(0)),
        _error(lambda: tf.min_max_variable_partitioner(axis=3)(tf.TensorShape([4, 20]), tf.float32)),
    ]

    g = tf.Graph()
    with g.as_default():
        emb = tf.get_variable("emb", initializer=tf.constant(table), partitioner=tf.fixed_size_partitioner(4))
        w = tf.get_variable("w", initializer=tf.constant(weights), partitioner=tf.fixed_size_partitioner(4))
        cols = tf.get_variable("cols", initializer=tf.constant(wide), partitioner=tf.fixed_size_partitioner(2, axis=1))
        ones = tf.get_variable("ones", [5, 2], partitioner=tf.min_max_variable_partitioner(3, min_slice_size=4),
                               initializer=tf.ones_initializer())
        with tf.variable_scope("", reuse=True):
            reused = tf.get_variable("emb") is emb
        parts = {"emb": emb, "w": w, "cols": cols, "ones": ones}
        out["parts"] = {k: [f"{v.name} {v.shape.as_list()} {v._get_save_slice_info().spec}" for v in p]
                        for k, p in parts.items()}
        out["whole"] = {k: f"{p.name} {p.get_shape().as_list()} {p.dtype.name} {len(p)}" for k, p in parts.items()}
        out["reused"] = reused

        x = tf.placeholder(tf.float32, [None, 6])
        y = tf.matmul(x, w)
        ids = tf.constant([[0, 10, 4], [7, 3, 3]])
        rows_mod = tf.nn.embedding_lookup(emb, ids)
        rows_div = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
        bag = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 9, 1], tf.int64), [2, 2])
        bags = tf.nn.embedding_lookup_sparse(emb, bag, None, combiner="mean")
        loss = (tf.reduce_sum(y * y) + tf.reduce_sum(rows_mod * rows_div) + tf.reduce_sum(bags)
                + tf.reduce_sum(tf.matmul(tf.constant(xs[:, :3]), cols)))
        out["static_shapes"] = [str(t.shape) for t in (tf.convert_to_tensor(w), y, rows_mod, bags)]
        grads = [tf.convert_to_tensor(gr) for gr in tf.gradients(loss, list(w) + list(emb) + list(cols))]
        train = tf.train.AdamOptimizer(0.1).minimize(loss)
        out["slots"] = sorted(f"{v.op.name} -> {v._get_save_slice_info().full_name}"
                              for v in tf.global_variables() if v._get_save_slice_info() is not None)
        assign_ones = ones.assign(tf.fill([5, 2], 3.0))
        add_ones = ones.assign_add(np.arange(10, dtype=np.float32).reshape(5, 2))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["values"] = sess.run({k: tf.convert_to_tensor(p) for k, p in parts.items()})
            out["y"], out["rows_mod"], out["rows_div"], out["bags"], out["grads"] = sess.run(
                [y, rows_mod, rows_div, bags, grads], {x: xs})
            for _ in range(2):
                sess.run(train, {x: xs})
            out["trained"] = sess.run({k: tf.convert_to_tensor(p) for k, p in parts.items()})
            sess.run(assign_ones)
            out["assigned"] = sess.run(add_ones)
            with tempfile.TemporaryDirectory() as tmp:
                prefix = saver.save(sess, os.path.join(tmp, "model"), write_meta_graph=False)
                out["checkpoint"] = [f"{n} {s}" for n, s in tf.train.list_variables(prefix)]
                out["loaded_w"] = tf.train.load_variable(prefix, "w")
                out["loaded_adam"] = tf.train.load_variable(prefix, "emb/Adam")
                g2 = tf.Graph()
                with g2.as_default():
                    # another partitioning, and one table whole: each reads its slice of the saved tensors
                    w2 = tf.get_variable("w", [6, 4], partitioner=tf.fixed_size_partitioner(2))
                    emb2 = tf.get_variable("emb", [11, 3])
                    cols2 = tf.get_variable("cols", [3, 5], partitioner=tf.fixed_size_partitioner(3, axis=1))
                    with tf.Session() as sess2:
                        tf.train.Saver([w2, emb2, cols2]).restore(sess2, prefix)
                        out["restored"] = sess2.run([tf.convert_to_tensor(w2), emb2, tf.convert_to_tensor(cols2)])

    g = tf.Graph()
    with g.as_default():
        old = tf.create_partitioned_variables([5, 3], [1, 2], np.arange(15, dtype=np.float32).reshape(5, 3),
                                              name="old")
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2)):
            dense = tf.layers.Dense(4, kernel_initializer=tf.constant_initializer(0.5),
                                    bias_initializer=tf.constant_initializer(0.25), name="dense")
            h = dense(tf.constant(xs[:, :5]))
        out["layer_weights"] = {"trainable": [v.name for v in dense.trainable_weights],
                                "all": [v.name for v in dense.variables],
                                "collection": [v.name for v in tf.trainable_variables()]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["old"] = sess.run(old)
            out["dense"] = sess.run(h)

    g = tf.Graph()
    with g.as_default():
        tf.get_variable("a", [4, 2], partitioner=tf.fixed_size_partitioner(2))
        tf.get_variable("b", [4, 2])
        with tf.variable_scope("s"):
            tf.get_variable("z/part_0", [2])
        out["errors"] = [
            _error(lambda: tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])),
            _error(lambda: tf.get_variable("rank", [4, 4], partitioner=lambda shape, dtype: [2])),
            _error(lambda: tf.get_variable("zero", [4], partitioner=lambda shape, dtype: [0])),
            _error(lambda: tf.get_variable("unknown", [None, 3], partitioner=tf.fixed_size_partitioner(2))),
            _error(lambda: tf.get_variable("a", [4, 2], partitioner=tf.fixed_size_partitioner(2))),
            _error(lambda: tf.get_variable("a", [4, 2])),
            _error(lambda: tf.get_variable("b", [4, 2], partitioner=tf.fixed_size_partitioner(2))),
            _error(lambda: tf.get_variable("s/z", [4], partitioner=tf.fixed_size_partitioner(2))),
            _error(lambda: tf.get_variable("bad", [4], partitioner="two")),
        ]
        with tf.variable_scope("", reuse=True):
            out["reuse_errors"] = [
                _error(lambda: tf.get_variable("a", [4, 2], partitioner=tf.fixed_size_partitioner(3))),
                _error(lambda: tf.get_variable("a", [4, 3], partitioner=tf.fixed_size_partitioner(2))),
                _error(lambda: tf.get_variable("missing", [4, 2], partitioner=tf.fixed_size_partitioner(2))),
            ]
    return out

"""Differential sweep of tf.data and tf.image: the op names TF gives a pipeline's
datasets, constants and iterators (IteratorV2, MakeIterator, the string handle made
up front, tf.data's seed/seed2 tensors), padded_batch with -1 padded dimensions and
the DataLossError of a too-small padded shape, Dataset.unbatch /
experimental.unbatch, enumerate and reduce (relaxing a state whose shape changes),
and a map function returning nothing."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def drain(tf, sess, element, limit=30):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except tf.errors.OpError as e:
            out.append(type(e).__name__)
            return out
    return out + ["no end"]


def names(g):
    return [f"{op.type}:{op.name}" for op in g.get_operations()]


def run(tf, np):
    out = {}
    D = tf.data.Dataset
    g = tf.Graph()
    with g.as_default():
        ds = D.from_tensor_slices((np.arange(6), np.arange(6.0))).map(lambda a, b: a)
        ds = ds.interleave(lambda a: D.range(a), cycle_length=2, block_length=2).batch(2)
        ds = ds.padded_batch(2, [None]).shuffle(3, seed=1).repeat(2).take(3).skip(1).prefetch(1).cache()
        ds = D.zip((ds, D.range(1, 5, 2))).map(lambda a, b: b, num_parallel_calls=2)
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        it.string_handle("named_handle")
        other = tf.data.Iterator.from_structure(tf.int64, [])
        other.make_initializer(D.range(2))
        D.range(3).shuffle(2)
        out["pipeline_names"] = names(g)
        out["handle_names"] = [it.string_handle().name, it.initializer.name, other.string_handle().name]
        out["shapes"] = str(nxt.shape)
    with tf.Graph().as_default() as g:
        tf.set_random_seed(3)
        D.range(3).shuffle(3)
        out["graph_seed_names"] = names(g)

    with tf.Graph().as_default(), tf.Session() as sess:
        ragged = D.range(1, 5).map(lambda x: tf.fill(tf.reshape(x, [1]), x))
        pb = ragged.padded_batch(2, padded_shapes=[-1])
        out["pad_minus1"] = drain(tf, sess, tf.data.make_one_shot_iterator(pb).get_next())
        out["pad_minus1_shape"] = str(pb.output_shapes)
        pd = D.range(1, 4).map(lambda x: {"a": tf.fill(tf.reshape(x, [1]), x),
                                          "b": tf.fill(tf.stack([x, tf.constant(1, tf.int64)]), x)})
        pd = pd.padded_batch(2, {"a": [-1], "b": [3, -1]}, drop_remainder=True)
        out["pad_dict"] = drain(tf, sess, tf.data.make_one_shot_iterator(pd).get_next())
        out["pad_dict_shapes"] = {k: str(v) for k, v in pd.output_shapes.items()}
        small = ragged.padded_batch(2, padded_shapes=[2])
        out["pad_too_small"] = drain(tf, sess, tf.data.make_one_shot_iterator(small).get_next())

        ub = D.from_tensors(np.arange(6).reshape(3, 2)).unbatch()
        out["unbatch"] = drain(tf, sess, tf.data.make_one_shot_iterator(ub).get_next())
        out["unbatch_shape"] = str(ub.output_shapes)
        ubn = D.range(5).batch(2).map(lambda x: (x, x * 2)).apply(tf.data.experimental.unbatch())
        out["unbatch_nested"] = drain(tf, sess, tf.data.make_one_shot_iterator(ubn).get_next())
        unknown = D.range(1, 4).map(lambda x: tf.fill(tf.stack([x, tf.constant(2, tf.int64)]), x)).unbatch()
        out["unbatch_unknown"] = drain(tf, sess, tf.data.make_one_shot_iterator(unknown).get_next())
        out["unbatch_unknown_shape"] = str(unknown.output_shapes)
        out["unbatch_scalar"] = err(lambda: D.range(3).unbatch())
        out["unbatch_mismatch"] = err(lambda: D.from_tensors((np.zeros(3), np.zeros(2))).unbatch())

        en = D.range(10, 13).enumerate(start=5)
        out["enumerate"] = drain(tf, sess, tf.data.make_one_shot_iterator(en).get_next())
        en2 = D.from_tensor_slices({"a": [1.0, 2.0]}).enumerate()
        out["enumerate_dict"] = drain(tf, sess, tf.data.make_one_shot_iterator(en2).get_next())

        total = D.range(5).reduce(np.int64(0), lambda s, x: s + x)
        pair = D.from_tensor_slices((np.arange(4), np.arange(4.0))).reduce(
            (np.int64(0), 0.0), lambda s, e: (s[0] + e[0], s[1] * 2 + tf.cast(e[1], tf.float32)))
        empty = D.range(0).reduce({"a": np.int64(5)}, lambda s, x: {"a": s["a"] + x})
        grow = D.range(4).reduce(tf.zeros([0], tf.int64),
                                 lambda s, x: tf.concat([s, tf.reshape(x, [1])], 0))
        out["reduce"] = sess.run([total, pair, empty, grow])
        out["reduce_meta"] = [(t.op.type, t.name, str(t.shape)) for t in [total, pair[0], pair[1], grow]]
        out["reduce_bad_type"] = err(lambda: D.range(4).reduce(np.float32(0), lambda s, x: x))

        out["map_none"] = err(lambda: D.range(2).map(lambda x: None))
    return out

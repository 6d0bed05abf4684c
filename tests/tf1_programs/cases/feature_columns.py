"""tf.feature_column with input_layer and linear_model: numeric (shape, default,
normalizer_fn), bucketized, hashed, vocabulary list / file (OOV buckets, default),
identity, weighted, crossed (TF's SparseCross fingerprint ids), indicator,
embedding (mean/sum/sqrtn), shared embeddings, make_parse_example_spec with
parse_example, variable names and shapes, cols_to_vars, gradients of the linear
model, and the build-time errors. Embedding initializers are constants, so the
lookups compare by value (TF's default truncated-normal draw is random)."""
import os
import tempfile


def _features(tf, np):
    return {
        "price": tf.constant([[1.0], [5.0], [12.0]]),
        "size": tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        "age": tf.constant([17.0, 25.0, 70.0]),
        "word": tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], tf.constant(["a", "b", "zzz", "c"]), [3, 2]),
        "color": tf.constant([["red"], ["blue"], ["pink"]]),
        "ids": tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 7], tf.int64), [3, 2]),
        "ids_w": tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([0.5, 2.0, 1.5]), [3, 2]),
        "num_ids": tf.constant([[4, -1], [2, 9], [-1, -1]], tf.int64),
    }


def run(tf, np):
    fc = tf.feature_column
    out = {}
    vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    with open(vocab, "w") as f:
        f.write("red\ngreen\nblue\n")
    price = fc.numeric_column("price")
    size = fc.numeric_column("size", shape=(2,), normalizer_fn=lambda x: x / 2.0)
    age = fc.numeric_column("age", default_value=30.0)
    age_b = fc.bucketized_column(age, [18.0, 30.0, 65.0])
    size_b = fc.bucketized_column(size, [1.0, 2.5])
    word_h = fc.categorical_column_with_hash_bucket("word", 10)
    word_v = fc.categorical_column_with_vocabulary_list("word", ["a", "b", "c"], num_oov_buckets=2)
    color_f = fc.categorical_column_with_vocabulary_file("color", vocab)
    color_fo = fc.categorical_column_with_vocabulary_file("color", vocab, num_oov_buckets=3)
    ids = fc.categorical_column_with_identity("ids", 8)
    num_ids = fc.categorical_column_with_identity("num_ids", 6, default_value=0)
    ids_w = fc.weighted_categorical_column(ids, "ids_w")
    cross = fc.crossed_column(["word", age_b], 100)
    cross3 = fc.crossed_column([cross, "color"], 1000, hash_key=7)
    out["names"] = [c.name for c in (price, age_b, size_b, word_h, color_f, ids_w, cross, cross3)]
    out["num_buckets"] = [c.num_buckets for c in (age_b, size_b, word_h, word_v, color_f, color_fo, ids, cross)]
    out["types"] = [type(c).__name__ for c in (price, age_b, word_h, word_v, color_f, ids, ids_w, cross)]
    g = tf.Graph()
    with g.as_default():
        feats = _features(tf, np)
        init = lambda v: tf.constant_initializer(np.arange(v, dtype=np.float32) / 10.0)
        cols = [price, size, age_b, size_b,
                fc.indicator_column(word_v), fc.indicator_column(color_fo), fc.indicator_column(ids_w),
                fc.indicator_column(cross), fc.indicator_column(num_ids), fc.indicator_column(size_b),
                fc.embedding_column(word_h, 3, initializer=init(30)),
                fc.embedding_column(ids_w, 2, combiner="sqrtn", initializer=init(16)),
                fc.embedding_column(color_f, 2, combiner="sum", initializer=init(6)),
                fc.embedding_column(cross3, 2, initializer=init(2000))]
        cols_to_vars = {}
        net = fc.input_layer(feats, cols, cols_to_vars=cols_to_vars)
        out["net_shape"] = net.shape.as_list()
        out["vars"] = sorted((v.name, v.shape.as_list()) for v in tf.global_variables())
        out["cols_to_vars"] = sorted((c.name, [v.name for v in vs]) for c, vs in cols_to_vars.items())
        out["model_vars"] = sorted(v.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES))
        shared = fc.shared_embedding_columns([ids, fc.categorical_column_with_identity("num_ids", 8, default_value=0)], 2,
                                             initializer=init(16))
        shared_net = fc.input_layer(feats, shared)
        shared_sum = fc.shared_embedding_columns([word_h, fc.categorical_column_with_hash_bucket("color", 10)], 3, combiner="sum",
                                                 shared_embedding_collection_name="s2")
        s2 = fc.input_layer(feats, shared_sum)
        out["shared_vars"] = sorted((v.name, v.shape.as_list()) for v in tf.global_variables()
                                    if "shared" in v.name or "s2" in v.name)
        out["shared_names"] = [c.name for c in shared]
        lm_vars = {}
        logits = fc.linear_model(feats, [price, age_b, word_h, ids_w, cross, fc.indicator_column(word_v),
                                         fc.embedding_column(ids, 2, initializer=init(16))],
                                 units=2, cols_to_vars=lm_vars)
        lm_mean = fc.linear_model(feats, [word_v, size], sparse_combiner="mean")
        lm_sqrtn = fc.linear_model(feats, [word_v, ids_w], sparse_combiner="sqrtn")
        out["lm_vars"] = sorted((str(c) if isinstance(c, str) else c.name, [v.name for v in vs])
                                for c, vs in lm_vars.items())
        out["all_vars"] = sorted(v.name for v in tf.global_variables() if "linear_model" in v.name)
        trainable = tf.trainable_variables()
        assigns = [tf.assign(v, tf.reshape(tf.range(tf.size(v), dtype=tf.float32) / 7.0, tf.shape(v)))
                   for v in tf.global_variables() if "linear_model" in v.name]
        loss = tf.reduce_sum(logits * logits) + tf.reduce_sum(lm_mean) + tf.reduce_sum(lm_sqrtn)
        lm_w = [v for v in trainable if "linear_model" in v.name]
        grads = tf.gradients(loss, lm_w)
        spec = fc.make_parse_example_spec([price, size, age_b, word_h, ids_w, cross3, color_f])
        out["spec"] = sorted((k, type(v).__name__, str(v.dtype.name), list(getattr(v, "shape", [])) ,
                              str(getattr(v, "default_value", None))) for k, v in spec.items())
        ex = tf.train.Example(features=tf.train.Features(feature={
            "price": tf.train.Feature(float_list=tf.train.FloatList(value=[3.0])),
            "size": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 9.0])),
            "word": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"b", b"c"])),
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[2, 5])),
            "ids_w": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 3.0])),
            "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"green"]))}))
        parsed = tf.parse_example([ex.SerializeToString()] * 2, spec)
        parsed_net = fc.input_layer(parsed, [price, size, age_b, fc.indicator_column(word_h),
                                             fc.indicator_column(ids_w), fc.indicator_column(cross3)])
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            sess.run(assigns)
            out["net"] = sess.run(net)
            out["shared_net"] = sess.run(shared_net)
            out["s2_shape"] = list(sess.run(s2).shape)
            out["logits"], out["lm_mean"], out["lm_sqrtn"] = sess.run([logits, lm_mean, lm_sqrtn])
            out["grads"] = [sess.run(tf.convert_to_tensor(gr)) for gr in grads]
            out["parsed_net"] = sess.run(parsed_net)
    out["errors"] = _errors(tf, np)
    return out


def _errors(tf, np):
    fc = tf.feature_column
    cases = {
        "bucket_unsorted": lambda: fc.bucketized_column(fc.numeric_column("a"), [2.0, 1.0]),
        "bucket_source": lambda: fc.bucketized_column(fc.categorical_column_with_identity("a", 3), [1.0]),
        "hash_zero": lambda: fc.categorical_column_with_hash_bucket("a", 0),
        "vocab_dup": lambda: fc.categorical_column_with_vocabulary_list("a", ["x", "x"]),
        "vocab_oov_default": lambda: fc.categorical_column_with_vocabulary_list("a", ["x"], default_value=0,
                                                                                num_oov_buckets=1),
        "identity_default": lambda: fc.categorical_column_with_identity("a", 3, default_value=3),
        "cross_one": lambda: fc.crossed_column(["a"], 10),
        "cross_hashed": lambda: fc.crossed_column([fc.categorical_column_with_hash_bucket("a", 3), "b"], 10),
        "numeric_shape": lambda: fc.numeric_column("a", shape=(0,)),
        "numeric_default": lambda: fc.numeric_column("a", shape=(2,), default_value=[1.0]),
        "embedding_dim": lambda: fc.embedding_column(fc.categorical_column_with_identity("a", 3), 0),
        "input_layer_categorical": lambda: fc.input_layer({"a": tf.constant([[1]])},
                                                          [fc.categorical_column_with_identity("a", 3)]),
        "input_layer_empty": lambda: fc.input_layer({}, []),
        "missing_feature": lambda: fc.input_layer({"b": tf.constant([[1.0]])}, [fc.numeric_column("a")]),
        "rank0": lambda: fc.input_layer({"a": tf.constant(1.0)}, [fc.numeric_column("a")]),
        "duplicate": lambda: fc.input_layer({"a": tf.constant([[1.0]])}, [fc.numeric_column("a")] * 2),
        "batch_mismatch": lambda: fc.input_layer({"a": tf.constant([[1.0]]), "b": tf.constant([[1.0], [2.0]])},
                                                 [fc.numeric_column("a"), fc.numeric_column("b")]),
        "shared_buckets": lambda: fc.shared_embedding_columns([fc.categorical_column_with_identity("a", 3),
                                                               fc.categorical_column_with_identity("b", 4)], 2),
        "parse_conflict": lambda: fc.make_parse_example_spec([fc.numeric_column("a"),
                                                              fc.categorical_column_with_identity("a", 3)]),
    }
    out = {}
    for name, fn in cases.items():
        with tf.Graph().as_default():
            try:
                fn()
                out[name] = "no error"
            except Exception as e:  # noqa: BLE001 - the class is what is compared
                out[name] = type(e).__name__
    return out

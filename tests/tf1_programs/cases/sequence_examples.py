"""SequenceExamples: parse_single_sequence_example and parse_sequence_example (context features
dense, sparse and defaulted; FixedLenSequenceFeature lists of scalars and vectors, missing lists
allowed or not, VarLenFeature lists), their static shapes, a batch's padding and lengths, a
TFRecord file of them read by tf.data (padded_batch) and by a queue reader with dynamic_pad
batching, and the errors of malformed data."""
import os
import tempfile


def _sequence(tf, label, tokens, frames=None, words=None):
    ex = tf.train.SequenceExample()
    ex.context.feature["label"].int64_list.value.append(label)
    ex.context.feature["weight"].float_list.value.append(label / 4.0)
    if label % 2:
        ex.context.feature["tags"].bytes_list.value.extend([b"odd", b"tag%d" % label])
    for t in tokens:
        ex.feature_lists.feature_list["tokens"].feature.add().int64_list.value.append(t)
    for f in frames or []:
        ex.feature_lists.feature_list["frames"].feature.add().float_list.value.extend(f)
    for w in words or []:
        ex.feature_lists.feature_list["words"].feature.add().bytes_list.value.extend(w)
    return ex.SerializeToString()


def _plain(value, np):
    """Sparse values as their three parts, strings as text: outputs saved without pickling."""
    if isinstance(value, dict):
        return {k: _plain(v, np) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "indices"):
        return [_plain(v, np) for v in value]
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return {"indices": value.indices, "values": _plain(value.values, np), "dense_shape": value.dense_shape}
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([v.decode() for v in value.ravel()], dtype=str).reshape(value.shape)
    return value


def _error(tf, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error class is the output
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    records = [
        _sequence(tf, 1, [5, 6, 7], [[0.5, 1.5], [2.5, 3.5]], [[b"a"], [b"b", b"c"], []]),
        _sequence(tf, 2, [9], None, [[b"d"]]),
        _sequence(tf, 3, [1, 2, 3, 4, 5], [[1.0, 1.0]], None),
    ]
    context = {"label": tf.FixedLenFeature([], tf.int64), "weight": tf.FixedLenFeature([1], tf.float32),
               "tags": tf.VarLenFeature(tf.string),
               "bias": tf.FixedLenFeature([2], tf.float32, default_value=[0.25, -0.25])}
    sequence = {"tokens": tf.FixedLenSequenceFeature([], tf.int64),
                "frames": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
                "words": tf.VarLenFeature(tf.string)}

    g = tf.Graph()
    with g.as_default():
        single = [tf.parse_single_sequence_example(r, context_features=context, sequence_features=sequence)
                  for r in records]
        serialized = tf.placeholder(tf.string, [None])
        batch_context, batch_lists, lengths = tf.io.parse_sequence_example(
            serialized, context_features=context, sequence_features=sequence, example_names=["x", "y", "z"])
        only_lists = tf.io.parse_single_sequence_example(records[0], sequence_features={
            "tokens": tf.FixedLenSequenceFeature([], tf.int64)})
        out["static_shapes"] = {
            "single": {k: str(v.shape) for k, v in list(single[0][0].items()) + list(single[0][1].items())
                       if hasattr(v, "shape")},
            "batch": {k: str(v.shape) for k, v in list(batch_context.items()) + list(batch_lists.items())
                      if hasattr(v, "shape")},
            "lengths": {k: str(v.shape) for k, v in lengths.items()},
        }
        with tf.Session() as sess:
            out["single"] = _plain(sess.run(single), np)
            out["batch"] = _plain(sess.run([batch_context, batch_lists, lengths], {serialized: records}), np)
            out["only_lists"] = _plain(sess.run(only_lists), np)
            errors = {}
            for key, fn in {
                "required_list": lambda: tf.parse_single_sequence_example(records[1], sequence_features={
                    "frames": tf.FixedLenSequenceFeature([2], tf.float32)}),
                "not_whole_steps": lambda: tf.parse_single_sequence_example(records[0], sequence_features={
                    "tokens": tf.FixedLenSequenceFeature([2], tf.int64)}),
                "wrong_type": lambda: tf.parse_single_sequence_example(records[0], sequence_features={
                    "tokens": tf.FixedLenSequenceFeature([], tf.float32)}),
                "required_context": lambda: tf.parse_single_sequence_example(records[0], context_features={
                    "missing": tf.FixedLenFeature([], tf.int64)}),
                "not_a_proto": lambda: tf.parse_single_sequence_example(b"\xff\xffnot a proto", context_features={
                    "label": tf.FixedLenFeature([], tf.int64)}),
            }.items():
                errors[key] = _error(tf, lambda fn=fn: sess.run(fn()))
            out["errors"] = errors
        out["build_errors"] = [
            _error(tf, lambda: tf.parse_single_sequence_example(records[0])),
            _error(tf, lambda: tf.parse_single_sequence_example(records[0], sequence_features={
                "t": tf.FixedLenFeature([], tf.int64)})),
            _error(tf, lambda: tf.parse_single_sequence_example(records, context_features=context)),
            _error(tf, lambda: tf.parse_single_sequence_example(records[0], sequence_features={
                "t": tf.FixedLenSequenceFeature([], tf.int64, default_value=3)})),
        ]

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sequences.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for r in records:
                writer.write(r)

        def parse(record):
            ctx, lists = tf.parse_single_sequence_example(record, context_features=context,
                                                          sequence_features={"tokens": sequence["tokens"],
                                                                             "frames": sequence["frames"]})
            return ctx["label"], lists["tokens"], lists["frames"]

        g = tf.Graph()
        with g.as_default():
            ds = tf.data.TFRecordDataset(path).map(parse).padded_batch(2, padded_shapes=([], [None], [None, 2]))
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            out["dataset_shapes"] = [str(t.shape) for t in nxt]
            with tf.Session() as sess:
                out["dataset"] = [sess.run(nxt), sess.run(nxt)]

        g = tf.Graph()
        with g.as_default():
            queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
            _, record = tf.TFRecordReader().read(queue)
            label, tokens, _frames = parse(record)
            labels, token_batch = tf.train.batch([label, tokens], batch_size=2, dynamic_pad=True,
                                                 allow_smaller_final_batch=True)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                out["queued"] = [sess.run([labels, token_batch]), sess.run([labels, token_batch])]
                coord.request_stop()
                coord.join(threads)
    return out

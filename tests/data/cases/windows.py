"""Datasets of datasets: Dataset.window (shift, stride, drop_remainder, tuple
elements), experimental.group_by_window and bucket_by_sequence_length (padding
to the longest or to the bucket boundary, no padding, dropped remainders)."""


def drain(tf, sess, element, limit=60):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.InvalidArgumentError as e:
            lines = e.message.split("\n")
            end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[[")), len(lines))
            return out + ["InvalidArgumentError: " + lines[end - 1].strip()]
    return out + ["no end"]


def run(tf, np):
    out = {}
    D, E = tf.data.Dataset, tf.data.experimental
    g = tf.Graph()
    with g.as_default():
        seqs = D.range(1, 9).map(lambda n: tf.range(n) + 10 * n)  # lengths 1..8
        pipelines = {
            "window": D.range(7).window(3).flat_map(lambda w: w.batch(3)),
            "window_shift_drop": D.range(7).window(3, shift=2, drop_remainder=True).flat_map(lambda w: w.batch(3)),
            "window_shift_keep": D.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3)),
            "window_stride": D.range(10).window(3, shift=1, stride=3).flat_map(lambda w: w.batch(3)),
            "window_gaps": D.range(10).window(2, shift=4).flat_map(lambda w: w.batch(2)),
            "window_tuple": D.from_tensor_slices((np.arange(5), np.arange(5) * 0.5)).window(2).flat_map(
                lambda a, b: D.zip((a.batch(2), b.batch(2)))),
            "window_reduce": D.range(6).window(4, 1, 1, True).map(
                lambda w: w.reduce(np.int64(0), lambda s, x: s + x)),
            "window_zero": D.range(3).window(0).flat_map(lambda w: w.batch(1)),
            "group": D.range(10).apply(E.group_by_window(lambda x: x % 2, lambda k, ds: ds.batch(3), 3)),
            "group_size_func": D.range(12).apply(E.group_by_window(
                lambda x: x % 3, lambda k, ds: ds.batch(10).map(lambda b: (k, b)), window_size_func=lambda k: k + 1)),
            "group_tuples": D.from_tensor_slices((np.arange(8), np.arange(8) % 3)).apply(E.group_by_window(
                lambda v, k: tf.cast(k, tf.int64), lambda k, ds: ds.batch(2), 2)),
            "bucket": seqs.apply(E.bucket_by_sequence_length(lambda s: tf.size(s), [3, 6], [2, 2, 3])),
            "bucket_boundary_pad": D.range(1, 6).map(lambda n: tf.range(n)).apply(E.bucket_by_sequence_length(
                lambda s: tf.size(s), [3, 7], [2, 2, 2], pad_to_bucket_boundary=True, padding_values=np.int64(-1))),
            "bucket_drop": seqs.apply(E.bucket_by_sequence_length(lambda s: tf.size(s), [4], [3, 3],
                                                                   drop_remainder=True)),
            "bucket_no_padding": D.range(1, 7).map(lambda n: tf.fill([2], n)).apply(E.bucket_by_sequence_length(
                lambda s: tf.cast(s[0], tf.int32), [3], [2, 2], no_padding=True)),
            "bucket_tuple": seqs.map(lambda s: (s, tf.size(s))).apply(E.bucket_by_sequence_length(
                lambda s, n: n, [4], [3, 3], padded_shapes=([10], []))),
        }
        nexts = {k: tf.data.make_one_shot_iterator(d).get_next() for k, d in pipelines.items()}
        out["shapes"] = {k: str(tf.data.get_output_shapes(d)) for k, d in pipelines.items()}
        with tf.Session() as sess:
            for key, n in nexts.items():
                out[key] = drain(tf, sess, n)
    return out

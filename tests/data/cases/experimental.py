"""Dataset.shard and Dataset.scan, and tf.data.experimental's scan, Counter,
choose_from_datasets (exhausted inputs skipped, or ending the whole),
parallel_interleave and get_single_element, with their errors."""


def reason(e):
    """The op's own words: TF prefixes "Graph execution error:" and where the node was defined."""
    lines = e.message.split("\n")
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[[")), len(lines))
    return type(e).__name__ + ": " + lines[end - 1].strip()


def drain(tf, sess, element, limit=60):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.InvalidArgumentError as e:
            return out + [reason(e)]
    return out + ["no end"]


def run(tf, np):
    out = {}
    D, E = tf.data.Dataset, tf.data.experimental
    g = tf.Graph()
    with g.as_default():
        pipelines = {
            "shard_1_of_3": D.range(10).shard(3, 1),
            "shard_batches": D.range(11).batch(2).shard(2, 0),
            "shard_index_too_big": D.range(10).shard(3, 3),
            "shard_zero": D.range(10).shard(0, 0),
            "scan": D.range(5).apply(E.scan(tf.constant(0, tf.int64), lambda st, x: (st + x, (st, x * 2)))),
            "scan_method_growing_state": D.range(4).scan(
                tf.constant([0], tf.int64), lambda st, x: (tf.concat([st, [x]], 0), tf.reduce_sum(st))),
            "scan_dict_state": D.from_tensor_slices(np.arange(1.0, 5.0, dtype=np.float32)).scan(
                {"n": tf.constant(0), "sum": tf.constant(0.0)},
                lambda st, x: ({"n": st["n"] + 1, "sum": st["sum"] + x}, st["sum"] / tf.cast(st["n"] + 1, tf.float32))),
            "counter": E.Counter(3, 2).take(4),
            "counter_down_float": E.Counter(1.5, -0.5, dtype=tf.float32).take(4),
            "choose": E.choose_from_datasets(
                [D.range(3), D.range(10, 12)], D.from_tensor_slices(tf.constant([0, 1, 1, 1, 0, 0, 0, 1], tf.int64))),
            "choose_stop_on_empty": E.choose_from_datasets(
                [D.range(3), D.range(10, 12)], D.from_tensor_slices(tf.constant([1, 1, 1, 0], tf.int64)),
                stop_on_empty_dataset=True),
            "choose_bad_index": E.choose_from_datasets(
                [D.range(3), D.range(10, 12)], D.from_tensor_slices(tf.constant([0, 2], tf.int64))),
            "choose_tuples": E.choose_from_datasets(
                [D.from_tensor_slices((np.arange(3), np.arange(3) * 1.5)),
                 D.from_tensors((np.int64(7), np.float64(0.25))).repeat(2)],
                D.from_tensor_slices(tf.constant([1, 0, 1, 0], tf.int64))),
            "parallel_interleave": D.range(1, 4).apply(
                E.parallel_interleave(lambda x: D.range(x * 10, x * 10 + x), cycle_length=2, block_length=2)),
        }
        nexts = {k: tf.data.make_one_shot_iterator(d).get_next() for k, d in pipelines.items()}
        shapes = {k: str(tf.data.get_output_shapes(d)) for k, d in pipelines.items() if not k.endswith(("_too_big", "_zero"))}
        singles = {"one": E.get_single_element(D.range(4, 5)),
                   "tuple": E.get_single_element(D.from_tensors((1, [2, 3]))),
                   "empty": E.get_single_element(D.range(0)),
                   "two": E.get_single_element(D.range(2))}
        with tf.Session() as sess:
            for key, n in nexts.items():
                out[key] = drain(tf, sess, n)
            for key, t in singles.items():
                try:
                    out["single_" + key] = sess.run(t)
                except tf.errors.InvalidArgumentError as e:
                    out["single_" + key] = reason(e)
        out["shapes"] = shapes
    return out

"""tf.data.experimental's ignore_errors (after map, fused map+batch, batch, take, zip, prefetch,
repeat, scan, a CSV reader), take_while, unique, enumerate_dataset, cardinality and
assert_cardinality, dense_to_sparse_batch, CsvDataset and make_csv_dataset (shuffle=False),
with their static structures and errors."""
import os
import shutil
import tempfile


def reason(e):
    """The op's own words: TF prefixes "Graph execution error:" and where the node was defined."""
    lines = e.message.split("\n")
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[[")), len(lines))
    return type(e).__name__ + ": " + lines[end - 1].strip()


def plain(np, value):
    """Fetched values as plain data: strings as str, a SparseTensorValue as a dict."""
    if hasattr(value, "dense_shape") and hasattr(value, "indices"):
        return {"indices": value.indices, "values": plain(np, value.values), "dense_shape": value.dense_shape}
    if isinstance(value, dict):
        return {k: plain(np, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(np, v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.dtype == object:
        return {"shape": list(value.shape), "items": [v.decode() for v in value.ravel()]}
    return value


def drain(tf, np, sess, element, limit=40):
    out = []
    for _ in range(limit):
        try:
            out.append(plain(np, sess.run(element)))
        except tf.errors.OutOfRangeError:
            return out
        except tf.errors.OpError as e:
            return out + [reason(e)]
    return out + ["no end"]


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def shapes_of(tf, d):
    """Static structure, "type shape class" per component; dicts by key, so key order does not matter."""
    return _leaves(tf.data.get_output_types(d), tf.data.get_output_shapes(d), tf.data.get_output_classes(d))


def _leaves(t, s, c):
    if isinstance(t, dict):
        return {k: _leaves(t[k], s[k], c[k]) for k in t}
    if isinstance(t, tuple):
        return [_leaves(*x) for x in zip(t, s, c)]
    return f"{t.name} {s} {c.__name__}"


def run(tf, np):
    folder = tempfile.mkdtemp()
    try:
        return _run(tf, np, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(tf, np, folder):
    out = {}
    D, E = tf.data.Dataset, tf.data.experimental
    people = write(folder, "a.csv", 'name,age,score,city,flag\nann,31,1.5,"New York",1\nbob,,2.25,Paris,0\n'
                                    '"c,d",45,,"say ""hi""",1\ndan,3000000000,7,Rome,0\neve,5,1e40,,1\n')
    write(folder, "b.csv", "name,age,score,city,flag\nfay,1,2,Oslo,1\n")
    bad = write(folder, "bad.csv", '1,2\n3\n4,x\n5,6,7\n\n8,9\n"10",11\n12 , 13\n')
    bad_header = write(folder, "bad_header.csv", "a,b\n1,2\n3\nx,4\n5,6\n")
    semi = write(folder, "semi.csv", "a;b\n1;NA\n2;3\n")
    no_header = write(folder, "nh.csv", "1,2.5,x\n3,4,y\n")
    misc = write(folder, "misc.csv", '1e3, 2.5 ,inf,-0,"a\nb"\r\n-7,0.5,1,2,"q"\n')
    g = tf.Graph()
    with g.as_default():
        x = np.array([1., 2., 0., 4., 5., 0., 7., 8., 9.], np.float32)
        inv = D.from_tensor_slices(x).map(lambda v: tf.debugging.check_numerics(1. / v, "bad"))
        pipelines = {
            "ignore_map": inv.apply(E.ignore_errors()),
            "ignore_map_log": inv.apply(E.ignore_errors(log_warning=True)),
            "ignore_map_batch": inv.batch(2).apply(E.ignore_errors()),
            "ignore_filter_batch": inv.filter(lambda v: v > 0.).batch(2).apply(E.ignore_errors()),
            "ignore_padded_batch": inv.padded_batch(2, []).apply(E.ignore_errors()),
            "ignore_take": inv.take(4).apply(E.ignore_errors()),
            "ignore_skip": inv.skip(2).apply(E.ignore_errors()),
            "ignore_zip": D.zip((inv, D.range(100))).apply(E.ignore_errors()),
            "ignore_prefetch": inv.prefetch(2).apply(E.ignore_errors()),
            "ignore_repeat": inv.take(3).repeat(2).apply(E.ignore_errors()),
            "ignore_concat": inv.take(3).concatenate(inv.skip(4)).apply(E.ignore_errors()),
            "ignore_scan": inv.scan(tf.constant(0.), lambda s, v: (s + v, s)).apply(E.ignore_errors()),
            "ignore_csv": E.CsvDataset(bad, [tf.int32, tf.int32]).apply(E.ignore_errors()),
            "take_while": D.range(10).apply(E.take_while(lambda v: v < 4)),
            "take_while_tuple": D.from_tensor_slices(([1, 2, 3], [4, 5, 6])).apply(
                E.take_while(lambda a, b: a + b < 8)),
            "take_while_never": D.range(3).apply(E.take_while(lambda v: tf.constant(False))),
            "unique_int32": D.from_tensor_slices([3, 1, 3, 2, 1, 5]).apply(E.unique()),
            "unique_int64": D.range(6).map(lambda v: v % 3).apply(E.unique()),
            "unique_strings": D.from_tensor_slices(["a", "b", "a", "c", "b"]).apply(E.unique()),
            "unique_vectors": D.from_tensor_slices([[1, 2], [1, 2], [2, 1]]).apply(E.unique()),
            "unique_tuple": D.from_tensors((1, 2)).apply(E.unique()),
            "enumerate": D.from_tensor_slices(["a", "b"]).apply(E.enumerate_dataset(5)),
            "enumerate_tuple": D.from_tensor_slices(([1, 2], [4., 5.])).apply(E.enumerate_dataset()),
            "assert_ok": D.range(3).apply(E.assert_cardinality(3)),
            "assert_fewer": D.range(3).apply(E.assert_cardinality(5)),
            "assert_more": D.range(3).apply(E.assert_cardinality(2)),
            "assert_one": D.range(3).apply(E.assert_cardinality(1)),
            "assert_infinite": D.range(3).apply(E.assert_cardinality(E.INFINITE_CARDINALITY)),
            "assert_unknown": D.range(3).apply(E.assert_cardinality(E.UNKNOWN_CARDINALITY)),
            "assert_filter": D.range(3).filter(lambda v: v > 0).apply(E.assert_cardinality(1)),
            "assert_empty": D.range(0).apply(E.assert_cardinality(0)),
            "sparse": D.range(5).map(lambda v: tf.fill([v], v)).apply(E.dense_to_sparse_batch(2, [6])),
            "sparse_too_big": D.range(5).map(lambda v: tf.fill([v], v)).apply(E.dense_to_sparse_batch(2, [3])),
            "sparse_rank": D.range(3).apply(E.dense_to_sparse_batch(2, [3])),
            "sparse_2d": D.range(1, 4).map(lambda v: tf.fill(tf.stack([v, 4 - v]), v)).apply(
                E.dense_to_sparse_batch(2, [None, None])),
            "sparse_2d_fixed": D.range(1, 4).map(lambda v: tf.fill(tf.stack([v, 4 - v]), v)).apply(
                E.dense_to_sparse_batch(2, [None, 3])),
            "sparse_strings": D.from_tensor_slices(["a", "b", "c"]).map(lambda s: tf.fill([2], s)).apply(
                E.dense_to_sparse_batch(2, [2])),
            "sparse_zero_batch": D.range(3).map(lambda v: tf.fill([v], v)).apply(E.dense_to_sparse_batch(0, [5])),
            "sparse_to_dense": D.range(5).map(lambda v: tf.fill([v], v)).apply(
                E.dense_to_sparse_batch(2, [6])).map(lambda s: tf.sparse.to_dense(s)),
            "csv": E.CsvDataset(people, [tf.string, tf.constant([0], tf.int64), tf.constant([-1.0]), "", 0],
                                header=True),
            "csv_required": E.CsvDataset(people, [tf.string, tf.int64, tf.float32, tf.string, tf.int32],
                                         header=True),
            "csv_select": E.CsvDataset(people, [tf.int64, tf.constant(["?"])], header=True, select_cols=[1, 3]),
            "csv_no_header": E.CsvDataset(people, [tf.string] * 5),
            "csv_errors": E.CsvDataset(bad, [tf.int32, tf.int32]),
            "csv_na": E.CsvDataset(semi, [[0], [7]], header=True, field_delim=";", na_value="NA"),
            "csv_misc": E.CsvDataset(misc, [tf.float32, tf.float64, tf.float32, tf.float64, tf.string]),
            "csv_no_quotes": E.CsvDataset(write(folder, "q.csv", '"a",b"c\n'), [tf.string, tf.string],
                                          use_quote_delim=False),
            "csv_two_files": E.CsvDataset([semi, semi], [tf.string, tf.string], field_delim=";", header=True),
            "csv_unterminated": E.CsvDataset(write(folder, "u.csv", '"abc,1\n'), [tf.string, tf.int32]),
            "csv_quote_inside": E.CsvDataset(write(folder, "qi.csv", 'a"b,1\n'), [tf.string, tf.int32]),
            "csv_too_many": E.CsvDataset(write(folder, "m.csv", "5,6,7\n8,9\n"), [tf.int32, tf.int32]),
            "csv_bad_float": E.CsvDataset(write(folder, "bf.csv", "x,1\n"), [tf.float32, tf.int32]),
            "csv_int_overflow": E.CsvDataset(write(folder, "io.csv", "99999999999\n"), [tf.int32]),
            "csv_bad_select": E.CsvDataset(people, [tf.string, tf.string], select_cols=[3, 1]),
            "csv_select_size": E.CsvDataset(people, [tf.string, tf.string], select_cols=[1]),
            "csv_empty_header": E.CsvDataset(write(folder, "e.csv", ""), [tf.string], header=True),
            "make_csv": E.make_csv_dataset(people, batch_size=2, shuffle=False, num_epochs=1),
            "make_csv_label": E.make_csv_dataset(
                os.path.join(folder, "[ab].csv"), batch_size=3, label_name="flag",
                select_columns=["name", "flag", "age"], shuffle=False, num_epochs=2),
            "make_csv_forever": E.make_csv_dataset(people, batch_size=2, select_columns=[0, 2], shuffle=False),
            "make_csv_names": E.make_csv_dataset(
                no_header, batch_size=2, column_names=["a", "b", "c"], column_defaults=[tf.int64, 0.0, "z"],
                header=False, shuffle=False, num_epochs=1, label_name="c"),
            "make_csv_ignore": E.make_csv_dataset(bad_header, batch_size=2, shuffle=False, num_epochs=1,
                                                  ignore_errors=True, column_defaults=[tf.int32, tf.int32]),
            "make_csv_na": E.make_csv_dataset(semi, batch_size=5, field_delim=";", na_value="NA", shuffle=False,
                                              num_epochs=1),
        }
        limits = {"make_csv_forever": 4}
        nexts = {k: tf.data.make_one_shot_iterator(d).get_next() for k, d in pipelines.items()}
        statics = {k: shapes_of(tf, d) for k, d in pipelines.items()}
        sized = {
            "range": D.range(10), "range_empty": D.range(5, 0), "repeat_forever": D.range(3).repeat(),
            "repeat_empty": D.range(0).repeat(), "repeat_2": D.range(3).repeat(2), "filter": D.range(3).filter(
                lambda v: v > 0), "batch": D.range(10).batch(3), "batch_drop": D.range(10).batch(3, True),
            "take": D.range(3).repeat().take(5), "take_more": D.range(3).take(10), "take_all": D.range(3).take(-1),
            "skip": D.range(10).skip(3), "skip_more": D.range(3).skip(10), "map": D.range(7).map(lambda v: v),
            "zip": D.zip((D.range(3), D.range(5))), "zip_forever": D.zip((D.range(3).repeat(), D.range(4))),
            "concat": D.range(3).concatenate(D.range(4)), "slices": D.from_tensor_slices([1, 2, 3]),
            "tensors": D.from_tensors(1), "shuffle": D.range(5).shuffle(3), "unbatch": D.range(4).batch(2).unbatch(),
            "take_while": D.range(3).apply(E.take_while(lambda v: v < 1)),
            "ignore": D.range(3).apply(E.ignore_errors()), "unique": D.range(3).apply(E.unique()),
            "prefetch": D.range(3).prefetch(1), "cache": D.range(3).cache(), "shard": D.range(10).shard(3, 1),
            "padded": D.range(10).padded_batch(3, []), "window": D.range(10).window(3),
            "window_drop": D.range(10).window(3, 2, 1, True), "enumerate": D.range(3).apply(E.enumerate_dataset()),
            "flat_map": D.range(3).flat_map(lambda v: D.range(v)), "scan": D.range(3).scan(
                tf.constant(0, tf.int64), lambda s, v: (s, v)),
            "assert": D.range(3).filter(lambda v: v > 0).apply(E.assert_cardinality(7)),
            "sparse": D.range(5).map(lambda v: tf.fill([v], v)).apply(E.dense_to_sparse_batch(2, [6])),
            "csv": E.CsvDataset(semi, [tf.string, tf.string]),
        }
        cards = {k: E.cardinality(d) for k, d in sized.items()}
        with tf.Session() as sess:
            for key, n in nexts.items():
                out[key] = drain(tf, np, sess, n, limits.get(key, 40))
            out["cardinality"] = {k: sess.run(c) for k, c in cards.items()}
        out["statics"] = statics
        c = cards["range"]
        out["cardinality_tensor"] = [c.dtype.name, str(c.shape)]
        out["constants"] = [E.INFINITE_CARDINALITY, E.UNKNOWN_CARDINALITY]
        errors = {}
        attempts = {
            "take_while_int": lambda: D.range(3).apply(E.take_while(lambda v: v)),
            "take_while_vector": lambda: D.range(3).apply(E.take_while(lambda v: tf.constant([True]))),
            "unique_float": lambda: D.from_tensor_slices([1., 2.]).apply(E.unique()),
            "unique_int16": lambda: D.from_tensor_slices(np.array([1, 2], np.int16)).apply(E.unique()),
            "sparse_tuple": lambda: D.from_tensors((1, 2)).apply(E.dense_to_sparse_batch(2, [3])),
            "make_csv_no_names": lambda: E.make_csv_dataset(people, batch_size=2, header=False),
            "make_csv_duplicates": lambda: E.make_csv_dataset(people, batch_size=2, column_names=["a"] * 5),
            "make_csv_bad_select": lambda: E.make_csv_dataset(people, batch_size=2, select_columns=["zz"]),
            "make_csv_bad_index": lambda: E.make_csv_dataset(people, batch_size=2, select_columns=[7]),
            "make_csv_bad_label": lambda: E.make_csv_dataset(people, batch_size=2, label_name="zz"),
            "make_csv_no_files": lambda: E.make_csv_dataset(os.path.join(folder, "none*.csv"), batch_size=2),
        }
        for key, attempt in attempts.items():
            try:
                attempt()
                errors[key] = "no error"
            except (TypeError, ValueError) as e:
                errors[key] = f"{type(e).__name__}: {str(e).replace(folder, '<dir>')}"
        out["python_errors"] = errors
    return out

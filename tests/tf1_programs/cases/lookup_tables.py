"""Lookup tables (tf.contrib.lookup / tf.lookup, TF1 names): HashTable over a
KeyValueTensorInitializer and a TextFileInitializer, index_table_from_tensor/_file with
OOV buckets (Fingerprint64 and SipHash buckets) and vocab_size, index_to_string_table_from_*,
MutableHashTable (insert, lookup, remove, export, size), tf.tables_initializer; static
shapes, op types, the table-initializers collection and the errors (lookups before
initialization, conflicting keys, bad vocab files, build-time dtype checks)."""
import os
import tempfile


def contrib_lookup(tf):
    if getattr(tf, "__name__", "").startswith("graphrt"):
        return tf.contrib.lookup
    from tensorflow.python.ops import lookup_ops
    return lookup_ops


def message(e):
    """The kernel's message: TF 2 wraps it in lines of context, ending before its '\\t [[node]]' line."""
    lines = str(e).splitlines()
    for i, line in enumerate(lines):
        if line.startswith("\t [[") and i:
            return lines[i - 1]
    return lines[0] if lines else ""


def run_err(fn, tmp):
    try:
        fn()
    except Exception as e:
        return type(e).__name__ + ": " + message(e).replace(tmp, "<tmp>")
    return "no error"


def build_err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    lk = contrib_lookup(tf)
    tmp = tempfile.mkdtemp()
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("emerson\nlake\npalmer\nfoo bar\n")
    cols = os.path.join(tmp, "cols.tsv")
    with open(cols, "w") as f:
        f.write("a\t10\t1.5\nb\t20\t2.5\nc\t30\t-1\n")
    dup = os.path.join(tmp, "dup.txt")
    with open(dup, "w") as f:
        f.write("x\ny\nx\n")
    out = {}
    g = tf.Graph()
    with g.as_default():
        words = tf.constant(["emerson", "lake", "and", "palmer", "foo bar", ""])
        keys = tf.placeholder(tf.string, [None, 2])
        table = lk.HashTable(lk.KeyValueTensorInitializer(["a", "b", "c"], tf.constant([1, 2, 3], tf.int64)), -1)
        floats = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant([7, 8], tf.int64), [0.5, -2.0]), 9.0)
        by_col = lk.HashTable(lk.TextFileInitializer(cols, tf.string, 0, tf.int64, 1, delimiter="\t"), 0)
        by_line = lk.HashTable(lk.TextFileInitializer(cols, tf.int64, lk.TextFileIndex.LINE_NUMBER, tf.string,
                                                      lk.TextFileIndex.WHOLE_LINE), "?")
        float_col = lk.HashTable(lk.TextFileInitializer(cols, tf.string, 0, tf.float64, 2), -9.0)
        idx = lk.index_table_from_tensor(["emerson", "lake", "palmer"], default_value=-5)
        idx_oov = lk.index_table_from_tensor(tf.constant(["emerson", "lake", "palmer"]), num_oov_buckets=3)
        idx_int = lk.index_table_from_tensor(tf.constant([42, 7, 99], tf.int64), num_oov_buckets=2,
                                             dtype=tf.int64)
        idx_strong = lk.index_table_from_tensor(["emerson"], num_oov_buckets=5,
                                                hasher_spec=lk.StrongHashSpec([3, 4]))
        idx_file = lk.index_table_from_file(vocab, num_oov_buckets=4)
        idx_file_vs = lk.index_table_from_file(vocab, vocab_size=2, default_value=-7)
        to_str = lk.index_to_string_table_from_tensor(["a", "b", "c"], default_value="UNK")
        to_str_file = lk.index_to_string_table_from_file(vocab, default_value="?")
        mut = lk.MutableHashTable(tf.string, tf.int64, default_value=-1)
        ins = mut.insert(tf.constant(["x", "y", "z"]), tf.constant([1, 2, 3], tf.int64))
        ins2 = mut.insert(["y", "w"], tf.constant([20, 40], tf.int64))
        rem = mut.remove(tf.constant(["x", "nope"]))
        mk, mv = mut.export()
        ids = idx.lookup(words)
        t = {
            "lookup": table.lookup(tf.constant(["a", "c", "zz", "b"])),
            "lookup_2d": table.lookup(keys),
            "floats": floats.lookup(tf.constant([[8, 1], [7, 7]], tf.int64)),
            "by_col": by_col.lookup(tf.constant(["c", "a", "d"])),
            "by_line": by_line.lookup(tf.constant([0, 2, 5], tf.int64)),
            "float_col": float_col.lookup(tf.constant(["b", "c", "x"])),
            "idx": ids,
            "idx_oov": idx_oov.lookup(words),
            "idx_int": idx_int.lookup(tf.constant([7, 5, 99, 1000], tf.int64)),
            "idx_strong": idx_strong.lookup(tf.constant(["emerson", "x", "y", "zzz"])),
            "idx_file": idx_file.lookup(words),
            "idx_file_vs": idx_file_vs.lookup(words),
            "to_str": to_str.lookup(tf.constant([2, 0, 5, -1], tf.int64)),
            "to_str_file": to_str_file.lookup(tf.constant([3, 1, 4], tf.int64)),
            "size": table.size(),
            "size_oov": idx_oov.size(),
            "size_file": idx_file.size(),
        }
        out["shapes"] = {k: str(v.shape) for k, v in t.items()}
        out["dtypes"] = {k: v.dtype.name for k, v in t.items()}
        out["op_types"] = {"lookup": t["lookup"].op.type, "size": t["size"].op.type,
                           "handle": table.resource_handle.op.type, "init": table.initializer.type,
                           "file_init": by_col.initializer.type, "mutable": mut.resource_handle.op.type,
                           "insert": ins.type, "remove": rem.type, "export": mk.op.type}
        out["names"] = {"table": table.name, "idx_handle": idx.resource_handle.op.name,
                        "idx_lookup": ids.op.name, "mut": mut.name}
        out["n_table_initializers"] = len(tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS))
        out["build_errors"] = {
            "key_dtype": build_err(lambda: table.lookup(tf.constant([1], tf.int64))),
            "vocab_dtype": build_err(lambda: lk.index_table_from_tensor(tf.constant([1, 2]), dtype=tf.string)),
            "oov_negative": build_err(lambda: lk.index_table_from_tensor(["a"], num_oov_buckets=-1)),
            "no_file": build_err(lambda: lk.index_table_from_file("")),
            "line_number_dtype": build_err(lambda: lk.TextFileInitializer(vocab, tf.string, -1, tf.int64, -2)),
        }
        init = tf.tables_initializer()
        # tables made after tf.tables_initializer(): not run by it
        uninit = lk.HashTable(lk.KeyValueTensorInitializer(["q"], tf.constant([1], tf.int64)), -1)
        conflict = lk.HashTable(lk.KeyValueTensorInitializer(["q", "q"], tf.constant([1, 2], tf.int64)), -1)
        dup_file = lk.index_table_from_file(dup)
        big_vocab = lk.index_table_from_file(vocab, vocab_size=10)
        out["init_type"] = init.type
        out["init_name"] = init.name
        with tf.Session() as sess:
            out["errors"] = {
                "before_init": run_err(lambda: sess.run(t["lookup"]), tmp),
                "size_before_init": run_err(lambda: sess.run(uninit.size()), tmp),
            }
            sess.run(init)
            out["errors"]["uninitialized"] = run_err(lambda: sess.run(uninit.lookup(tf.constant(["q"]))), tmp)
            out["errors"]["conflict"] = run_err(lambda: sess.run(conflict.initializer), tmp)
            out["errors"]["dup_file"] = run_err(lambda: sess.run(dup_file.initializer), tmp)
            out["errors"]["big_vocab"] = run_err(lambda: sess.run(big_vocab.initializer), tmp)
            out["errors"]["reinit_same"] = run_err(lambda: sess.run(table.initializer), tmp)
            vals = sess.run(t, {keys: [["a", "x"], ["c", "b"]]})
            sess.run(ins)
            out["mut_after_insert"] = sess.run([mut.lookup(tf.constant(["x", "z", "q"])), mut.size()])
            sess.run(ins2)
            sess.run(rem)
            k, v = sess.run([mk, mv])
            order = np.argsort(k)
            out["mut_export"] = {"keys": np.array([s.decode() for s in k[order]]), "values": v[order]}
            out["mut_final"] = sess.run(mut.lookup(tf.constant(["x", "y", "w"])))
            out["mut_dynamic_default"] = sess.run(mut.lookup(tf.constant(["x", "y"]),
                                                             dynamic_default_values=tf.constant(-9, tf.int64)))
    for k, v in vals.items():
        out[k] = np.array([s.decode() for s in v.reshape(-1)]).reshape(v.shape) if v.dtype == object else v
    return out

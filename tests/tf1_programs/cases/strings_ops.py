"""String ops (tf.strings and TF1's top-level names): length, substr, join / string_join,
reduce_join, regex_replace, regex_full_match, strip, lower / upper, to_number, as_string,
format, string_split / strings.split (SparseTensor parts), and the hash buckets
(fast: farmhash Fingerprint64, strong: SipHash-2-4, legacy: TF's Hash64) on strings of
every length 0..100; static shapes, dtypes, op types, and run-time errors with their
messages (for a bad regular expression only up to the parser's own words, RE2's in TF). Strings come back as text (bytes decoded as UTF-8, bad bytes backslash-escaped)."""


def text(value, np):
    arr = np.asarray(value, dtype=object)
    return np.vectorize(lambda b: b.decode("utf-8", "backslashreplace") if isinstance(b, bytes) else str(b),
                        otypes=[str])(arr) if arr.size else np.zeros(arr.shape, str)


def message(e):
    """The kernel's message: TF 2 wraps it in lines of context, ending before its '\t [[node]]' line."""
    lines = str(e).splitlines()
    for i, line in enumerate(lines):
        if line.startswith("\t [[") and i:
            return lines[i - 1]
    return lines[0] if lines else ""


def run_err(sess, t, feed=None):
    try:
        sess.run(t, feed)
    except Exception as e:
        return type(e).__name__ + ": " + message(e)
    return "no error"


def build_err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        words = tf.constant(["Hello", "TensorFlow", "\U0001f642x", "", "  pad me\t\n"])
        grid = tf.constant([["a", "bb", "ccc"], ["dd", "e", "ff"]])
        ph = tf.placeholder(tf.string, [None])
        rng = np.random.RandomState(7)
        letters = np.array(list(b"abcdefghijklmnopqrstuvwxyz0123456789 _-"), np.uint8)
        many = [bytes(letters[rng.randint(0, len(letters), n)]) for n in range(101)]
        many += [bytes(rng.randint(0, 256, n).astype(np.uint8)) for n in range(0, 101, 7)]
        hashed = tf.constant(np.array(many, dtype=object))
        t = {
            "length": tf.strings.length(words),
            "length_utf8": tf.strings.length(words, unit="UTF8_CHAR"),
            "substr": tf.strings.substr(words, 0, 3),
            "substr_vec": tf.substr(tf.constant(["abcdef", "xyz", "0123"]), [0, 1, 4], [2, 5, 1]),
            "substr_neg": tf.strings.substr(tf.constant(["abcdef", "xyz"]), -2, 2),
            "substr_utf8": tf.strings.substr(tf.constant(["h\u00e9llo\U0001f642", "\u00e0\u00e9\u00ee"]), 1, 2,
                                             unit="UTF8_CHAR"),
            "substr_bcast": tf.strings.substr(grid, [[0], [1]], [[1], [1]]),
            "join": tf.strings.join([grid, "-", grid], separator="|"),
            "string_join": tf.string_join(["a", "b", "c"], separator=", "),
            "string_join_none": tf.string_join([grid]),
            "reduce_join_all": tf.reduce_join(grid),
            "reduce_join_0": tf.strings.reduce_join(grid, 0, separator=","),
            "reduce_join_1_keep": tf.strings.reduce_join(grid, axis=1, keep_dims=True, separator="."),
            "reduce_join_neg": tf.reduce_join(grid, -1),
            "reduce_join_list": tf.reduce_join(grid, [1, 0], separator="/"),
            "reduce_join_empty_axis": tf.reduce_join(grid, [], separator="/"),
            "regex_replace": tf.strings.regex_replace(words, "[aeiou]", "_"),
            "regex_replace_first": tf.regex_replace(words, "[aeiou]", "_", replace_global=False),
            "regex_replace_groups": tf.strings.regex_replace(tf.constant(["2024-01-31", "x"]),
                                                             r"(\d+)-(\d+)-(\d+)", r"\3/\2/\1"),
            "regex_replace_tensor": tf.strings.regex_replace(grid, tf.constant("^(.)"), tf.constant("<\\1>")),
            "regex_replace_empty": tf.strings.regex_replace(tf.constant("abc"), "x*", "-"),
            "regex_full_match": tf.strings.regex_full_match(words, "[A-Z][a-z]+"),
            "regex_full_match_t": tf.strings.regex_full_match(grid, tf.constant("(a|e)|..")),
            "strip": tf.strings.strip(words),
            "string_strip": tf.string_strip(tf.constant([" \t a b \r\n", "", "   "])),
            "lower": tf.strings.lower(words),
            "upper": tf.strings.upper(words),
            "to_number": tf.strings.to_number(tf.constant(["1.5", "-2e3", "  7 ", "inf", "-0", "1e40"])),
            "to_number_f64": tf.string_to_number(tf.constant(["0.1", "1e-300", "nan"]), tf.float64),
            "to_number_i32": tf.strings.to_number(tf.constant(["12", "-7", "+3", " 42"]), out_type=tf.int32),
            "to_number_i64": tf.string_to_number(tf.constant(["9007199254740993", "-1"]), out_type=tf.int64),
            "as_string_i": tf.as_string(tf.constant([1, -22, 333])),
            "as_string_i_w": tf.strings.as_string(tf.constant([1, -22, 333]), width=5),
            "as_string_i_fill": tf.strings.as_string(tf.constant([1, -22, 333], tf.int64), width=5, fill="0"),
            "as_string_f": tf.as_string(tf.constant([1.5, -0.25, 1e10, 3.14159265])),
            "as_string_f_p": tf.as_string(tf.constant([1.5, -0.25, 1e10, 3.14159265]), precision=2),
            "as_string_f_sci": tf.as_string(tf.constant([1.5, -0.25, 1e10], tf.float64), scientific=True),
            "as_string_f_short": tf.as_string(tf.constant([1.5, -0.25, 1e10, 1e-7]), shortest=True),
            "as_string_f_wfill": tf.as_string(tf.constant([1.5, -0.25]), width=9, precision=3, fill=" "),
            "as_string_b": tf.as_string(tf.constant([True, False])),
            "as_string_special": tf.as_string(tf.constant([np.inf, -np.inf, np.nan])),
            "format": tf.strings.format("x={} y={}!", [tf.constant([1, 2, 3]), tf.constant(2.5)]),
            "format_one": tf.strings.format("t: {}", tf.constant([[1, 2], [3, 4]])),
            "format_summ": tf.strings.format("{}", tf.range(10), summarize=2),
            "format_str": tf.strings.format("<{}>", tf.constant(["a", "b"])),
            "format_ph": tf.strings.format("%s and %s", [tf.constant(True), tf.constant(7)], placeholder="%s"),
            "fast": tf.strings.to_hash_bucket_fast(hashed, 1000003),
            "fast_big": tf.string_to_hash_bucket_fast(hashed, 2 ** 62 + 1),
            "strong": tf.strings.to_hash_bucket_strong(hashed, 997, key=[1, 2]),
            "strong_big": tf.string_to_hash_bucket_strong(hashed, 2 ** 61 + 9, [0x0123456789abcdef, 98765]),
            "legacy": tf.strings.to_hash_bucket(hashed, 1000003),
            "legacy_alias": tf.string_to_hash_bucket(hashed, 2 ** 62 + 1),
            "split_sep": tf.string_split(tf.constant(["a,b,,c", "", "d"]), ","),
            "split_default": tf.string_split(tf.constant(["hello  world", " a b c "])),
            "split_keep_empty": tf.string_split(tf.constant(["a,b,,c", ""]), ",", skip_empty=False),
            "split_chars": tf.string_split(tf.constant(["ab", "cde"]), ""),
            "split_multi": tf.string_split(tf.constant(["a b;c"]), " ;"),
            "split_v1": tf.strings.split(tf.constant(["hello  world", " a b c "])),
            "split_v1_sep": tf.strings.split(tf.constant(["1<>2<><>3", "<>"]), sep="<>"),
            "split_v1_max": tf.strings.split(tf.constant(["a b c d"]), maxsplit=2),
        }
        shapes = {k: str(v.shape if not hasattr(v, "dense_shape") else v.values.shape) for k, v in t.items()}
        shapes["ph_len"] = str(tf.strings.length(ph).shape)
        shapes["ph_substr"] = str(tf.strings.substr(ph, 0, 1).shape)
        shapes["ph_reduce"] = str(tf.reduce_join(ph, 0, keep_dims=True).shape)
        shapes["grid_reduce"] = str(tf.reduce_join(grid, 1).shape)
        shapes["format"] = str(t["format"].shape)
        out["shapes"] = shapes
        out["dtypes"] = {k: (v.dtype if not hasattr(v, "dense_shape") else v.values.dtype).name
                         for k, v in t.items()}
        out["op_types"] = {k: t[k].op.type for k in ("length", "substr", "join", "string_join", "reduce_join_0",
                                                     "regex_replace", "regex_replace_tensor", "regex_full_match",
                                                     "regex_full_match_t", "strip", "lower", "to_number",
                                                     "as_string_f", "format", "fast", "strong", "legacy")}
        out["build_errors"] = {
            "format_count": build_err(lambda: tf.strings.format("{} {}", [tf.constant(1)])),
            "length_int": build_err(lambda: tf.strings.length(tf.constant([1]))),
            "to_number_str": build_err(lambda: tf.strings.to_number(tf.constant(["1"]), out_type=tf.string)),
            "fast_int": build_err(lambda: tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)),
            "as_string_str": build_err(lambda: tf.as_string(tf.constant(["a"]))),
            "reduce_join_axis": build_err(lambda: tf.reduce_join(grid, 2)),
            "reduce_join_dup": build_err(lambda: tf.reduce_join(grid, [1, 1])),
        }
        bad = {
            "substr_pos": tf.strings.substr(tf.constant(["abc", "de"]), 3, 1),
            "substr_neg_pos": tf.strings.substr(tf.constant(["abc"]), -4, 1),
            "substr_vec_pos": tf.strings.substr(tf.constant(["abc", "de"]), [1, 5], [1, 1]),
            "substr_neg_len": tf.strings.substr(tf.constant(["abc"]), 0, -1),
            "to_number_bad": tf.strings.to_number(tf.constant(["1", "abc"])),
            "to_number_int_float": tf.strings.to_number(tf.constant(["1.5"]), out_type=tf.int32),
            "to_number_overflow": tf.strings.to_number(tf.constant(["3000000000"]), out_type=tf.int32),
            "to_number_empty": tf.strings.to_number(tf.constant([""])),
            "regex_bad": tf.strings.regex_full_match(tf.constant(["a"]), tf.constant("(")),
            "regex_replace_bad": tf.strings.regex_replace(tf.constant(["a"]), tf.constant("[a"), "b"),
            "join_shapes": tf.strings.join([ph, tf.constant(["a", "b", "c"])]),
        }
        with tf.Session() as sess:
            vals = sess.run(t)
            out["errors"] = {k: run_err(sess, v, {ph: ["x", "y"]}) for k, v in bad.items()}
            for k in ("regex_bad", "regex_replace_bad"):  # the parser's own words (RE2's, or Python's) differ
                out["errors"][k] = out["errors"][k].split(", error:")[0]
            out["ph"] = text(sess.run(tf.strings.upper(ph), {ph: ["abc", "\u00e9"]}), np)
    for k, v in vals.items():
        if hasattr(v, "dense_shape"):
            out[k] = {"indices": v.indices, "values": text(v.values, np), "dense_shape": v.dense_shape}
        elif isinstance(v, bytes) or (isinstance(v, np.ndarray) and v.dtype == object):
            out[k] = text(v, np)
        else:
            out[k] = v
    return out

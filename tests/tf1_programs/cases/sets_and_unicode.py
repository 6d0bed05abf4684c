"""tf.sets (size, intersection, union, difference over dense/dense, dense/sparse and
sparse/sparse operands, strings), tf.sparse.cross / cross_hashed (TF's ids bit for bit),
(de)serialized SparseTensors (TF's bytes), tf.sparse_matmul and its gradients, and the
Unicode string ops on what TF returns dense (a scalar string; dense code points and tokens):
unicode_decode(_with_offsets) with each error mode, unicode_encode, unicode_split,
unicode_transcode, unicode_script (common scripts), ngrams, bytes_split,
unsorted_segment_join; static shapes and error classes."""


def err(tf, fn):
    try:
        out = fn()
        with tf.Session() as s:
            s.run(out)
    except Exception as e:
        return type(e).__name__
    return "no error"


def hexed(np, value):
    """Strings as hex (serialized protos and UTF-16/32 are not UTF-8), recursively."""
    if isinstance(value, dict):
        return {k: hexed(np, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [hexed(np, v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([v.hex() for v in value.reshape(-1)], dtype=object).reshape(value.shape).astype(str)
    return value


def run(tf, np):
    t, shapes = {}, {}
    a = np.array([[[1, 2, 3], [4, 4, 5]], [[9, 9, 9], [1, 2, 3]]], np.int32)
    b = np.array([[[3, 2], [7, 7]], [[1, 1], [3, 9]]], np.int32)
    sp_a = tf.SparseTensor([[0, 0], [0, 2], [1, 0], [1, 1], [2, 1]], [5, 1, 3, 3, 8], [3, 4])
    sp_b = tf.SparseTensor([[0, 1], [2, 0], [2, 3]], [5, 7, 8], [3, 4])
    t["intersection"] = tf.sets.intersection(a, b)
    t["union"] = tf.sets.union(a, b)
    t["difference"] = tf.sets.difference(a, b)
    t["difference_ba"] = tf.sets.difference(a, b, aminusb=False)
    t["size"] = tf.sets.size(sp_a)
    t["set_size"] = tf.sets.set_size(sp_b)
    t["dense_sparse"] = tf.sets.union([[1, 2, 9], [3, 4, 3], [5, 6, 8]], sp_a)
    t["sparse_dense_flipped"] = tf.sets.difference(sp_a, [[1, 2, 9], [3, 4, 3], [5, 6, 8]])
    t["sparse_sparse"] = tf.sets.intersection(sp_a, sp_b)
    t["sparse_sparse_union"] = tf.sets.set_union(sp_a, sp_b)
    t["strings"] = tf.sets.union([["a", "b"], ["c", "c"]], [["c", "a"], ["", "d"]])
    t["empty"] = tf.sets.intersection(np.zeros([2, 0], np.int64), np.zeros([2, 1], np.int64))
    shapes["union"] = str(tf.sets.union(a, b).shape)
    shapes["size"] = str(tf.sets.size(sp_a).shape)
    shapes["dense_sparse"] = str(tf.sets.union(tf.placeholder(tf.int32, [2, 3, 5]), tf.SparseTensor(
        [[0, 1, 3]], [1], [2, 3, 4])).shape)

    s1 = tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], ["a", "b", "c", "a long feature string of more than "
                                                                              "sixty-four bytes, to hash in blocks"],
                         [4, 2])
    s2 = tf.SparseTensor([[0, 0], [1, 0], [2, 0], [2, 1]], tf.constant([3, 4, -5, 7], tf.int64), [4, 1])
    d1 = tf.constant([["f"], ["g"], ["h"], ["i"]])
    d2 = tf.constant([[1, 2], [3, 4], [5, 6], [7, 8]])
    t["cross"] = tf.sparse.cross([s1, s2, d1])
    t["cross_sep"] = tf.sparse.cross([s1, d1], separator="--")
    t["cross_hashed"] = tf.sparse.cross_hashed([s1, s2, d1])
    t["cross_hashed_buckets"] = tf.sparse.cross_hashed([s1, d1], num_buckets=100)
    t["cross_hashed_key"] = tf.sparse.cross_hashed([d2, s1], hash_key=123)
    t["cross_dense_first"] = tf.sparse.cross_hashed([d1, s1], num_buckets=10)

    sp = tf.SparseTensor([[0, 1, 0], [2, 0, 1], [0, 0, 2]], [1.5, 2.0, -3.0], [3, 2, 3])
    ssp = tf.SparseTensor([[0, 0], [1, 1]], ["x", "yz"], [2, 4])
    t["serialize"] = tf.serialize_sparse(sp)
    t["serialize_strings"] = tf.io.serialize_sparse(ssp)
    many = tf.serialize_many_sparse(tf.sparse.reorder(sp))
    t["serialize_many"] = many
    t["deserialize_many"] = tf.deserialize_many_sparse(many, tf.float32)
    t["deserialize_strings"] = tf.deserialize_many_sparse(tf.stack([tf.serialize_sparse(ssp), tf.serialize_sparse(
        tf.SparseTensor([[3, 5]], ["q"], [4, 6]))]), tf.string)

    ma = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    mb = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    prod = tf.sparse_matmul(ma, mb, transpose_b=True, a_is_sparse=True)
    t["sparse_matmul"] = prod
    t["sparse_matmul_grads"] = tf.gradients(tf.reduce_sum(prod * prod), [ma, mb])
    shapes["sparse_matmul"] = str(prod.shape)

    S = tf.strings
    text = "h\u00e9llo \u4e16\u754c \U0001F600"
    for mode in ("replace", "ignore"):
        t["decode_" + mode] = S.unicode_decode_with_offsets(b"a\xff\xc0\x80\xe4\xb8x\xed\xa0\x80", "UTF-8",
                                                            errors=mode)
    t["decode"] = S.unicode_decode(text, "UTF-8")
    t["decode_controls"] = S.unicode_decode(b"x\x01\x1f\x7f", "UTF-8", replace_control_characters=True,
                                            replacement_char=63)
    t["decode_utf16"] = S.unicode_decode_with_offsets(b"\x00a\xd8\x3d\xde\x00\xde\x00\x00", "UTF-16-BE")
    t["decode_utf32"] = S.unicode_decode(b"\x00\x00\x00a\x00\x11\x00\x00\x00\x01\xf6\x00", "UTF-32-BE")
    cps = [[72, 105, 0x4e16, 0x1F600], [0xD800, -1, 0x110000, 0xFFFF]]
    t["encode"] = S.unicode_encode(cps, "UTF-8")
    t["encode_ignore"] = S.unicode_encode(cps, "UTF-8", errors="ignore")
    t["encode_utf16"] = S.unicode_encode(cps[0], "UTF-16-BE")
    t["encode_rank3"] = S.unicode_encode([cps, cps], "UTF-32-BE", replacement_char=0x263A)
    t["split"] = S.unicode_split(b"h\xc3\xa9\xff!", "UTF-8")
    t["transcode"] = S.unicode_transcode([text, "a\u00ff"], "UTF-8", "UTF-16-BE")
    t["transcode_back"] = S.unicode_transcode(b"\x00a\xd8\x3d", "UTF-16-BE", "UTF-8")
    t["script"] = S.unicode_script([65, 0x3b1, 0x416, 0x5d0, 0x627, 0x915, 0x4e16, 0x3042, 0x30a2, 0xac00, 0xe01,
                                    32, 0x300, -1, 0x110000, 0xD800, 0x2014, 0x1F600])
    t["ngrams"] = S.ngrams(["a", "b", "c", "d"], 2)
    t["ngrams_widths"] = S.ngrams([["a", "b", "c"], ["d", "e", "f"]], [1, 3], separator="-")
    t["ngrams_pad"] = S.ngrams([["a", "b", "c", "d"]], [2, 3], pad_values=("<", ">"), padding_width=2)
    t["ngrams_short"] = S.ngrams(["a", "b"], 4, pad_values="#", padding_width=1, preserve_short_sequences=True)
    t["bytes_split"] = S.bytes_split("h\u00e9")
    t["segment_join"] = S.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 4, separator=":")
    t["segment_join_2d"] = S.unsorted_segment_join([["a", "b"], ["c", "d"], ["e", "f"]], [1, 0, 1], 2)
    shapes["decode"] = str(S.unicode_decode(text, "UTF-8").shape)
    shapes["encode"] = str(S.unicode_encode(cps, "UTF-8").shape)
    shapes["encode_vector"] = str(S.unicode_encode(cps[0], "UTF-8").shape)
    shapes["ngrams"] = str(S.ngrams([["a", "b"]], 2).shape)
    shapes["segment_join"] = str(S.unsorted_segment_join(["a", "b"], [0, 1], 3).shape)
    with tf.Session() as sess:
        values = sess.run(t)

    errors = {
        "sets_rank1": err(tf, lambda: tf.sets.intersection([1, 2], [2])),
        "sets_float": err(tf, lambda: tf.sets.union([[1.0]], [[2.0]])),
        "sets_mixed": err(tf, lambda: tf.sets.union([[1]], tf.constant([[2]], tf.int64))),
        "sets_size_dense": err(tf, lambda: tf.sets.size([[1, 2]])),
        "sets_unsorted": err(tf, lambda: tf.sets.size(tf.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2]))),
        "sets_group_shapes": err(tf, lambda: tf.sets.difference(sp_a, tf.SparseTensor([[0, 1]], [5], [4, 2]))),
        "cross_not_list": err(tf, lambda: tf.sparse.cross(s1)),
        "cross_batch": err(tf, lambda: tf.sparse.cross([s1, tf.constant([["a"]])])),
        "decode_strict": err(tf, lambda: S.unicode_decode(b"a\xff", "UTF-8", errors="strict")),
        "decode_bad_errors": err(tf, lambda: S.unicode_decode("a", "UTF-8", errors="foo")),
        "encode_strict": err(tf, lambda: S.unicode_encode([0xD800], "UTF-8", errors="strict")),
        "encode_scalar": err(tf, lambda: S.unicode_encode(5, "UTF-8")),
        "ngrams_width": err(tf, lambda: S.ngrams(["a"], 0)),
        "ngrams_scalar": err(tf, lambda: S.ngrams("a", 2)),
        "ngrams_pad_values": err(tf, lambda: S.ngrams(["a"], 2, padding_width=1)),
        "segment_join_range": err(tf, lambda: S.unsorted_segment_join(["a", "b"], [0, 2], 2)),
        "deserialize_dtype": err(tf, lambda: tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.int32)),
    }
    return {"values": hexed(np, values), "shapes": shapes, "errors": errors}

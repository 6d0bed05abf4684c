"""Records and parsing: TFRecord files (bytes, GZIP/ZLIB round trips, corrupt and
truncated files), TFRecordDataset and TFRecordReader, Example protos and
parse_example / parse_single_example (FixedLenFeature with defaults,
FixedLenSequenceFeature, VarLenFeature), decode_csv, decode_raw,
serialize_tensor / parse_tensor, base64, decode_compressed and
decode_json_example: values, dtypes, static shapes and error classes.
Files go to a fresh temporary directory; only bytes and values come back."""
import os
import tempfile
import zlib


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def u8(data):
    import numpy as np
    return np.frombuffer(bytes(data), dtype=np.uint8)


def strs(np, value):
    """A string array as unicode (latin-1 keeps every byte), so the golden can hold it."""
    a = np.asarray(value, dtype=object)
    return np.array([v.decode("latin-1") for v in a.reshape(-1)], dtype=str).reshape(a.shape)


def shape(t):
    return str(t.shape)


def run(tf, np):
    d = tempfile.mkdtemp()
    out = {}

    def example(**kw):
        feats = {}
        for k, v in kw.items():
            if isinstance(v[0], float):
                feats[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
            elif isinstance(v[0], int):
                feats[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
            else:
                feats[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        return tf.train.Example(features=tf.train.Features(feature=feats))

    exs = [example(a=[1.0, 2.0], v=[1, 2, 3], s=[b"x"]), example(a=[3.0, 4.0], s=[b"y", b"z"]),
           example(a=[5.0, 6.0], v=[7], m=[9])]
    serialized = [e.SerializeToString(deterministic=True) for e in exs]
    out["example_bytes"] = [u8(s) for s in serialized]
    out["example_roundtrip"] = list(tf.train.Example.FromString(serialized[0]).features.feature["a"].float_list.value)
    seq = tf.train.SequenceExample(
        context=tf.train.Features(feature={"c": tf.train.Feature(int64_list=tf.train.Int64List(value=[5]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"f": tf.train.FeatureList(feature=[
            tf.train.Feature(float_list=tf.train.FloatList(value=[1.5])),
            tf.train.Feature(float_list=tf.train.FloatList(value=[2.5, 3.5]))])}))
    out["sequence_example_bytes"] = u8(seq.SerializeToString(deterministic=True))

    # -- TFRecord files --
    plain, gz, zl = (os.path.join(d, n) for n in ("plain.tfr", "gz.tfr", "zl.tfr"))
    with tf.python_io.TFRecordWriter(plain) as w:
        for s in serialized + [b""]:
            w.write(s)
    for path, opt in ((gz, tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)),
                      (zl, tf.io.TFRecordOptions("ZLIB"))):
        w = tf.io.TFRecordWriter(path, options=opt)
        for s in serialized:
            w.write(s)
        w.close()
    out["file_bytes"] = u8(open(plain, "rb").read())
    out["iter_plain"] = [u8(r) for r in tf.python_io.tf_record_iterator(plain)]
    out["iter_gzip"] = [u8(r) for r in tf.python_io.tf_record_iterator(gz, options="GZIP")]
    out["iter_zlib"] = [u8(r) for r in tf.io.tf_record_iterator(
        zl, options=tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.ZLIB))]
    out["gzip_magic"] = u8(open(gz, "rb").read()[:2])
    raw = open(plain, "rb").read()
    damaged = bytearray(raw)
    damaged[14] ^= 1
    open(os.path.join(d, "bad_data"), "wb").write(bytes(damaged))
    open(os.path.join(d, "short"), "wb").write(raw[:-3])
    damaged = bytearray(raw)
    damaged[9] ^= 1
    open(os.path.join(d, "bad_len"), "wb").write(bytes(damaged))
    for name in ("bad_data", "short", "bad_len"):
        out[f"corrupt_{name}"] = err(lambda: list(tf.python_io.tf_record_iterator(os.path.join(d, name))))
    out["bad_option"] = err(lambda: tf.python_io.TFRecordOptions("BAD"))
    out["options_string"] = [tf.python_io.TFRecordOptions.get_compression_type_string(o)
                             for o in (None, "GZIP", tf.python_io.TFRecordCompressionType.ZLIB,
                                       tf.python_io.TFRecordOptions("GZIP"))]

    g = tf.Graph()
    with g.as_default():
        features = {"a": tf.FixedLenFeature([2], tf.float32),
                    "m": tf.FixedLenFeature([], tf.int64, default_value=-1),
                    "s": tf.FixedLenSequenceFeature([], tf.string, allow_missing=True),
                    "v": tf.VarLenFeature(tf.int64)}
        ds = tf.data.TFRecordDataset([plain, gz], compression_type=None).take(3)
        ds_gz = tf.data.TFRecordDataset(gz, compression_type="GZIP").map(
            lambda r: tf.parse_single_example(r, {"a": tf.FixedLenFeature([2], tf.float32),
                                                  "m": tf.FixedLenFeature([1], tf.int64, default_value=[0])}))
        ds_bad = tf.data.TFRecordDataset(os.path.join(d, "bad_data"))
        next_rec = ds.make_one_shot_iterator().get_next()
        next_parsed = ds_gz.make_one_shot_iterator().get_next()
        next_bad = ds_bad.make_one_shot_iterator().get_next()
        out["dataset_shapes"] = [str(ds.output_shapes), str(ds_gz.output_shapes["a"]),
                                 str(ds_gz.output_shapes["m"])]

        queue = tf.train.string_input_producer([plain], num_epochs=1, shuffle=False)
        key, value = tf.TFRecordReader().read(queue)

        batch = tf.placeholder(tf.string, [None])
        parsed = tf.parse_example(batch, features)
        one = tf.placeholder(tf.string, [])
        parsed_one = tf.io.parse_single_example(one, features)
        out["parse_shapes"] = {k: shape(parsed[k]) for k in ("a", "m", "s")}
        out["parse_sparse_shapes"] = [shape(parsed["v"].indices), shape(parsed["v"].values),
                                      shape(parsed["v"].dense_shape)]
        out["parse_one_shapes"] = {k: shape(parsed_one[k]) for k in ("a", "m", "s")}
        out["parse_one_sparse_shapes"] = [shape(parsed_one["v"].indices), shape(parsed_one["v"].dense_shape)]
        required = tf.parse_example(batch, {"q": tf.FixedLenFeature([1], tf.float32)})
        seq2 = tf.parse_example(batch, {"a": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True,
                                                                        default_value=-1.0)})
        seq3 = tf.parse_example(batch, {"a": tf.FixedLenSequenceFeature([3], tf.float32, allow_missing=True)})
        wrong_type = tf.parse_example(batch, {"a": tf.FixedLenFeature([2], tf.int64)})
        wrong_count = tf.parse_example(batch, {"a": tf.FixedLenFeature([3], tf.float32)})
        out["parse_build_errors"] = [
            err(lambda: tf.parse_example(batch, {})),
            err(lambda: tf.parse_example(batch, {"a": tf.FixedLenSequenceFeature([2], tf.float32)})),
            err(lambda: tf.parse_example(batch, {"a": tf.FixedLenFeature([2], tf.int32)})),
            err(lambda: tf.parse_example(batch, {"a": tf.FixedLenFeature([2], tf.float32, default_value=[1., 2, 3])})),
            err(lambda: tf.parse_example(batch, {"a": tf.FixedLenFeature(None, tf.float32)})),
            err(lambda: tf.parse_example(batch, {"a": tf.FixedLenFeature([None], tf.float32)})),
        ]

        # -- decoders --
        records = tf.placeholder(tf.string, [None])
        csv = tf.decode_csv(records, [[0], [0.5], [""], tf.constant([], tf.int64), [1.25]])
        out["csv_shapes"] = [shape(t) for t in csv]
        out["csv_dtypes"] = [t.dtype.name for t in csv]
        csv_tab = tf.io.decode_csv(["a\t1\tx", "\t2\t"], [["d"], [0.0], ["e"]], field_delim="\t")
        csv_na = tf.decode_csv(["NA,3", "4,NA"], [[1], [2]], na_value="NA")
        csv_sel = tf.decode_csv(["1,2,3,4", "5,6,7,8"], [[0], [0.0]], select_cols=[1, 3])
        csv_noquote = tf.decode_csv(['a"b,1'], [[""], [0]], use_quote_delim=False)
        csv_one = tf.decode_csv(["7", "8"], [[0]])
        out["csv_build_errors"] = [
            err(lambda: tf.decode_csv(records, [[1], [[1, 2]]])),
            err(lambda: tf.decode_csv(records, [[1], [True]])),
            err(lambda: tf.decode_csv(records, [[1], [2]], select_cols=[2, 1])),
            err(lambda: tf.decode_csv(records, [[1], [2]], select_cols=[1])),
        ]
        raw_in = tf.placeholder(tf.string, [None])
        raw_le = tf.decode_raw(raw_in, tf.int16)
        raw_be = tf.io.decode_raw(raw_in, tf.int16, little_endian=False)
        raw_f = tf.decode_raw(tf.constant(np.array([1.5, -2.0], np.float32).tobytes()), tf.float32)
        raw_u8 = tf.decode_raw(tf.constant([[b"ab", b"cd"]]), tf.uint8)
        out["raw_shapes"] = [shape(raw_le), shape(raw_f), shape(raw_u8)]
        out["raw_build_error"] = err(lambda: tf.decode_raw(raw_in, tf.string))

        tensors = [tf.constant([[1.0, 2.0]]), tf.constant(3), tf.constant([b"ab", b"c"]), tf.constant([True, False]),
                   tf.constant(np.arange(6, dtype=np.int64).reshape(2, 3)), tf.constant(np.zeros([0, 2], np.float64))]
        ser = [tf.io.serialize_tensor(t) for t in tensors]
        back = [tf.io.parse_tensor(s, t.dtype) for s, t in zip(ser, tensors)]
        out["serialize_shapes"] = [shape(s) for s in ser] + [shape(b) for b in back]
        blob = tf.placeholder(tf.string, [])
        parse_int = tf.parse_tensor(blob, tf.int32)

        b64_in = tf.constant([b"hello?>", b"", b"\xff\xfe\xfd\x00", b"ab"])
        enc = tf.encode_base64(b64_in)
        enc_pad = tf.io.encode_base64(b64_in, pad=True)
        dec = tf.decode_base64(enc)
        dec_pad = tf.io.decode_base64(enc_pad)
        b64_bad = tf.placeholder(tf.string, [None])
        dec_bad = tf.decode_base64(b64_bad)

        comp = tf.placeholder(tf.string, [None])
        unz = tf.io.decode_compressed(comp, "ZLIB")
        ungz = tf.decode_compressed(comp, compression_type="GZIP")
        none = tf.io.decode_compressed(comp)
        js = tf.decode_json_example(['{"features": {"feature": {"a": {"floatList": {"value": [1.5, 2]}}, '
                                     '"b": {"bytesList": {"value": ["eHk="]}}}}}'])
        js_parsed = tf.parse_single_example(js[0], {"a": tf.FixedLenFeature([2], tf.float32),
                                                    "b": tf.FixedLenFeature([], tf.string)})

        with tf.Session() as sess:
            out["dataset"] = [u8(sess.run(next_rec)) for _ in range(3)]
            got = [sess.run(next_parsed) for _ in range(3)]
            out["dataset_parsed"] = {"a": [x["a"] for x in got], "m": [x["m"] for x in got]}
            out["dataset_end"] = err(lambda: sess.run(next_parsed))
            out["dataset_corrupt"] = err(lambda: sess.run(next_bad))
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            keys, values = [], []
            for _ in range(4):
                k, v = sess.run([key, value])
                keys.append(k.decode().rsplit(":", 1)[1])
                values.append(u8(v))
            out["reader_keys"], out["reader_values"] = keys, values
            out["reader_end"] = err(lambda: sess.run(value))
            coord.request_stop()
            coord.join(threads)

            p = sess.run(parsed, {batch: serialized})
            out["parse"] = {"a": p["a"], "m": p["m"], "s": strs(np, p["s"]), "v_indices": p["v"].indices,
                            "v_values": p["v"].values, "v_shape": p["v"].dense_shape}
            p1 = sess.run(parsed_one, {one: serialized[1]})
            out["parse_one"] = {"a": p1["a"], "m": p1["m"], "s": strs(np, p1["s"]), "v_indices": p1["v"].indices,
                                "v_values": p1["v"].values, "v_shape": p1["v"].dense_shape}
            empty = sess.run({"a": parsed["a"], "s": parsed["s"], "vs": parsed["v"].dense_shape}, {batch: []})
            out["parse_empty_batch"] = {"a": empty["a"], "s": strs(np, empty["s"]), "vs": empty["vs"]}
            two = [example(a=[1.0, 2.0, 3.0, 4.0]).SerializeToString(), example(b=[1.0]).SerializeToString()]
            out["parse_seq2"] = sess.run(seq2, {batch: two})["a"]
            out["parse_seq_bad_stride"] = err(lambda: sess.run(seq3, {batch: two}))
            out["parse_required"] = err(lambda: sess.run(required, {batch: serialized}))
            out["parse_wrong_type"] = err(lambda: sess.run(wrong_type, {batch: serialized}))
            out["parse_wrong_count"] = err(lambda: sess.run(wrong_count, {batch: serialized}))
            out["parse_garbage"] = err(lambda: sess.run(parsed, {batch: [b"\x0a\x05garbage"]}))
            out["parse_one_required"] = err(lambda: sess.run(parsed_one, {one: example(m=[1]).SerializeToString()}))

            c = sess.run(csv, {records: ["1,2.5,x,4,", '-3,,"y,""z""",5,1e3', " 7 ,inf,,8,-0"]})
            out["csv"] = [c[0], c[1], strs(np, c[2]), c[3], c[4]]
            t = sess.run(csv_tab)
            out["csv_tab"] = [strs(np, t[0]), t[1], strs(np, t[2])]
            out["csv_na"] = sess.run(csv_na)
            out["csv_select"] = sess.run(csv_sel)
            out["csv_noquote"] = [strs(np, v) if v.dtype == object else v for v in sess.run(csv_noquote)]
            out["csv_one"] = sess.run(csv_one)
            out["csv_errors"] = [err(lambda r=r: sess.run(csv, {records: r})) for r in (
                ["1,x,a,1,1"], ["1,2,a,1"], ["1,2,a,,1"], ['1,2,"a,1,1'], ['1,2,a"b,1,1'], ["99999999999,2,a,1,1"],
                ['1,2,"a"b,1,1'], ["1.5,2,a,1,1"])]
            out["raw_le"] = sess.run(raw_le, {raw_in: [b"\x01\x02\x03\x04", b"\xff\xff\x00\x80"]})
            out["raw_be"] = sess.run(raw_be, {raw_in: [b"\x01\x02\x03\x04", b"\xff\xff\x00\x80"]})
            out["raw_f"], out["raw_u8"] = sess.run([raw_f, raw_u8])
            out["raw_errors"] = [err(lambda: sess.run(raw_le, {raw_in: [b"abcd", b"ab"]})),
                                 err(lambda: sess.run(raw_le, {raw_in: [b"abc"]}))]

            s_vals, b_vals = sess.run([ser, back])
            out["serialized"] = [u8(s) for s in s_vals]
            out["parsed_back"] = [strs(np, b) if b.dtype == object else b for b in b_vals]
            out["parse_tensor_errors"] = [err(lambda: sess.run(parse_int, {blob: s_vals[0]})),
                                          err(lambda: sess.run(parse_int, {blob: b"\xff\xff"}))]
            out["parse_tensor_ok"] = sess.run(parse_int, {blob: sess.run(tf.io.serialize_tensor(
                tf.constant([[4, 5]], tf.int32)))})

            e, ep, dd, dp = sess.run([enc, enc_pad, dec, dec_pad])
            out["b64"] = [strs(np, e), strs(np, ep), strs(np, dd), strs(np, dp)]
            out["b64_errors"] = [err(lambda v=v: sess.run(dec_bad, {b64_bad: [v]})) for v in (b"a$", b"ab+/")]
            payload = [b"hello hello hello", b""]
            out["decompress"] = [
                strs(np, sess.run(unz, {comp: [zlib.compress(x) for x in payload]})),
                strs(np, sess.run(ungz, {comp: [_gzip(x) for x in payload]})),
                strs(np, sess.run(none, {comp: payload})),
                err(lambda: sess.run(unz, {comp: [b"abc"]}))]
            jv = sess.run(js_parsed)
            out["json_example"] = [jv["a"], strs(np, jv["b"])]
    return out


def _gzip(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()

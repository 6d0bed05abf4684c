"""graphrt.records: what the `records` golden cannot show (messages, framing bytes, edge cases)."""
import os

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.records import tfrecord

# TF 2.21's TFRecordWriter output for the records b"hello" and b"".
TF_BYTES = (b"\x05\x00\x00\x00\x00\x00\x00\x00\xea\xb2\x04>hello\xbb\x1f\x1c\x19"
            b"\x00\x00\x00\x00\x00\x00\x00\x00)\x03\x98\x07\xd8\xea\x82\xa2")


def _example(**features):
    kinds = {float: ("float_list", tf.train.FloatList), int: ("int64_list", tf.train.Int64List),
             bytes: ("bytes_list", tf.train.BytesList)}
    feats = {}
    for key, values in features.items():
        field, cls = kinds[type(values[0])]
        feats[key] = tf.train.Feature(**{field: cls(value=values)})
    return tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString()


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_writer_frames_records_as_tensorflow(tmp_path):
    path = str(tmp_path / "a.tfr")
    with tf.python_io.TFRecordWriter(path) as w:
        w.write(b"hello")
        w.write(b"")
    assert open(path, "rb").read() == TF_BYTES
    assert list(tf.python_io.tf_record_iterator(path)) == [b"hello", b""]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files_round_trip_and_flush_keeps_them_readable(tmp_path, compression):
    path = str(tmp_path / "c.tfr")
    w = tf.io.TFRecordWriter(path, options=compression)
    w.write(b"a" * 1000)
    w.flush()
    assert list(tf.python_io.tf_record_iterator(path, compression)) == [b"a" * 1000]
    w.write(b"b")
    w.close()
    w.close()  # closing twice is harmless, as in TF
    assert os.path.getsize(path) < 200
    assert list(tf.python_io.tf_record_iterator(path, tf.python_io.TFRecordOptions(compression))) == [b"a" * 1000,
                                                                                                     b"b"]
    with pytest.raises(errors.DataLossError, match=str(path)):
        list(tf.python_io.tf_record_iterator(path))  # the framing of compressed bytes does not check out


@pytest.mark.parametrize("offset, message", [(14, "corrupted record at 0 in"), (9, "corrupted record at 0 in"),
                                             (30, "corrupted record at 21 in")])
def test_damage_is_data_loss_naming_file_and_offset(tmp_path, offset, message):
    path = tmp_path / "bad.tfr"
    damaged = bytearray(TF_BYTES)
    damaged[offset] ^= 1
    path.write_bytes(bytes(damaged))
    with pytest.raises(errors.DataLossError, match=message) as e:
        list(tf.python_io.tf_record_iterator(str(path)))
    assert str(path) in e.value.message and e.value.error_code == 15


def test_truncated_record_names_its_offset(tmp_path):
    path = tmp_path / "short.tfr"
    path.write_bytes(TF_BYTES[:-3])
    with pytest.raises(errors.DataLossError, match="truncated record at 21"):
        list(tf.python_io.tf_record_iterator(str(path)))


def test_missing_file_and_closed_writer(tmp_path):
    with pytest.raises(errors.NotFoundError):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "nope")))
    w = tf.python_io.TFRecordWriter(str(tmp_path / "w"))
    w.close()
    with pytest.raises(errors.FailedPreconditionError):
        w.write(b"x")


def test_dataset_and_reader_report_damage(tmp_path):
    path = tmp_path / "bad.tfr"
    path.write_bytes(TF_BYTES[:-3])
    nxt = tf.data.TFRecordDataset(str(path)).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == b"hello"
        with pytest.raises(errors.DataLossError, match="truncated record at 21"):
            sess.run(nxt)
    with pytest.raises(errors.InvalidArgumentError, match="compression_type"):
        _run(tf.data.TFRecordDataset(str(path), compression_type="LZ4").make_one_shot_iterator().get_next())
    with pytest.raises(ValueError, match="num_parallel_reads"):
        tf.data.TFRecordDataset(str(path), num_parallel_reads=4)


def test_reader_of_gzip_files_keys_by_uncompressed_offset(tmp_path):
    path = str(tmp_path / "g.tfr")
    with tf.python_io.TFRecordWriter(path, "GZIP") as w:
        w.write(b"hello")
        w.write(b"")
    queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    keys, values = tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP")).read_up_to(queue, 5)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        k, v = sess.run([keys, values])
        coord.request_stop()
        coord.join(threads)
    assert list(k) == [f"{path}:0".encode(), f"{path}:21".encode()] and list(v) == [b"hello", b""]


def test_example_classes_are_tensorflows_messages():
    assert tf.train.Example.DESCRIPTOR.full_name == "tensorflow.Example"
    feature = tf.train.Feature.DESCRIPTOR
    assert [(f.name, f.number) for f in feature.fields] == [("bytes_list", 1), ("float_list", 2), ("int64_list", 3)]
    assert [f.name for f in feature.oneofs[0].fields] == ["bytes_list", "float_list", "int64_list"]
    assert tf.train.SequenceExample.DESCRIPTOR.fields_by_name["feature_lists"].number == 2
    # packed repeated floats, as proto3 writes them: tag 0x0a, length 8
    assert tf.train.FloatList(value=[1.0, 2.0]).SerializeToString() == b"\n\x08\x00\x00\x80?\x00\x00\x00@"


def test_missing_required_feature_names_the_key():
    s = tf.placeholder(tf.string, [None])
    out = tf.parse_example(s, {"label": tf.FixedLenFeature([], tf.int64)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Name: <unknown>, Feature: label \(data type: int64\) is required"):
        _run(out, {s: [_example(x=[1.0])]})
    one = tf.placeholder(tf.string, [])
    out1 = tf.parse_single_example(one, {"label": tf.FixedLenFeature([], tf.int64)})
    with pytest.raises(errors.InvalidArgumentError, match=r"^Feature: label \(data type: int64\) is required"):
        _run(out1, {one: _example(x=[1.0])})


def test_parse_messages_for_wrong_counts_and_types():
    s = tf.placeholder(tf.string, [None])
    count = tf.parse_example(s, {"a": tf.FixedLenFeature([2], tf.float32)})
    with pytest.raises(errors.InvalidArgumentError, match=r"Key: a, Index: 1.  Number of float values != expected.  "
                                                          r"Values size: 3 but output shape: \[2\]"):
        _run(count, {s: [_example(a=[1.0, 2.0]), _example(a=[1.0, 2.0, 3.0])]})
    with pytest.raises(errors.InvalidArgumentError, match="Data type: int64 but expected type: float"):
        _run(count, {s: [_example(a=[1, 2])]})
    sparse = tf.parse_example(s, {"v": tf.VarLenFeature(tf.string)})
    with pytest.raises(errors.InvalidArgumentError, match="Data type: float but expected type: string"):
        _run(sparse, {s: [_example(v=[1.0])]})
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse example input"):
        _run(count, {s: [b"\x0a\x05garbage"]})
    names = tf.parse_example(s, {"a": tf.FixedLenFeature([2], tf.float32)}, example_names=["first"])
    with pytest.raises(errors.InvalidArgumentError, match="Name: first, Feature: a"):
        _run(names, {s: [_example(b=[1.0])]})


def test_parse_defaults_and_padding_against_numpy():
    s = tf.placeholder(tf.string, [2])
    out = tf.parse_example(s, {
        "d": tf.FixedLenFeature([2, 2], tf.float32, default_value=np.arange(4.0).reshape(2, 2)),
        "q": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-7),
        "w": tf.VarLenFeature(tf.float32)})
    assert out["d"].shape.as_list() == [2, 2, 2] and out["q"].shape.as_list() == [2, None, 2]
    got = _run(out, {s: [_example(q=[1, 2, 3, 4], w=[0.5]), _example(d=[9.0] * 4, q=[5, 6])]})
    np.testing.assert_array_equal(got["d"], [np.arange(4.0).reshape(2, 2), np.full([2, 2], 9.0)])
    np.testing.assert_array_equal(got["q"], [[[1, 2], [3, 4]], [[5, 6], [-7, -7]]])
    assert got["q"].dtype == np.int64 and got["w"].values.dtype == np.float32
    np.testing.assert_array_equal(got["w"].indices, [[0, 0]])
    np.testing.assert_array_equal(got["w"].dense_shape, [2, 1])


def test_var_len_feature_is_a_sparse_tensor():
    from graphrt.sparse import SparseTensor
    out = tf.parse_single_example(tf.constant(_example(v=[b"a", b"b"])), {"v": tf.VarLenFeature(tf.string)})
    assert isinstance(out["v"], SparseTensor)
    got = _run(out["v"])
    assert list(got.values) == [b"a", b"b"] and got.indices.tolist() == [[0], [1]] and got.dense_shape.tolist() == [2]


def test_parse_build_errors():
    s = tf.placeholder(tf.string, [None])
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(s, {"a": tf.FixedLenSequenceFeature([], tf.float32)})
    with pytest.raises(ValueError, match="First dimension of shape for feature a unknown"):
        tf.parse_example(s, {"a": tf.FixedLenFeature([None, 2], tf.float32)})
    with pytest.raises(TypeError):
        tf.parse_example(s, {"a": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(ValueError):
        tf.parse_single_example(tf.constant([b"x"]), {"a": tf.FixedLenFeature([], tf.float32)})


@pytest.mark.parametrize("record, message", [
    (b"1,x", "Field 1 in record 0 is not a valid float: x"),
    (b"1,2,3", "Expect 2 fields but have 3 in record 0"),
    (b",2", "Field 0 is required but missing in record 0!"),
    (b'1,"2', "Quoted field has to end with quote followed by delim or end"),
    (b'1,2"', "Unquoted fields cannot have quotes/CRLFs inside"),
    (b"99999999999,2", "Field 0 in record 0 is not a valid int32: 99999999999"),
])
def test_decode_csv_messages(record, message):
    r = tf.placeholder(tf.string, [None])
    out = tf.decode_csv(r, [tf.constant([], tf.int32), [2.0]])
    with pytest.raises(errors.InvalidArgumentError, match=message):
        _run(out, {r: [record]})


def test_decode_csv_keeps_the_records_shape_and_quotes():
    out = tf.decode_csv([[b'"a""b",1', b'"",2'], [b"c,3", b'"x,y",'], ], [[""], [7]])
    s, n = _run(out)
    assert s.tolist() == [[b'a"b', b""], [b"c", b"x,y"]] and n.tolist() == [[1, 2], [3, 7]]
    with pytest.raises(errors.InvalidArgumentError, match="field_delim should be only 1 char"):
        _run(tf.decode_csv(["a"], [[""]], field_delim="ab"))


def test_decode_raw_against_numpy():
    values = np.array([[1.5, -2.25], [3e5, 0.0]], dtype=np.float64)
    raw = [row.astype(">f8").tobytes() for row in values]
    got = _run(tf.decode_raw(tf.constant(raw), tf.float64, little_endian=False))
    np.testing.assert_array_equal(got, values)
    c = np.array([1 + 2j, -3j], np.complex64)
    np.testing.assert_array_equal(_run(tf.decode_raw(tf.constant(c.tobytes()), tf.complex64)), c)
    with pytest.raises(errors.InvalidArgumentError, match="length 3 that is not a multiple of 4, the size of int32"):
        _run(tf.decode_raw(tf.constant([b"abc"]), tf.int32))


def test_parse_tensor_messages():
    blob = tf.io.serialize_tensor(tf.constant([1.0]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)"):
        _run(tf.io.parse_tensor(blob, tf.int32))
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse `serialized` as TensorProto, base64: //8="):
        _run(tf.io.parse_tensor(tf.constant(b"\xff\xff"), tf.int32))
    half = np.array([[0.5, -1.0]], np.float16)
    np.testing.assert_array_equal(_run(tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant(half)), tf.float16)), half)


def test_base64_is_web_safe_and_rejects_other_characters():
    data = bytes(range(256))
    enc = _run(tf.encode_base64(tf.constant([data])))[0]
    assert b"+" not in enc and b"/" not in enc and not enc.endswith(b"=")
    assert _run(tf.decode_base64(tf.constant([enc])))[0] == data
    with pytest.raises(errors.InvalidArgumentError, match="Invalid character found in base64"):
        _run(tf.decode_base64(tf.constant([b"ab/+"])))


def test_decode_compressed_and_json_errors():
    with pytest.raises(errors.DataLossError):
        _run(tf.decode_compressed(tf.constant([b"not gzip"]), "GZIP"))
    with pytest.raises(errors.InvalidArgumentError, match="JSON"):
        _run(tf.decode_json_example(tf.constant(['{"features": 3}'])))
    with pytest.raises(ValueError, match="Not a valid compression_type"):
        tfrecord.TFRecordOptions.get_compression_type_string("BZIP2")

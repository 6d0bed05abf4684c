"""String ops beyond the golden case: the hashes on published vectors and TF's own
values, error classes and messages, edge cases."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.util import hashing


def test_siphash_reference_vectors():
    # SipHash-2-4 paper, appendix A: key 00..0f, message 00..0e
    k0 = int.from_bytes(bytes(range(8)), "little")
    k1 = int.from_bytes(bytes(range(8, 16)), "little")
    assert hashing.siphash24(k0, k1, bytes(range(15))) == 0xa129ca6149be45e5
    assert hashing.siphash24(k0, k1, b"") == 0x726fdb47dd0e0e31


def test_hashes_match_tensorflow_values():
    # tf.strings.to_hash_bucket_fast / _strong(key=[1, 2]) / to_hash_bucket with 2**62 + 1 buckets, from TF 2.21
    with tf.Graph().as_default():
        x = tf.constant(["", "a", "hello world", "x" * 70])
        fast = tf.strings.to_hash_bucket_fast(x, 2 ** 62 + 1)
        with tf.Session() as sess:
            got = sess.run(fast)
    want = [hashing.fingerprint64(s) % (2 ** 62 + 1) for s in (b"", b"a", b"hello world", b"x" * 70)]
    assert got.tolist() == want
    assert hashing.fingerprint64(b"") == 0x9ae16a3b2f90404f  # farmhash's k2: the hash of the empty string


@pytest.mark.parametrize("value,out_type", [("abc", tf.float32), ("1.5", tf.int32), ("1_000", tf.float32),
                                            ("2147483648", tf.int32), ("", tf.int64)])
def test_to_number_bad_input(value, out_type):
    with tf.Graph().as_default():
        t = tf.strings.to_number(tf.constant([value]), out_type=out_type)
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match=f"(?m)StringToNumberOp could not correctly convert "
                                                       f"string: {value}$"):
            sess.run(t)


def test_substr_out_of_range_and_negative_len():
    with tf.Graph().as_default():
        bad = tf.strings.substr(tf.constant(["abc", "de"]), [0, 3], [1, 1])
        neg = tf.strings.substr(tf.constant(["abc"]), 1, -1)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"pos 3 out of range for string b'de' at index 1"):
                sess.run(bad)
            assert sess.run(neg).tolist() == [b""]


def test_substr_shape_mismatch_at_build():
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.strings.substr(tf.constant(["a"]), [0, 1], [1, 2, 3])


def test_join_and_reduce_join_edges():
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.string, [None])
        joined = tf.strings.join([ph, tf.constant(["a", "b", "c"])])
        empty = tf.reduce_join(tf.constant(np.zeros((2, 0), object), tf.string), 1, separator=",")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"Input shapes do not match: \[2\] vs. \[3\]"):
                sess.run(joined, {ph: ["x", "y"]})
            assert sess.run(empty).tolist() == [b"", b""]


def test_regex_errors_and_rewrite():
    with tf.Graph().as_default():
        bad = tf.strings.regex_replace(tf.constant(["a"]), tf.constant("("), "x")
        swap = tf.strings.regex_replace(tf.constant(["ab-cd"]), r"(\w+)-(\w+)", r"\2\\\1 \0")
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"^Invalid pattern: \(, error:"):
                sess.run(bad)
            assert sess.run(swap).tolist() == [b"cd\\ab ab-cd"]


def test_as_string_rejects_bad_options():
    with tf.Graph().as_default():
        both = tf.as_string(tf.constant([1.0]), scientific=True, shortest=True)
        prec = tf.as_string(tf.constant([1]), precision=2)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="Cannot select both scientific and shortest"):
                sess.run(both)
            with pytest.raises(errors.InvalidArgumentError, match="precision not supported"):
                sess.run(prec)


def test_dtype_and_attr_checks_at_build():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.strings.length(tf.constant([1]))
        with pytest.raises(ValueError):
            tf.strings.length(tf.constant(["a"]), unit="WORD")
        with pytest.raises(ValueError):
            tf.strings.to_hash_bucket_fast(tf.constant(["a"]), 0)
        with pytest.raises(ValueError):
            tf.strings.to_hash_bucket_strong(tf.constant(["a"]), 3, key=[1])

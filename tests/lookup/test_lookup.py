"""Lookup tables beyond the golden case: resource sharing, errors and their classes,
mutable-table edges."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def test_lookup_before_init_is_failed_precondition():
    with tf.Graph().as_default():
        table = tf.contrib.lookup.HashTable(
            tf.contrib.lookup.KeyValueTensorInitializer(["a"], tf.constant([1], tf.int64)), -1)
        out = table.lookup(tf.constant(["a", "b"]))
        with tf.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError, match="^Table not initialized."):
                sess.run(out)
            sess.run(tf.tables_initializer())
            assert sess.run(out).tolist() == [1, -1]
            sess.run(table.init)  # the same data again: a no-op, as in TF
            assert sess.run(table.size()) == 1


def test_tables_initializer_collects_every_initializer():
    with tf.Graph().as_default():
        assert tf.tables_initializer().type == "NoOp"
        tf.contrib.lookup.index_table_from_tensor(["a", "b"])
        tf.contrib.lookup.index_to_string_table_from_tensor(["a", "b"])
        assert len(tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)) == 2
        assert tf.initialize_all_tables().name == "init_all_tables_1"


def test_tables_of_one_file_share_one_resource(tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("a\nb\n")
    with tf.Graph().as_default():
        t1 = tf.contrib.lookup.index_table_from_file(str(vocab))
        t2 = tf.contrib.lookup.index_table_from_file(str(vocab))
        out = t2.lookup(tf.constant(["b"]))
        with tf.Session() as sess:
            sess.run(t1.initializer)  # TF's shared name: t2 reads the table t1 filled
            assert sess.run(out).tolist() == [1]


def test_missing_vocab_file_and_bad_column(tmp_path):
    cols = tmp_path / "c.tsv"
    cols.write_text("a\t1\nb\n")
    with tf.Graph().as_default():
        missing = tf.contrib.lookup.index_table_from_file(str(tmp_path / "none.txt"))
        short = tf.contrib.lookup.HashTable(
            tf.contrib.lookup.TextFileInitializer(str(cols), tf.string, 0, tf.int64, 1), -1)
        with tf.Session() as sess:
            with pytest.raises(errors.NotFoundError):
                sess.run(missing.initializer)
            with pytest.raises(errors.InvalidArgumentError, match="Invalid number of columns"):
                sess.run(short.initializer)


def test_mutable_table_shapes_and_errors():
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
        bad = table.insert(tf.constant([1, 2], tf.int64), tf.constant([1.0]))
        ins = table.insert(tf.constant([1, 2], tf.int64), tf.constant([0.5, 1.5]))
        found = table.lookup(tf.constant([[2, 3], [1, 1]], tf.int64))
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(bad)
            sess.run(ins)
            np.testing.assert_array_equal(sess.run(found), [[1.5, -1.0], [0.5, 0.5]])
        with pytest.raises(TypeError):
            table.remove(tf.constant(["a"]))


def test_oov_buckets_without_vocabulary_match_hash_buckets():
    with tf.Graph().as_default():
        table = tf.contrib.lookup.IdTableWithHashBuckets(None, num_oov_buckets=7)
        words = tf.constant(["x", "yy", "zzz"])
        with tf.Session() as sess:
            ids, buckets = sess.run([table.lookup(words), tf.strings.to_hash_bucket_fast(words, 7)])
        assert ids.tolist() == buckets.tolist()

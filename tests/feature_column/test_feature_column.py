"""tf.feature_column: what the golden case does not show (values against numpy,
the Bucketize kernel's comparisons, unknown-rank features, run-time errors)."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.util.hashing import fingerprint64

fc = tf.feature_column


def _run(fetch, feed=None, tables=False):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if tables:
            sess.run(tf.tables_initializer())
        return sess.run(fetch, feed)


def test_bucketize_matches_upper_bound():
    with tf.Graph().as_default():
        from graphrt.feature_column.ops import bucketize
        x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 9.0], np.float32)
        got = _run(bucketize(tf.constant(x), [0.0, 1.0, 2.5]))
        np.testing.assert_array_equal(got, np.searchsorted([0.0, 1.0, 2.5], x, side="right"))
        assert got.dtype == np.int32
        # a double input compares with the float32 boundary: 0.1 (double) < float32(0.1)
        assert _run(bucketize(tf.constant([0.1], tf.float64), [0.1]))[0] == 0


def test_numeric_default_and_normalizer_values():
    col = fc.numeric_column("x", shape=(2, 2), default_value=1.5)
    assert col.default_value == ((1.5, 1.5), (1.5, 1.5))
    with tf.Graph().as_default():
        x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
        net = fc.input_layer({"x": tf.constant(x)}, [fc.numeric_column("x", shape=(2, 2), normalizer_fn=tf.sqrt)])
        np.testing.assert_allclose(_run(net), np.sqrt(x).reshape(3, 4), rtol=1e-6)


def test_unknown_rank_feature_is_expanded_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        net = fc.input_layer({"x": x}, [fc.numeric_column("x")])
        np.testing.assert_array_equal(_run(net, {x: [1.0, 2.0]}), [[1.0], [2.0]])
        with pytest.raises(errors.InvalidArgumentError):
            _run(net, {x: 3.0})


def test_embedding_combiners_against_numpy():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = fc.categorical_column_with_identity("ids", 4)
    w = fc.weighted_categorical_column(ids, "w")
    feats = lambda: {"ids": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 2], tf.int64), [3, 2]),
                     "w": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1.0, 3.0, 2.0]), [3, 2])}
    expect = {"sum": [table[1] + 3 * table[3], 2 * table[2], np.zeros(3)],
              "mean": [(table[1] + 3 * table[3]) / 4, table[2], np.zeros(3)],
              "sqrtn": [(table[1] + 3 * table[3]) / np.sqrt(10), 2 * table[2] / 2, np.zeros(3)]}
    for combiner, rows in expect.items():
        with tf.Graph().as_default():
            col = fc.embedding_column(w, 3, combiner=combiner, initializer=tf.constant_initializer(table))
            np.testing.assert_allclose(_run(fc.input_layer(feats(), [col])), np.array(rows), rtol=1e-6)


def test_vocabulary_list_oov_and_default():
    with tf.Graph().as_default():
        words = tf.constant([["a"], ["q"], [""]])
        oov = fc.categorical_column_with_vocabulary_list("w", ["a", "b"], num_oov_buckets=3)
        dflt = fc.categorical_column_with_vocabulary_list("w", ["a", "b"], default_value=1)
        net = fc.input_layer({"w": words}, [fc.indicator_column(oov)])
        other = fc.input_layer({"w": words}, [fc.indicator_column(dflt)])
        got, got_default = _run([net, other], tables=True)
        q_bucket = 2 + fingerprint64(b"q") % 3  # an OOV id: after the vocabulary, by Fingerprint64
        np.testing.assert_array_equal(got[:2], [[1, 0, 0, 0, 0], np.eye(5)[q_bucket]])
        assert got[2].sum() == 0  # '' is a missing value, dropped
        np.testing.assert_array_equal(got_default, [[1, 0], [0, 1], [0, 0]])


def test_identity_out_of_range_is_a_run_time_error():
    with tf.Graph().as_default():
        col = fc.embedding_column(fc.categorical_column_with_identity("i", 3), 2)
        net = fc.input_layer({"i": tf.constant([[5]], tf.int64)}, [col])
        with pytest.raises(errors.InvalidArgumentError):
            _run(net)


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be a _DenseColumn"):
            fc.input_layer({"a": tf.constant([[1]])}, [fc.categorical_column_with_identity("a", 2)])
        with pytest.raises(ValueError, match="cannot have rank 0"):
            fc.input_layer({"a": tf.constant(1.0)}, [fc.numeric_column("a")])
        with pytest.raises(ValueError, match="SparseTensor is not supported"):
            fc.input_layer({"a": tf.SparseTensor([[0, 0]], [1.0], [1, 1])}, [fc.numeric_column("a")])
        with pytest.raises(ValueError, match="dtype must be compatible"):
            fc.input_layer({"a": tf.constant([["x"]])},
                           [fc.indicator_column(fc.categorical_column_with_hash_bucket("a", 3, dtype=tf.int64))])
    with pytest.raises(TypeError, match="shape dimensions must be integer"):
        fc.numeric_column("a", shape=(1.5,))
    with pytest.raises(TypeError, match="default_value must be compatible"):
        fc.numeric_column("a", dtype=tf.int32, default_value=1.5)
    with pytest.raises(ValueError, match="does not exist"):
        fc.categorical_column_with_vocabulary_file("a", "/nonexistent/vocab.txt")


def test_linear_model_trains_towards_labels():
    with tf.Graph().as_default():
        feats = {"c": tf.constant([["x"], ["y"], ["x"]]), "n": tf.constant([[1.0], [2.0], [3.0]])}
        logits = fc.linear_model(feats, [fc.numeric_column("n"),
                                         fc.categorical_column_with_vocabulary_list("c", ["x", "y"])])
        loss = tf.reduce_mean(tf.square(logits - tf.constant([[1.0], [2.0], [3.0]])))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            first = sess.run(loss)
            for _ in range(50):
                sess.run(train)
            assert sess.run(loss) < first / 10

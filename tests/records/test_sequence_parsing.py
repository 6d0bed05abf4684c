"""SequenceExample parsing errors carry TensorFlow's messages (checked against TF 2.21), name the
example (debug names in a batch) and the feature list; the values are in the golden case
tests/tf1_programs/cases/sequence_examples.py."""
import numpy as np
import pytest

import graphrt as tf


def _record(tokens, words=None):
    ex = tf.train.SequenceExample()
    ex.context.feature["label"].int64_list.value.append(1)
    for t in tokens:
        ex.feature_lists.feature_list["tokens"].feature.add().int64_list.value.extend(t)
    for w in words or []:
        ex.feature_lists.feature_list["words"].feature.add().bytes_list.value.extend(w)
    return ex.SerializeToString()


@pytest.mark.parametrize("features, message", [
    ({"vec": tf.FixedLenSequenceFeature([2], tf.float32)},
     "Name: <unknown>, Feature list 'vec' is required but could not be found.  Did you mean to include it in "
     "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?"),
    ({"tokens": tf.FixedLenSequenceFeature([2], tf.int64)},
     "Feature list 'tokens' has an unexpected number of values.  Total values size: 3 is not consistent with "
     "output shape: [?,2]"),
    ({"tokens": tf.FixedLenSequenceFeature([], tf.float32)},
     "Name: <unknown>, Feature list: tokens, Index: 0.  Data types don't match. Expected type: float"),
])
def test_feature_list_errors(graph, features, message):
    _, lists = tf.parse_single_sequence_example(_record([[1], [2], [3]]), sequence_features=features)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(lists)
    first, *rest = info.value.message.split("\n")
    assert first == message  # then the node that failed, as TF appends it
    assert "ParseSequenceExampleV2" in info.value.node


def test_a_step_of_the_wrong_size_names_the_example_the_list_and_the_step(graph):
    serialized = tf.constant([_record([[1]]), _record([[2]], [[b"x"], [b"y", b"z"]])])
    _, lists, _ = tf.io.parse_sequence_example(
        serialized, sequence_features={"words": tf.FixedLenSequenceFeature([], tf.string, allow_missing=True)},
        example_names=["first", "second"])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Name: second, Key: words, Index: 1\.  Number of "
                                                                 r"values != expected\.  values size: 2 but output "
                                                                 r"shape: \[\]\n"):
            sess.run(lists)


def test_context_and_proto_errors(graph):
    missing, _ = tf.parse_single_sequence_example(_record([[1]]), context_features={
        "nope": tf.FixedLenFeature([], tf.int64)})
    junk, _ = tf.parse_single_sequence_example(b"\xff\xffjunk", context_features={
        "label": tf.FixedLenFeature([], tf.int64)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Inconsistent max number of elements for feature nope: expected 1, but found 0"):
            sess.run(missing)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Invalid protocol message input, example id: <unknown>"):
            sess.run(junk)


def test_build_errors(graph):
    with pytest.raises(ValueError, match="Both context_features and sequence_features are None"):
        tf.parse_single_sequence_example(_record([[1]]))
    with pytest.raises(ValueError, match="Both `context_features` and `sequence_features` argument are None"):
        tf.io.parse_sequence_example([_record([[1]])])
    with pytest.raises(ValueError, match=r"Unsupported FixedLenFeature .* for key 't'"):
        tf.parse_single_sequence_example(_record([[1]]), sequence_features={"t": tf.FixedLenFeature([], tf.int64)})
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tf.parse_single_sequence_example([_record([[1]])], sequence_features={
            "tokens": tf.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match=r"Value feature_list.dense_defaults\[t\] must be None"):
        tf.parse_single_sequence_example(_record([[1]]), sequence_features={
            "t": tf.FixedLenSequenceFeature([], tf.int64, default_value=3)})


def test_an_empty_feature_list_and_an_unset_step(graph):
    ex = tf.train.SequenceExample()
    ex.feature_lists.feature_list["tokens"]  # present, no steps
    ex.feature_lists.feature_list["words"].feature.add()  # one step with no values
    _, lists = tf.parse_single_sequence_example(ex.SerializeToString(), sequence_features={
        "tokens": tf.FixedLenSequenceFeature([3], tf.int64), "words": tf.VarLenFeature(tf.string)})
    with tf.Session() as sess:
        got = sess.run(lists)
    assert got["tokens"].shape == (0, 3) and got["tokens"].dtype == np.int64
    assert got["words"].dense_shape.tolist() == [1, 0] and got["words"].values.size == 0

"""Static shapes that shape inference reads from values known at graph-build time
(framework/constant_value.inferred_value / inferred_shape). Every expected shape is what
TensorFlow 2.21 (tf.compat.v1, graph mode) gave for the same line."""
import numpy as np
import pytest

import graphrt as tf


def _cases():
    x = tf.placeholder(tf.float32, [None, 7, 7, 64])
    y = tf.placeholder(tf.float32, [8, 5])
    z = tf.placeholder(tf.float32, [None, None, 3])
    three = tf.constant(3)
    return {
        "flat1": (tf.reshape(x, [tf.shape(x)[0], -1]), [None, None]),
        "flat2": (tf.reshape(x, [-1, tf.shape(x)[1] * tf.shape(x)[2] * 64]), [None, 3136]),
        "flat4": (tf.reshape(y, [tf.shape(y)[0] // 2, -1]), [4, 10]),
        "flat7": (tf.reshape(z, [-1, tf.shape(z)[2]]), [None, 3]),
        "flat8": (tf.reshape(y, tf.stack([tf.reduce_prod(tf.shape(y))])), [40]),
        "zeros1": (tf.zeros([tf.shape(y)[0], 3]), [8, 3]),
        "zeros2": (tf.zeros(tf.shape(y) * 2), [16, 10]),
        "fill": (tf.fill([tf.shape(x)[1] + 1], 1.0), [8]),
        "range1": (tf.range(tf.shape(y)[0]), [8]),
        "range2": (tf.range(tf.constant(3) + 2), [5]),
        "range3": (tf.range(tf.shape(x)[0]), [None]),
        "onehot": (tf.one_hot([1, 2], tf.shape(y)[1]), [2, 5]),
        "tile": (tf.tile(y, [tf.shape(y)[0] // 4, 1]), [16, 5]),
        "slice": (tf.slice(y, [1, 0], [tf.shape(y)[0] - 2, -1]), [6, 5]),
        "bcast": (tf.broadcast_to(tf.constant(1.0), tf.shape(y) + 1), [9, 6]),
        "pad": (tf.pad(y, tf.constant([[1, 1], [0, 0]]) * 2), [12, 5]),
        "expand2": (tf.expand_dims(y, tf.constant(1) - 2), [8, 5, 1]),
        "concat": (tf.concat([y, y], tf.rank(y) - 1), [8, 10]),
        "sum": (tf.reduce_sum(y, axis=tf.rank(y) - 1), [8]),
        "sum2": (tf.reduce_sum(y, axis=tf.range(tf.rank(y) - 1), keepdims=True), [1, 5]),
        "gather": (tf.gather(y, [0, 1], axis=tf.rank(y) - 1), [8, 2]),
        "bincount": (tf.bincount(tf.constant([1, 3])), [4]),
        "confusion_matrix": (tf.confusion_matrix([1, 2], [0, 1]), [3, 3]),
        "eye": (tf.eye(tf.shape(y)[1]), [5, 5]),
        "strided": (y[:tf.shape(y)[0] // 2], [4, 5]),
        "topk": (tf.nn.top_k(y, k=tf.shape(y)[1] - 2)[0], [8, 3]),
        "cumsum_shape": (tf.zeros(tf.cumsum(tf.constant([1, 2]))), [1, 3]),
        "max_shape": (tf.zeros([tf.maximum(tf.shape(y)[0], 10)]), [10]),
        "one_constant_read_twice": (tf.zeros([three * three]), [9]),
        # only single elements of a partly known shape are values; slices of one are read as shapes
        "prod_of_slice": (tf.reshape(x, [-1, tf.reduce_prod(tf.shape(x)[1:])]), [None, None]),
        "zeros_slice": (tf.zeros(tf.shape(x)[1:]), [7, 7, 64]),
        "zeros_negative_index": (tf.zeros([tf.shape(x)[-1]]), [64]),
        "unstack": (tf.zeros([tf.unstack(tf.shape(y))[1]]), [5]),
        "cast_of_slice": (tf.zeros(tf.cast(tf.shape(x)[1:], tf.int64)), [7, 7, 64]),
        "identity_of_slice": (tf.zeros(tf.identity(tf.shape(x)[1:])), [None, None, None]),
        "concat_partial": (tf.zeros(tf.concat([tf.shape(x)[1:2], [3]], 0)), [7, 3]),
        "pack_mixed": (tf.zeros([tf.shape(x)[0], tf.shape(x)[1], 2]), [None, 7, 2]),
        "computed_index": (tf.zeros([tf.shape(x)[tf.constant(1) + 0]]), [None]),
        # data-dependent sizes stay unknown where TF's own ops make them so
        "where": (tf.where(tf.constant([True, False, True])), [None, 1]),
        "boolean_mask": (tf.boolean_mask(tf.constant([1, 2, 3]), tf.constant([True, False, True])), [None]),
        "nms_unpadded": (tf.image.non_max_suppression_padded(
            tf.constant([[0, 0, 1, 1], [0, 0, 1, 1.1], [2, 2, 3, 3]], tf.float32), tf.constant([0.9, 0.8, 0.7]), 3,
            iou_threshold=0.5)[0], [None]),
    }


def test_static_shapes_match_tensorflow():
    with tf.Graph().as_default():
        cases = _cases()
    wrong = {k: (t.shape.as_list(), want) for k, (t, want) in cases.items() if t.shape.as_list() != want}
    assert not wrong


def test_shapes_inside_a_loop_body_follow_tensorflow():
    shapes = {}
    with tf.Graph().as_default():
        n = tf.constant(4)

        def body(i, acc):
            shapes["outer_constant"] = tf.zeros([n]).shape.as_list()  # through the loop's Enter: unknown
            shapes["inner_constant"] = tf.zeros([tf.constant(3) * 2]).shape.as_list()
            return i + 1, acc
        tf.while_loop(lambda i, a: i < 2, body, [tf.constant(0), tf.constant(0.0)])
    assert shapes == {"outer_constant": [None], "inner_constant": [6]}


def test_evaluated_values_agree_with_the_run():
    with tf.Graph().as_default() as g:
        y = tf.placeholder(tf.float32, [8, 5])
        z = tf.zeros([tf.shape(y)[0] // 3, tf.maximum(tf.size(y) - 38, 1)])
        assert z.shape.as_list() == [2, 2]
        with tf.Session(graph=g) as sess:
            assert sess.run(z, {y: np.zeros((8, 5), np.float32)}).shape == (2, 2)


def test_a_failing_evaluation_leaves_the_shape_unknown_and_the_run_reports_it():
    with tf.Graph().as_default() as g:
        bad = tf.zeros([tf.constant(1) // tf.constant(0)])  # integer division by zero
        assert bad.shape.as_list() == [None]
        with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad)


def test_stateful_ops_feeds_and_functions_are_never_evaluated():
    with tf.Graph().as_default():
        rnd = tf.zeros([tf.random_uniform([], 1, 5, dtype=tf.int32)])
        fed = tf.zeros([tf.placeholder_with_default(3, [])])
        total = tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x)
        folded = tf.zeros(tf.reshape(tf.cast(total, tf.int32), [1]))  # a dataset's reduce runs a function
        assert rnd.shape.as_list() == [None] and fed.shape.as_list() == [None] and folded.shape.as_list() == [None]


@pytest.mark.parametrize("build, message", [
    (lambda a: tf.reverse(a, [3]), r"'axis'\[0\] = 3 is out of valid range \[0, 2\]"),
    (lambda a: tf.reverse(a, [-4]), r"'axis'\[0\] = -4 is out of valid range"),
    (lambda a: tf.reverse(a, [0, 0]), "axis 0 specified more than once"),
    (lambda a: tf.split(a, 2, axis=3), r"given by scalar input 3 must be in range \[-3, 3\)"),
    (lambda a: tf.split(a, [1, -1], axis=-4), r"given by scalar input -4 must be in range \[-3, 3\)"),
])
def test_axes_out_of_range_fail_at_build_time_as_in_tensorflow(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            build(tf.zeros([2, 3, 4]))


def test_tile_by_zero_and_reverse_sequence_batch_from_the_lengths():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, None, None])
        assert tf.tile(p, [0, 1, 2]).shape.as_list() == [0, None, None]
        assert tf.tile(tf.placeholder(tf.float32, [3, None]), [2, 0]).shape.as_list() == [6, 0]
        assert tf.reverse_sequence(p, [1, 3], seq_axis=1, batch_axis=0).shape.as_list() == [2, None, None]
        lengths = tf.placeholder(tf.int32, [5])
        assert tf.reverse_sequence(p, lengths, seq_axis=1, batch_axis=2).shape.as_list() == [None, None, 5]


def test_a_refined_shape_is_read_by_later_questions():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        rows = tf.shape(x)[0]
        assert tf.zeros([rows]).shape.as_list() == [None]  # asked, and not known: remembered as unknown
        x.set_shape([5, 3])
        assert tf.zeros([rows]).shape.as_list() == [5]  # set_shape forgets what was unknown


def test_a_deep_graph_builds_in_time_linear_in_its_questions():
    # every layer asks for tf.shape(h)[0] of an unknown batch; what was learnt is remembered,
    # so no question walks back through all the layers before it (walk steps are counted)
    from graphrt.framework import constant_value
    steps = []
    real = constant_value._Evaluation._evaluate
    constant_value._Evaluation._evaluate = lambda self, t: steps.append(t) or real(self, t)
    try:
        with tf.Graph().as_default():
            h = tf.placeholder(tf.float32, [None, 4])
            for _ in range(400):
                h = tf.reshape(h, [tf.shape(h)[0], -1]) + 1.0
            assert h.shape.as_list() == [None, None]  # (TF's too: -1 is unknown beside an unknown batch)
    finally:
        constant_value._Evaluation._evaluate = real
    assert len(steps) < 10 * 400

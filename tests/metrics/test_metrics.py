"""tf.metrics beyond the golden: values against numpy over streamed batches, dynamic
shapes, run-time errors, reset, collections and the placeholder-fed control edge."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors


def _stream(metric_fn, batches, placeholders):
    """Runs update_op per batch; returns (update values, final value)."""
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(dt, shape) for dt, shape in placeholders]
        value, update = metric_fn(*phs)
        with tf.Session(graph=g) as sess:
            sess.run(tf.local_variables_initializer())
            ups = [sess.run(update, dict(zip(phs, b))) for b in batches]
            return ups, sess.run(value)


def test_mean_of_fed_placeholder_streams_weighted_mean():
    rng = np.random.RandomState(0)
    xs = [rng.randn(5).astype(np.float32) for _ in range(3)]
    ws = [rng.rand(5).astype(np.float32) for _ in range(3)]
    ups, final = _stream(lambda x, w: tf.metrics.mean(x, weights=w), list(zip(xs, ws)),
                         [(tf.float32, [None]), (tf.float32, [None])])
    for i in range(3):
        want = sum((x * w).sum() for x, w in zip(xs[:i + 1], ws[:i + 1])) / sum(w.sum() for w in ws[:i + 1])
        np.testing.assert_allclose(ups[i], want, rtol=1e-5)
    np.testing.assert_allclose(final, ups[-1], rtol=1e-6)


def test_accuracy_with_unknown_rank_weights_squeezes_at_run_time():
    labels = np.array([1, 2, 3, 4], np.int64)
    preds = np.array([1, 0, 3, 0], np.int64)
    weights = np.array([[1.0], [1.0], [0.0], [2.0]], np.float32)
    _, final = _stream(lambda l, p, w: tf.metrics.accuracy(l, p, weights=w), [(labels, preds, weights)],
                       [(tf.int64, [4]), (tf.int64, [4]), (tf.float32, None)])
    assert final == pytest.approx(1.0 / 4.0)


def test_auc_roc_matches_numpy_trapezoid_over_thresholds():
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 2, 50)
    probs = rng.rand(50).astype(np.float32)
    _, final = _stream(lambda l, p: tf.metrics.auc(l, p, num_thresholds=10), [(labels, probs)],
                       [(tf.int64, [None]), (tf.float32, [None])])
    thr = np.array([-1e-7] + [(i + 1) / 9.0 for i in range(8)] + [1 + 1e-7], np.float32)
    pos = probs[None, :] > thr[:, None]
    tp = (pos & (labels == 1)).sum(1)
    fp = (pos & (labels == 0)).sum(1)
    fn = (~pos & (labels == 1)).sum(1)
    tn = (~pos & (labels == 0)).sum(1)
    rec = (tp + 1e-6) / (tp + fn + 1e-6)
    fpr = fp / (fp + tn + 1e-6)
    want = np.sum((fpr[:-1] - fpr[1:]) * (rec[:-1] + rec[1:]) / 2)
    assert final == pytest.approx(want, rel=1e-5)


def test_auc_rejects_probabilities_outside_unit_interval_at_run_time():
    with pytest.raises(errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
        _stream(lambda l, p: tf.metrics.auc(l, p), [(np.array([1, 0]), np.array([0.5, 1.5], np.float32))],
                [(tf.int64, [None]), (tf.float32, [None])])


def test_precision_and_recall_are_zero_before_any_positive():
    ups, final = _stream(lambda l, p: tf.metrics.precision(l, p), [(np.array([1, 1]), np.array([0, 0]))],
                         [(tf.int64, [None]), (tf.int64, [None])])
    assert ups == [0.0] and final == 0.0


def test_mean_iou_confusion_matrix_and_value_against_numpy():
    labels = np.array([0, 1, 2, 2, 1], np.int64)
    preds = np.array([0, 2, 2, 1, 1], np.int64)
    ups, final = _stream(lambda l, p: tf.metrics.mean_iou(l, p, 4), [(labels, preds)],
                         [(tf.int64, [None]), (tf.int64, [None])])
    cm = np.zeros((4, 4))
    np.add.at(cm, (labels, preds), 1)
    np.testing.assert_array_equal(ups[0], cm)
    inter = np.diag(cm)
    union = cm.sum(0) + cm.sum(1) - inter
    assert final == pytest.approx(np.mean(inter[union > 0] / union[union > 0]), rel=1e-6)


def test_mean_iou_rejects_class_ids_out_of_range_at_run_time():
    with pytest.raises(errors.InvalidArgumentError):
        _stream(lambda l, p: tf.metrics.mean_iou(l, p, 2), [(np.array([0, 3]), np.array([0, 1]))],
                [(tf.int64, [None]), (tf.int64, [None])])


def test_top_k_metrics_count_duplicate_labels_once():
    # row 0: labels {1, 1}, top-2 {3, 1}: tp 1, fp 1, fn 0. row 1: labels {0, 2}, top-2 {0, 2}: tp 2.
    labels = np.array([[1, 1], [0, 2]], np.int64)
    logits = np.array([[0.0, 0.5, 0.1, 0.9], [0.8, 0.0, 0.7, 0.1]], np.float32)
    _, p = _stream(lambda l, x: tf.metrics.precision_at_k(l, x, 2), [(labels, logits)],
                   [(tf.int64, [None, 2]), (tf.float32, [None, 4])])
    _, r = _stream(lambda l, x: tf.metrics.recall_at_k(l, x, 2), [(labels, logits)],
                   [(tf.int64, [None, 2]), (tf.float32, [None, 4])])
    assert p == pytest.approx(3 / 4) and r == pytest.approx(1.0)


def test_average_precision_ignores_out_of_range_labels():
    labels = np.array([[1, 7]], np.int64)  # 7 >= num_classes: not relevant
    logits = np.array([[0.1, 0.9, 0.3]], np.float32)
    _, ap = _stream(lambda l, x: tf.metrics.average_precision_at_k(l, x, 2), [(labels, logits)],
                    [(tf.int64, [None, 2]), (tf.float32, [None, 3])])
    assert ap == pytest.approx(1.0)


def test_weights_that_cannot_broadcast_fail_at_run_time():
    with pytest.raises(errors.InvalidArgumentError):
        _stream(lambda x, w: tf.metrics.mean(x, weights=w),
                [(np.ones((2, 3), np.float32), np.ones((2, 2), np.float32))],
                [(tf.float32, [None, None]), (tf.float32, [None, None])])


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Invalid k=0"):
            tf.metrics.average_precision_at_k(tf.constant([[1]], tf.int64), tf.constant([[0.1, 0.2]]), 0)
        with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
            tf.metrics.auc(tf.constant([1]), tf.constant([0.5]), curve="DET")
        with pytest.raises(ValueError, match="must have rank in"):
            tf.metrics.false_negatives(tf.constant([True]), tf.constant([True]), weights=tf.ones([1, 1, 1]))


def test_variables_are_local_metric_variables_and_reset():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        value, update = tf.metrics.mean(x, name="m", metrics_collections=["vals"], updates_collections=["ups"])
        assert [v.name for v in tf.local_variables()] == ["m/total:0", "m/count:0"]
        assert g.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
        assert tf.global_variables() == [] and tf.trainable_variables() == []
        assert g.get_collection("vals") == [value] and g.get_collection("ups") == [update]
        init = tf.local_variables_initializer()
        with tf.Session(graph=g) as sess:
            sess.run(init)
            sess.run(update, {x: [1.0, 3.0]})
            assert sess.run(value) == 2.0
            sess.run(init)
            assert sess.run(value) == 0.0

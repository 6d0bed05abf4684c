"""Per-class metrics over integer class ids: `mean_iou` (from a streaming float64
confusion matrix) and `mean_per_class_accuracy`."""
from ..framework import dtypes
from ..ops import array_ops, math_ops
from ..ops.extra_ops import confusion_matrix, div_no_nan, matrix_diag_part
from ..ops.sparse_training_ops import scatter_add
from .state import add_to_collections, as_float32, metric_scope, metric_variable


def _flat(x):
    return array_ops.reshape(x, [-1]) if x.shape.ndims > 1 else x


def _streaming_confusion_matrix(labels, predictions, num_classes, weights=None):
    total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
    predictions = _flat(math_ops.cast(predictions, dtypes.int64))
    labels = _flat(math_ops.cast(labels, dtypes.int64))
    num_classes = math_ops.cast(num_classes, dtypes.int64)
    if weights is not None:
        weights = _flat(weights)
    current_cm = confusion_matrix(labels, predictions, num_classes, weights=weights, dtype=dtypes.float64)
    return total_cm, total_cm.assign_add(current_cm)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """The mean over classes of intersection / union, classes never seen left out. The
    update op returns the confusion matrix ([num_classes, num_classes] float64)."""
    with metric_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, num_classes, weights)
        sum_over_row = as_float32(math_ops.reduce_sum(total_cm, 0))
        sum_over_col = as_float32(math_ops.reduce_sum(total_cm, 1))
        cm_diag = as_float32(matrix_diag_part(total_cm))
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid_entries = math_ops.reduce_sum(as_float32(math_ops.not_equal(denominator, 0)))
        denominator = math_ops.where(math_ops.greater(denominator, 0), denominator,
                                     array_ops.ones_like(denominator))
        iou = math_ops.divide(cm_diag, denominator)
        value = math_ops.where(math_ops.greater(num_valid_entries, 0),
                               math_ops.reduce_sum(iou, name="mean_iou") / num_valid_entries, 0)
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update_op)
        return value, update_op


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of each class's (weighted) accuracy. The update op returns the
    per-class accuracies ([num_classes] float32)."""
    with metric_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(math_ops.cast(labels, dtypes.int64))
        predictions = _flat(predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones(array_ops.stack([array_ops.size(labels)]), dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = as_float32(math_ops.equal(predictions, labels))
        if weights is not None:
            weights = as_float32(_flat(weights))
            is_correct *= weights
            ones *= weights
        update_total_op = scatter_add(total, labels, ones)
        update_count_op = scatter_add(count, labels, is_correct)
        per_class_accuracy = div_no_nan(count, math_ops.maximum(total, 0))
        value = math_ops.reduce_mean(per_class_accuracy, name="mean_accuracy")
        add_to_collections(metrics_collections, value)
        update_op = div_no_nan(update_count_op, math_ops.maximum(update_total_op, 0), name="update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op

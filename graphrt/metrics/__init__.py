"""`tf.metrics`: TF1's streaming metrics (metrics_impl.py), pure compositions of ops.

Each metric returns `(value, update_op)` and keeps its state in local variables
(collections LOCAL_VARIABLES and METRIC_VARIABLES, e.g. `accuracy/total:0`,
`accuracy/count:0`) that `tf.local_variables_initializer()` resets: run `update_op`
once per batch, read `value` for the metric over every batch so far. `name` is the
variable scope (made unique), `metrics_collections` / `updates_collections` receive
the value and the update. Top-k metrics take dense integer labels only (graphrt has
no SparseTensor).
"""
from .classes import mean_iou, mean_per_class_accuracy
from .counts import false_negatives, false_positives, precision, recall, true_negatives, true_positives
from .means import (accuracy, mean, mean_absolute_error, mean_cosine_distance, mean_relative_error,
                    mean_squared_error, mean_tensor, percentage_below, root_mean_squared_error)
from .thresholds import (auc, false_negatives_at_thresholds, false_positives_at_thresholds, precision_at_thresholds,
                         recall_at_thresholds, sensitivity_at_specificity, specificity_at_sensitivity,
                         true_negatives_at_thresholds, true_positives_at_thresholds)
from .top_k import (average_precision_at_k, precision_at_k, precision_at_top_k, recall_at_k, recall_at_top_k,
                    sparse_average_precision_at_k, sparse_precision_at_k)

__all__ = ["accuracy", "auc", "average_precision_at_k", "false_negatives", "false_negatives_at_thresholds",
           "false_positives", "false_positives_at_thresholds", "mean", "mean_absolute_error",
           "mean_cosine_distance", "mean_iou", "mean_per_class_accuracy", "mean_relative_error",
           "mean_squared_error", "mean_tensor", "percentage_below", "precision", "precision_at_k",
           "precision_at_thresholds", "precision_at_top_k", "recall", "recall_at_k", "recall_at_thresholds",
           "recall_at_top_k", "root_mean_squared_error", "sensitivity_at_specificity",
           "sparse_average_precision_at_k", "sparse_precision_at_k", "specificity_at_sensitivity",
           "true_negatives", "true_negatives_at_thresholds", "true_positives", "true_positives_at_thresholds"]

"""Metrics that are a (weighted) running mean: `total` and `count` variables, the value
`div_no_nan(total, count)`; accuracy and the regression errors are means of a per-element
quantity."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..ops import array_ops, math_ops
from ..ops.extra_ops import div_no_nan
from ..losses import broadcast_weights
from .state import (add_to_collections, as_float32, metric_scope, metric_variable, remove_squeezable_dimensions,
                    squeeze_or_expand)


def _weighted(values, weights):
    """`values` times `weights` broadcast to them, and those broadcast weights."""
    values, _, weights = squeeze_or_expand(values, None, weights)
    weights = broadcast_weights(as_float32(weights), values)
    return math_ops.multiply(values, weights), weights


def _running_mean(total, count, batch_total, values, num_values, metrics_collections, updates_collections):
    update_total_op = total.assign_add(batch_total)
    # TF orders the count after the weighted values so both updates see one batch.
    with get_default_graph().control_dependencies([values]):
        update_count_op = count.assign_add(num_values)
    mean_t = div_no_nan(total, math_ops.maximum(count, 0), name="value")
    add_to_collections(metrics_collections, mean_t)
    update_op = div_no_nan(update_total_op, math_ops.maximum(update_count_op, 0), name="update_op")
    add_to_collections(updates_collections, update_op)
    return mean_t, update_op


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The weighted mean of every element seen: (value, update_op), both float32 scalars."""
    with metric_scope(name, "mean", (values, weights)):
        values = as_float32(values)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = as_float32(array_ops.size(values))
        else:
            values, weights = _weighted(values, weights)
            num_values = math_ops.reduce_sum(weights)
        return _running_mean(total, count, math_ops.reduce_sum(values), values, num_values, metrics_collections,
                             updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The element-wise weighted mean of `values` (of a fully defined shape) over updates."""
    with metric_scope(name, "mean", (values, weights)):
        values = as_float32(values)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, weights = _weighted(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        return _running_mean(total, count, values, values, num_values, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """How often `predictions` equal `labels` (predictions cast to the labels' dtype)."""
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = as_float32(math_ops.equal(predictions, labels))
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    absolute_errors = math_ops.abs(predictions - labels)
    return mean(absolute_errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    squared_error = math_ops.squared_difference(labels, predictions)
    return mean(squared_error, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    mse, update_mse_op = mean_squared_error(labels, predictions, weights, None, None,
                                            name or "root_mean_squared_error")
    rmse = math_ops.sqrt(mse)
    add_to_collections(metrics_collections, rmse)
    update_rmse_op = math_ops.sqrt(update_mse_op)
    add_to_collections(updates_collections, update_rmse_op)
    return rmse, update_rmse_op


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The mean of |labels - predictions| / normalizer, counting 0 where the normalizer is 0."""
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    predictions, normalizer = remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative_errors = math_ops.where(math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
                                      math_ops.divide(math_ops.abs(labels - predictions), normalizer))
    return mean(relative_errors, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the mean dot product along `dim` (inputs are expected unit-normalized)."""
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    radial_diffs = math_ops.multiply(predictions, labels)
    radial_diffs = math_ops.reduce_sum(radial_diffs, axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial_diffs, weights, None, None, name or "mean_cosine_distance")
    mean_distance = math_ops.subtract(1.0, mean_distance)
    update_op = math_ops.subtract(1.0, update_op)
    add_to_collections(metrics_collections, mean_distance)
    add_to_collections(updates_collections, update_op)
    return mean_distance, update_op


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None,
                     name=None):
    """The (weighted) fraction of values below `threshold`."""
    is_below_threshold = as_float32(math_ops.less(values, threshold))
    return mean(is_below_threshold, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")

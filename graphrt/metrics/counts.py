"""Counting metrics over boolean predictions: true/false positives/negatives (a float32
`count` variable each) and precision and recall built from two of them."""
from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_ops, math_ops
from ..ops.extra_ops import assert_op, assert_type
from .state import add_to_collections, as_float32, metric_scope, metric_variable, squeeze_or_expand


def _assert_rank_in(x, ranks):
    """TF's check_ops.assert_rank_in: a ValueError when static ranks settle it, else an Assert."""
    g = get_default_graph()
    with g.name_scope("assert_rank_in"):
        ranks = [convert_to_tensor(r, dtype=dtypes.int32) for r in ranks]
        static = [constant_value(r) for r in ranks]
        if x.shape.ndims is not None and all(s is not None for s in static):
            static = [int(s) for s in static]
            if x.shape.ndims not in static:
                raise ValueError(f"Tensor {x.name} must have rank in ({', '.join(map(str, static))}).  "
                                 f"Received rank {x.shape.ndims}, shape {x.shape}")
            return control_ops.no_op(name="static_checks_determined_all_ok")
        ranks = array_ops.stack(ranks)
        ok = math_ops.reduce_any(math_ops.equal(array_ops.rank(x), ranks))
        return assert_op(ok, [f"Tensor {x.name} must have rank in", ranks, "Received shape: ", array_ops.shape(x)])


def _count_condition(values, weights, metrics_collections, updates_collections):
    assert_type(values, dtypes.bool)
    count = metric_variable([], dtypes.float32, name="count")
    values = as_float32(values)
    if weights is not None:
        with get_default_graph().control_dependencies([_assert_rank_in(weights, (0, array_ops.rank(values)))]):
            weights = as_float32(weights)
            values = math_ops.multiply(values, weights)
    value_tensor = array_ops.identity(count)
    add_to_collections(metrics_collections, value_tensor)
    update_op = count.assign_add(math_ops.reduce_sum(values))
    add_to_collections(updates_collections, update_op)
    return value_tensor, update_op


def _boolean_count(default_name, label, prediction):
    """The metric counting examples whose label is `label` and prediction `prediction`."""
    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        with metric_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = squeeze_or_expand(math_ops.cast(predictions, dtypes.bool),
                                                             math_ops.cast(labels, dtypes.bool), weights)
            is_counted = math_ops.logical_and(math_ops.equal(labels, label), math_ops.equal(predictions, prediction))
            return _count_condition(is_counted, weights, metrics_collections, updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = (f"The (weighted) number of examples with label {label} predicted {prediction}: "
                      "(value, update_op), float32 scalars.")
    return metric


true_positives = _boolean_count("true_positives", True, True)
false_positives = _boolean_count("false_positives", False, True)
true_negatives = _boolean_count("true_negatives", False, False)
false_negatives = _boolean_count("false_negatives", True, False)


def _ratio(default_name, other_count):
    """tp / (tp + other), 0 while nothing is counted."""
    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        with metric_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = squeeze_or_expand(math_ops.cast(predictions, dtypes.bool),
                                                             math_ops.cast(labels, dtypes.bool), weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = other_count(labels, predictions, weights)

            def compute(tp, other, name):
                return math_ops.where(math_ops.greater(tp + other, 0), math_ops.divide(tp, tp + other), 0, name)

            value = compute(tp, other, "value")
            add_to_collections(metrics_collections, value)
            update_op = compute(tp_update, other_update, "update_op")
            add_to_collections(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default_name
    return metric


precision = _ratio("precision", false_positives)
precision.__doc__ = "tp / (tp + fp) over boolean labels and predictions: (value, update_op)."
recall = _ratio("recall", false_negatives)
recall.__doc__ = "tp / (tp + fn) over boolean labels and predictions: (value, update_op)."

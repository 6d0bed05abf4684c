"""Top-k metrics over class ids: precision/recall at k (and at given top-k indices) and
average precision at k.

TF computes them with set operations (`tf.sets`); graphrt has no sparse tensors, so
labels are dense class ids ([D1, ... DN, num_labels] or [D1, ... DN]) and the set sizes
are counted with comparisons: every value, -1 included, is a set member counted once,
as TF's dense sets count them."""
from ..framework import dtypes
from ..framework.graph import get_default_graph, graph_of
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_flow_ops, math_ops, nn_ops
from ..ops.extra_ops import div_no_nan
from ..losses import assert_broadcastable, broadcast_weights
from .state import add_to_collections, metric_variable


def _graph_of(*values):
    return graph_of([v for v in values if v is not None])


def _at_k_name(name, k=None, class_id=None):
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _maybe_expand_labels(labels, predictions):
    """`labels` with the rank of `predictions` ([..., 1] added to class ids of one rank less)."""
    g = get_default_graph()
    with g.name_scope("expand_labels") as scope:
        labels = convert_to_tensor(labels)
        labels_rank, predictions_rank = labels.shape.ndims, predictions.shape.ndims
        if labels_rank is not None and predictions_rank is not None:
            if predictions_rank == labels_rank:
                return labels
            if predictions_rank == labels_rank + 1:
                return array_ops.expand_dims(labels, -1, name=scope)
            raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape {predictions.shape}. "
                             "Predictions rank should be the same rank as labels rank or labels rank plus one .")
        return control_flow_ops.cond(
            math_ops.equal(array_ops.rank(predictions), array_ops.rank(labels) + 1),
            lambda: array_ops.expand_dims(labels, -1, name=scope), lambda: labels)


def _first_occurrences(ids):
    """True where ids[..., j] differs from every ids[..., j'] with j' < j: the set's members."""
    n = array_ops.shape(ids)[-1]
    positions = math_ops.range(n)
    earlier = math_ops.less(array_ops.expand_dims(positions, 0), array_ops.expand_dims(positions, 1))
    same = math_ops.equal(array_ops.expand_dims(ids, -1), array_ops.expand_dims(ids, -2))
    return math_ops.logical_not(math_ops.reduce_any(math_ops.logical_and(same, earlier), axis=-1))


def _set_sizes(labels, predictions_idx, class_id):
    """Per row: |P ∩ L|, |P \\ L|, |L \\ P| of the sets of predicted ids P and label ids L
    (both restricted to {class_id} when given), as booleans to count."""
    if labels.dtype.base_dtype != predictions_idx.dtype.base_dtype:
        raise TypeError(f"Types don't match, <dtype: '{predictions_idx.dtype.base_dtype.name}'> vs "
                        f"<dtype: '{labels.dtype.base_dtype.name}'>.")
    if class_id is not None:
        in_pred = math_ops.reduce_any(math_ops.equal(predictions_idx, class_id), axis=-1)
        in_labels = math_ops.reduce_any(math_ops.equal(labels, class_id), axis=-1)
        return (math_ops.logical_and(in_pred, in_labels),
                math_ops.logical_and(in_pred, math_ops.logical_not(in_labels)),
                math_ops.logical_and(in_labels, math_ops.logical_not(in_pred)))
    same = math_ops.equal(array_ops.expand_dims(predictions_idx, -1), array_ops.expand_dims(labels, -2))
    pred_in_labels = math_ops.reduce_any(same, axis=-1)
    label_in_pred = math_ops.reduce_any(same, axis=-2)
    pred_first, label_first = _first_occurrences(predictions_idx), _first_occurrences(labels)
    return (math_ops.logical_and(pred_first, pred_in_labels),
            math_ops.logical_and(pred_first, math_ops.logical_not(pred_in_labels)),
            math_ops.logical_and(label_first, math_ops.logical_not(label_in_pred)))


def _count(members, weights):
    """The set sizes as float64, times the weights of their rows."""
    count = math_ops.cast(math_ops.reduce_sum(math_ops.cast(members, dtypes.int32), axis=-1), dtypes.float64)
    if weights is None:
        return count
    with get_default_graph().control_dependencies([assert_broadcastable(weights, count)]):
        return math_ops.multiply(count, math_ops.cast(weights, dtypes.float64))


def _streaming_count(kind, members, k, class_id, weights):
    """A float64 variable `<kind>_at_<k>` summing the weighted set sizes, and its update."""
    with get_default_graph().name_scope(_at_k_name(kind, k, class_id=class_id)) as scope:
        batch_total = math_ops.reduce_sum(_count(members, weights))
        var = metric_variable([], dtypes.float64, name=scope)
        return var, var.assign_add(batch_total, name="update")


def _ratio_at_top_k(default_name, other_kind, pick_other, labels, predictions_idx, k, class_id, weights,
                    metrics_collections, updates_collections, name):
    g = _graph_of(predictions_idx, labels, weights)
    with g.as_default(), g.name_scope(name or _at_k_name(default_name, k, class_id=class_id)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _maybe_expand_labels(labels, predictions_idx)
        top_k_idx = math_ops.cast(predictions_idx, dtypes.int64)
        sizes = _set_sizes(labels, top_k_idx, class_id)
        tp, tp_update = _streaming_count("true_positive", sizes[0], k, class_id, weights)
        other, other_update = _streaming_count(other_kind, pick_other(sizes), k, class_id, weights)
        value = math_ops.divide(tp, math_ops.add(tp, other), name=scope)
        add_to_collections(metrics_collections, value)
        update = math_ops.divide(tp_update, math_ops.add(tp_update, other_update), name="update")
        add_to_collections(updates_collections, update)
        return value, update


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """tp / (tp + fp) of the predicted ids `predictions_idx` ([..., k] int) against `labels`:
    float64 (value, update_op), NaN while nothing is predicted."""
    return _ratio_at_top_k("precision", "false_positive", lambda s: s[1], labels, predictions_idx, k, class_id,
                           weights, metrics_collections, updates_collections, name)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """tp / (tp + fn) of the predicted ids `predictions_idx` against `labels`: float64."""
    return _ratio_at_top_k("recall", "false_negative", lambda s: s[2], labels, predictions_idx, k, class_id,
                           weights, metrics_collections, updates_collections, name)


def _at_k(default_name, at_top_k):
    def metric(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        g = _graph_of(predictions, labels, weights)
        with g.as_default(), g.name_scope(name or _at_k_name(default_name, k, class_id=class_id)) as scope:
            _, top_k_idx = nn_ops.top_k(predictions, k)
            return at_top_k(labels=labels, predictions_idx=top_k_idx, k=k, class_id=class_id, weights=weights,
                            metrics_collections=metrics_collections, updates_collections=updates_collections,
                            name=scope)
    metric.__name__ = f"{default_name}_at_k"
    metric.__doc__ = f"{at_top_k.__name__} of the ids of the k largest `predictions` ([..., num_classes])."
    return metric


precision_at_k = _at_k("precision", precision_at_top_k)
recall_at_k = _at_k("recall", recall_at_top_k)
sparse_precision_at_k = precision_at_k


def _average_precision(labels, predictions_idx):
    """Per row, the mean over the k predictions of the precision at each relevant one,
    normalized by min(number of labels >= 0, k): float64."""
    g = get_default_graph()
    with g.name_scope("average_precision") as scope:
        predictions_idx = math_ops.cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, it is None.")
        labels = _maybe_expand_labels(labels, predictions_idx)
        same = math_ops.equal(array_ops.expand_dims(predictions_idx, -1), array_ops.expand_dims(labels, -2))
        relevant_per_k = math_ops.cast(math_ops.reduce_any(same, axis=-1), dtypes.float64, name="relevant_per_k")
        tp_per_k = math_ops.cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = math_ops.cumsum(array_ops.ones_like(relevant_per_k), axis=-1, name="retrieved_per_k")
        precision_per_k = math_ops.divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        relevant_precision_per_k = math_ops.multiply(precision_per_k, relevant_per_k,
                                                     name="relevant_precision_per_k")
        precision_sum = math_ops.reduce_sum(relevant_precision_per_k, axis=(-1,), name="precision_sum")
        with g.name_scope("num_relevant") as relevant_scope:
            num_labels = math_ops.reduce_sum(
                math_ops.where_v2(math_ops.greater_equal(labels, 0), array_ops.ones_like(labels),
                                  array_ops.zeros_like(labels)), axis=-1)
            num_relevant = math_ops.minimum(num_labels, math_ops.cast(k, num_labels.dtype), name=relevant_scope)
        return math_ops.divide(precision_sum, math_ops.cast(num_relevant, dtypes.float64), name=scope)


def _clean_out_of_range_indices(labels, num_classes):
    """Labels >= num_classes become -1, so they count as neither relevant nor predicted."""
    labels = convert_to_tensor(labels)
    return control_flow_ops.cond(
        math_ops.greater_equal(math_ops.reduce_max(labels), math_ops.cast(num_classes, labels.dtype)),
        lambda: math_ops.where_v2(math_ops.greater_equal(labels, math_ops.cast(num_classes, labels.dtype)),
                                  -1 * array_ops.ones_like(labels), labels),
        lambda: labels)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The mean (weighted) average precision at k of the k largest `predictions` against
    the class ids `labels`: float64 (value, update_op)."""
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    g = _graph_of(predictions, labels, weights)
    with g.as_default(), g.name_scope(name or _at_k_name("average_precision", k)) as scope:
        _, predictions_idx = nn_ops.top_k(predictions, k)
        labels = _clean_out_of_range_indices(labels, math_ops.cast(array_ops.shape(predictions)[-1],
                                                                   dtypes.int64))
        average_precision = _average_precision(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float64), average_precision)
            average_precision = math_ops.multiply(average_precision, weights)
        with g.name_scope("max") as max_scope:
            max_var = metric_variable([], dtypes.float64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(average_precision, name="batch_max"), dtypes.float64)
            else:
                batch_max = math_ops.reduce_sum(weights, name="batch_max")
            max_update = max_var.assign_add(batch_max, name="update")
        with g.name_scope("total") as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
            batch_total = math_ops.reduce_sum(average_precision, name="batch_total")
            total_update = total_var.assign_add(batch_total, name="update")
        value = div_no_nan(total_var, max_var, name="mean")
        add_to_collections(metrics_collections, value)
        update = div_no_nan(total_update, max_update, name=scope)
        add_to_collections(updates_collections, update)
        return value, update


sparse_average_precision_at_k = average_precision_at_k

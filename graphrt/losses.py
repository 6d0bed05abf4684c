"""`tf.losses` (TF1's losses_impl): per-element losses reduced by
`compute_weighted_loss` and added to the LOSSES collection.

The default reduction is SUM_BY_NONZERO_WEIGHTS: the weighted sum divided by
the number of elements whose (broadcast) weight is non-zero, as a div_no_nan
named `value` (so `tf.losses.mean_squared_error(y, p)` is
`mean_squared_error/value:0`). Weights must have rank 0 or the rank of the
losses, each dimension 1 or equal to the losses' ("weights can not be
broadcast to values." otherwise). Inputs are computed in float32 and the
loss is cast back to the losses' dtype.
"""
from .framework import dtypes
from .framework.constant_value import constant_value
from .framework.graph import GraphKeys, get_default_graph, graph_of
from .framework.op_builder import constant, convert_to_tensor, is_tensor_like
from .ops import array_ops, control_flow_ops, control_ops, math_ops, nn_ops
from .ops.extra_ops import assert_op, div_no_nan

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "cosine_distance", "hinge_loss",
           "huber_loss", "log_loss", "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy", "add_loss", "get_losses", "get_regularization_loss",
           "get_regularization_losses", "get_total_loss", "mean_pairwise_squared_error"]


class Reduction:
    """Types of loss reduction."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


_ASSERT_BROADCASTABLE_ERROR_PREFIX = "weights can not be broadcast to values."


def _scope(scope, default, values):
    """TF's `name_scope(scope, default, values)`: the graph of `values`, made default."""
    g = graph_of([v for v in values if is_tensor_like(v)])
    return g, g.name_scope(scope or default)


def _tensor_str(t):
    """A graph tensor as TF prints it: Tensor("name:0", shape=(4, 3), dtype=float32)."""
    return f'Tensor("{t.name}", shape={t.shape}, dtype={t.dtype.base_dtype.name})'


# -- weights broadcasting (TF's weights_broadcast_ops) ------------------------------------------

def assert_broadcastable(weights, values):
    """An op asserting `weights` can be broadcast to `values`: a no-op when the static
    shapes settle it, a ValueError when they rule it out, else a run-time Assert."""
    g = get_default_graph()
    with g.name_scope("assert_broadcastable"):
        with g.name_scope("weights") as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        weights_rank_static = constant_value(weights_rank)
        with g.name_scope("values") as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        values_rank_static = constant_value(values_rank)
        if weights_rank_static is not None and values_rank_static is not None:
            if weights_rank_static == 0:
                return control_ops.no_op(name="static_scalar_check_success")
            if weights_rank_static != values_rank_static:
                raise ValueError(f"{_ASSERT_BROADCASTABLE_ERROR_PREFIX} values.rank={int(values_rank_static)}. "
                                 f"weights.rank={int(weights_rank_static)}. values.shape={values.shape}. "
                                 f"weights.shape={weights.shape}. Received weights={_tensor_str(weights)}, "
                                 f"values={_tensor_str(values)}")
            weights_shape_static = constant_value(weights_shape)
            values_shape_static = constant_value(values_shape)
            if weights_shape_static is not None and values_shape_static is not None:
                for i in range(len(values_shape_static)):
                    if weights_shape_static[i] not in (1, values_shape_static[i]):
                        raise ValueError(f"{_ASSERT_BROADCASTABLE_ERROR_PREFIX} Mismatch at dim {i}. "
                                         f"values.shape={values_shape_static}, "
                                         f"weights.shape={weights_shape_static}. Received "
                                         f"weights={_tensor_str(weights)}, values={_tensor_str(values)}")
                return control_ops.no_op(name="static_dims_check_success")
        is_scalar = math_ops.equal(0, weights_rank, name="is_scalar")
        data = [_ASSERT_BROADCASTABLE_ERROR_PREFIX, "weights.shape=", weights.name, weights_shape,
                "values.shape=", values.name, values_shape, "is_scalar=", is_scalar]

        def valid_dims():
            ok = math_ops.logical_or(math_ops.equal(weights_shape, 1), math_ops.equal(weights_shape, values_shape))
            return math_ops.reduce_all(ok)

        if weights_rank_static is not None and values_rank_static is not None:
            is_valid_shape = valid_dims()
        else:
            def nonscalar():
                same_rank = math_ops.equal(values_rank, weights_rank, name="is_same_rank")
                return control_flow_ops.cond(same_rank, valid_dims, lambda: same_rank)
            is_valid_shape = control_flow_ops.cond(is_scalar, lambda: is_scalar, nonscalar, name="is_valid_shape")
        return assert_op(is_valid_shape, data)


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (after checking it can be)."""
    g = get_default_graph()
    with g.name_scope("broadcast_weights") as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        ws, vs = weights.shape, values.shape
        if ws.is_fully_defined() and vs.is_fully_defined() and ws.is_compatible_with(vs):
            return weights
        with g.control_dependencies([assert_broadcastable(weights, values)]):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


# -- reduction ------------------------------------------------------------------------------------

def _safe_mean(losses, num_present):
    total_loss = math_ops.reduce_sum(losses)
    return div_no_nan(total_loss, num_present, name="value")


def _num_present(losses, weights, per_batch=False):
    g = get_default_graph()
    with g.name_scope("num_present") as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        present = math_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                 array_ops.ones_like(weights))
        present = broadcast_weights(present, losses)
        if per_batch:
            return math_ops.reduce_sum(present, axis=math_ops.range(1, array_ops.rank(present)), keepdims=True,
                                       name=scope)
        return math_ops.reduce_sum(present, name=scope)


def _num_elements(losses):
    g = get_default_graph()
    with g.name_scope("num_elements") as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds an externally defined loss to the collection of losses."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The weighted `losses` reduced by `reduction` (see the module doc), added to
    `loss_collection`."""
    Reduction.validate(reduction)
    g, ns = _scope(scope, "weighted_loss", (losses, weights))
    with g.as_default(), ns:
        with g.control_dependencies([assert_broadcastable(weights, losses)]):
            losses = convert_to_tensor(losses)
            input_dtype = losses.dtype.base_dtype
            losses = math_ops.cast(losses, dtypes.float32)
            weights = math_ops.cast(weights, dtypes.float32)
            weighted_losses = math_ops.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted_losses
            else:
                loss = math_ops.reduce_sum(weighted_losses)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            add_loss(loss, loss_collection)
            return loss


def _check_not_none(**kwargs):
    for k, v in kwargs.items():
        if v is None:
            raise ValueError(f"Argument `{k}` must not be None.")


def _float_pair(predictions, labels):
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


# -- losses -----------------------------------------------------------------------------------------

def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|."""
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "absolute_difference", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels) ** 2. Shapes must match: a [batch, 1] prediction against
    [batch] labels is a ValueError, as in TF."""
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "mean_squared_error", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 * x^2 for |x| <= delta, 0.5 * delta^2 + delta * (|x| - delta) beyond."""
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "huber_loss", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        predictions, labels = _float_pair(predictions, labels)
        error = math_ops.subtract(predictions, labels)
        abs_error = math_ops.abs(error)
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype.base_dtype),
                              math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)."""
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "log_loss", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - math_ops.multiply(
            (1 - labels), math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """relu(1 - (2 * labels - 1) * logits), labels in {0, 1}."""
    _check_not_none(labels=labels, logits=logits)
    g, ns = _scope(scope, "hinge_loss", (logits, labels, weights))
    with g.as_default(), ns as scope:
        logits, labels = _float_pair(logits, labels)
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) (inputs assumed unit-normalized)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "cosine_distance_loss", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        predictions, labels = _float_pair(predictions, labels)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = 1 - math_ops.reduce_sum(radial_diffs, axis=[axis], keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sigmoid_cross_entropy_with_logits; labels smoothed toward 1/2 by label_smoothing."""
    _check_not_none(multi_class_labels=multi_class_labels, logits=logits)
    g, ns = _scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights))
    with g.as_default(), ns as scope:
        logits = convert_to_tensor(logits)
        multi_class_labels = math_ops.cast(multi_class_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(multi_class_labels.shape)
        if label_smoothing > 0:
            multi_class_labels = multi_class_labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """softmax cross-entropy per example; labels smoothed as
    onehot * (1 - label_smoothing) + label_smoothing / num_classes; no gradient into labels."""
    _check_not_none(onehot_labels=onehot_labels, logits=logits)
    g, ns = _scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights))
    with g.as_default(), ns as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = math_ops.cast(onehot_labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype.base_dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0):
    """TF's confusion_matrix.remove_squeezable_dimensions: squeezes the last dimension of
    the larger-ranked of the two when their ranks differ from the expected by one."""
    g = get_default_graph()
    with g.name_scope("remove_squeezable_dimensions"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        if p_shape.ndims is not None and l_shape.ndims is not None:
            rank_diff = p_shape.ndims - l_shape.ndims
            if rank_diff == expected_rank_diff + 1 and p_shape.dim(-1).is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif rank_diff == expected_rank_diff - 1 and l_shape.dim(-1).is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
        if p_shape.ndims is None or p_shape.dim(-1).is_compatible_with(1):
            p = predictions
            predictions = control_flow_ops.cond(math_ops.equal(expected_rank_diff + 1, rank_diff),
                                                lambda: array_ops.squeeze(p, [-1]), lambda: p)
        if l_shape.ndims is None or l_shape.dim(-1).is_compatible_with(1):
            lab = labels
            labels = control_flow_ops.cond(math_ops.equal(expected_rank_diff - 1, rank_diff),
                                           lambda: array_ops.squeeze(lab, [-1]), lambda: lab)
        return labels, predictions


def _remove_squeezable_dimensions(labels, predictions, weights=None, expected_rank_diff=0):
    labels, predictions = remove_squeezable_dimensions(labels, predictions, expected_rank_diff)
    if weights is not None:
        weights = convert_to_tensor(weights)
        labels_rank, weights_rank = labels.shape.ndims, weights.shape.ndims
        if labels_rank is not None and weights_rank is not None and weights_rank - labels_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
    return labels, predictions, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against integer class labels ([batch] or [batch, 1])."""
    _check_not_none(labels=labels, logits=logits)
    g, ns = _scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights))
    with g.as_default(), ns as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, expected_rank_diff=1)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES):
    """For each example, the mean over pairs (i, j) of ((p_i - p_j) - (l_i - l_j)) ** 2, weighted and
    averaged over the examples with non-zero weight."""
    _check_not_none(labels=labels, predictions=predictions)
    g, ns = _scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights))
    with g.as_default(), ns as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        labels = math_ops.cast(labels, dtypes.float32)
        with g.control_dependencies([assert_broadcastable(weights, labels)]):
            predictions, labels = _float_pair(predictions, labels)
            diffs = math_ops.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * div_no_nan(sum_squares_diff_per_batch, math_ops.maximum(num_present_per_batch - 1, 0),
                                     name="value")
            sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * div_no_nan(math_ops.square(sum_diff),
                                     math_ops.maximum(math_ops.multiply(num_present_per_batch,
                                                                        num_present_per_batch - 1), 0),
                                     name="value")
            weighted_losses = math_ops.multiply(term1 - term2, weights)
            loss = math_ops.reduce_sum(weighted_losses)
            mean_loss = math_ops.where(math_ops.reduce_sum(num_present_per_batch) > 0, loss,
                                       array_ops.zeros_like(loss), name="value")
            add_loss(mean_loss, loss_collection)
            return mean_loss


# -- collections ---------------------------------------------------------------------------------------

def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses in `loss_collection` (optionally filtered by `scope`)."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The regularization losses (optionally filtered by `scope`)."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a 0.0 constant when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the losses (and regularization losses); ValueError when there are none."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses were found in the LOSSES or REGULARIZATION_LOSSES collections.")
    return math_ops.add_n(losses, name=name)


"""What every streaming metric shares: its local variables, its scope, its collections,
and the shape fixes TF applies to (predictions, labels, weights) before comparing them."""
from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, control_flow_ops, math_ops
from ..ops.variable_scope import variable_scope
from ..ops.variables import Variable
from ..losses import remove_squeezable_dimensions


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A non-trainable variable of zeros in LOCAL_VARIABLES and METRIC_VARIABLES, so
    `tf.local_variables_initializer()` resets the metric."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def metric_scope(name, default_name, values):
    """TF's `variable_scope(name, default_name, values)` around a metric's ops."""
    return variable_scope(name, default_name, [v for v in values if v is not None])


def add_to_collections(collections, value):
    if collections:
        get_default_graph().add_to_collections(collections, value)


def squeeze_or_expand(predictions, labels, weights):
    """TF's metrics `_remove_squeezable_dimensions`: labels and predictions to one rank,
    then weights squeezed or expanded by one dimension to the rank of predictions
    (scalar weights stay scalar)."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    weights_rank = weights.shape.ndims
    if weights_rank == 0:
        return predictions, labels, weights
    predictions_rank = predictions.shape.ndims
    if predictions_rank is not None and weights_rank is not None:
        if weights_rank - predictions_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif predictions_rank - weights_rank == 1:
            weights = array_ops.expand_dims(weights, [-1])
        return predictions, labels, weights
    weights_rank_tensor = array_ops.rank(weights)
    rank_diff = weights_rank_tensor - array_ops.rank(predictions)
    w = weights

    def maybe_expand():
        return control_flow_ops.cond(math_ops.equal(rank_diff, -1), lambda: array_ops.expand_dims(w, [-1]),
                                     lambda: w)

    if weights_rank is not None and not weights.shape.dim(-1).is_compatible_with(1):
        maybe_squeeze = lambda: w  # noqa: E731 - a last dimension other than 1 cannot be squeezed
    else:
        maybe_squeeze = lambda: array_ops.squeeze(w, [-1])  # noqa: E731

    def maybe_adjust():
        return control_flow_ops.cond(math_ops.equal(rank_diff, 1), maybe_squeeze, maybe_expand)

    weights = control_flow_ops.cond(math_ops.equal(weights_rank_tensor, 0), lambda: w, maybe_adjust)
    return predictions, labels, weights


def as_float32(x):
    return math_ops.cast(x, dtypes.float32)

"""Metrics over probabilities compared with a list of thresholds: the streaming confusion
counts per threshold (one [num_thresholds] float32 variable per kind), the
`*_at_thresholds` metrics, `auc`, `sensitivity_at_specificity` and
`specificity_at_sensitivity`."""
from .. import logging
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..ops import array_ops, math_ops
from ..ops.extra_ops import assert_greater_equal, assert_less_equal, div_no_nan
from ..losses import broadcast_weights
from .state import add_to_collections, as_float32, metric_scope, metric_variable, squeeze_or_expand

_KINDS = ("tp", "fn", "tn", "fp")
_VARIABLE_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                   "fp": "false_positives"}


def confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None, includes=None):
    """({kind: variable}, {kind: update}) for kinds in `includes` (tp, fn, tn, fp): per
    threshold t, the weighted count of examples with `prediction > t` and each label."""
    if includes is None:
        includes = _KINDS
    for include in includes:
        if include not in _KINDS:
            raise ValueError(f"Invalid key: {include}")
    g = get_default_graph()
    predictions = convert_to_tensor(predictions)
    checks = [assert_greater_equal(predictions, math_ops.cast(0.0, predictions.dtype),
                                   message="predictions must be in [0, 1]"),
              assert_less_equal(predictions, math_ops.cast(1.0, predictions.dtype),
                                message="predictions must be in [0, 1]")]
    with g.control_dependencies(checks):
        predictions, labels, weights = squeeze_or_expand(as_float32(predictions),
                                                         math_ops.cast(labels, dtypes.bool), weights)
    num_thresholds = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(math_ops.cast(labels, dtypes.bool), [1, -1])
    num_predictions = predictions_2d.shape.as_list()[0]
    if num_predictions is None:
        num_predictions = array_ops.shape(predictions_2d)[0]
    thresh_tiled = array_ops.tile(array_ops.expand_dims(array_ops.constant(thresholds, dtypes.float32), [1]),
                                  array_ops.stack([1, num_predictions]))
    pred_is_pos = math_ops.greater(array_ops.tile(array_ops.transpose(predictions_2d), [num_thresholds, 1]),
                                   thresh_tiled)
    label_is_pos = array_ops.tile(labels_2d, [num_thresholds, 1])
    conditions = {"tp": lambda: math_ops.logical_and(label_is_pos, pred_is_pos),
                  "fn": lambda: math_ops.logical_and(label_is_pos, math_ops.logical_not(pred_is_pos)),
                  "tn": lambda: math_ops.logical_and(math_ops.logical_not(label_is_pos),
                                                     math_ops.logical_not(pred_is_pos)),
                  "fp": lambda: math_ops.logical_and(math_ops.logical_not(label_is_pos), pred_is_pos)}
    weights_tiled = None
    if weights is not None:
        weights = broadcast_weights(as_float32(weights), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [num_thresholds, 1])
        thresh_tiled.shape.assert_is_compatible_with(weights_tiled.shape)
    values, update_ops = {}, {}
    for kind in _KINDS:  # TF's order, so the variables are created (and named) as TF's are
        if kind not in includes:
            continue
        var = metric_variable([num_thresholds], dtypes.float32, name=_VARIABLE_NAMES[kind])
        is_kind = as_float32(conditions[kind]())
        if weights_tiled is not None:
            is_kind *= weights_tiled
        update_ops[kind] = var.assign_add(math_ops.reduce_sum(is_kind, 1))
        values[kind] = var
    return values, update_ops


def _at_thresholds(default_name, kind):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        with metric_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=weights,
                                                                includes=(kind,))
            value = array_ops.identity(values[kind])
            add_to_collections(metrics_collections, value)
            add_to_collections(updates_collections, update_ops[kind])
            return value, update_ops[kind]
    metric.__name__ = f"{default_name}_at_thresholds"
    metric.__doc__ = f"The weighted {default_name.replace('_', ' ')} at each threshold: [len(thresholds)] float32."
    return metric


true_positives_at_thresholds = _at_thresholds("true_positives", "tp")
false_positives_at_thresholds = _at_thresholds("false_positives", "fp")
true_negatives_at_thresholds = _at_thresholds("true_negatives", "tn")
false_negatives_at_thresholds = _at_thresholds("false_negatives", "fn")


def _ratio_at_thresholds(default_name, other, prefix):
    """tp / (1e-7 + tp + other) per threshold."""
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        with metric_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                                                includes=("tp", other))

            def compute(tp, o, name):
                return math_ops.divide(tp, 1e-7 + tp + o, name=f"{prefix}_{name}")

            value = compute(values["tp"], values[other], "value")
            add_to_collections(metrics_collections, value)
            update_op = compute(update_ops["tp"], update_ops[other], "update_op")
            add_to_collections(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default_name
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp", "precision")
precision_at_thresholds.__doc__ = "tp / (tp + fp) at each threshold (1e-7 added to the denominator)."
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn", "recall")
recall_at_thresholds.__doc__ = "tp / (tp + fn) at each threshold (1e-7 added to the denominator)."


def _curve_thresholds(num_thresholds, last):
    """TF's evenly spaced thresholds, with -1e-7 first and `last` (just past or below 1) last."""
    kepsilon = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - kepsilon] + inner + [last]


def _interpolate_pr_auc(tp, fp, fn, num_thresholds):
    """The PR AUC by Davis & Goadrich's interpolation between thresholds (TF's
    'careful_interpolation'): precision is linear in the number of positives predicted."""
    dtp = tp[:num_thresholds - 1] - tp[1:]
    p = tp + fp
    prec_slope = div_no_nan(dtp, math_ops.maximum(p[:num_thresholds - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
    safe_p_ratio = math_ops.where(math_ops.logical_and(p[:num_thresholds - 1] > 0, p[1:] > 0),
                                  div_no_nan(p[:num_thresholds - 1], math_ops.maximum(p[1:], 0),
                                             name="recall_relative_ratio"),
                                  array_ops.ones_like(p[1:]))
    return math_ops.reduce_sum(div_no_nan(prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
                                          math_ops.maximum(tp[1:] + fn[1:], 0), name="pr_auc_increment"),
                               name="interpolate_pr_auc")


_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC or PR curve, a Riemann sum over `num_thresholds` thresholds
    (or the sorted `thresholds` given, with -1e-7 and 1+1e-7 added)."""
    with metric_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
            thresholds = [0.0 - 1e-7] + thresholds + [1.0 + 1e-7]
        else:
            thresholds = _curve_thresholds(num_thresholds, 1.0 + 1e-7)
        values, update_ops = confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        epsilon = 1e-6

        def compute_auc(tp, fn, tn, fp, name):
            if curve == "PR":
                if summation_method == "trapezoidal":
                    logging.warning('Trapezoidal rule is known to produce incorrect PR-AUCs; please switch to '
                                 '"careful_interpolation" instead.')
                elif summation_method == "careful_interpolation":
                    return _interpolate_pr_auc(tp, fp, fn, num_thresholds)
            rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, math_ops.divide(tp + epsilon, tp + fp + epsilon)
            dx = x[:num_thresholds - 1] - x[1:]
            if summation_method in ("trapezoidal", "careful_interpolation"):
                heights = (y[:num_thresholds - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                heights = math_ops.minimum(y[:num_thresholds - 1], y[1:])
            elif summation_method == "majoring":
                heights = math_ops.maximum(y[:num_thresholds - 1], y[1:])
            else:
                raise ValueError(f"Invalid summation_method: {summation_method} summation_method should be "
                                 "'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring'.")
            return math_ops.reduce_sum(math_ops.multiply(dx, heights), name=name)

        value = compute_auc(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        add_to_collections(metrics_collections, value)
        update_op = compute_auc(update_ops["tp"], update_ops["fn"], update_ops["tn"], update_ops["fp"], "update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op


def sensitivity_at_specificity(labels, predictions, specificity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The recall at the threshold whose specificity is nearest `specificity` (the first such)."""
    if specificity < 0 or specificity > 1:
        raise ValueError(f"`specificity` must be in the range [0, 1]. Currently, `specificity` got {specificity}.")
    with metric_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        kepsilon = 1e-7
        thresholds = _curve_thresholds(num_thresholds, 1.0 + kepsilon)
        values, update_ops = confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)

        def compute(tp, tn, fp, fn, name):
            specificities = math_ops.divide(tn, tn + fp + kepsilon)
            index = math_ops.cast(math_ops.argmin(math_ops.abs(specificities - specificity), 0), dtypes.int32)
            return math_ops.divide(tp[index], tp[index] + fn[index] + kepsilon, name)

        return _value_and_update(compute, values, update_ops, metrics_collections, updates_collections)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is nearest `sensitivity` (the last such)."""
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError(f"`sensitivity` must be in the range [0, 1]. Currently, `sensitivity` is {sensitivity}.")
    with metric_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        kepsilon = 1e-7
        thresholds = _curve_thresholds(num_thresholds, 1.0 - kepsilon)
        values, update_ops = confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)

        def compute(tp, tn, fp, fn, name):
            sensitivities = math_ops.divide(tp, tp + fn + kepsilon)
            distance = math_ops.abs(sensitivities - sensitivity)
            at_min = math_ops.cast(math_ops.equal(distance, math_ops.reduce_min(distance)), dtypes.int64)
            # argmax of the running count of minima: the last threshold at the minimum distance
            index = math_ops.cast(math_ops.argmax(math_ops.cumsum(at_min), 0), dtypes.int32)
            return math_ops.divide(tn[index], tn[index] + fp[index] + kepsilon, name)

        return _value_and_update(compute, values, update_ops, metrics_collections, updates_collections)


def _value_and_update(compute, values, update_ops, metrics_collections, updates_collections):
    value = compute(values["tp"], values["tn"], values["fp"], values["fn"], "value")
    add_to_collections(metrics_collections, value)
    update_op = compute(update_ops["tp"], update_ops["tn"], update_ops["fp"], update_ops["fn"], "update_op")
    add_to_collections(updates_collections, update_op)
    return value, update_op

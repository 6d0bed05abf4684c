"""nce_loss and sampled_softmax_loss (TF1's nn_impl): a loss over the true
class and `num_sampled` sampled classes instead of all `num_classes`, for
large vocabularies (word2vec). Both build the logits of the true and the
sampled classes from the looked-up rows of `weights` (an IndexedSlices
gradient, so only those rows are updated) and subtract log Q, the log of
each class's expected count in the sample."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..embedding import embedding_lookup
from ..ops import array_ops, math_ops, nn_ops
from ..ops.extra_ops import scatter_nd
from .ops import compute_accidental_hits, log_uniform_candidate_sampler


def _sum_rows(x):
    """The sum of each row, as a matmul with ones (as TF does: its gradient is cheap)."""
    ones = array_ops.ones(array_ops.stack([array_ops.shape(x)[1], 1]), x.dtype.base_dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                            sampled_values=None, subtract_log_q=True, remove_accidental_hits=False, seed=None,
                            name=None):
    """(logits [batch, num_true + num_sampled], labels of the same shape: 1/num_true for the true classes)."""
    if isinstance(weights, (list, tuple)):
        if len(weights) != 1:
            raise NotImplementedError("graphrt's sampled losses take one weights tensor, not shards")
        weights = weights[0]
    with get_default_graph().name_scope(name or "compute_sampled_logits"):
        labels = convert_to_tensor(labels)
        if labels.dtype.base_dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        inputs = convert_to_tensor(inputs)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (array_ops.stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids)
        n_true = array_ops.shape(labels_flat)[0]
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids)
        true_b = array_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = array_ops.slice(all_b, array_ops.shape(labels_flat), [-1])
        dim = array_ops.shape(true_w)[1:2]
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1),
                                          array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0)))
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_logits += array_ops.reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            sparse_indices = array_ops.concat([array_ops.reshape(acc_indices, [-1, 1]),
                                               array_ops.reshape(math_ops.cast(acc_ids, dtypes.int32), [-1, 1])], 1)
            shape = array_ops.concat([array_ops.shape(labels)[:1], [num_sampled]], 0)
            sampled_logits += scatter_nd(sparse_indices, math_ops.cast(acc_weights, sampled_logits.dtype.base_dtype),
                                         shape)
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected_count)
            sampled_logits -= math_ops.log(sampled_expected_count)
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                       array_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation: per example, a logistic loss of the true class
    against `num_sampled` classes from the sampler. Returns one loss per example."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
                                             remove_accidental_hits=remove_accidental_hits, name=name)
    sampled_losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, partition_strategy="mod",
                         name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true class and `num_sampled` sampled classes
    (accidental hits of the true class among them removed). One loss per example."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
                                             remove_accidental_hits=remove_accidental_hits, seed=seed, name=name)
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)

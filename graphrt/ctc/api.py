"""The TF1 API of CTC and edit distance (TF's ctc_ops.py and
array_ops.edit_distance): the ops wrapped as TF wraps them, and TF's
compositions (`collapse_repeated`, `ctc_unique_labels`, the blank moves of
`ctc_loss_v2`)."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..functional import map_fn
from ..ops import array_ops, extra_ops, math_ops
from ..sparse.sparse_tensor import SparseTensor, SparseTensorValue
from . import ops as _ops  # noqa: F401 - declares the ops


def _get_dim(tensor, i):
    """The static size of dim i if known (and not 0, as TF's), else its runtime size."""
    return tensor.shape.as_list()[i] if tensor.shape.ndims is not None and tensor.shape.as_list()[i] else \
        array_ops.shape(tensor)[i]


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False, ctc_merge_repeated=True,
             ignore_longer_outputs_than_inputs=False, time_major=True, logits=None):
    """TF1's CTC loss: the negative log probability of `labels` (an int32 SparseTensor) per
    batch item, given time-major logits whose last class is the blank."""
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected argument `labels` to be a SparseTensor. "
                        f"Received labels={labels} of type: {type(labels).__name__}")
    if logits is not None and inputs is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = convert_to_tensor(inputs if inputs is not None else logits, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    orig_dtype = inputs.dtype
    if orig_dtype == dtypes.float16:
        inputs = math_ops.cast(inputs, dtypes.float32)
    loss = apply_op("CTCLoss", [inputs, labels.indices, labels.values, sequence_length], name="CTCLoss",
                    preprocess_collapse_repeated=preprocess_collapse_repeated,
                    ctc_merge_repeated=ctc_merge_repeated,
                    ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs).outputs[0]
    if orig_dtype == dtypes.float16:
        loss = math_ops.cast(loss, orig_dtype)
    return loss


def _move_blank_last(logits, labels, blank_index):
    logits = array_ops.concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                               logits[:, :, blank_index:blank_index + 1]], axis=2)
    values = math_ops.where_v2(labels.values < blank_index, labels.values, labels.values - 1)
    return logits, SparseTensor(labels.indices, values, labels.dense_shape)


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
                name=None):
    """TF's ctc_loss_v2: sparse labels go to CTCLoss (the blank moved last); dense, padded
    labels with `label_length` to TF's dense forward-backward (blank 0 by default)."""
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when labels is a SparseTensor.")
        logits = convert_to_tensor(logits, name="logits")
        if blank_index < 0:
            blank_index += _get_dim(logits, 2)
        if blank_index != _get_dim(logits, 2) - 1:
            logits, labels = _move_blank_last(logits, labels, blank_index)
        return ctc_loss(labels=labels, inputs=logits, sequence_length=logit_length, time_major=logits_time_major)
    return ctc_loss_dense(labels, logits, label_length, logit_length, logits_time_major, unique,
                          0 if blank_index is None else blank_index, name)


def ctc_loss_dense(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=0,
                   name=None):
    """CTC loss on dense labels (TF's ctc_loss_dense); `unique` only speeds up TF on TPUs, and
    gives the same loss, so it is accepted and not needed."""
    del unique
    with get_default_graph().name_scope(name or "ctc_loss_dense"):
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        label_length = convert_to_tensor(label_length, name="label_length")
        logit_length = convert_to_tensor(logit_length, name="logit_length")
        orig_dtype = logits.dtype
        if orig_dtype == dtypes.float16:
            logits = math_ops.cast(logits, dtypes.float32)
        if not logits_time_major:
            logits = array_ops.transpose(logits, perm=[1, 0, 2])
        if blank_index != 0:
            if blank_index < 0:
                blank_index += _get_dim(logits, 2)
            logits = array_ops.concat([logits[:, :, blank_index:blank_index + 1], logits[:, :, :blank_index],
                                       logits[:, :, blank_index + 1:]], axis=2)
            labels = math_ops.where_v2(labels < blank_index, labels + 1, labels)
        loss = apply_op("CTCLossDense", [logits, labels, label_length, logit_length], name="CTCLossDense").outputs[0]
        if orig_dtype == dtypes.float16:
            loss = math_ops.cast(loss, orig_dtype)
        return loss


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Best-path decoding: ([decoded SparseTensor], neg_sum_logits [batch, 1])."""
    attrs = {"merge_repeated": merge_repeated}
    if blank_index is not None:
        attrs["blank_index"] = blank_index
    ix, val, shape, log_prob = apply_op("CTCGreedyDecoder", [inputs, sequence_length], name="CTCGreedyDecoder",
                                        **attrs).outputs
    return [SparseTensor(ix, val, shape)], log_prob


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1, merge_repeated=True):
    """TF's beam search: ([top_paths decoded SparseTensors], log probabilities [batch, top_paths])."""
    outs = apply_op("CTCBeamSearchDecoder", [inputs, sequence_length], name="CTCBeamSearchDecoder",
                    beam_width=beam_width, top_paths=top_paths, merge_repeated=merge_repeated).outputs
    k = top_paths
    return ([SparseTensor(ix, val, shape) for ix, val, shape in zip(outs[:k], outs[k:2 * k], outs[2 * k:3 * k])],
            outs[3 * k])


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """The beam search without merging repeats (TF 2's tf.nn.ctc_beam_search_decoder)."""
    return ctc_beam_search_decoder(inputs, sequence_length=sequence_length, beam_width=beam_width,
                                   top_paths=top_paths, merge_repeated=False)


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of a label into one: (collapsed labels padded with 0, new lengths)."""
    with get_default_graph().name_scope(name or "collapse_repeated_labels"):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        label_mask = array_ops.concat([array_ops.ones_like(labels[:, :1], dtypes.bool),
                                       math_ops.not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
        maxlen = _get_dim(labels, 1)
        seq_mask = extra_ops.sequence_mask(seq_length, maxlen=maxlen)
        label_mask = math_ops.logical_and(label_mask, seq_mask)
        new_seq_len = math_ops.reduce_sum(math_ops.cast(label_mask, dtypes.int32), axis=1)
        new_maxlen = math_ops.reduce_max(new_seq_len)
        idx_mask = extra_ops.sequence_mask(new_seq_len, maxlen=new_maxlen)
        flat_labels = array_ops.reshape(labels, [-1])
        flat_label_mask = array_ops.reshape(label_mask, [-1])
        flat_idx_mask = array_ops.reshape(idx_mask, [-1])
        idx = math_ops.range(_get_dim(flat_idx_mask, 0))
        flat = extra_ops.scatter_nd(indices=array_ops.expand_dims(array_ops.boolean_mask(idx, flat_idx_mask), axis=1),
                                    updates=array_ops.boolean_mask(flat_labels, flat_label_mask),
                                    shape=array_ops.shape(flat_idx_mask))
        batch_size = _get_dim(labels, 0)
        return array_ops.reshape(flat, [batch_size, new_maxlen]), math_ops.cast(new_seq_len, seq_length.dtype)


def ctc_unique_labels(labels, name=None):
    """Per row: its unique labels in order of appearance padded with 0 (int64), and each
    label's index among them (int32)."""
    with get_default_graph().name_scope(name or "ctc_unique_labels"):
        labels = convert_to_tensor(labels, name="labels")

        def _unique(x):
            y, idx = extra_ops.unique(x)
            y = array_ops.pad(y, array_ops.expand_dims(array_ops.stack([0, _get_dim(idx, 0) - _get_dim(y, 0)]), 0))
            return [math_ops.cast(y, dtypes.int64), idx]

        return map_fn(_unique, labels, dtype=[dtypes.int64, dtypes.int32])


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences of two SparseTensors (grouped by all
    but the last index), divided by the truth's length when `normalize`."""
    if not isinstance(hypothesis, (SparseTensor, SparseTensorValue)):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, (SparseTensor, SparseTensorValue)):
        raise TypeError("Truth must be a SparseTensor.")
    return apply_op("EditDistance", [hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                                     truth.indices, truth.values, truth.dense_shape],
                    name=name, normalize=normalize).outputs[0]

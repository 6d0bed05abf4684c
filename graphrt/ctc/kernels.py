"""CPU kernels of the CTC ops and EditDistance (SIM reuses them). Inputs are
checked in TF's order with TF's messages; the numerics are in `loss.py`,
`dense.py`, `beam_search.py` and `edit_distance.py`."""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..sparse.kernels import validate_indices
from . import beam_search, dense, edit_distance, loss

CPU = ("CPU",)


def _bad(message, name, cls=errors.InvalidArgumentError):
    return cls(message, node=name)


def _shape_str(a):
    return "[" + ",".join(str(d) for d in np.shape(a)) + "]"


@register_kernel("CTCLoss", CPU, fresh_outputs=True)
def _ctc_loss(ctx):
    name = ctx.name
    collapse = ctx.attr("preprocess_collapse_repeated")
    merge = ctx.attr("ctc_merge_repeated")
    ignore_longer = ctx.attr("ignore_longer_outputs_than_inputs")

    def kernel(inputs, labels_indices, labels_values, sequence_length):
        for ok, what in ((inputs.ndim == 3, "inputs is not a 3-Tensor"),
                         (sequence_length.ndim == 1, "sequence_length is not a vector"),
                         (labels_indices.ndim == 2, "labels_indices is not a matrix"),
                         (labels_values.ndim == 1, "labels_values is not a vector")):
            if not ok:
                raise _bad(what, name)
        max_time, batch, num_classes = inputs.shape
        if sequence_length.shape[0] != batch:
            raise _bad(f"len(sequence_length) != batch_size.  len(sequence_length):  {sequence_length.shape[0]} "
                       f"batch_size: {batch}", name)
        if labels_indices.shape[0] != labels_values.shape[0]:
            raise _bad("labels_indices and labels_values must contain the same number of rows, but saw shapes: "
                       f"{_shape_str(labels_indices)} vs. {_shape_str(labels_values)}", name)
        if batch == 0:
            raise _bad("batch_size must not be 0", name)
        if labels_indices.shape[1] != 2:
            raise _bad(f"Input labels_indices should be a matrix with 2 columns, got shape "
                       f"{_shape_str(labels_indices)}", name)
        max_label_len = int(labels_indices[:, 1].max()) + 1 if labels_indices.shape[0] else 0
        try:
            validate_indices(labels_indices, np.array([batch, max_label_len], np.int64), name)
        except errors.InvalidArgumentError as e:
            raise _bad(f"label SparseTensor is not valid: {e.message}", name) from None
        labels = [[] for _ in range(batch)]
        for (b, _), v in zip(labels_indices.tolist(), labels_values.tolist()):
            labels[b].append(v)
        seq_len = sequence_length.astype(np.int64)
        for b in range(batch):
            if seq_len[b] > max_time:
                raise _bad(f"sequence_length({b}) <= {max_time}", name)
        for b in range(batch):
            if seq_len[b] < 0:
                raise _bad(f"seq_len({b}) < 0", name)
        targets = loss.label_sequences(labels, seq_len, num_classes, collapse, ignore_longer, name)
        active = (seq_len > 0) & ~(ignore_longer & (np.array([len(lb) for lb in labels]) > seq_len))
        value, grad = loss.ctc_loss(inputs, targets, seq_len, merge, active)
        return value.astype(inputs.dtype), grad.astype(inputs.dtype)
    return kernel


@register_kernel("CTCLossDense", CPU, fresh_outputs=True)
def _ctc_loss_dense(ctx):
    def kernel(logits, labels, label_length, logit_length):
        value, grad = dense.ctc_loss_dense(logits, labels, label_length.astype(np.int64),
                                           logit_length.astype(np.int64))
        return value.astype(logits.dtype), grad.astype(logits.dtype)
    return kernel


def _check_decoder_inputs(inputs, seq_len, name):
    if inputs.ndim != 3:
        raise _bad("inputs is not a 3-Tensor", name)
    if inputs.size == 0:
        raise _bad("inputs must not be empty", name)
    max_time, batch = inputs.shape[:2]
    if max_time == 0:
        raise _bad("max_time is 0", name)
    if seq_len.ndim != 1:
        raise _bad("sequence_length is not a vector", name)
    if seq_len.shape[0] != batch:
        raise _bad(f"len(sequence_length) != batch_size.  len(sequence_length):  {seq_len.shape[0]} "
                   f"batch_size: {batch}", name, errors.FailedPreconditionError)
    for b in range(batch):
        if seq_len[b] > max_time:
            raise _bad(f"sequence_length({b}) <= {max_time}", name, errors.FailedPreconditionError)


def _sparse_paths(sequences, batch):
    """One path per batch item -> TF's decoded (indices, values, shape)."""
    lengths = [len(s) for s in sequences]
    indices = np.array([[b, t] for b, n in enumerate(lengths) for t in range(n)], np.int64).reshape(-1, 2)
    values = np.array([v for s in sequences for v in s], np.int64)
    return indices, values, np.array([batch, max(lengths, default=0)], np.int64)


@register_kernel("CTCGreedyDecoder", CPU, fresh_outputs=True)
def _ctc_greedy_decoder(ctx):
    name, merge, blank_attr = ctx.name, ctx.attr("merge_repeated"), ctx.attr("blank_index")

    def kernel(inputs, sequence_length):
        _check_decoder_inputs(inputs, sequence_length, name)
        max_time, batch, num_classes = inputs.shape
        blank = num_classes + blank_attr if blank_attr < 0 else blank_attr
        if not 0 <= blank < num_classes:
            raise _bad(f"blank_index expected to be between {-num_classes} and {num_classes - 1} but was "
                       f"{blank_attr}", name)
        best = np.argmax(inputs, axis=2)
        top = np.max(inputs, axis=2)
        in_time = np.arange(max_time)[:, None] < sequence_length[None, :]
        log_prob = -np.sum(np.where(in_time, top, 0), axis=0, dtype=inputs.dtype)[:, None]
        sequences = []
        for b in range(batch):
            seq, prev = [], -1
            for c in best[:sequence_length[b], b].tolist():
                if c != blank and not (merge and c == prev):
                    seq.append(c)
                prev = c
            sequences.append(seq)
        return (*_sparse_paths(sequences, batch), log_prob.astype(inputs.dtype))
    return kernel


@register_kernel("CTCBeamSearchDecoder", CPU, fresh_outputs=True)
def _ctc_beam_search_decoder(ctx):
    name, merge = ctx.name, ctx.attr("merge_repeated")
    width, top_paths = ctx.attr("beam_width"), ctx.attr("top_paths")

    def kernel(inputs, sequence_length):
        _check_decoder_inputs(inputs, sequence_length, name)
        batch = inputs.shape[1]
        paths = [[] for _ in range(top_paths)]
        log_prob = np.zeros((batch, top_paths), inputs.dtype)
        for b in range(batch):
            found = beam_search.decode(inputs[:sequence_length[b], b], width, top_paths, merge)
            if isinstance(found, str):
                raise _bad(found, name)
            for p, (seq, lp) in enumerate(zip(*found)):
                paths[p].append(seq)
                log_prob[b, p] = lp
        outs = [_sparse_paths(paths[p], batch) for p in range(top_paths)]
        return (*[o[0] for o in outs], *[o[1] for o in outs], *[o[2] for o in outs], log_prob)
    return kernel


@register_kernel("EditDistance", CPU, fresh_outputs=True)
def _edit_distance(ctx):
    name, normalize = ctx.name, ctx.attr("normalize")

    def kernel(h_indices, h_values, h_shape, t_indices, t_values, t_shape):
        for what, a, rank in (("hypothesis_indices", h_indices, 2), ("truth_indices", t_indices, 2),
                              ("hypothesis_values", h_values, 1), ("truth_values", t_values, 1),
                              ("hypothesis_shape", h_shape, 1), ("truth_shape", t_shape, 1)):
            if a.ndim != rank:
                raise _bad(f"{what} should be a {'matrix' if rank == 2 else 'vector'}, but got shape: "
                           f"{_shape_str(a)}", name)
        if h_values.shape[0] != h_indices.shape[0]:
            raise _bad(f"Expected hypothesis_values.NumElements == #rows(hypothesis_indices), their shapes are: "
                       f"{_shape_str(h_values)} and {_shape_str(h_indices)}", name)
        if h_shape.size != h_indices.shape[1]:
            raise _bad("Expected hypothesis_shape.NumElements == #cols(hypothesis_indices), their shapes are: "
                       f"{_shape_str(h_shape)} and {_shape_str(h_indices)}", name)
        if t_shape.size < 2:
            raise _bad(f"Input SparseTensors must have rank at least 2, but truth_shape rank is: {t_shape.size}",
                       name)
        if t_values.shape[0] != t_indices.shape[0]:
            raise _bad(f"Expected truth_values.NumElements == #rows(truth_indices), their shapes are: "
                       f"{_shape_str(t_values)} and {_shape_str(t_indices)}", name)
        if t_shape.size != t_indices.shape[1]:
            raise _bad("Expected truth_shape.NumElements == #cols(truth_indices), their shapes are: "
                       f"{_shape_str(t_shape)} and {_shape_str(t_indices)}", name)
        if t_shape.size != h_shape.size:
            raise _bad("Expected truth and hypothesis to have matching ranks, but their shapes are: "
                       f"{_shape_str(t_shape)} and {_shape_str(h_shape)}", name)
        return edit_distance.edit_distance(h_indices, h_values, h_shape, t_indices, t_values, t_shape, normalize, name)
    return kernel

"""Declarations of the CTC and edit-distance ops: TF's CTCLoss,
CTCGreedyDecoder, CTCBeamSearchDecoder and EditDistance (names, inputs,
attrs and shape functions as TF's), and CTCLossDense, graphrt's single op for
the forward-backward of `ctc_loss_v2` on dense labels (TF builds that from
while loops of many small ops; one kernel gives the same numbers).
"""
from ..framework import dtypes
from ..framework.registry import REQUIRED, register_op
from ..framework.tensor_shape import TensorShape
from ..ops.shape_fns import dims_with_rank, merge_dims

_FLOAT_DOUBLE = {"T": (dtypes.float32, dtypes.float64)}


def _ctc_loss_shape(ctx):
    inputs = dims_with_rank(ctx, 0, 3)
    (n_indices, _) = dims_with_rank(ctx, 1, 2)
    (n_values,) = dims_with_rank(ctx, 2, 1)
    (n_seq,) = dims_with_rank(ctx, 3, 1)
    merge_dims(n_indices, n_values)
    batch = merge_dims(inputs[1], n_seq)
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


register_op("CTCLoss", ["inputs: T", "labels_indices: int64", "labels_values: int32", "sequence_length: int32"],
            ["loss: T", "gradient: T"],
            attrs={"preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
                   "ignore_longer_outputs_than_inputs": False, "T": dtypes.float32},
            shape_fn=_ctc_loss_shape, allowed_types=_FLOAT_DOUBLE)


def _ctc_loss_dense_shape(ctx):
    logits = dims_with_rank(ctx, 0, 3)
    (batch_labels, _) = dims_with_rank(ctx, 1, 2)
    (n_label_length,) = dims_with_rank(ctx, 2, 1)
    (n_logit_length,) = dims_with_rank(ctx, 3, 1)
    batch = merge_dims(merge_dims(merge_dims(logits[1], batch_labels), n_label_length), n_logit_length)
    return [TensorShape([batch]), TensorShape([logits[0], batch, logits[2]])]


register_op("CTCLossDense", ["logits: T", "labels: Tlabels", "label_length: Tlength", "logit_length: Tlogit"],
            ["loss: T", "gradient: T"], shape_fn=_ctc_loss_dense_shape,
            allowed_types={"T": (dtypes.float32, dtypes.float64), "Tlabels": (dtypes.int32, dtypes.int64),
                           "Tlength": (dtypes.int32, dtypes.int64), "Tlogit": (dtypes.int32, dtypes.int64)})


def _decoder_batch(ctx):
    inputs = dims_with_rank(ctx, 0, 3)
    (n_seq,) = dims_with_rank(ctx, 1, 1)
    return merge_dims(inputs[1], n_seq)


def _greedy_shape(ctx):
    batch = _decoder_batch(ctx)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2]), TensorShape([batch, 1])]


register_op("CTCGreedyDecoder", ["inputs: T", "sequence_length: int32"],
            ["decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64", "log_probability: T"],
            attrs={"merge_repeated": False, "blank_index": -1, "T": dtypes.float32},
            shape_fn=_greedy_shape, allowed_types=_FLOAT_DOUBLE)


def _beam_shape(ctx):
    batch = _decoder_batch(ctx)
    k = ctx.attr("top_paths")
    return ([TensorShape([None, 2])] * k + [TensorShape([None])] * k + [TensorShape([2])] * k
            + [TensorShape([batch, k])])


register_op("CTCBeamSearchDecoder", ["inputs: T", "sequence_length: int32"],
            ["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"],
            attrs={"beam_width": REQUIRED, "top_paths": REQUIRED, "merge_repeated": True, "T": dtypes.float32},
            shape_fn=_beam_shape, allowed_types=_FLOAT_DOUBLE)


def _sparse_operand(ctx, i):
    (n, rank) = dims_with_rank(ctx, i, 2)
    (nv,) = dims_with_rank(ctx, i + 1, 1)
    (rs,) = dims_with_rank(ctx, i + 2, 1)
    merge_dims(n, nv)
    merge_dims(rank, rs)


def _edit_distance_shape(ctx):
    """TF's: known only when both dense shapes are constants; each dim the larger of the two."""
    _sparse_operand(ctx, 0)
    _sparse_operand(ctx, 3)
    hyp, truth = ctx.constant(2), ctx.constant(5)
    if hyp is None or truth is None:
        return TensorShape(None)
    if hyp.size != truth.size:
        raise ValueError(f"Num elements of hypothesis_shape does not match truth_shape: {hyp.size} vs. {truth.size}")
    if hyp.size < 2:
        raise ValueError(f"Input Hypothesis SparseTensors must have rank at least 2, but hypothesis_shape rank is: "
                         f"{hyp.size}")
    return TensorShape([max(int(h), int(t)) for h, t in zip(hyp[:-1], truth[:-1])])


register_op("EditDistance", ["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
                             "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
            ["output: float32"], attrs={"normalize": True}, shape_fn=_edit_distance_shape)

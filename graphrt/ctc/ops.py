"""Declarations of the CTC and edit-distance ops: TF's CTCLoss,
CTCGreedyDecoder, CTCBeamSearchDecoder and EditDistance (names, inputs,
attrs and shape functions as TF's), and CTCLossDense, graphrt's single op for
the forward-backward of `ctc_loss_v2` on dense labels (TF builds that from
while loops of many small ops; one kernel gives the same numbers).
"""
from ..framework import dtypes
from ..framework.registry import REQUIRED, register_op
from ..framework.tensor_shape import TensorShape

_FLOAT_DOUBLE = {"T": (dtypes.float32, dtypes.float64)}


def _with_rank(ctx, i, rank):
    s = ctx.shape(i)
    if s.ndims is not None and s.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {s.ndims}")
    return s.as_list() if s.ndims is not None else [None] * rank


def _merge(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _ctc_loss_shape(ctx):
    inputs = _with_rank(ctx, 0, 3)
    (n_indices, _) = _with_rank(ctx, 1, 2)
    (n_values,) = _with_rank(ctx, 2, 1)
    (n_seq,) = _with_rank(ctx, 3, 1)
    _merge(n_indices, n_values)
    batch = _merge(inputs[1], n_seq)
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


register_op("CTCLoss", ["inputs: T", "labels_indices: int64", "labels_values: int32", "sequence_length: int32"],
            ["loss: T", "gradient: T"],
            attrs={"preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
                   "ignore_longer_outputs_than_inputs": False, "T": dtypes.float32},
            shape_fn=_ctc_loss_shape, allowed_types=_FLOAT_DOUBLE)


def _ctc_loss_dense_shape(ctx):
    logits = _with_rank(ctx, 0, 3)
    (batch_labels, _) = _with_rank(ctx, 1, 2)
    (n_label_length,) = _with_rank(ctx, 2, 1)
    (n_logit_length,) = _with_rank(ctx, 3, 1)
    batch = _merge(_merge(_merge(logits[1], batch_labels), n_label_length), n_logit_length)
    return [TensorShape([batch]), TensorShape([logits[0], batch, logits[2]])]


register_op("CTCLossDense", ["logits: T", "labels: Tlabels", "label_length: Tlength", "logit_length: Tlogit"],
            ["loss: T", "gradient: T"], shape_fn=_ctc_loss_dense_shape,
            allowed_types={"T": (dtypes.float32, dtypes.float64), "Tlabels": (dtypes.int32, dtypes.int64),
                           "Tlength": (dtypes.int32, dtypes.int64), "Tlogit": (dtypes.int32, dtypes.int64)})


def _decoder_batch(ctx):
    inputs = _with_rank(ctx, 0, 3)
    (n_seq,) = _with_rank(ctx, 1, 1)
    return _merge(inputs[1], n_seq)


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
    (n, rank) = _with_rank(ctx, i, 2)
    (nv,) = _with_rank(ctx, i + 1, 1)
    (rs,) = _with_rank(ctx, i + 2, 1)
    _merge(n, nv)
    _merge(rank, rs)


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

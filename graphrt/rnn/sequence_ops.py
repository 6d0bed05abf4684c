"""`tf.reverse_sequence`: reverses the first `seq_lengths[b]` entries along
`seq_axis` of each batch entry `b` (what a backward RNN reads when the
sequences in a batch have different lengths). Its gradient is itself."""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import REQUIRED, register_gradient, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops.math_kernels import ALL_DEVICES


def _reverse_sequence_shape(ctx):
    shape, lengths = ctx.shape(0), ctx.shape(1)
    if lengths.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {lengths.ndims} (seq_lengths)")
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")
    if shape.ndims is not None:
        for dim, what in ((seq_dim, "seq_dim"), (batch_dim, "batch_dim")):
            if not 0 <= dim < shape.ndims:
                raise ValueError(f"{what} must be < input rank ( {dim} vs. {shape.ndims})")
        if seq_dim == batch_dim:
            raise ValueError(f"seq_dim == batch_dim == {seq_dim}")
        batch, n = shape[batch_dim], (lengths[0] if lengths.ndims == 1 else None)
        if batch is not None and n is not None and batch != n:
            raise ValueError(f"Length of seq_lengths != input.dims({batch_dim}), ({n} vs. {batch})")
        if batch is None and n is not None:  # the batch dimension is the lengths' count
            dims = shape.as_list()
            dims[batch_dim] = n
            return TensorShape(dims)
    return shape


register_op("ReverseSequence", ["input: T", "seq_lengths: Tlen"], ["output: T"],
            attrs={"seq_dim": REQUIRED, "batch_dim": 0, "Tlen": dtypes.int64}, shape_fn=_reverse_sequence_shape,
            allowed_types={"Tlen": (dtypes.int32, dtypes.int64)})


@register_kernel("ReverseSequence", ALL_DEVICES, host_memory=("seq_lengths",))
def _reverse_sequence(ctx):
    seq_dim, batch_dim, node = ctx.attr("seq_dim"), ctx.attr("batch_dim"), ctx.name

    def reverse(x, lengths):
        lengths = np.asarray(lengths).reshape(-1)
        if len(lengths) != x.shape[batch_dim]:
            raise errors.InvalidArgumentError(f"Length of seq_lengths != input.dims({batch_dim}), "
                                              f"({len(lengths)} vs. {x.shape[batch_dim]})", node=node)
        out = x.copy()
        for b, n in enumerate(lengths):
            n = int(n)
            if n < 0 or n > x.shape[seq_dim]:
                raise errors.InvalidArgumentError(f"seq_lens({b}) > input.dims({seq_dim}) or is negative: {n}",
                                                  node=node)
            index = [slice(None)] * x.ndim
            index[batch_dim] = b
            index[seq_dim] = slice(0, n)
            source = list(index)
            source[seq_dim] = slice(n - 1, None, -1) if n else slice(0, 0)
            out[tuple(index)] = x[tuple(source)]
        return out
    return reverse


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [reverse_sequence(grad, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                             batch_axis=op.get_attr("batch_dim")), None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """Reverses variable-length slices: along `seq_axis`, the first `seq_lengths[b]`
    entries of batch entry `b` (along `batch_axis`) in reverse order, the rest unchanged."""
    if seq_axis is not None and seq_dim is not None:
        raise ValueError("Cannot specify both 'seq_axis' and 'seq_dim'")
    if batch_axis is not None and batch_dim is not None:
        raise ValueError("Cannot specify both 'batch_axis' and 'batch_dim'")
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    if seq_axis is None:
        raise TypeError("reverse_sequence() needs seq_axis")
    with get_default_graph().name_scope(name or "ReverseSequence") as scope:
        seq_lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
        return apply_op("ReverseSequence", [input, seq_lengths], name=scope, seq_dim=int(seq_axis),
                        batch_dim=int(batch_axis or 0)).outputs[0]

"""Neural-network ops: activations, softmax and cross-entropies, bias add,
L2 loss, 2-D convolution and pooling (NHWC). Declarations and the TF1
Python API (`tf.nn.*`); kernels are in nn_kernels.py, gradients in
nn_grad.py.

Only the NHWC data format is supported: any other `data_format` is a
ValueError when the op is created. Convolutions support dilations of 1 only.
"""
import numbers

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..framework.registry import register_op
from ..framework.tensor_shape import Dimension, TensorShape, unknown_shape
from . import math_ops, shape_fns

FLOAT = dtypes.FLOATING
REAL = dtypes.FLOATING + dtypes.INTEGER

# -- window geometry (shared with the kernels) ------------------------------------


def windowed_output_size(in_size, k, stride, padding):
    """(output size, pad before, pad after) along one spatial dimension, as TF computes them.

    VALID: out = (in - k + stride) / stride (C++ integer division; negative is an error).
    SAME:  out = ceil(in / stride), pad_total = max((out - 1) * stride + k - in, 0),
           pad_before = pad_total // 2 (the extra row/column goes after).
    """
    if padding == "VALID":
        num = in_size - k + stride
        out = -((-num) // stride) if num < 0 else num // stride  # truncate toward zero, like C++
        if out < 0:
            raise ValueError(f"Computed output size would be negative: {out} [input_size: {in_size}, "
                             f"effective_filter_size: {k}, stride: {stride}]")
        return out, 0, 0
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + k - in_size, 0)
    return out, total // 2, total - total // 2


def _check_format(ctx_or_format):
    fmt = ctx_or_format if isinstance(ctx_or_format, str) else ctx_or_format.attr("data_format")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != "NHWC":
        raise ValueError(f"graphrt supports only data_format='NHWC', got {fmt!r}")


def _check_padding(padding):
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Value for attr 'padding' of {padding!r} is not in the list of allowed values: "
                         f"\"SAME\", \"VALID\"")


def _check_4(values, attr, op_type):
    if len(values) != 4:
        raise ValueError(f"{op_type} requires the {attr} attribute to contain 4 values, but got: {len(values)}")


def _spatial(in_size, k, stride, padding):
    if in_size is None or k is None:
        return None
    if padding == "VALID" and in_size < k:
        # TF's shape function subtracts first (the kernel alone would give an empty output)
        raise ValueError(f"Negative dimension size caused by subtracting {k} from {in_size}")
    return windowed_output_size(in_size, k, stride, padding)[0]


# -- declarations: activations ---------------------------------------------------

for _name in ("Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign"):
    register_op(_name, ["features: T"], ["activations: T"], shape_fn=shape_fns.unchanged,
                allowed_types={"T": REAL if _name in ("Relu", "Relu6") else FLOAT})
register_op("LeakyRelu", ["features: T"], ["activations: T"], attrs={"alpha": 0.2},
            shape_fn=shape_fns.unchanged, allowed_types={"T": FLOAT})

# TF's activation-gradient ops: (gradients, features) or (gradients, outputs)
for _name in ("ReluGrad", "Relu6Grad", "SoftplusGrad", "SoftsignGrad"):
    register_op(_name, ["gradients: T", "features: T"], ["backprops: T"], shape_fn=shape_fns.broadcast)
for _name in ("EluGrad", "SeluGrad"):
    register_op(_name, ["gradients: T", "outputs: T"], ["backprops: T"], shape_fn=shape_fns.broadcast)
register_op("LeakyReluGrad", ["gradients: T", "features: T"], ["backprops: T"], attrs={"alpha": 0.2},
            shape_fn=shape_fns.broadcast)


def _softmax_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is not None and s.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.ndims}")
    return s


register_op("Softmax", ["logits: T"], ["softmax: T"], shape_fn=_softmax_shape, allowed_types={"T": FLOAT})
register_op("LogSoftmax", ["logits: T"], ["logsoftmax: T"], shape_fn=_softmax_shape,
            allowed_types={"T": FLOAT})


def _xent_shape(ctx):
    logits, labels = ctx.shape(0), ctx.shape(1)
    for s in (logits, labels):
        if s.ndims is not None and s.ndims != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {s.ndims}")
    if logits.ndims is None and labels.ndims is None:
        return [TensorShape([None]), TensorShape([None, None])]
    both = shape_fns.broadcast_shapes(logits.with_rank(2), labels.with_rank(2))
    return [TensorShape([both[0]]), both]


register_op("SoftmaxCrossEntropyWithLogits", ["features: T", "labels: T"], ["loss: T", "backprop: T"],
            shape_fn=_xent_shape, allowed_types={"T": FLOAT})


def _sparse_xent_shape(ctx):
    logits, labels = ctx.shape(0), ctx.shape(1)
    if logits.ndims is not None and logits.ndims != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {logits.ndims}")
    if labels.ndims is not None and labels.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {labels.ndims}")
    logits = logits.with_rank(2)
    labels = labels.with_rank(1)
    if not logits.dim(0).is_compatible_with(labels[0]):
        raise ValueError(f"Dimensions must be equal, but are {labels[0]} and {logits[0]}")
    batch = logits.dim(0).merge_with(labels[0])
    return [TensorShape([batch]), TensorShape([batch, logits[1]])]


register_op("SparseSoftmaxCrossEntropyWithLogits", ["features: T", "labels: Tlabels"],
            ["loss: T", "backprop: T"], attrs={"Tlabels": dtypes.int64}, shape_fn=_sparse_xent_shape,
            allowed_types={"T": FLOAT, "Tlabels": (dtypes.int32, dtypes.int64)})

register_op("L2Loss", ["t: T"], ["output: T"], shape_fn=shape_fns.scalar, allowed_types={"T": FLOAT})


def _bias_add_shape(ctx):
    _check_format(ctx)
    value, bias = ctx.shape(0), ctx.shape(1)
    if value.ndims is not None and value.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {value.ndims}")
    if bias.ndims is not None and bias.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {bias.ndims}")
    if value.ndims is None:
        return value
    last, b = value.dim(-1), bias.with_rank(1).dim(0)
    if not last.is_compatible_with(b):
        raise ValueError(f"Dimensions must be equal, but are {last} and {b}")
    return TensorShape(value.dims[:-1] + [last.merge_with(b)])


def _bias_add_grad_shape(ctx):
    _check_format(ctx)
    s = ctx.shape(0)
    if s.ndims is not None and s.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.ndims}")
    return TensorShape([s[-1] if s.ndims is not None else None])


register_op("BiasAdd", ["value: T", "bias: T"], ["output: T"], attrs={"data_format": "NHWC"},
            shape_fn=_bias_add_shape)
register_op("BiasAddGrad", ["out_backprop: T"], ["output: T"], attrs={"data_format": "NHWC"},
            shape_fn=_bias_add_grad_shape)


# -- declarations: convolution ------------------------------------------------------

CONV_ATTRS = {"strides": None, "use_cudnn_on_gpu": True, "padding": None, "explicit_paddings": [],
              "data_format": "NHWC", "dilations": [1, 1, 1, 1]}


def check_conv_attrs(op_type, strides, padding, data_format, dilations):
    """The attr checks of TF's Conv2D shape function (ValueError at graph-build time)."""
    _check_format(data_format)
    _check_padding(padding)
    _check_4(strides, "stride", op_type)
    if strides[0] != 1 or strides[3] != 1:
        raise ValueError("Current implementation does not yet support strides in the batch and depth dimensions.")
    if any(int(s) < 1 for s in strides):
        raise ValueError(f"{op_type}: strides must be positive, got {list(strides)}")
    _check_4(dilations, "dilations", op_type)
    if any(int(d) < 1 for d in dilations):
        raise ValueError(f"{op_type}: dilations must be positive, got {list(dilations)}")


def _conv_attrs(ctx, op_type):
    strides = ctx.attr("strides")
    if strides is None:
        raise ValueError(f"{op_type} is missing required attr 'strides'")
    dilations = ctx.attr("dilations")
    check_conv_attrs(op_type, strides, ctx.attr("padding"), ctx.attr("data_format"), dilations)
    return strides, ctx.attr("padding"), dilations


def dilated_size(k, rate):
    """The extent of a filter of k taps `rate` apart: (k - 1) * rate + 1."""
    return None if k is None else (k - 1) * int(rate) + 1


def conv_output_shape(input_shape, filter_shape, strides, padding, dilations=(1, 1, 1, 1)):
    """Static NHWC output shape of a convolution of `input_shape` with `filter_shape`."""
    inp = input_shape.with_rank(4)
    flt = filter_shape.with_rank(4)
    if not inp.dim(3).is_compatible_with(flt[2]):
        raise ValueError(f"Dimensions must be equal, but are {inp[3]} and {flt[2]}")
    oh = _spatial(inp[1], dilated_size(flt[0], dilations[1]), strides[1], padding)
    ow = _spatial(inp[2], dilated_size(flt[1], dilations[2]), strides[2], padding)
    return TensorShape([inp[0], oh, ow, flt[3]])


def _conv2d_shape(ctx):
    strides, padding, dilations = _conv_attrs(ctx, "Conv2D")
    return conv_output_shape(ctx.shape(0), ctx.shape(1), strides, padding, dilations)


def _shape_from_input(ctx, i, rank):
    s = ctx.constant_shape(i)
    if s.ndims is not None and s.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {s.ndims}")
    return s if s.ndims is not None else unknown_shape(rank)


def _conv2d_backprop_input_shape(ctx):
    strides, padding, dilations = _conv_attrs(ctx, "Conv2DBackpropInput")
    out = _shape_from_input(ctx, 0, 4)
    flt, dy = ctx.shape(1).with_rank(4), ctx.shape(2).with_rank(4)
    if not out.dim(3).is_compatible_with(flt[2]):
        raise ValueError(f"Dimensions must be equal, but are {out[3]} and {flt[2]}")
    if not dy.dim(3).is_compatible_with(flt[3]):
        raise ValueError(f"Dimensions must be equal, but are {dy[3]} and {flt[3]}")
    _check_backprop_geometry(out, flt, dy, strides, padding, dilations)
    if out[0] is None and dy[0] is not None:  # TF's shape function takes the batch from out_backprop
        out = TensorShape([dy[0]] + out.dims[1:])
    return out


def _conv2d_backprop_filter_shape(ctx):
    strides, padding, dilations = _conv_attrs(ctx, "Conv2DBackpropFilter")
    out = _shape_from_input(ctx, 1, 4)
    inp, dy = ctx.shape(0).with_rank(4), ctx.shape(2).with_rank(4)
    if not inp.dim(3).is_compatible_with(out[2]):
        raise ValueError(f"Dimensions must be equal, but are {inp[3]} and {out[2]}")
    if not dy.dim(3).is_compatible_with(out[3]):
        raise ValueError(f"Dimensions must be equal, but are {dy[3]} and {out[3]}")
    _check_backprop_geometry(inp, out, dy, strides, padding, dilations)
    return out


def _check_backprop_geometry(inp, flt, dy, strides, padding, dilations):
    for i, k in ((1, 0), (2, 1)):
        want = _spatial(inp[i], dilated_size(flt[k], dilations[i]), strides[i], padding)
        if want is not None and dy[i] is not None and want != dy[i]:
            raise ValueError(f"Conv2D backprop: computed output size {want} in dimension {i} does not match "
                             f"out_backprop's {dy[i]}")


register_op("Conv2D", ["input: T", "filter: T"], ["output: T"], attrs=CONV_ATTRS, shape_fn=_conv2d_shape,
            allowed_types={"T": FLOAT})
register_op("Conv2DBackpropInput", ["input_sizes: int32", "filter: T", "out_backprop: T"], ["output: T"],
            attrs=CONV_ATTRS, shape_fn=_conv2d_backprop_input_shape, allowed_types={"T": FLOAT})
register_op("Conv2DBackpropFilter", ["input: T", "filter_sizes: int32", "out_backprop: T"], ["output: T"],
            attrs=CONV_ATTRS, shape_fn=_conv2d_backprop_filter_shape, allowed_types={"T": FLOAT})


# -- declarations: pooling ------------------------------------------------------------

POOL_ATTRS = {"ksize": None, "strides": None, "padding": None, "data_format": "NHWC"}


def check_pool_attrs(op_type, ksize, strides, padding, data_format):
    _check_format(data_format)
    _check_padding(padding)
    _check_4(ksize, "ksize", op_type)
    _check_4(strides, "stride", op_type)
    if ksize[0] != 1 or strides[0] != 1:
        raise ValueError("Pooling is not yet supported on the batch dimension.")
    if ksize[3] != 1 or strides[3] != 1:
        raise ValueError(f"{op_type}: graphrt does not support pooling across the depth dimension "
                         f"(ksize {list(ksize)}, strides {list(strides)})")
    if any(int(k) < 1 for k in ksize) or any(int(s) < 1 for s in strides):
        raise ValueError(f"{op_type}: ksize and strides must be positive, got {list(ksize)} and {list(strides)}")


def _pool_attrs(ctx, op_type):
    ksize, strides = ctx.attr("ksize"), ctx.attr("strides")
    if ksize is None or strides is None:
        raise ValueError(f"{op_type} is missing required attr 'ksize' or 'strides'")
    check_pool_attrs(op_type, ksize, strides, ctx.attr("padding"), ctx.attr("data_format"))
    return ksize, strides, ctx.attr("padding")


def pool_output_shape(input_shape, ksize, strides, padding):
    inp = input_shape.with_rank(4)
    oh = _spatial(inp[1], ksize[1], strides[1], padding)
    ow = _spatial(inp[2], ksize[2], strides[2], padding)
    return TensorShape([inp[0], oh, ow, inp[3]])


def _pool_shape(op_type):
    def fn(ctx):
        ksize, strides, padding = _pool_attrs(ctx, op_type)
        return pool_output_shape(ctx.shape(0), ksize, strides, padding)
    return fn


def _max_pool_grad_shape(ctx):
    ksize, strides, padding = _pool_attrs(ctx, "MaxPoolGrad")
    inp = ctx.shape(0).with_rank(4)
    ctx.shape(1).with_rank(4)
    ctx.shape(2).with_rank(4)
    return inp


def _max_pool_grad_grad_shape(ctx):
    _pool_attrs(ctx, "MaxPoolGradGrad")
    ctx.shape(0).with_rank(4)
    ctx.shape(2).with_rank(4)
    return ctx.shape(1).with_rank(4)


def _avg_pool_grad_shape(ctx):
    _pool_attrs(ctx, "AvgPoolGrad")
    ctx.shape(1).with_rank(4)
    return _shape_from_input(ctx, 0, 4)


register_op("MaxPool", ["input: T"], ["output: T"], attrs=POOL_ATTRS, shape_fn=_pool_shape("MaxPool"),
            allowed_types={"T": REAL})
register_op("AvgPool", ["value: T"], ["output: T"], attrs=POOL_ATTRS, shape_fn=_pool_shape("AvgPool"),
            allowed_types={"T": FLOAT})
register_op("MaxPoolGrad", ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"], attrs=POOL_ATTRS,
            shape_fn=_max_pool_grad_shape, allowed_types={"T": REAL})
register_op("MaxPoolGradGrad", ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"],
            attrs=POOL_ATTRS, shape_fn=_max_pool_grad_grad_shape, allowed_types={"T": REAL})
register_op("AvgPoolGrad", ["orig_input_shape: int32", "grad: T"], ["output: T"], attrs=POOL_ATTRS,
            shape_fn=_avg_pool_grad_shape, allowed_types={"T": FLOAT})


def _in_top_k_shape(ctx):
    preds, targets = ctx.shape(0), ctx.shape(1)
    if preds.ndims is not None and preds.ndims != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {preds.ndims}")
    if targets.ndims is not None and targets.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {targets.ndims}")
    batch = preds.with_rank(2).dim(0)
    if not batch.is_compatible_with(targets.with_rank(1).dim(0)):
        raise ValueError(f"Dimensions must be equal, but are {batch} and {targets[0]}")
    return TensorShape([batch.merge_with(targets.with_rank(1).dim(0))])


register_op("InTopKV2", ["predictions: float32", "targets: T", "k: T"], ["precision: bool"],
            attrs={"T": dtypes.int32}, shape_fn=_in_top_k_shape,
            allowed_types={"T": (dtypes.int32, dtypes.int64)})


def _top_k_shape(ctx):
    s = ctx.shape(0)
    if s.ndims is not None and s.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.ndims}")
    k = ctx.constant(1)
    if k is not None:
        k = int(k)
        if k < 0:
            raise ValueError(f"Need k >= 0, got {k}")
        last = s[-1] if s.ndims is not None else None
        if last is not None and last < k:
            raise ValueError(f"input must have last dimension >= k = {k} but is {last}")
    if s.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    out = TensorShape(s.dims[:-1] + [k])
    return [out, out]


register_op("TopKV2", ["input: T", "k: int32"], ["values: T", "indices: int32"], attrs={"sorted": True},
            shape_fn=_top_k_shape, allowed_types={"T": REAL})


# -- Python API: activations -----------------------------------------------------------

def relu(features, name=None):
    """max(features, 0)."""
    return apply_op("Relu", [features], name=name or "Relu").outputs[0]


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    with get_default_graph().name_scope(name or "Relu6") as scope:
        features = convert_to_tensor(features, name="features")
        return apply_op("Relu6", [features], name=scope).outputs[0]


def elu(features, name=None):
    """exp(features) - 1 if features < 0, features otherwise."""
    return apply_op("Elu", [features], name=name or "Elu").outputs[0]


def selu(features, name=None):
    return apply_op("Selu", [features], name=name or "Selu").outputs[0]


def softplus(features, name=None):
    """log(exp(features) + 1)."""
    return apply_op("Softplus", [features], name=name or "Softplus").outputs[0]


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return apply_op("Softsign", [features], name=name or "Softsign").outputs[0]


def leaky_relu(features, alpha=0.2, name=None):
    """features if features > 0 else alpha * features. Integer features are cast to float32, as TF does."""
    with get_default_graph().name_scope(name or "LeakyRelu") as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = math_ops.cast(features, dtypes.float32)
        if isinstance(alpha, np.ndarray):
            alpha = alpha.item()
        return apply_op("LeakyRelu", [features], name=scope, alpha=float(alpha)).outputs[0]


sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


# -- Python API: softmax and losses --------------------------------------------------------

def _static_perm_swap_last(rank, axis):
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return np.array(perm, dtype=np.int32)


def _softmax(op_type, logits, axis, name):
    logits = convert_to_tensor(logits)
    if axis is None:
        axis = -1
    if is_tensor_like(axis):
        value = constant_value(convert_to_tensor(axis))
        if value is None:
            raise ValueError("graphrt's softmax needs an axis whose value is known when the graph is built")
        axis = value
    axis = int(axis)
    shape = logits.shape
    rank = shape.ndims
    if axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, [logits], name=name or op_type).outputs[0]
    if rank is None:
        raise ValueError(f"{op_type}: axis {axis} other than -1 needs a logits tensor of known rank")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of dimensions "
            f"in the input. Received: dim={axis}")
    from .array_ops import transpose
    # like TF: swap `axis` with the last dimension, apply on the last axis, swap back
    perm = _static_perm_swap_last(rank, axis % rank)
    out = apply_op(op_type, [transpose(logits, perm)]).outputs[0]
    out = transpose(out, perm, name=name or "transpose")
    out.set_shape(shape)
    return out


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / reduce_sum(exp(logits), axis): numerically stable, over the last axis by default."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    return _softmax("Softmax", logits, dim if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(reduce_sum(exp(logits), axis))."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    return _softmax("LogSoftmax", logits, dim if axis is None else axis, name)


def _flatten_outer_dims(t):
    """Reshapes to [-1, last dim], keeping the static shape where it is known (TF's helper)."""
    from .array_ops import concat, reshape, shape as shape_op, slice as slice_op, stack
    s = t.shape
    if s.ndims is not None and s[-1] is not None:
        out = reshape(t, [-1, s[-1]])
    else:
        rank_t = apply_op("Rank", [t]).outputs[0]
        last = slice_op(shape_op(t), stack([math_ops.subtract(rank_t, 1)]), [1])
        out = reshape(t, concat([[-1], last], 0))
    if s.ndims is not None and all(d is not None for d in s.as_list()[:-1]):
        out.set_shape([int(np.prod(s.as_list()[:-1], dtype=np.int64)), s[-1]])
    return out


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Softmax cross-entropy per example; gradients flow into both labels and logits.

    Built as TF builds it: `axis` moved last, both flattened to [-1, classes]
    (Reshape, Reshape_1), the op, and the loss reshaped back (Reshape_2);
    float16 logits are computed in float32 and the loss cast back.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = dim if axis is None else axis
    if axis is None:
        axis = -1
    axis = int(axis)
    g = get_default_graph()
    with g.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        half = logits.dtype.base_dtype == dtypes.float16
        precise = math_ops.cast(logits, dtypes.float32) if half else logits
        labels = math_ops.cast(labels, precise.dtype.base_dtype)
        shape = logits.shape
        rank = shape.ndims
        if rank is not None:
            if rank == 0:
                raise ValueError("Logits cannot be scalars - received shape ().")
            if not -rank <= axis < rank:
                raise ValueError(f"Dimension ({axis}) must be in the range [{-rank}, {rank}), where {rank} "
                                 f"is the number of dimensions in the input.")
            axis %= rank
        from .array_ops import reshape, shape as shape_op, slice as slice_op, stack, transpose
        if axis != -1 and axis != (rank - 1 if rank is not None else -1):
            if rank is None:
                raise ValueError("softmax_cross_entropy_with_logits: an axis other than -1 needs logits "
                                 "of known rank")
            perm = list(range(rank))
            perm = np.array(perm[:axis] + perm[axis + 1:] + [axis], dtype=np.int32)
            precise = transpose(precise, perm)
            labels = transpose(labels, perm)
        rank_t = apply_op("Rank", [precise]).outputs[0]
        input_shape = shape_op(precise)
        flat_logits = _flatten_outer_dims(precise)
        flat_labels = _flatten_outer_dims(labels)
        cost = apply_op("SoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels], name=scope).outputs[0]
        out_shape = slice_op(input_shape, [0], stack([math_ops.subtract(rank_t, 1)]))
        cost = reshape(cost, out_shape)
        if rank is not None:
            dims = shape.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return math_ops.cast(cost, dtypes.float16) if half else cost


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """TF1's (deprecated) version: no gradient flows into `labels` (stop_gradient)."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    from .array_ops import stop_gradient
    if axis is not None:  # `dim` defaults to -1, so TF's argument lookup rejects any `axis`
        raise ValueError("Cannot specify both 'dim' and 'axis'.")
    axis = dim
    with get_default_graph().name_scope(name or "softmax_cross_entropy_with_logits_sg") as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis, name=scope)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Cross-entropy of softmax(logits) against integer class `labels` (one per example).

    A label outside [0, num_classes) is an InvalidArgumentError when the op runs.
    """
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    g = get_default_graph()
    with g.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"Value passed to parameter 'labels' has DataType {labels.dtype.base_dtype.name} "
                            f"not in list of allowed values: int32, int64")
        ls, gs = labels.shape, logits.shape
        if gs.ndims is not None and gs.ndims == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {gs}.")
        if gs.ndims is not None and ls.ndims is not None and ls.ndims != gs.ndims - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received {ls.ndims}) should equal rank of "
                             f"logits minus 1 (received {gs.ndims}).")
        static_full = ls.is_fully_defined() and gs.ndims is not None and gs[:-1].is_fully_defined()
        if static_full and ls != gs[:-1]:
            raise ValueError(f"Shape mismatch: The shape of labels (received {ls}) should equal the shape "
                             f"of logits except for the last dimension (received {gs}).")
        op_name = name or "SparseSoftmaxCrossEntropyWithLogits"
        # as TF: float16 logits are computed in float32 and the loss cast back
        half = logits.dtype.base_dtype == dtypes.float16
        precise = math_ops.cast(logits, dtypes.float32) if half else logits
        if gs.ndims == 2:
            cost = apply_op("SparseSoftmaxCrossEntropyWithLogits", [precise, labels], name=op_name).outputs[0]
            return math_ops.cast(cost, dtypes.float16) if half else cost
        from .array_ops import gather, reshape, shape as shape_op, stack
        labels_shape = shape_op(labels)
        if gs.ndims is not None and gs[-1] is not None:
            flat_logits = reshape(precise, [-1, gs[-1]])
        else:
            rank_t = apply_op("Rank", [logits]).outputs[0]
            num_classes = gather(shape_op(logits), math_ops.subtract(rank_t, 1))
            flat_logits = reshape(precise, stack([-1, num_classes]))
        flat_labels = reshape(labels, [-1])
        cost = apply_op("SparseSoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels],
                        name=op_name).outputs[0]
        cost = reshape(cost, labels_shape)
        cost.set_shape(ls)
        return math_ops.cast(cost, dtypes.float16) if half else cost


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-abs(x))), composed as TF composes it."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    from .array_ops import zeros_like
    with get_default_graph().name_scope(name or "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        try:
            labels.shape.merge_with(logits.shape)
        except ValueError:
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs "
                             f"{labels.shape})") from None
        zeros = zeros_like(logits)
        cond = logits >= zeros
        relu_logits = math_ops.where(cond, logits, zeros)
        neg_abs_logits = math_ops.where(cond, -logits, logits)
        return math_ops.add(relu_logits - logits * labels, math_ops.log1p(math_ops.exp(neg_abs_logits)),
                            name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    """Like sigmoid_cross_entropy_with_logits with positive examples weighted by pos_weight."""
    labels = targets if labels is None else labels
    with get_default_graph().name_scope(name or "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"`logits` and `labels` must have the same shape, received ({logits.shape} vs "
                             f"{labels.shape}).")
        log_weight = 1 + (pos_weight - 1) * labels
        return math_ops.add(
            (1 - labels) * logits,
            log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + relu(-logits)), name=scope)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return apply_op("L2Loss", [t], name=name or "L2Loss").outputs[0]


# -- Python API: bias, dense ---------------------------------------------------------------

def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with `bias` (1-D) added along the last dimension."""
    if data_format is not None:
        if data_format.startswith("NC"):
            data_format = "NCHW"
        elif data_format.startswith("N") and data_format.endswith("C"):
            data_format = "NHWC"
        else:
            raise ValueError("data_format must be of the form `N...C` or `NC...`")
        _check_format(data_format)
    with get_default_graph().name_scope(name or "BiasAdd") as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return apply_op("BiasAdd", [value, bias], name=scope, data_format="NHWC").outputs[0]


def bias_add_v1(value, bias, name=None):
    return bias_add(value, bias, name=name or "BiasAddV1")


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with get_default_graph().name_scope(name or "xw_plus_b") as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        mm = math_ops.matmul(x, weights)
        return bias_add(mm, biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    with get_default_graph().name_scope(name or "relu_layer") as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        xw_plus_b_ = bias_add(math_ops.matmul(x, weights), biases)
        return relu(xw_plus_b_, name=scope)


# -- Python API: dropout, moments, normalization --------------------------------------------

def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1 dropout: keeps each element with probability keep_prob (= 1 - rate) and
    scales kept elements by 1 / keep_prob; built as x / keep_prob * floor(keep_prob + U[0, 1))."""
    from . import random_ops
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
    if keep_prob is None and rate is None:
        raise ValueError("You must provide a rate to dropout.")
    with get_default_graph().name_scope(name or "dropout") as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. "
                             f"Got a {x.dtype.base_dtype.name} tensor instead.")
        if rate is not None:
            if isinstance(rate, numbers.Real):
                if not 0 <= rate < 1:
                    raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate:g}")
                keep_prob = 1.0 - rate
            else:
                rate = convert_to_tensor(rate, dtype=x.dtype.base_dtype, name="rate")
                keep_prob = math_ops.subtract(np.array(1, dtype=x.dtype.np), rate)
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob:g}")
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype.base_dtype, name="keep_prob")
        keep_prob.shape.assert_is_compatible_with(TensorShape([]))
        kp = constant_value(keep_prob)
        if kp is not None and float(kp) == 1.0:
            return x
        noise_shape = _noise_shape(x, noise_shape)
        # uniform [keep_prob, 1.0 + keep_prob): floor is 0 with probability 1 - keep_prob
        random_tensor = keep_prob + random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype.base_dtype)
        binary_tensor = math_ops.floor(random_tensor)
        ret = math_ops.multiply(math_ops.divide(x, keep_prob), binary_tensor, name=scope)
        ret.set_shape(x.shape)
        return ret


def _noise_shape(x, noise_shape):
    from .array_ops import shape as shape_op
    if noise_shape is None:
        if x.shape.is_fully_defined():
            return x.shape.as_list()
        return shape_op(x)
    if is_tensor_like(noise_shape):
        return noise_shape
    try:
        dims = TensorShape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if x.shape.ndims is not None and dims.ndims == x.shape.ndims:
        merged = []
        for xd, nd in zip(x.shape.as_list(), dims.as_list()):
            merged.append(xd if nd is None and xd is not None else nd)
        if all(d is not None for d in merged):
            return merged
    return noise_shape


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`; the variance is the population variance."""
    from .array_ops import squeeze, stop_gradient
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with get_default_graph().name_scope(name or "moments"):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype.base_dtype == dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            squeeze_axes = [axes] if isinstance(axes, int) else list(axes)
            mean = squeeze(mean, squeeze_axes)
            variance = squeeze(variance, squeeze_axes)
        if x.dtype.base_dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, composed as TF does."""
    with get_default_graph().name_scope(name or "batchnorm"):
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(
            offset - mean * inv if offset is not None else -mean * inv, x.dtype)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = dim if axis is None else axis
    with get_default_graph().name_scope(name or "l2_normalize") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            # the norm of |x|^2 = re^2 + im^2, applied to both parts (TF's composition)
            re, im = math_ops.real(x), math_ops.imag(x)
            square_sum = math_ops.real(math_ops.reduce_sum(math_ops.square(re) + math_ops.square(im), axis,
                                                           keepdims=True))
            x_inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
            return math_ops.complex(math_ops.multiply(re, x_inv_norm), math_ops.multiply(im, x_inv_norm),
                                    name=scope)
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        x_inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, x_inv_norm, name=scope)


def in_top_k(predictions, targets, k, name=None):
    """Whether each target class is among the top k predictions of its row (ties count as in)."""
    with get_default_graph().name_scope(name or "in_top_k"):
        targets = convert_to_tensor(targets, name="targets")
        k = convert_to_tensor(k, dtype=targets.dtype.base_dtype, name="k")
        # TF names the op after `name` inside the scope of the same name: in_top_k/InTopKV2, it/it
        return apply_op("InTopKV2", [predictions, targets, k], name=name or "InTopKV2").outputs[0]


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """(values, indices) of the k largest entries of the last dimension, largest first;
    equal values keep their index order."""
    op = apply_op("TopKV2", [input, k], name=name or "TopKV2", sorted=bool(sorted))
    return op.outputs[0], op.outputs[1]


def zero_fraction(value, name=None):
    """The fraction of zeros in `value` (a float32 scalar)."""
    with get_default_graph().name_scope(name or "zero_fraction"):
        value = convert_to_tensor(value, name="value")
        zero = np.zeros((), dtype=value.dtype.base_dtype.np)
        return math_ops.reduce_mean(math_ops.cast(math_ops.equal(value, zero), dtypes.float32))


# -- Python API: convolution and pooling -------------------------------------------------------

def _get_sequence(value, n, name):
    """TF's helper: an int or a list of 1, n or n + 2 values -> the full NHWC list."""
    if value is None:
        value = [1]
    elif isinstance(value, (numbers.Integral, Dimension)):
        value = [value]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    return [1] + value + [1]


def _check_api_format(data_format):
    if data_format is None:
        return "NHWC"
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    _check_format(data_format)
    return data_format


def _check_api_padding(padding):
    if isinstance(padding, bytes):
        padding = padding.decode()
    if isinstance(padding, (list, tuple)):
        raise ValueError("graphrt does not support explicit padding lists; use 'SAME' or 'VALID'")
    _check_padding(padding)
    return padding


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """2-D convolution (cross-correlation, as TF) of an NHWC `input` with an HWIO `filter`."""
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    filter = filters if filter is None else filter
    if filter is None:
        raise ValueError("conv2d needs a filter")
    if strides is None:
        raise TypeError("conv2d() missing required argument 'strides'")
    padding = _check_api_padding(padding)
    data_format = _check_api_format(data_format)
    strides = _get_sequence(strides, 2, "strides")
    dilations = _get_sequence(dilations, 2, "dilations")
    check_conv_attrs("Conv2D", strides, padding, data_format, dilations)
    return apply_op("Conv2D", [input, filter], name=name or "Conv2D", strides=strides, padding=padding,
                    use_cudnn_on_gpu=bool(use_cudnn_on_gpu), data_format=data_format,
                    dilations=dilations).outputs[0]


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of [batch, width, in] with [width, in, out], as TF does it: a conv2d of height 1."""
    from .array_ops import expand_dims, squeeze
    value = input if value is None else value
    if data_format not in (None, "NWC", "NHWC"):
        raise ValueError(f"graphrt supports only data_format='NWC' for conv1d, got {data_format!r}")
    if isinstance(dilations, (list, tuple)):
        if len(dilations) not in (1, 3):
            raise ValueError(f"dilations should be of length 1 or 3 but was {len(dilations)}")
        dilations = dilations[-2] if len(dilations) == 3 else dilations[0]
    rate = 1 if dilations is None else int(dilations)
    if isinstance(stride, (list, tuple)):
        if len(stride) == 3:
            stride = stride[1]
        elif len(stride) == 1:
            stride = stride[0]
        else:
            raise ValueError(f"stride should be of length 1 or 3 but was {len(stride)}")
    with get_default_graph().name_scope(name or "conv1d") as scope:
        value = expand_dims(value, 1)
        filters = expand_dims(filters, 0)
        result = conv2d(value, filters, strides=[1, 1, int(stride), 1], padding=padding, dilations=[1, 1, rate, 1])
        return squeeze(result, [1])


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    filter = filters if filter is None else filter
    padding = _check_api_padding(padding)
    data_format = _check_api_format(data_format)
    strides = _get_sequence(strides, 2, "strides")
    dilations = _get_sequence(dilations, 2, "dilations")
    check_conv_attrs("Conv2DBackpropInput", strides, padding, data_format, dilations)
    return apply_op("Conv2DBackpropInput", [input_sizes, filter, out_backprop], name=name or "Conv2DBackpropInput",
                    strides=strides, padding=padding, use_cudnn_on_gpu=bool(use_cudnn_on_gpu),
                    data_format=data_format, dilations=dilations).outputs[0]


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                           name=None):
    padding = _check_api_padding(padding)
    data_format = _check_api_format(data_format)
    strides = _get_sequence(strides, 2, "strides")
    dilations = _get_sequence(dilations, 2, "dilations")
    check_conv_attrs("Conv2DBackpropFilter", strides, padding, data_format, dilations)
    return apply_op("Conv2DBackpropFilter", [input, filter_sizes, out_backprop],
                    name=name or "Conv2DBackpropFilter", strides=strides, padding=padding,
                    use_cudnn_on_gpu=bool(use_cudnn_on_gpu), data_format=data_format,
                    dilations=dilations).outputs[0]


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The gradient of conv2d with respect to its input, used as a layer ("deconvolution")."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    with get_default_graph().name_scope(name or "conv2d_transpose") as scope:
        return conv2d_backprop_input(output_shape, filter, value, strides=strides, padding=padding,
                                     data_format=data_format, dilations=dilations or [1, 1, 1, 1], name=scope)


def _pool(op_type, default_name, value, ksize, strides, padding, data_format, name):
    padding = _check_api_padding(padding)
    data_format = _check_api_format(data_format)
    ksize = _get_sequence(ksize, 2, "ksize")
    strides = _get_sequence(strides, 2, "strides")
    check_pool_attrs(op_type, ksize, strides, padding, data_format)
    with get_default_graph().name_scope(name or default_name) as scope:
        value = convert_to_tensor(value, name="input")
        return apply_op(op_type, [value], name=scope, ksize=ksize, strides=strides, padding=padding,
                        data_format=data_format).outputs[0]


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Max over each ksize window (NHWC); SAME padding never contributes to the max."""
    value = input if value is None else value
    return _pool("MaxPool", "MaxPool", value, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """Mean over each ksize window (NHWC); with SAME padding each window is divided by its
    number of non-padding elements, as TF does."""
    value = input if value is None else value
    return _pool("AvgPool", "AvgPool", value, ksize, strides, padding, data_format, name)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name or "MaxPool2d")


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC", name=None):
    padding = _check_api_padding(padding)
    ksize = _get_sequence(ksize, 2, "ksize")
    strides = _get_sequence(strides, 2, "strides")
    check_pool_attrs("MaxPoolGrad", ksize, strides, padding, _check_api_format(data_format))
    return apply_op("MaxPoolGrad", [orig_input, orig_output, grad], name=name or "MaxPoolGrad", ksize=ksize,
                    strides=strides, padding=padding, data_format="NHWC").outputs[0]


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NHWC", name=None):
    padding = _check_api_padding(padding)
    ksize = _get_sequence(ksize, 2, "ksize")
    strides = _get_sequence(strides, 2, "strides")
    check_pool_attrs("AvgPoolGrad", ksize, strides, padding, _check_api_format(data_format))
    return apply_op("AvgPoolGrad", [orig_input_shape, grad], name=name or "AvgPoolGrad", ksize=ksize,
                    strides=strides, padding=padding, data_format="NHWC").outputs[0]


# Names the `tf.nn` namespace exports from this module.
NN_API = [
    "relu", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu", "sigmoid", "tanh",
    "softmax", "log_softmax", "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "l2_loss", "bias_add", "xw_plus_b", "relu_layer", "dropout",
    "moments", "batch_normalization", "l2_normalize", "in_top_k", "top_k", "zero_fraction",
    "conv1d", "conv2d", "conv2d_backprop_input",
    "conv2d_backprop_filter", "conv2d_transpose", "max_pool", "avg_pool", "max_pool2d", "avg_pool2d",
]


# -- compositions TF1 builds in Python (nn_impl) ------------------------------------------

def swish(features, beta=1.0, name=None):
    """features * sigmoid(beta * features) (tf.nn.swish, tf.nn.silu)."""
    with get_default_graph().name_scope(name or "swish"):
        features = convert_to_tensor(features, name="features")
        if isinstance(beta, numbers.Number) and beta == 1.0:
            return features * math_ops.sigmoid(features)
        beta = math_ops.cast(convert_to_tensor(beta, name="beta"), features.dtype.base_dtype)
        return features * math_ops.sigmoid(beta * features)


silu = swish


def crelu(features, name=None, axis=-1):
    """relu of [features, -features] concatenated along `axis`."""
    from .array_ops import concat
    with get_default_graph().name_scope(name or "CRelu") as scope:
        features = convert_to_tensor(features, name="features")
        return relu(concat([features, -features], axis, name=scope))


def _keep_dims_arg(keep_dims, keepdims):
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    return bool(keepdims if keepdims is not None else (keep_dims or False))


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over `axes`."""
    from .array_ops import gather, shape
    from .math_ops import reduce_prod
    axes = sorted(set([axes] if isinstance(axes, numbers.Integral) else axes))
    keep = _keep_dims_arg(keep_dims, keepdims)
    with get_default_graph().name_scope(name or "sufficient_statistics"):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            count = int(np.prod([dims[d] for d in axes]))
            counts = convert_to_tensor(np.array(count, dtype=x.dtype.base_dtype.np), name="Const")
        else:
            rank = x.shape.ndims
            if rank is None:
                raise ValueError("sufficient_statistics needs an input of known rank when dimensions are unknown")
            positive = [a + rank if a < 0 else a for a in axes]
            counts = reduce_prod(gather(math_ops.cast(shape(x), x.dtype.base_dtype), positive), name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss, v_ss = math_ops.subtract(x, shift), math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics."""
    with get_default_graph().name_scope(name or "normalize"):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean),
                                     name="variance")
    return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`, each element counted `frequency_weights` times."""
    from .array_ops import squeeze, zeros_like
    from .extra_ops import div_no_nan
    keep = _keep_dims_arg(keep_dims, keepdims)
    with get_default_graph().name_scope(name or "weighted_moments"):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype.base_dtype == dtypes.float16
        if half:
            x = math_ops.cast(x, dtypes.float32)
        if weights.dtype.base_dtype != x.dtype.base_dtype:
            weights = math_ops.cast(weights, x.dtype.base_dtype)
        weighted_sum = math_ops.reduce_sum(weights * x, axes, name="weighted_input_sum", keepdims=True)
        sum_of_weights = math_ops.reduce_sum(weights + zeros_like(x), axes, name="sum_of_weights", keepdims=True)
        mean = div_no_nan(weighted_sum, sum_of_weights)
        distsq = math_ops.reduce_sum(weights * math_ops.squared_difference(x, mean), axes,
                                     name="weighted_distsq", keepdims=True)
        variance = div_no_nan(distsq, sum_of_weights)
        if not keep:
            mean, variance = squeeze(mean, axis=axes), squeeze(variance, axis=axes)
        if half:
            mean, variance = math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - targets * log_input, plus Stirling's approximation of log(targets!) for
    targets > 1 when `compute_full_loss`."""
    from .array_ops import ones_like, zeros_like
    with get_default_graph().name_scope(name or "log_poisson_loss"):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(f"`log_input` and `targets` must have the same shape, received "
                             f"({log_input.shape} vs {targets.shape}).")
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            np_type = targets.dtype.base_dtype.np
            stirling = targets * math_ops.log(targets) - targets + \
                np.array(0.5, dtype=np_type) * math_ops.log(np.array(2 * np.pi, dtype=np_type) * targets)
            zeros, ones = zeros_like(targets, dtype=targets.dtype), ones_like(targets, dtype=targets.dtype)
            result += math_ops.where(math_ops.logical_and(targets >= zeros, targets <= ones), zeros, stirling)
        return result


# -- local response normalization, atrous convolutions, fused batch norm --------------------

_LRN_ATTRS = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
register_op("LRN", ["input: T"], ["output: T"], attrs=dict(_LRN_ATTRS),
            shape_fn=lambda ctx: ctx.shape(0).with_rank(4),
            allowed_types={"T": (dtypes.float16, dtypes.float32)})
register_op("LRNGrad", ["input_grads: T", "input_image: T", "output_image: T"], ["output: T"],
            attrs=dict(_LRN_ATTRS), shape_fn=lambda ctx: ctx.shape(1).with_rank(4),
            allowed_types={"T": (dtypes.float16, dtypes.float32)})


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """input / (bias + alpha * sum of squares over the depth_radius neighbouring channels) ** beta."""
    return apply_op("LRN", [input], name=name or "LRN", depth_radius=int(depth_radius), bias=float(bias),
                    alpha=float(alpha), beta=float(beta)).outputs[0]


lrn = local_response_normalization


def atrous_conv2d(value, filters, rate, padding, name=None):
    """A convolution whose filter taps are `rate` apart (stride 1): conv2d with dilations."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    with get_default_graph().name_scope(name or "convolution") as scope:
        return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, int(rate), int(rate), 1], name=scope)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose (gradient with respect to the input) of atrous_conv2d."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    with get_default_graph().name_scope(name or "atrous_conv2d_transpose") as scope:
        return conv2d_backprop_input(output_shape, filters, value, strides=[1, 1, 1, 1], padding=padding,
                                     dilations=[1, int(rate), int(rate), 1], name=scope)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """(y, mean, variance) of TF's fused batch normalization (FusedBatchNormV3): in training the
    batch's mean and its unbiased variance; otherwise `mean` and `variance` are used and returned."""
    from ..framework.op_builder import constant
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"graphrt's fused_batch_norm supports data_format NHWC and NCHW, got {data_format!r}")
    if not is_training and (mean is None or variance is None):
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training is False.")
    with get_default_graph().name_scope(name or "FusedBatchNormV3") as scope:
        x = convert_to_tensor(x, name="input")
        scale = convert_to_tensor(scale, name="scale")
        offset = convert_to_tensor(offset, name="offset")
        if mean is None:
            mean = constant([], dtype=scale.dtype.base_dtype)
        if variance is None:
            variance = constant([], dtype=scale.dtype.base_dtype)
        op = apply_op("FusedBatchNormV3", [x, scale, offset, mean, variance], name=scope, epsilon=float(epsilon),
                      exponential_avg_factor=float(exponential_avg_factor), data_format=data_format,
                      is_training=bool(is_training))
        return op.outputs[0], op.outputs[1], op.outputs[2]


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """TF1's N-D convolution entry point, for the ranks graphrt convolves: 1-D (NWC) and 2-D (NHWC)."""
    filter = filters if filter is None else filter  # noqa: A001
    rate = dilations if dilation_rate is None else dilation_rate
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rank = input.shape.ndims
    if rank not in (3, 4):
        raise ValueError(f"graphrt's convolution supports 1-D and 2-D inputs (rank 3 or 4), got rank {rank}")
    spatial = rank - 2
    strides = [1] * spatial if strides is None else list(strides)
    rate = [1] * spatial if rate is None else list(rate)
    if any(int(r) != 1 for r in rate) and any(int(s) != 1 for s in strides):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    if spatial == 1:
        return conv1d(input, filter, stride=int(strides[0]), padding=padding, data_format=data_format,
                      dilations=int(rate[0]), name=name or "convolution")
    return conv2d(input, filter, [1, *strides, 1], padding, data_format=data_format or "NHWC",
                  dilations=[1, *rate, 1], name=name or "convolution")


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None, name=None,  # noqa: A002
         data_format=None, dilations=None):
    """TF1's N-D pooling entry point, for 2-D (NHWC) inputs with dilation 1."""
    rate = dilations if dilation_rate is None else dilation_rate
    if rate is not None and any(int(r) != 1 for r in rate):
        raise ValueError(f"graphrt's pool supports only dilation_rate 1, got {list(rate)}")
    if len(window_shape) != 2:
        raise ValueError(f"graphrt's pool supports 2-D windows only, got window_shape {list(window_shape)}")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    strides = [1, 1] if strides is None else list(strides)
    fn = max_pool if pooling_type == "MAX" else avg_pool
    return fn(input, [1, *window_shape, 1], [1, *strides, 1], padding, data_format=data_format or "NHWC",
              name=name or f"{pooling_type.lower()}_pool")


def _pool1d(fn, input, ksize, strides, padding, data_format, name, default):  # noqa: A002
    from .array_ops import expand_dims, squeeze
    if data_format not in (None, "NWC"):
        raise ValueError(f"graphrt supports only data_format='NWC' for 1-D pooling, got {data_format!r}")
    k = ksize if isinstance(ksize, int) else int(list(ksize)[-2] if len(ksize) == 3 else list(ksize)[0])
    s = strides if isinstance(strides, int) else int(list(strides)[-2] if len(strides) == 3 else list(strides)[0])
    with get_default_graph().name_scope(name or default) as scope:
        pooled = fn(expand_dims(input, 1), [1, 1, k, 1], [1, 1, s, 1], padding)
        return squeeze(pooled, [1], name=scope)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max over each window of a [batch, width, channels] input (a max_pool of height 1)."""
    return _pool1d(max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Mean over each window of a [batch, width, channels] input (an avg_pool of height 1)."""
    return _pool1d(avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1D")

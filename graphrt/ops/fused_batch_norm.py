"""FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3: TensorFlow's fused batch
normalization ops, so GraphDefs TensorFlow writes (Keras and tf.layers use
them) import and run, and `tf.nn.fused_batch_norm` builds them. graphrt's own
`tf.layers.batch_normalization` builds the same arithmetic from ordinary ops.
Their gradient is composed of ordinary ops (`nn_grad.py`).

Outputs as in TF: y, batch_mean, batch_variance (unbiased, n/(n-1)), two
reserve spaces (the biased variance's inputs), and for V3 a third. In
inference (`is_training=False`) the given mean and variance are used and
passed through.

The gradient ops (FusedBatchNormGrad, V2, V3) are declared and run too, for
the training graphs TensorFlow writes, with the arithmetic of `nn_grad.py`'s
composition: the statistics are the forward pass's reserve spaces 1 and 2.
"""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.registry import register_kernel, register_op
from ..framework.tensor_shape import TensorShape

_ATTRS = {"epsilon": 1e-4, "exponential_avg_factor": 1.0, "data_format": "NHWC", "is_training": True}
_X_TYPES = {"T": (dtypes.float16, dtypes.float32, dtypes.float64)}


def _shape(ctx):
    x = ctx.shape(0)
    channels = axis = None
    if x.ndims is not None:
        axis = 1 if ctx.attr("data_format").startswith("NC") else x.ndims - 1
        channels = x.as_list()[axis]
    if channels is None:  # TF's shape function takes it from scale and offset too, for y as well
        for i in (1, 2):
            s = ctx.shape(i)
            if s.ndims == 1 and s[0] is not None:
                channels = s[0]
                break
        if axis is not None and channels is not None:
            dims = x.as_list()
            dims[axis] = channels
            x = TensorShape(dims)
    vec = TensorShape([channels])
    return [x] + [vec] * (len(ctx.op.outputs) - 1)


_OUT5 = ["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U", "reserve_space_2: U"]
register_op("FusedBatchNorm", ["x: T", "scale: T", "offset: T", "mean: T", "variance: T"],
            [o.replace(": U", ": T") for o in _OUT5], attrs=dict(_ATTRS), shape_fn=_shape, allowed_types=_X_TYPES)
register_op("FusedBatchNormV2", ["x: T", "scale: U", "offset: U", "mean: U", "variance: U"], _OUT5,
            attrs=dict(_ATTRS), shape_fn=_shape, allowed_types=_X_TYPES)
register_op("FusedBatchNormV3", ["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
            _OUT5 + ["reserve_space_3: U"], attrs=dict(_ATTRS), shape_fn=_shape, allowed_types=_X_TYPES)


def _fused_batch_norm(ctx, n_outputs):
    eps, factor = float(ctx.attr("epsilon")), float(ctx.attr("exponential_avg_factor"))
    training, fmt, name = bool(ctx.attr("is_training")), ctx.attr("data_format"), ctx.name
    if fmt not in ("NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise errors.InvalidArgumentError(f"{name}: unsupported data_format {fmt}")
    channels_first = fmt.startswith("NC")

    def run(x, scale, offset, mean, variance):
        x = np.asarray(x)
        if x.ndim not in (4, 5):
            raise errors.InvalidArgumentError(f"{name}: input must be 4 or 5-dimensional, got shape "
                                              f"{list(x.shape)}")
        axis = 1 if channels_first else x.ndim - 1
        axes = tuple(i for i in range(x.ndim) if i != axis)
        shape = [1] * x.ndim
        shape[axis] = -1
        xf = x.astype(np.float32) if x.dtype == np.float16 else x
        u = np.asarray(scale).dtype
        if training:
            batch_mean = xf.mean(axis=axes)
            batch_var = xf.var(axis=axes)
            n = x.size // max(1, x.shape[axis])
            unbiased = batch_var * (n / max(n - 1, 1))
            use_mean, use_var = batch_mean, batch_var
            if factor != 1.0 and np.asarray(mean).size:  # a running average kept by the op itself
                unbiased = (1.0 - factor) * np.asarray(variance) + factor * unbiased
                batch_mean = (1.0 - factor) * np.asarray(mean) + factor * batch_mean
            out_mean, out_var, reserve = batch_mean, unbiased, (use_mean, use_var)
        else:
            use_mean, use_var = np.asarray(mean), np.asarray(variance)
            out_mean, out_var, reserve = use_mean, use_var, (use_mean, use_var)
        inv = np.asarray(scale) / np.sqrt(use_var + eps)
        y = (xf - use_mean.reshape(shape)) * inv.reshape(shape) + np.asarray(offset).reshape(shape)
        outs = [y.astype(x.dtype), np.asarray(out_mean, u), np.asarray(out_var, u),
                np.asarray(reserve[0], u), np.asarray(reserve[1], u)]
        if n_outputs == 6:
            outs.append(np.zeros(0, u))
        return tuple(outs)
    return run


for _op, _n in (("FusedBatchNorm", 5), ("FusedBatchNormV2", 5), ("FusedBatchNormV3", 6)):
    register_kernel(_op, ("CPU", "GPU"))(lambda ctx, n=_n: _fused_batch_norm(ctx, n))


_GRAD_ATTRS = {"epsilon": 1e-4, "data_format": "NHWC", "is_training": True}
_GRAD_OUT = ["x_backprop: T", "scale_backprop: U", "offset_backprop: U"]


def _grad_shape(ctx):
    x, scale = ctx.shape(1), ctx.shape(2)
    return [x, scale, scale] + [TensorShape([None])] * (len(ctx.op.outputs) - 3)


register_op("FusedBatchNormGrad", ["y_backprop: T", "x: T", "scale: T", "reserve_space_1: T", "reserve_space_2: T"],
            ["x_backprop: T", "scale_backprop: T", "offset_backprop: T", "reserve_space_3: T", "reserve_space_4: T"],
            attrs=dict(_GRAD_ATTRS), shape_fn=_grad_shape, allowed_types=_X_TYPES)
register_op("FusedBatchNormGradV2", ["y_backprop: T", "x: T", "scale: float32", "reserve_space_1: U",
                                     "reserve_space_2: U"], _GRAD_OUT + ["reserve_space_3: U", "reserve_space_4: U"],
            attrs=dict(_GRAD_ATTRS), shape_fn=_grad_shape, allowed_types=_X_TYPES)
register_op("FusedBatchNormGradV3", ["y_backprop: T", "x: T", "scale: float32", "reserve_space_1: U",
                                     "reserve_space_2: U", "reserve_space_3: U"],
            _GRAD_OUT + ["reserve_space_4: U", "reserve_space_5: U"], attrs=dict(_GRAD_ATTRS),
            shape_fn=_grad_shape, allowed_types=_X_TYPES)


def _fused_batch_norm_grad(ctx):
    eps, training, name = float(ctx.attr("epsilon")), bool(ctx.attr("is_training")), ctx.name
    channels_first = ctx.attr("data_format").startswith("NC")

    def run(dy, x, scale, mean, variance, *unused_reserve):
        dy, x = np.asarray(dy), np.asarray(x)
        if x.ndim not in (4, 5):
            raise errors.InvalidArgumentError(f"{name}: input must be 4 or 5-dimensional, got shape "
                                              f"{list(x.shape)}", node=name)
        axis = 1 if channels_first else x.ndim - 1
        axes = tuple(i for i in range(x.ndim) if i != axis)
        shape = [1] * x.ndim
        shape[axis] = -1
        u = np.asarray(scale).dtype
        work = np.float32 if x.dtype == np.float16 else x.dtype
        xf, dyf = x.astype(work), dy.astype(work)
        mean, variance, scale = (np.asarray(v, work) for v in (mean, variance, scale))
        inv = 1.0 / np.sqrt(variance + eps)
        xhat = (xf - mean.reshape(shape)) * inv.reshape(shape)
        d_offset = dyf.sum(axis=axes)
        d_scale = (dyf * xhat).sum(axis=axes)
        if training:
            count = x.size // max(1, x.shape[axis])
            dx = (scale * inv / count).reshape(shape) * (count * dyf - d_offset.reshape(shape)
                                                         - xhat * d_scale.reshape(shape))
        else:
            dx = dyf * (scale * inv).reshape(shape)
        empty = np.zeros(0, u)
        return dx.astype(x.dtype), d_scale.astype(u), d_offset.astype(u), empty, empty
    return run


for _op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    register_kernel(_op, ("CPU", "GPU"))(_fused_batch_norm_grad)

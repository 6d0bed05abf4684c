"""FakeQuantWithMinMaxArgs/Vars/VarsPerChannel and their gradient ops (TF's names, inputs, attrs)."""
import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import register_gradient, register_kernel, register_op
from ..framework.tensor_shape import TensorShape
from ..ops import shape_fns
from ..ops.math_kernels import ALL_DEVICES

_BITS = {"num_bits": 8, "narrow_range": False}
register_op("FakeQuantWithMinMaxArgs", ["inputs: float"], ["outputs: float"],
            attrs={"min": -6.0, "max": 6.0, **_BITS}, shape_fn=shape_fns.unchanged)
register_op("FakeQuantWithMinMaxArgsGradient", ["gradients: float", "inputs: float"], ["backprops: float"],
            attrs={"min": -6.0, "max": 6.0, **_BITS}, shape_fn=lambda ctx: ctx.shape(1))
register_op("FakeQuantWithMinMaxVars", ["inputs: float", "min: float", "max: float"], ["outputs: float"],
            attrs=dict(_BITS), shape_fn=shape_fns.unchanged)
register_op("FakeQuantWithMinMaxVarsGradient", ["gradients: float", "inputs: float", "min: float", "max: float"],
            ["backprops_wrt_input: float", "backprop_wrt_min: float", "backprop_wrt_max: float"],
            attrs=dict(_BITS), shape_fn=lambda ctx: [ctx.shape(1), TensorShape([]), TensorShape([])])
register_op("FakeQuantWithMinMaxVarsPerChannel", ["inputs: float", "min: float", "max: float"], ["outputs: float"],
            attrs=dict(_BITS), shape_fn=shape_fns.unchanged)
register_op("FakeQuantWithMinMaxVarsPerChannelGradient",
            ["gradients: float", "inputs: float", "min: float", "max: float"],
            ["backprops_wrt_input: float", "backprop_wrt_min: float", "backprop_wrt_max: float"],
            attrs=dict(_BITS), shape_fn=lambda ctx: [ctx.shape(1), ctx.shape(2), ctx.shape(3)])


def _levels(ctx):
    bits, narrow = int(ctx.attr("num_bits")), bool(ctx.attr("narrow_range"))
    if not 2 <= bits <= 16:
        raise errors.InvalidArgumentError("num_bits must be between 2 and 16, inclusive", node=ctx.name)
    return (1 if narrow else 0), (1 << bits) - 1


def nudge(min_value, max_value, quant_min, quant_max):
    """TF's Nudge, in float32: (nudged min, nudged max, scale, 1/scale); 0.0 falls on a level.
    Elementwise over arrays of mins and maxes (per channel)."""
    f32 = np.float32
    min_value, max_value = np.asarray(min_value, f32), np.asarray(max_value, f32)
    qmin, qmax = f32(quant_min), f32(quant_max)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = (max_value - min_value) / (qmax - qmin)
        inv_scale = (qmax - qmin) / (max_value - min_value)
        zero_point_from_min = qmin - min_value / scale
    # round half away from zero (std::round), then held within the levels
    zero_point = np.where(zero_point_from_min < qmin, qmin, np.where(
        zero_point_from_min > qmax, qmax, np.floor(np.abs(zero_point_from_min) + f32(0.5)) *
        np.sign(zero_point_from_min))).astype(f32)
    return ((qmin - zero_point) * scale).astype(f32), ((qmax - zero_point) * scale).astype(f32), \
        scale.astype(f32), inv_scale.astype(f32)


def _fake_quant(x, nudged_min, nudged_max, scale, inv_scale):
    # TF's order: min with the top, then max with the bottom (a reversed range gives its min).
    clamped = np.maximum(np.minimum(x, nudged_max), nudged_min)
    # in float32, each step rounded (TF's vectorized kernel may fuse a multiply-add: a value may then
    # differ from TF's by one unit in the last place; the level is the same)
    level = np.floor((clamped - nudged_min) * inv_scale + np.float32(0.5))
    return (level * scale + nudged_min).astype(np.float32)


def _in_range(x, nudged_min, nudged_max):
    return (x >= nudged_min) & (x <= nudged_max)


def _check_args_range(ctx):
    low, high = float(ctx.attr("min")), float(ctx.attr("max"))
    if low >= high:
        raise errors.InvalidArgumentError(f"min has to be smaller than max, was: {low:g} >= {high:g}", node=ctx.name)
    return low, high


@register_kernel("FakeQuantWithMinMaxArgs", ALL_DEVICES)
def _args(ctx):
    levels, bounds = _levels(ctx), _check_args_range(ctx)
    nudged = nudge(*bounds, *levels)
    return lambda x: _fake_quant(np.asarray(x, np.float32), *nudged)


@register_kernel("FakeQuantWithMinMaxArgsGradient", ALL_DEVICES)
def _args_gradient(ctx):
    levels, bounds = _levels(ctx), _check_args_range(ctx)
    low, high, _, _ = nudge(*bounds, *levels)
    return lambda grad, x: np.where(_in_range(x, low, high), grad, np.float32(0)).astype(np.float32)


@register_kernel("FakeQuantWithMinMaxVars", ALL_DEVICES)
def _vars(ctx):
    levels = _levels(ctx)
    return lambda x, low, high: _fake_quant(np.asarray(x, np.float32), *nudge(low, high, *levels))


def _vars_gradient_fn(levels, per_channel):
    def gradient(grad, x, low, high):
        nudged_min, nudged_max, _, _ = nudge(low, high, *levels)
        inside = _in_range(x, nudged_min, nudged_max)
        axes = tuple(range(np.ndim(x) - 1)) if per_channel else None
        below, above = x < nudged_min, x > nudged_max
        return (np.where(inside, grad, np.float32(0)).astype(np.float32),
                np.sum(np.where(below, grad, np.float32(0)), axis=axes, dtype=np.float32),
                np.sum(np.where(above, grad, np.float32(0)), axis=axes, dtype=np.float32))
    return gradient


@register_kernel("FakeQuantWithMinMaxVarsGradient", ALL_DEVICES)
def _vars_gradient(ctx):
    return _vars_gradient_fn(_levels(ctx), per_channel=False)


@register_kernel("FakeQuantWithMinMaxVarsPerChannel", ALL_DEVICES)
def _per_channel(ctx):
    levels, name = _levels(ctx), ctx.name

    def per_channel(x, low, high):
        x = np.asarray(x, np.float32)
        if np.ndim(low) != 1 or np.shape(low) != np.shape(high) or (np.ndim(x) and x.shape[-1] != np.size(low)):
            raise errors.InvalidArgumentError(
                f"min and max must be vectors of the last dimension of inputs ({x.shape[-1] if x.ndim else 0}), got "
                f"shapes {list(np.shape(low))} and {list(np.shape(high))}", node=name)
        return _fake_quant(x, *nudge(low, high, *levels))
    return per_channel


@register_kernel("FakeQuantWithMinMaxVarsPerChannelGradient", ALL_DEVICES)
def _per_channel_gradient(ctx):
    return _vars_gradient_fn(_levels(ctx), per_channel=True)


# -- gradients --------------------------------------------------------------------------------

def _bits(op):
    return {"num_bits": op.get_attr("num_bits"), "narrow_range": op.get_attr("narrow_range")}


@register_gradient("FakeQuantWithMinMaxArgs")
def _args_grad(op, grad):
    return [apply_op("FakeQuantWithMinMaxArgsGradient", [grad, op.inputs[0]], min=op.get_attr("min"),
                     max=op.get_attr("max"), **_bits(op)).outputs[0]]


@register_gradient("FakeQuantWithMinMaxVars")
def _vars_grad(op, grad):
    return list(apply_op("FakeQuantWithMinMaxVarsGradient", [grad] + list(op.inputs), **_bits(op)).outputs)


@register_gradient("FakeQuantWithMinMaxVarsPerChannel")
def _per_channel_grad(op, grad):
    return list(apply_op("FakeQuantWithMinMaxVarsPerChannelGradient", [grad] + list(op.inputs),
                         **_bits(op)).outputs)


# -- the API ---------------------------------------------------------------------------------

def _f32(value, name):
    return convert_to_tensor(value, dtype=dtypes.float32, name=name)


def fake_quant_with_min_max_args(inputs, min=-6.0, max=6.0, num_bits=8, narrow_range=False,  # noqa: A002
                                 name=None):
    return apply_op("FakeQuantWithMinMaxArgs", [_f32(inputs, "inputs")], name=name or "FakeQuantWithMinMaxArgs",
                    min=float(min), max=float(max), num_bits=int(num_bits),
                    narrow_range=bool(narrow_range)).outputs[0]


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6.0, max=6.0, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    return apply_op("FakeQuantWithMinMaxArgsGradient", [_f32(gradients, "gradients"), _f32(inputs, "inputs")],
                    name=name or "FakeQuantWithMinMaxArgsGradient", min=float(min), max=float(max),
                    num_bits=int(num_bits), narrow_range=bool(narrow_range)).outputs[0]


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    return apply_op("FakeQuantWithMinMaxVars", [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                    name=name or "FakeQuantWithMinMaxVars", num_bits=int(num_bits),
                    narrow_range=bool(narrow_range)).outputs[0]


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    return tuple(apply_op("FakeQuantWithMinMaxVarsGradient",
                          [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                          name=name or "FakeQuantWithMinMaxVarsGradient", num_bits=int(num_bits),
                          narrow_range=bool(narrow_range)).outputs)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,  # noqa: A002
                                             name=None):
    return apply_op("FakeQuantWithMinMaxVarsPerChannel",
                    [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                    name=name or "FakeQuantWithMinMaxVarsPerChannel", num_bits=int(num_bits),
                    narrow_range=bool(narrow_range)).outputs[0]


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    return tuple(apply_op("FakeQuantWithMinMaxVarsPerChannelGradient",
                          [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                          name=name or "FakeQuantWithMinMaxVarsPerChannelGradient", num_bits=int(num_bits),
                          narrow_range=bool(narrow_range)).outputs)

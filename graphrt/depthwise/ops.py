"""Declarations of DepthwiseConv2dNative and its two backprop ops, and the
`tf.nn` functions that build them (TF's names, scopes and checks)."""
from ..framework.graph import get_default_graph
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops.nn_ops import FLOAT
from ..ops.nn_ops import (_check_api_format, _check_api_padding, _conv_attrs, _get_sequence, _shape_from_input,
                          _spatial, check_conv_attrs, conv2d)
from ..framework.op_builder import apply_op

ATTRS = {"strides": None, "padding": None, "explicit_paddings": [], "data_format": "NHWC",
         "dilations": [1, 1, 1, 1]}


def _output_shape(inp, flt, strides, padding):
    inp, flt = inp.with_rank(4), flt.with_rank(4)
    if not inp.dim(3).is_compatible_with(flt[2]):
        raise ValueError(f"Dimensions must be equal, but are {inp[3]} and {flt[2]}")
    channels = inp[3] if inp[3] is not None else flt[2]
    depth = None if channels is None or flt[3] is None else channels * flt[3]
    return TensorShape([inp[0], _spatial(inp[1], flt[0], strides[1], padding),
                        _spatial(inp[2], flt[1], strides[2], padding), depth])


def _undilated(dilations, op_type):
    # Conv2D's kernels take dilations; the depthwise kernels do not (yet).
    if [int(d) for d in dilations] != [1, 1, 1, 1]:
        raise ValueError(f"{op_type}: graphrt supports only dilations=[1, 1, 1, 1], got {list(dilations)}")


def _depthwise_attrs(ctx, op_type):
    strides, padding, dilations = _conv_attrs(ctx, op_type)
    _undilated(dilations, op_type)
    return strides, padding


def _forward_shape(ctx):
    strides, padding = _depthwise_attrs(ctx, "DepthwiseConv2dNative")
    return _output_shape(ctx.shape(0), ctx.shape(1), strides, padding)


def _backprop_input_shape(ctx):
    _depthwise_attrs(ctx, "DepthwiseConv2dNativeBackpropInput")
    return _shape_from_input(ctx, 0, 4)


def _backprop_filter_shape(ctx):
    _depthwise_attrs(ctx, "DepthwiseConv2dNativeBackpropFilter")
    return _shape_from_input(ctx, 1, 4)


register_op("DepthwiseConv2dNative", ["input: T", "filter: T"], ["output: T"], attrs=ATTRS,
            shape_fn=_forward_shape, allowed_types={"T": FLOAT})
register_op("DepthwiseConv2dNativeBackpropInput", ["input_sizes: int32", "filter: T", "out_backprop: T"],
            ["output: T"], attrs=ATTRS, shape_fn=_backprop_input_shape, allowed_types={"T": FLOAT})
register_op("DepthwiseConv2dNativeBackpropFilter", ["input: T", "filter_sizes: int32", "out_backprop: T"],
            ["output: T"], attrs=ATTRS, shape_fn=_backprop_filter_shape, allowed_types={"T": FLOAT})


def _rate_is_one(rate, dilations):
    for value in (rate, dilations):
        if value is None:
            continue
        values = [value] if isinstance(value, int) else list(value)
        if any(int(v) != 1 for v in values):
            raise ValueError(f"graphrt supports depthwise convolutions with rate/dilations 1 only, got {value!r}")


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002 - TF names
                            dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """Per-channel convolution: filter [kh, kw, in, multiplier] -> in * multiplier channels."""
    padding = _check_api_padding(padding)
    data_format = _check_api_format(data_format)
    strides = _get_sequence(strides, 2, "strides")
    dilations = _get_sequence(dilations, 2, "dilations")
    check_conv_attrs("DepthwiseConv2dNative", strides, padding, data_format, dilations)
    _undilated(dilations, "DepthwiseConv2dNative")
    return apply_op("DepthwiseConv2dNative", [input, filter], name=name or "DepthwiseConv2dNative",
                    strides=strides, padding=padding, data_format=data_format, dilations=dilations).outputs[0]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002 - TF names
                     data_format=None, dilations=None):
    """`tf.nn.depthwise_conv2d` (TF1 signature); `strides` is a 4-vector [1, sh, sw, 1]."""
    _rate_is_one(rate, dilations)
    with get_default_graph().name_scope(name or "depthwise") as scope:
        return depthwise_conv2d_native(input, filter, strides, padding, data_format=data_format or "NHWC",
                                       name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,  # noqa: A002
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution, then a 1x1 convolution mixing its channels."""
    _rate_is_one(rate, dilations)
    pw = pointwise_filter.shape if hasattr(pointwise_filter, "shape") else None
    if pw is not None and pw.ndims == 4 and (pw[0] not in (1, None) or pw[1] not in (1, None)):
        raise ValueError(f"Pointwise filter must be 1x1, got shape {pw}")
    with get_default_graph().name_scope(name or "separable_conv2d") as scope:
        depthwise = depthwise_conv2d_native(input, depthwise_filter, strides, padding,
                                            data_format=data_format or "NHWC", name="depthwise")
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID", data_format=data_format or "NHWC",
                      name=scope)

"""Declarations of the 3-D convolution and pooling ops, MaxPoolWithArgmax and
Dilation2D (with their backprop ops), and the `tf.nn` functions that build
them (TF1's signatures, names and build-time checks).

Only NDHWC (NHWC for the 2-D ops) is supported: another `data_format` is a
ValueError when the op is created. Attrs TF checks only when a kernel runs
(strides or dilations on the batch or channel dimension, pooling windows
over them) are refused by the kernels, with TF's error classes.
"""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.registry import register_op
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops
from ..ops.nn_ops import FLOAT, REAL, _check_padding, _get_sequence, _shape_from_input, _spatial, dilated_size

INDEX = (dtypes.int32, dtypes.int64)


# -- attr checks shared by the shape functions and the Python API ---------------------------

def _check_length(values, n, attr, op_type):
    if values is None:
        raise ValueError(f"{op_type} is missing required attr '{attr}'")
    if len(values) < n:
        raise ValueError(f"Attr '{attr}' of '{op_type}' Op passed list of length {len(values)} less than "
                         f"minimum {n}.")
    if len(values) > n:
        raise ValueError(f"{op_type} requires the {attr} attribute to contain {n} values, but got: {len(values)}")


def _check_data_format(data_format, want):
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    if data_format != want:
        raise ValueError(f"graphrt supports only data_format={want!r}, got {data_format!r}")


def _attr(ctx, name):
    value = ctx.attr(name)
    return value.decode() if isinstance(value, bytes) else value


def _conv3d_attrs(ctx, op_type):
    strides, dilations = ctx.attr("strides"), ctx.attr("dilations")
    _check_length(strides, 5, "strides", op_type)
    _check_length(dilations, 5, "dilations", op_type)
    _check_padding(_attr(ctx, "padding"))
    _check_data_format(_attr(ctx, "data_format"), "NDHWC")
    for s in strides:
        if int(s) < 1:
            raise ValueError(f"Stride must be > 0, but got {s}")
    for d in dilations:
        if int(d) < 1:
            raise ValueError(f"Dilation rate must be >= 1, but got {d}")
    return [int(s) for s in strides], _attr(ctx, "padding"), [int(d) for d in dilations]


def _pool3d_attrs(ctx, op_type):
    ksize, strides = ctx.attr("ksize"), ctx.attr("strides")
    _check_length(ksize, 5, "ksize", op_type)
    _check_length(strides, 5, "strides", op_type)
    _check_padding(_attr(ctx, "padding"))
    _check_data_format(_attr(ctx, "data_format"), "NDHWC")
    return [int(k) for k in ksize], [int(s) for s in strides], _attr(ctx, "padding")


def _windowed_shape(inp, window, strides, padding, channels, strict=True):
    """[N, out spatial..., channels] of sliding `window` (spatial extents) over `inp`. `strict`:
    a VALID window larger than the input is an error (TF's shape functions but Dilation2D's)."""
    for i, k in enumerate(window):
        size = inp[1 + i]
        if strict and padding == "VALID" and size is not None and k is not None and size < k:
            raise ValueError(f"Negative dimension size caused by subtracting {k} from {size}")
    spatial = [_spatial(inp[1 + i], window[i], strides[1 + i], padding) for i in range(len(window))]
    return TensorShape([inp[0], *spatial, channels])


# -- Conv3D and its backprops ---------------------------------------------------------------

CONV3D_ATTRS = {"strides": None, "padding": None, "data_format": "NDHWC", "dilations": [1, 1, 1, 1, 1]}


def _depth_check(in_depth, filter_depth):
    if in_depth is not None and filter_depth is not None and in_depth % filter_depth:
        raise ValueError(f"Depth of input ({in_depth}) is not a multiple of input depth of filter "
                         f"({filter_depth})")


def _conv3d_out(inp, flt, strides, padding, dilations):
    _depth_check(inp[4], flt[3])
    window = [dilated_size(flt[i], dilations[1 + i]) for i in range(3)]
    return _windowed_shape(inp, window, strides, padding, flt[4])


def _conv3d_shape(ctx):
    strides, padding, dilations = _conv3d_attrs(ctx, "Conv3D")
    return _conv3d_out(ctx.shape(0).with_rank(5), ctx.shape(1).with_rank(5), strides, padding, dilations)


def _check_out_backprop(inp, flt, dy, strides, padding, dilations):
    want = _conv3d_out(inp, flt, strides, padding, dilations)
    if not dy.is_compatible_with(want):
        raise ValueError(f"Conv3D backprop: out_backprop has shape {dy}, but the convolution's output is {want}")


def _conv3d_backprop_input_shape(ctx):
    strides, padding, dilations = _conv3d_attrs(ctx, "Conv3DBackpropInputV2")
    out = _shape_from_input(ctx, 0, 5)
    _check_out_backprop(out, ctx.shape(1).with_rank(5), ctx.shape(2).with_rank(5), strides, padding, dilations)
    return out


def _conv3d_backprop_filter_shape(ctx):
    strides, padding, dilations = _conv3d_attrs(ctx, "Conv3DBackpropFilterV2")
    out = _shape_from_input(ctx, 1, 5)
    _check_out_backprop(ctx.shape(0).with_rank(5), out, ctx.shape(2).with_rank(5), strides, padding, dilations)
    return out


register_op("Conv3D", ["input: T", "filter: T"], ["output: T"], attrs=CONV3D_ATTRS, shape_fn=_conv3d_shape,
            allowed_types={"T": FLOAT})
register_op("Conv3DBackpropInputV2", ["input_sizes: Tshape", "filter: T", "out_backprop: T"], ["output: T"],
            attrs={**CONV3D_ATTRS, "Tshape": dtypes.int32}, shape_fn=_conv3d_backprop_input_shape,
            allowed_types={"T": FLOAT, "Tshape": INDEX})
register_op("Conv3DBackpropFilterV2", ["input: T", "filter_sizes: int32", "out_backprop: T"], ["output: T"],
            attrs=CONV3D_ATTRS, shape_fn=_conv3d_backprop_filter_shape, allowed_types={"T": FLOAT})


# -- MaxPool3D, AvgPool3D and their gradients -----------------------------------------------

POOL3D_ATTRS = {"ksize": None, "strides": None, "padding": None, "data_format": "NDHWC"}
# TF's CPU kernels of the 3-D pools are float32 (and half/bfloat16) only.
POOL3D_TYPES = (dtypes.float16, dtypes.float32)


def _pool3d_shape(op_type):
    def fn(ctx):
        ksize, strides, padding = _pool3d_attrs(ctx, op_type)
        inp = ctx.shape(0).with_rank(5)
        return _windowed_shape(inp, ksize[1:4], strides, padding, inp[4])
    return fn


def _max_pool3d_grad_shape(op_type, result):
    def fn(ctx):
        _pool3d_attrs(ctx, op_type)
        for i in range(3):
            ctx.shape(i).with_rank(5)
        return ctx.shape(result)
    return fn


def _avg_pool3d_grad_shape(ctx):
    _pool3d_attrs(ctx, "AvgPool3DGrad")
    ctx.shape(1).with_rank(5)
    return _shape_from_input(ctx, 0, 5)


register_op("MaxPool3D", ["input: T"], ["output: T"], attrs=POOL3D_ATTRS, shape_fn=_pool3d_shape("MaxPool3D"),
            allowed_types={"T": POOL3D_TYPES})
register_op("AvgPool3D", ["input: T"], ["output: T"], attrs=POOL3D_ATTRS, shape_fn=_pool3d_shape("AvgPool3D"),
            allowed_types={"T": FLOAT})
register_op("MaxPool3DGrad", ["orig_input: TInput", "orig_output: TInput", "grad: T"], ["output: T"],
            attrs={**POOL3D_ATTRS, "TInput": dtypes.float32},
            shape_fn=_max_pool3d_grad_shape("MaxPool3DGrad", 0),
            allowed_types={"T": POOL3D_TYPES, "TInput": POOL3D_TYPES})
register_op("MaxPool3DGradGrad", ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"],
            attrs=POOL3D_ATTRS, shape_fn=_max_pool3d_grad_shape("MaxPool3DGradGrad", 1),
            allowed_types={"T": POOL3D_TYPES})
register_op("AvgPool3DGrad", ["orig_input_shape: int32", "grad: T"], ["output: T"], attrs=POOL3D_ATTRS,
            shape_fn=_avg_pool3d_grad_shape, allowed_types={"T": FLOAT})


# -- MaxPoolWithArgmax ---------------------------------------------------------------------

ARGMAX_ATTRS = {"ksize": None, "strides": None, "Targmax": dtypes.int64, "padding": None,
                "include_batch_in_index": False}


def _argmax_attrs(ctx, op_type):
    ksize, strides = ctx.attr("ksize"), ctx.attr("strides")
    _check_length(ksize, 4, "ksize", op_type)
    _check_length(strides, 4, "strides", op_type)
    _check_padding(_attr(ctx, "padding"))
    return [int(k) for k in ksize], [int(s) for s in strides], _attr(ctx, "padding")


def _max_pool_with_argmax_shape(ctx):
    ksize, strides, padding = _argmax_attrs(ctx, "MaxPoolWithArgmax")
    inp = ctx.shape(0).with_rank(4)
    out = _windowed_shape(inp, ksize[1:3], strides, padding, inp[3])
    return [out, out]


def _max_pool_grad_with_argmax_shape(ctx):
    _argmax_attrs(ctx, "MaxPoolGradWithArgmax")
    ctx.shape(1).with_rank(4)
    ctx.shape(2).with_rank(4)
    return ctx.shape(0).with_rank(4)


register_op("MaxPoolWithArgmax", ["input: T"], ["output: T", "argmax: Targmax"], attrs=ARGMAX_ATTRS,
            shape_fn=_max_pool_with_argmax_shape, allowed_types={"T": REAL, "Targmax": INDEX})
register_op("MaxPoolGradWithArgmax", ["input: T", "grad: T", "argmax: Targmax"], ["output: T"],
            attrs=ARGMAX_ATTRS, shape_fn=_max_pool_grad_with_argmax_shape,
            allowed_types={"T": REAL, "Targmax": INDEX})


# -- Dilation2D (grayscale morphology) -------------------------------------------------------

DILATION_ATTRS = {"strides": None, "rates": None, "padding": None}


def _dilation_attrs(ctx, op_type):
    strides, rates = ctx.attr("strides"), ctx.attr("rates")
    _check_length(strides, 4, "strides", op_type)
    _check_length(rates, 4, "rates", op_type)
    _check_padding(_attr(ctx, "padding"))
    return [int(s) for s in strides], [int(r) for r in rates], _attr(ctx, "padding")


def _dilation_out(ctx, op_type):
    strides, rates, padding = _dilation_attrs(ctx, op_type)
    inp, flt = ctx.shape(0).with_rank(4), ctx.shape(1).with_rank(3)
    if not inp.dim(3).is_compatible_with(flt[2]):
        raise ValueError(f"Dimensions must be equal, but are {inp[3]} and {flt[2]}")
    window = [dilated_size(flt[i], rates[1 + i]) for i in range(2)]
    channels = inp[3] if inp[3] is not None else flt[2]
    return inp, flt, _windowed_shape(inp, window, strides, padding, channels, strict=False)


def _dilation_shape(ctx):
    return _dilation_out(ctx, "Dilation2D")[2]


def _dilation_backprop_shape(op_type, result):
    def fn(ctx):
        shapes = _dilation_out(ctx, op_type)
        ctx.shape(2).with_rank(4)
        return shapes[result]
    return fn


register_op("Dilation2D", ["input: T", "filter: T"], ["output: T"], attrs=DILATION_ATTRS,
            shape_fn=_dilation_shape, allowed_types={"T": REAL})
register_op("Dilation2DBackpropInput", ["input: T", "filter: T", "out_backprop: T"], ["in_backprop: T"],
            attrs=DILATION_ATTRS, shape_fn=_dilation_backprop_shape("Dilation2DBackpropInput", 0),
            allowed_types={"T": REAL})
register_op("Dilation2DBackpropFilter", ["input: T", "filter: T", "out_backprop: T"], ["filter_backprop: T"],
            attrs=DILATION_ATTRS, shape_fn=_dilation_backprop_shape("Dilation2DBackpropFilter", 1),
            allowed_types={"T": REAL})


# -- Python API ---------------------------------------------------------------------------------

def _format_3d(data_format):
    data_format = "NDHWC" if data_format is None else data_format
    _check_data_format(data_format, "NDHWC")
    return "NDHWC"


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002 - TF names
           dilations=[1, 1, 1, 1, 1], name=None, filters=None):  # noqa: B006
    """3-D convolution (cross-correlation) of an NDHWC `input` with a DHWIO `filter`; TF1's
    signature: `strides` and `dilations` are 5-vectors."""
    filter = filters if filter is None else filter  # noqa: A001
    return apply_op("Conv3D", [input, filter], name=name or "Conv3D", strides=strides, padding=padding,
                    data_format=_format_3d(data_format), dilations=dilations).outputs[0]


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                              data_format="NDHWC", dilations=[1, 1, 1, 1, 1], name=None):  # noqa: B006
    return apply_op("Conv3DBackpropFilterV2", [input, filter_sizes, out_backprop],
                    name=name or "Conv3DBackpropFilterV2", strides=strides, padding=padding,
                    data_format=_format_3d(data_format), dilations=dilations).outputs[0]


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The gradient of conv3d with respect to its input; filter [d, h, w, out, in]."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with get_default_graph().name_scope(name or "conv3d_transpose") as scope:
        data_format = _format_3d(data_format)
        return apply_op("Conv3DBackpropInputV2", [output_shape, filter, value], name=scope,
                        strides=_get_sequence(strides, 3, "strides"), padding=padding, data_format=data_format,
                        dilations=_get_sequence(dilations, 3, "dilations")).outputs[0]


def _pool3d(op_type, input, ksize, strides, padding, data_format, name):  # noqa: A002
    with get_default_graph().name_scope(name or op_type) as scope:
        data_format = _format_3d(data_format)
        return apply_op(op_type, [input], name=scope, ksize=_get_sequence(ksize, 3, "ksize"),
                        strides=_get_sequence(strides, 3, "strides"), padding=padding,
                        data_format=data_format).outputs[0]


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Max over each ksize window of an NDHWC input; padding never wins."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Mean over each ksize window of an NDHWC input, over its non-padding elements (as TF)."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _list_attr(value, attr):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{attr}' argument to 'max_pool_with_argmax' Op, not {value!r}.")
    return [int(v) for v in value]


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None,  # noqa: A002,N803
                         name=None, output_dtype=None, include_batch_in_index=False):
    """(max pool, flattened index of each max): index ((b * height + y) * width + x) * channels + c,
    without the b term unless `include_batch_in_index`. The first max of a window wins; padding
    never does."""
    if data_format != "NHWC":
        raise ValueError("`data_format` values other  than 'NHWC' are not supported. Received: "
                         f"data_format={data_format}")
    if output_dtype is not None and Targmax is not None:
        raise ValueError("Cannot specify both 'output_dtype' and 'Targmax'.")
    targmax = output_dtype if Targmax is None else Targmax
    op = apply_op("MaxPoolWithArgmax", [input], name=name or "MaxPoolWithArgmax",
                  ksize=_list_attr(ksize, "ksize"), strides=_list_attr(strides, "strides"), padding=padding,
                  Targmax=dtypes.as_dtype(targmax or dtypes.int64),
                  include_batch_in_index=bool(include_batch_in_index))
    return op.outputs[0], op.outputs[1]


def dilation2d(input, filter=None, strides=None, rates=None, padding=None, name=None,  # noqa: A002
               filters=None, dilations=None):
    """Grayscale dilation: out[b, y, x, c] = max over taps of input[b, y*sy + i*ry, x*sx + j*rx, c]
    + filter[i, j, c] (padding never wins)."""
    filter = filters if filter is None else filter  # noqa: A001
    rates = dilations if rates is None else rates
    return apply_op("Dilation2D", [input, filter], name=name or "Dilation2D", strides=strides, rates=rates,
                    padding=padding).outputs[0]


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion, by duality as TF builds it: -dilation2d(-value, reflected kernel)."""
    with get_default_graph().name_scope(name or "erosion2d") as scope:
        value = convert_to_tensor(value, name="value")
        kernel = convert_to_tensor(kernel, name="kernel")
        dilated = apply_op("Dilation2D", [math_ops.negative(value), array_ops.reverse_v2(kernel, [0, 1])],
                           name=scope, strides=strides, rates=rates, padding=padding).outputs[0]
        return math_ops.negative(dilated)

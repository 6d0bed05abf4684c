"""tf.nn names that are aliases or small compositions of graphrt's ops, built as
TF builds them: the depthwise backprops under their public names, conv1d /
rank-dispatched transposed convolutions, the rank-dispatched pools of TF 2
(avg_pool_v2, max_pool_v2), the distribution-aware loss scalings (one
replica here), batch_norm_with_global_normalization."""
from .depthwise import ops as _depthwise
from .framework import dtypes
from .framework.graph import Tensor, get_default_graph
from .framework.op_builder import apply_op, convert_to_tensor
from .ops import array_ops, math_ops, nn_ops
from .ops.extra_ops import div_no_nan
from .volumetric import avg_pool3d, conv3d_transpose, max_pool3d


def _depthwise_backprop(op_type, inputs, strides, padding, data_format, dilations, name):
    padding = nn_ops._check_api_padding(padding)
    data_format = nn_ops._check_api_format(data_format)
    strides = nn_ops._get_sequence(strides, 2, "strides")
    dilations = nn_ops._get_sequence(dilations, 2, "dilations")
    _depthwise._undilated(dilations, op_type)
    return apply_op(op_type, inputs, name=name or op_type, strides=strides, padding=padding,
                    data_format=data_format, dilations=dilations).outputs[0]


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                            data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    return _depthwise_backprop("DepthwiseConv2dNativeBackpropFilter", [input, filter_sizes, out_backprop], strides,
                               padding, data_format, dilations, name)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    return _depthwise_backprop("DepthwiseConv2dNativeBackpropInput", [input_sizes, filter, out_backprop], strides,
                               padding, data_format, dilations, name)


depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter
depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """conv2d_backprop_input over a height-1 image (TF's composition)."""
    g = get_default_graph()
    with g.name_scope(name or "conv1d_transpose") as scope:
        if data_format is None or data_format == "NWC":
            data_format, spatial_start, channel = "NHWC", 1, 2
        elif data_format == "NCW":
            data_format, spatial_start, channel = "NCHW", 2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        strides = [1] + _sequence(strides, channel, "stride")
        dilations = [1] + _sequence(dilations, channel, "dilations")
        input = array_ops.expand_dims(input, spatial_start)  # noqa: A001
        filters = array_ops.expand_dims(filters, 0)
        if not isinstance(output_shape, Tensor):
            output_shape = list(output_shape)
        output_shape = array_ops.concat([output_shape[:spatial_start], [1], output_shape[spatial_start:]], 0)
        result = nn_ops.conv2d_backprop_input(output_shape, filters, input, strides=strides, padding=padding,
                                              data_format=data_format, dilations=dilations, name=scope)
        return array_ops.squeeze(result, [spatial_start])


def _sequence(value, channel_index, name):
    """TF's _get_sequence for one spatial dim: an int or 1 or 3 values -> the 3 of an N?C layout."""
    if value is None:
        value = [1]
    elif not isinstance(value, (list, tuple)):
        value = [value]
    value = list(value)
    if len(value) == 1:
        out = [1, 1, 1]
        out[3 - channel_index] = value[0]
        return out
    if len(value) == 3:
        return value
    raise ValueError(f"{name} should be of length 1, 1 or 3. Received: {name}={value} of length {len(value)}")


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """conv{1,2,3}d_transpose chosen by the length of output_shape."""
    g = get_default_graph()
    with g.name_scope(name or "conv_transpose") as scope:
        if isinstance(output_shape, Tensor):
            n = output_shape.shape.dims[0].value - 2
        elif hasattr(output_shape, "__len__"):
            n = len(output_shape) - 2
        else:
            raise ValueError(f"`output_shape` must be a tensor or sized collection. Received: "
                             f"output_shape={output_shape}")
        if not 1 <= n <= 3:
            raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: output_shape={output_shape} "
                             f"of length {n + 2}.")
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides, padding=padding,
                                    data_format=data_format or "NWC", dilations=dilations, name=scope)
        if n == 2:
            return nn_ops.conv2d_transpose(input, filters, output_shape, strides, padding=padding,
                                           data_format=data_format or "NHWC", dilations=dilations, name=scope)
        return conv3d_transpose(input, filters, output_shape, strides, padding=padding,
                                data_format=data_format or "NDHWC", dilations=dilations, name=scope)


def _pool_v2(pools, input, ksize, strides, padding, data_format, name):  # noqa: A002
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.ndims is not None:
        n = input.shape.ndims - 2
    elif data_format is not None:
        n = len(data_format) - 2
    else:
        raise ValueError(f"`input` must have a static shape or `data_format` must be given. Received: "
                         f"input.shape={input.shape} and data_format={data_format}")
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={input.shape} of rank "
                         f"{n + 2}.")
    default_format = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    return pools[n](input, ksize, strides, padding, data_format=data_format or default_format, name=name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """avg_pool1d, avg_pool or avg_pool3d by the rank of input (TF 2's tf.nn.avg_pool)."""
    return _pool_v2({1: nn_ops.avg_pool1d, 2: nn_ops.avg_pool, 3: avg_pool3d}, input, ksize, strides,
                    padding, data_format, name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """max_pool1d, max_pool or max_pool3d by the rank of input (TF 2's tf.nn.max_pool)."""
    return _pool_v2({1: nn_ops.max_pool1d, 2: nn_ops.max_pool2d, 3: max_pool3d}, input, ksize, strides, padding,
                    data_format, name)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (default: the batch; graphrt
    runs one replica), 0 when the batch size is 0."""
    per_example_loss = convert_to_tensor(per_example_loss)
    input_dtype = per_example_loss.dtype.base_dtype
    if per_example_loss.shape.ndims == 0:
        raise ValueError(f"Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={per_example_loss} with rank 0")
    if sample_weight is not None:
        losses = math_ops.cast(per_example_loss, dtypes.float32)
        weight = math_ops.cast(convert_to_tensor(sample_weight), dtypes.float32)
        lr, wr = losses.shape.ndims, weight.shape.ndims
        if lr is not None and wr is not None:  # TF's squeeze_or_expand_dimensions
            if wr - lr == 1:
                weight = array_ops.squeeze(weight, [-1])
            elif lr - wr == 1:
                weight = array_ops.expand_dims(weight, -1)
        per_example_loss = math_ops.cast(losses * weight, input_dtype)
    if global_batch_size is None:
        global_batch_size = array_ops.shape(per_example_loss)[0]
    loss = math_ops.reduce_sum(per_example_loss)
    return div_no_nan(loss, math_ops.cast(global_batch_size, input_dtype))


def scale_regularization_loss(regularization_loss):
    """sum(regularization_loss) / the number of replicas (one in graphrt)."""
    return math_ops.reduce_sum(regularization_loss) / 1


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None,  # noqa: A002
                                         mean=None, variance=None):
    """batch_normalization, with gamma only when scale_after_normalization (TF's composition)."""
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if variance is not None and v is None else v
    return nn_ops.batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                                      variance_epsilon, name)

"""`tf.layers.SeparableConv2D` / `separable_conv2d` (and the 1-D forms): a depthwise
convolution (kernel `depthwise_kernel` [kh, kw, in, depth_multiplier]), a
1x1 convolution (`pointwise_kernel` [1, 1, in * depth_multiplier, filters]),
then bias and activation, with TF's variable names."""
from ..framework.tensor_shape import as_shape
from ..layers import Conv2D, _check_ndim
from ..ops import array_ops, nn_ops
from .ops import separable_conv2d as nn_separable_conv2d


class SeparableConv2D(Conv2D):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer=None, pointwise_initializer=None, bias_initializer=None,
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape):
        input_shape = as_shape(input_shape)
        _check_ndim(self, input_shape, self.rank + 2)
        channels = input_shape[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=[1] * self.rank + [channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)
        self.built = True

    def _convolve(self, inputs):
        return nn_separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                   strides=[1, *self.strides, 1], padding=self.padding.upper(),
                                   rate=self.dilation_rate)

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC")
        return self.activation(outputs) if self.activation is not None else outputs


SeparableConvolution2D = SeparableConv2D


class SeparableConv1D(SeparableConv2D):
    """The 1-D form: kernels [k, in, depth_multiplier] and [1, in * depth_multiplier,
    filters]; it runs as the 2-D one on inputs of height 1, as TF's does."""
    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)

    def call(self, inputs):
        x = array_ops.expand_dims(inputs, 1)
        outputs = nn_separable_conv2d(x, array_ops.expand_dims(self.depthwise_kernel, 0),
                                      array_ops.expand_dims(self.pointwise_kernel, 0),
                                      strides=[1, self.strides[0], self.strides[0], 1],
                                      padding=self.padding.upper(), rate=(1,) + self.dilation_rate)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC")
        outputs = array_ops.squeeze(outputs, [1])
        return self.activation(outputs) if self.activation is not None else outputs


SeparableConvolution1D = SeparableConv1D


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                     depthwise_initializer=None, pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the separable 2-D convolution layer."""
    return _apply(SeparableConv2D, locals())


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                     dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                     depthwise_initializer=None, pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the separable 1-D convolution layer."""
    return _apply(SeparableConv1D, locals())


def _apply(layer_class, args):
    """Builds `layer_class` from a functional interface's arguments and applies it to the inputs."""
    args = dict(args)
    inputs, name, reuse = args.pop("inputs"), args.pop("name"), args.pop("reuse")
    return layer_class(name=name, _reuse=reuse, _scope=name, **args).apply(inputs)

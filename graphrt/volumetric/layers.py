"""`tf.layers.Conv3D` / `conv3d`, `Conv3DTranspose` / `conv3d_transpose`,
`MaxPooling3D` / `max_pooling3d` and `AveragePooling3D` / `average_pooling3d`
(channels_last), with TF's variable names. graphrt/layers.py loads this
module on first use of one of these names."""
from ..layers import Conv2DTranspose, _check_ndim, _Conv, _Pooling
from ..ops import array_ops
from .ops import avg_pool3d, conv3d as nn_conv3d, conv3d_transpose as nn_conv3d_transpose, max_pool3d


class Conv3D(_Conv):
    """3-D convolution layer: kernel [kd, kh, kw, in, filters], NDHWC inputs."""
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)

    def _convolve(self, inputs):
        return nn_conv3d(inputs, self.kernel, strides=[1, *self.strides, 1], padding=self.padding.upper(),
                         dilations=[1, *self.dilation_rate, 1], name="Conv3D")



class Conv3DTranspose(Conv2DTranspose):
    """Transposed 3-D convolution: kernel [kd, kh, kw, filters, in]."""
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=(1, 1, 1), **kwargs)

    def _convolve(self, inputs):
        shape, static = array_ops.shape(inputs), inputs.shape
        sizes = [self._output_length(shape[1 + i], i) for i in range(3)]
        output_shape = array_ops.stack([shape[0], *sizes, self.filters])
        outputs = nn_conv3d_transpose(inputs, self.kernel, output_shape, strides=[1, *self.strides, 1],
                                      padding=self.padding.upper())
        outputs.set_shape([static[0], *(self._output_length(static[1 + i], i) for i in range(3)), self.filters])
        return outputs



class _Pooling3D(_Pooling):
    rank = 3

    def call(self, inputs):
        _check_ndim(self, inputs.shape, 5)
        pool = max_pool3d if self.op == "max" else avg_pool3d
        return pool(inputs, ksize=[1, *self.pool_size, 1], strides=[1, *self.strides, 1],
                    padding=self.padding.upper())


class MaxPooling3D(_Pooling3D):
    op = "max"


class AveragePooling3D(_Pooling3D):
    op = "avg"



def _apply(layer_class, args):
    """Builds `layer_class` from a functional interface's arguments and applies it to the inputs."""
    args = dict(args)
    inputs, name, reuse = args.pop("inputs"), args.pop("name"), args.pop("reuse", None)
    return layer_class(name=name, _reuse=reuse, _scope=name, **args).apply(inputs)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=None, kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 3-D convolution layer."""
    return _apply(Conv3D, locals())


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True, kernel_initializer=None,
                     bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                     name=None, reuse=None):
    """Functional interface of the transposed 3-D convolution layer."""
    return _apply(Conv3DTranspose, locals())


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """Functional interface of the 3-D max pooling layer."""
    return MaxPooling3D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                        name=name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """Functional interface of the 3-D average pooling layer."""
    return AveragePooling3D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)

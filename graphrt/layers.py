"""`tf.layers` (TF1's legacy layers): Dense, Dropout, Flatten, Conv2D,
MaxPooling2D, AveragePooling2D, BatchNormalization and their functions.

They behave as TF 1.x's: a layer owns a variable scope (`dense`, `dense_1`
for unnamed layers; its name for named ones), its variables come from
`get_variable` (`dense/kernel`, `dense/bias`), its ops are built in the
scope's original name scope (`dense/MatMul`, `dense/BiasAdd`, `dense/Relu`),
a layer called again reuses its variables, `reuse=True` on a named layer
shares an existing layer's variables, weight regularizer losses go into
REGULARIZATION_LOSSES (built under `<layer>/<weight>/Regularizer`), and
batch normalization's moving-average updates go into UPDATE_OPS.
Only channels_last data is supported.
"""
import functools
import operator
import re
import weakref

import numpy as np

from .framework import dtypes
from .framework.constant_value import constant_value
from .framework.graph import GraphKeys, Tensor, get_default_graph
from .framework.op_builder import constant, convert_to_tensor, is_tensor_like
from .framework.tensor_shape import as_shape
from .ops import array_ops, control_flow_ops, math_ops, nn_ops, state_ops
from .ops import variable_scope as vs
from .ops import variables as variables_lib
from .ops.partitioned_variable import PartitionedVariable

__all__ = ["Layer", "Dense", "Dropout", "Flatten", "Conv2D", "MaxPooling2D", "AveragePooling2D",
           "BatchNormalization", "dense", "dropout", "flatten", "conv2d", "max_pooling2d", "average_pooling2d",
           "batch_normalization", "Conv1D", "conv1d", "MaxPooling1D", "max_pooling1d", "AveragePooling1D",
           "average_pooling1d"]

_LAYER_UIDS = weakref.WeakKeyDictionary()  # graph -> {base name: count}


def _to_snake_case(name):
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def _unique_layer_name(base):
    uids = _LAYER_UIDS.setdefault(get_default_graph(), {})
    n = uids.get(base, 0)
    uids[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _smart_cond(pred, true_fn, false_fn):
    """true_fn() or false_fn() when `pred` is known now (a bool or a constant), else a tf.cond."""
    if isinstance(pred, (bool, np.bool_)):
        return true_fn() if pred else false_fn()
    value = _constant_bool(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    return control_flow_ops.cond(convert_to_tensor(pred), true_fn, false_fn)


def _constant_bool(pred):
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if pred is None:
        return None
    if isinstance(pred, (int, np.integer)):
        return bool(pred)
    value = constant_value(convert_to_tensor(pred))
    return None if value is None else bool(value)


def _normalize_tuple(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    try:
        value = tuple(int(v) for v in value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}") from None
    if len(value) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    return value


def _normalize_padding(value, allow_causal=False):
    padding = value.lower() if isinstance(value, str) else value
    if padding == "causal":
        if allow_causal:
            return padding
        raise ValueError("Causal padding is only supported for `Conv1D` and `SeparableConv1D`.")
    if padding not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". Received: {value}")
    return padding


def _normalize_data_format(value):
    fmt = "channels_last" if value is None else value.lower()
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                         f"Received: {value}")
    if fmt != "channels_last":
        raise ValueError("graphrt's layers support only data_format='channels_last'")
    return fmt


def _add_elements_to_collection(elements, collection_key):
    g = get_default_graph()
    collection = g.get_collection_ref(collection_key)
    present = set(id(e) for e in collection)
    for e in elements:
        if id(e) not in present:
            collection.append(e)
            present.add(id(e))


class Layer:
    """Base class of TF1 layers: scope handling, weights, updates and losses."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        for k in kwargs:
            if k not in ("input_shape", "batch_input_shape", "weights", "autocast"):
                raise TypeError(f"Keyword argument not understood: {k}")
        self.trainable = trainable
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []
        self._losses = []
        self._init_set_name(name)
        if scope:
            with vs.variable_scope(scope) as captured_scope:
                self._scope = captured_scope
        else:
            self._scope = None
        self._current_scope = None
        self._always_reuse_variable_scope = None

    # -- naming -------------------------------------------------------------------------
    def _init_set_name(self, name):
        if isinstance(name, vs.VariableScope):
            base_name = name.name
            self._name = _unique_layer_name(_to_snake_case(type(self).__name__))
        else:
            base_name = name
            self._name = name
        if not name:
            base_name = _to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(base_name)
        self._base_name = base_name

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        if not self._scope:
            raise ValueError(f'No name available for layer scope because the layer "{self._name}" has not been '
                             f'used yet. The scope name  is determined the first time the layer instance is '
                             f'called. You must therefore call the layer before querying `scope_name`.')
        return self._scope.name

    def _name_scope(self):
        return self._current_scope.original_name_scope

    def _set_scope(self, scope=None):
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as captured_scope:
                    self._scope = captured_scope
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as captured_scope:
                    self._scope = captured_scope

    # -- weights ----------------------------------------------------------------------------
    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self):
        return list(self._updates)

    @property
    def losses(self):
        return list(self._losses)

    def get_weights(self):
        raise NotImplementedError("get_weights needs a session: run layer.weights in one")

    def add_update(self, updates, inputs=None):
        if not isinstance(updates, (list, tuple)):
            updates = [updates]
        self._updates.extend(u for u in updates if u is not None)

    def add_loss(self, losses, inputs=None):
        if not isinstance(losses, (list, tuple)):
            losses = [losses]
        new = []
        for loss in losses:
            if callable(loss):
                loss = loss()
            if loss is None:
                continue
            new.append(loss)
        self._losses.extend(new)
        _add_elements_to_collection(new, GraphKeys.REGULARIZATION_LOSSES)

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, use_resource=None, synchronization=None, aggregation=None, partitioner=None,
                   **kwargs):
        for kwarg in kwargs:
            if kwarg != "experimental_autocast":
                raise TypeError("Unknown keyword argument:", kwarg)
        if trainable is None:
            trainable = True
        existing = set(variables_lib.global_variables())
        dtype = dtypes.as_dtype(dtype or self.dtype or dtypes.float32).base_dtype
        self._set_scope(None)
        reuse = self.built or self._reuse
        g = get_default_graph()
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with g.name_scope(self._name_scope()):
                if initializer is None:
                    initializer = scope.initializer
                if initializer is None:
                    if dtype.is_floating:
                        initializer = variables_lib.GlorotUniform()
                    elif dtype.is_integer or dtype.is_unsigned or dtype.is_bool:
                        initializer = variables_lib.Zeros()
                    else:
                        raise ValueError(f"An initializer for variable {name} of type {dtype.name} is required "
                                         f"for layer {self.name}")
                variable = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                           trainable=trainable and self.trainable, constraint=constraint,
                                           partitioner=partitioner, use_resource=use_resource)
                if regularizer and variable not in existing:
                    self._handle_weight_regularization(name, variable, regularizer)
        if isinstance(variable, PartitionedVariable):
            # TF's layers keep a partitioned weight's parts among the non-trainable weights (so
            # `trainable_weights` leaves them out, while the collections hold them as trainable)
            self._non_trainable_weights.extend(variable)
        elif trainable and self.trainable and variable in variables_lib.trainable_variables():
            self._trainable_weights.append(variable)
        else:
            self._non_trainable_weights.append(variable)
        return variable

    def _handle_weight_regularization(self, name, variable, regularizer):
        g = get_default_graph()

        def loss_for_variable():
            with g.name_scope(name + "/Regularizer"):
                return regularizer(variable)
        self.add_loss(loss_for_variable)

    # -- calling ------------------------------------------------------------------------------
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    def __call__(self, inputs, *args, **kwargs):
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        if self.built:
            if self._always_reuse_variable_scope is None:
                self._always_reuse_variable_scope = vs.variable_scope(self._scope, reuse=True,
                                                                      auxiliary_name_scope=False)
            scope_context_manager = self._always_reuse_variable_scope
        else:
            scope_context_manager = vs.variable_scope(self._scope, reuse=self._reuse, auxiliary_name_scope=False)
        g = get_default_graph()
        n_updates = len(self._updates)
        with scope_context_manager as scope:
            self._current_scope = scope
            with g.name_scope(self._name_scope()):
                inputs = self._convert_inputs(inputs)
                if not self.built:
                    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
                    if self._dtype is None:
                        self._dtype = first.dtype.base_dtype
                    input_shapes = [t.shape for t in inputs] if isinstance(inputs, (list, tuple)) else inputs.shape
                    self.build(input_shapes)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if outputs is None:
                    raise ValueError("A layer's `call` method should return a Tensor or a list of Tensors, "
                                     "not None (layer: " + self.name + ").")
                if self._activity_regularizer is not None:
                    with g.name_scope("ActivityRegularizer"):  # per example, as Keras makes it
                        activity_loss = self._activity_regularizer(outputs)
                        batch_size = math_ops.cast(array_ops.shape(outputs)[0], activity_loss.dtype.base_dtype)
                        self.add_loss(activity_loss / batch_size)
        _add_elements_to_collection(self._updates[n_updates:], GraphKeys.UPDATE_OPS)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    @staticmethod
    def _convert_inputs(inputs):
        if isinstance(inputs, (list, tuple)):
            return type(inputs)(x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs)
        return inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)

    def __repr__(self):
        return f"<{type(self).__module__.split('.')[0]}.layers.{type(self).__name__} '{self._name}'>"


def _shape_str(shape):
    """A TensorShape as TF 2 prints it: (2, None)."""
    if shape.ndims is None:
        return "<unknown>"
    dims = ["None" if d is None else str(d) for d in shape.as_list()]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


class _KernelBiasArgs:
    """The argument set layers with a kernel and an optional bias share (Dense, conv)."""

    def _set_kernel_and_bias_args(self, activation, use_bias, kernel_initializer, bias_initializer,
                                  kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint):
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = variables_lib.Zeros() if bias_initializer is None else bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel = None
        self.bias = None


def _check_min_ndim(layer, inputs_shape, min_ndim):
    if inputs_shape.ndims is not None and inputs_shape.ndims < min_ndim:
        raise ValueError(f"Input 0 of layer {layer.name} is incompatible with the layer: expected "
                         f"min_ndim={min_ndim}, found ndim={inputs_shape.ndims}. Full shape received: "
                         f"{inputs_shape.as_list()}")


def _check_ndim(layer, inputs_shape, ndim):
    if inputs_shape.ndims is not None and inputs_shape.ndims != ndim:
        raise ValueError(f"Input 0 of layer {layer.name} is incompatible with the layer: expected ndim={ndim}, "
                         f"found ndim={inputs_shape.ndims}. Full shape received: {inputs_shape.as_list()}")


# -- Dense ------------------------------------------------------------------------------------

class Dense(_KernelBiasArgs, Layer):
    """outputs = activation(inputs @ kernel + bias); kernel [in, units], bias [units]."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units < 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
        self._set_kernel_and_bias_args(activation, use_bias, kernel_initializer, bias_initializer,
                                       kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)

    def build(self, input_shape):
        input_shape = as_shape(input_shape)
        dtype = self.dtype or dtypes.float32
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"Unable to build `Dense` layer with non-floating point dtype {dtype}")
        _check_min_ndim(self, input_shape, 2)
        last_dim = input_shape[-1] if input_shape.ndims is not None else None
        if last_dim is None:
            raise ValueError(f"The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             f"Full input shape received: {_shape_str(input_shape)}")
        self.kernel = self.add_weight("kernel", shape=[last_dim, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      dtype=self.dtype, trainable=True)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        _check_min_ndim(self, inputs.shape, 2)
        if inputs.dtype.base_dtype != self.dtype:
            inputs = math_ops.cast(inputs, self.dtype)
        rank = inputs.shape.ndims
        if rank == 2 or rank is None:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            from .ops.extra_ops import tensordot
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = as_shape(input_shape)
        return input_shape[:-1].concatenate([self.units])


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the densely-connected layer."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


# -- Dropout, Flatten ----------------------------------------------------------------------------

class Dropout(Layer):
    """Drops each element with probability `rate` (scaling the rest by 1 / (1 - rate)) when
    training; the identity otherwise."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        concrete = array_ops.shape(inputs)
        out = []
        for i, value in enumerate(self.noise_shape):
            out.append(concrete[i] if value is None else value)
        return array_ops.stack([v if is_tensor_like(v) else np.int32(v) for v in out])

    def call(self, inputs, training=False):
        if isinstance(self.rate, (int, float)) and self.rate == 0:  # TF's shortcut: an identity, even training
            return array_ops.identity(inputs)
        if training is None:
            training = False

        def dropped_inputs():
            return nn_ops.dropout(inputs, noise_shape=self._get_noise_shape(inputs), seed=self.seed, rate=self.rate)
        return _smart_cond(training, dropped_inputs, lambda: array_ops.identity(inputs))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Functional interface of the dropout layer (the identity unless `training`)."""
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


class Flatten(Layer):
    """Flattens every dimension but the first: [N, d1, d2, ...] -> [N, d1 * d2 * ...]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)

    def call(self, inputs):
        shape = inputs.shape
        if shape.ndims == 1:
            return array_ops.expand_dims(inputs, axis=1)
        if shape.ndims is None:
            return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], np.int32(-1)]))
        batch_dim = shape[0]
        non_batch = shape[1:]
        if non_batch.is_fully_defined():
            last_dim = int(functools.reduce(operator.mul, non_batch.as_list(), 1))
            flattened_shape = constant([-1, last_dim])
        elif batch_dim is not None:
            flattened_shape = constant([int(batch_dim), -1])
        else:
            flattened_shape = [array_ops.shape(inputs)[0], -1]
        return array_ops.reshape(inputs, flattened_shape)


def flatten(inputs, name=None, data_format="channels_last"):
    """Functional interface of the flatten layer."""
    layer = Flatten(name=name, data_format=data_format)
    return layer.apply(inputs)


# -- convolution and pooling ----------------------------------------------------------------------

class _Conv(_KernelBiasArgs, Layer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        rank = self.rank
        self.filters = int(filters)
        self.kernel_size = _normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = _normalize_tuple(strides, rank, "strides")
        self.padding = _normalize_padding(padding, allow_causal=isinstance(self, Conv1D))
        self.data_format = _normalize_data_format(data_format)
        self.dilation_rate = _normalize_tuple(dilation_rate, rank, "dilation_rate")
        if any(d != 1 for d in self.dilation_rate) and any(s != 1 for s in self.strides):
            # As TF: a convolution is either strided or dilated.
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        self._set_kernel_and_bias_args(activation, use_bias, kernel_initializer, bias_initializer,
                                       kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)

    def build(self, input_shape):
        input_shape = as_shape(input_shape)
        _check_ndim(self, input_shape, self.rank + 2)
        channels = input_shape[-1] if input_shape.ndims is not None else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        kernel_shape = list(self.kernel_size) + [channels, self.filters]
        self.kernel = self.add_weight("kernel", shape=kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      trainable=True, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)
        self.built = True

    def _convolve(self, inputs):
        raise NotImplementedError

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC")
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


class Conv2D(_Conv):
    """2-D convolution layer: kernel [kh, kw, in, filters], NHWC inputs."""
    rank = 2

    def _convolve(self, inputs):
        return nn_ops.conv2d(inputs, self.kernel, strides=[1, *self.strides, 1], padding=self.padding.upper(),
                             data_format="NHWC", dilations=[1, *self.dilation_rate, 1], name="Conv2D")


class Conv1D(_Conv):
    """1-D convolution layer: kernel [kw, in, filters], NWC inputs."""
    rank = 1

    def _convolve(self, inputs):
        padding = self.padding
        if padding == "causal":  # as TF: pad the past by the dilated kernel's reach, then a valid convolution
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        return nn_ops.conv1d(inputs, self.kernel, stride=self.strides[0], padding=padding.upper(),
                             dilations=self.dilation_rate[0], name="conv1d")


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution ("deconvolution"): kernel [kh, kw, filters, in]; the
    output is stride times larger (`same`), plus max(kernel - stride, 0) (`valid`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if any(d != 1 for d in self.dilation_rate):
            raise ValueError("graphrt's Conv2DTranspose supports only dilation_rate=1")

    def build(self, input_shape):
        input_shape = as_shape(input_shape)
        _check_ndim(self, input_shape, self.rank + 2)
        channels = input_shape[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", shape=list(self.kernel_size) + [self.filters, channels],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)
        self.built = True

    def _output_length(self, length, axis):
        if length is None:
            return None
        stride, size = self.strides[axis], self.kernel_size[axis]
        return length * stride + (max(size - stride, 0) if self.padding == "valid" else 0)

    def _convolve(self, inputs):
        shape = array_ops.shape(inputs)
        static = inputs.shape
        out_h, out_w = (self._output_length(shape[1 + i], i) for i in range(2))
        output_shape = array_ops.stack([shape[0], out_h, out_w, self.filters])
        outputs = nn_ops.conv2d_transpose(inputs, self.kernel, output_shape, strides=[1, *self.strides, 1],
                                          padding=self.padding.upper(), data_format="NHWC")
        outputs.set_shape([static[0], self._output_length(static[1], 0), self._output_length(static[2], 1),
                           self.filters])
        return outputs


Convolution2DTranspose = Conv2DTranspose


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the transposed 2-D convolution layer."""
    layer = Conv2DTranspose(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                            bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse,
                            _scope=name)
    return layer.apply(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional interface of the 2-D convolution layer."""
    layer = Conv2D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
    """Functional interface of the 1-D convolution layer."""
    layer = Conv1D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)


class _Pooling(Layer):
    rank = 2
    op = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = _normalize_tuple(pool_size if strides is None else strides, self.rank, "strides")
        self.padding = _normalize_padding(padding)
        self.data_format = _normalize_data_format(data_format)

    def call(self, inputs):
        _check_ndim(self, inputs.shape, self.rank + 2)
        pool = nn_ops.max_pool if self.op == "max" else nn_ops.avg_pool
        if self.rank == 1:
            x = array_ops.expand_dims(inputs, 1)
            out = pool(x, ksize=[1, 1, self.pool_size[0], 1], strides=[1, 1, self.strides[0], 1],
                       padding=self.padding.upper())
            return array_ops.squeeze(out, [1])
        return pool(inputs, ksize=[1, *self.pool_size, 1], strides=[1, *self.strides, 1],
                    padding=self.padding.upper())


class MaxPooling2D(_Pooling):
    op = "max"


class AveragePooling2D(_Pooling):
    op = "avg"


class MaxPooling1D(_Pooling):
    rank, op = 1, "max"


class AveragePooling1D(_Pooling):
    rank, op = 1, "avg"


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """Functional interface of the 2-D max pooling layer."""
    return MaxPooling2D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                        name=name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """Functional interface of the 2-D average pooling layer."""
    return AveragePooling2D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling1D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                        name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling1D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                            name=name).apply(inputs)


# -- batch normalization ----------------------------------------------------------------------------

class BatchNormalization(Layer):
    """Normalizes with the batch's moments when training (and updates moving_mean and
    moving_variance by `momentum`, through UPDATE_OPS), with the moving ones otherwise.

    As TF 1.x: 4-D inputs normalized over the last axis take TF's fused path,
    whose moving variance is updated with the unbiased (n / (n - 1)) batch variance
    and whose epsilon is at least 1.001e-5; other inputs update it with the biased one.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                 moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None, adjustment=None,
                 name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("graphrt's batch normalization supports neither renorm, "
                                      "virtual_batch_size nor adjustment")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer or variables_lib.Zeros()
        self.gamma_initializer = gamma_initializer or variables_lib.Ones()
        self.moving_mean_initializer = moving_mean_initializer or variables_lib.Zeros()
        self.moving_variance_initializer = moving_variance_initializer or variables_lib.Ones()
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.fused = True if fused is None else fused
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        input_shape = as_shape(input_shape)
        if input_shape.ndims is None:
            raise ValueError(f"Input has undefined rank: {input_shape}")
        ndims = input_shape.ndims
        axes = [self.axis] if isinstance(self.axis, int) else list(self.axis)
        for idx, x in enumerate(axes):
            if x < 0:
                axes[idx] = ndims + x
        for x in axes:
            if x < 0 or x >= ndims:
                raise ValueError(f"Invalid axis: {x}")
        if len(axes) != len(set(axes)):
            raise ValueError(f"Duplicate axis: {axes}")
        self.axis = axes
        if self.fused:  # TF's fused kernel: rank 4 (axis 1 or 3) or 5 (axis 1 or 4), half/float only
            fusable = {4: ([1], [3]), 5: ([1], [4])}
            self.fused = (ndims in fusable and axes in fusable[ndims]
                          and (self.dtype is None or self.dtype in (dtypes.float16, dtypes.float32)))
        axis_to_dim = {x: input_shape[x] for x in axes}
        for x, dim in axis_to_dim.items():
            if dim is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with shape "
                                 f"{input_shape}. Axis value: {self.axis}")
        if len(axes) == 1:
            param_shape = [list(axis_to_dim.values())[0]]
        else:
            param_shape = [axis_to_dim[i] if i in axis_to_dim else 1 for i in range(ndims)]
        param_dtype = self.dtype
        if param_dtype in (dtypes.float16, None):
            param_dtype = dtypes.float32
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, dtype=param_dtype,
                                         initializer=self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, dtype=param_dtype,
                                        initializer=self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        # the moving statistics are never partitioned (their updates assign them whole), as in TF
        scope = self._scope
        partitioner = scope.partitioner if scope is not None else None
        if partitioner is not None:
            scope.set_partitioner(None)
        try:
            self.moving_mean = self.add_weight("moving_mean", shape=param_shape, dtype=param_dtype,
                                               initializer=self.moving_mean_initializer, trainable=False)
            self.moving_variance = self.add_weight("moving_variance", shape=param_shape, dtype=param_dtype,
                                                   initializer=self.moving_variance_initializer, trainable=False)
        finally:
            if partitioner is not None:
                scope.set_partitioner(partitioner)
        self.built = True

    def _assign_moving_average(self, variable, value, momentum):
        g = get_default_graph()
        with g.name_scope("AssignMovingAvg") as scope:
            with g.colocate_with(variable.op):
                decay = convert_to_tensor(1.0 - momentum, name="decay") if not is_tensor_like(momentum) else \
                    math_ops.subtract(np.float32(1.0), momentum, name="decay")
                if decay.dtype.base_dtype != variable.dtype.base_dtype:
                    decay = math_ops.cast(decay, variable.dtype.base_dtype)
                update_delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
                return state_ops.assign_sub(variable, update_delta, name=scope)

    def _fused_batch_norm(self, inputs, training):
        """TF's fused path (FusedBatchNormV3), composed from graph ops."""
        epsilon = max(self.epsilon, 1.001e-5)
        gamma = self.gamma if self.scale else constant(np.ones(self.moving_mean.shape.as_list(), np.float32))
        beta = self.beta if self.center else constant(np.zeros(self.moving_mean.shape.as_list(), np.float32))
        x = inputs
        if x.dtype.base_dtype != self.moving_mean.dtype.base_dtype:
            x = math_ops.cast(x, self.moving_mean.dtype.base_dtype)
        ndims = x.shape.ndims
        channel = self.axis[0]
        reduction_axes = [i for i in range(ndims) if i != channel]
        if channel != ndims - 1:  # channels first: parameters broadcast along axis 1
            shape = [1] * ndims
            shape[channel] = -1

            def bcast(v):
                return array_ops.reshape(v, shape)
        else:
            def bcast(v):
                return v

        def train_branch():
            mean, variance = nn_ops.moments(x, reduction_axes)
            out = nn_ops.batch_normalization(x, bcast(mean), bcast(variance), bcast(beta), bcast(gamma), epsilon)
            n = math_ops.cast(array_ops.size(x) // array_ops.size(variance), variance.dtype)
            factor = math_ops.truediv(n, math_ops.maximum(n - 1, np.float32(1)))
            return out, mean, variance * factor

        def infer_branch():
            out = nn_ops.batch_normalization(x, bcast(self.moving_mean), bcast(self.moving_variance), bcast(beta),
                                             bcast(gamma), epsilon)
            return out, array_ops.identity(self.moving_mean), array_ops.identity(self.moving_variance)

        output, mean, variance = _smart_cond(training, train_branch, infer_branch)
        if output.dtype.base_dtype != inputs.dtype.base_dtype:
            output = math_ops.cast(output, inputs.dtype.base_dtype)
        output.set_shape(inputs.shape)
        training_value = _constant_bool(training)
        if training_value is None:
            momentum = _smart_cond(training, lambda: convert_to_tensor(np.float32(self.momentum)),
                                   lambda: convert_to_tensor(np.float32(1.0)))
        else:
            momentum = self.momentum
        if training_value or training_value is None:
            self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
            self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return output

    def call(self, inputs, training=False):
        if training is None:
            training = False
        if self.fused:
            return self._fused_batch_norm(inputs, training)
        input_shape = inputs.shape
        ndims = input_shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        broadcast_shape[self.axis[0]] = input_shape[self.axis[0]]

        def _broadcast(v):
            if v is not None and v.shape.ndims != ndims and reduction_axes != list(range(ndims - 1)):
                return array_ops.reshape(v, broadcast_shape)
            return v

        scale, offset = _broadcast(self.gamma), _broadcast(self.beta)
        training_value = _constant_bool(training)
        if training_value is not False:
            keep_dims = len(self.axis) > 1
            mean, variance = nn_ops.moments(inputs, reduction_axes, keep_dims=keep_dims)
            moving_mean, moving_variance = self.moving_mean, self.moving_variance
            mean = _smart_cond(training, lambda: mean, lambda: array_ops.identity(moving_mean))
            variance = _smart_cond(training, lambda: variance, lambda: array_ops.identity(moving_variance))

            def do_update(var, value):
                if training_value is None:  # inside a cond: hand back a value, not the variable's ref
                    return array_ops.identity(self._assign_moving_average(var, value, self.momentum))
                return self._assign_moving_average(var, value, self.momentum)

            mean_update = _smart_cond(training, lambda: do_update(self.moving_mean, mean),
                                      lambda: array_ops.identity(self.moving_mean))
            variance_update = _smart_cond(training, lambda: do_update(self.moving_variance, variance),
                                          lambda: array_ops.identity(self.moving_variance))
            self.add_update(mean_update)
            self.add_update(variance_update)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        outputs = nn_ops.batch_normalization(inputs, _broadcast(mean), _broadcast(variance), offset, scale,
                                             self.epsilon)
        outputs.set_shape(input_shape)
        return outputs


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                        moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """Functional interface of the batch normalization layer. With `training`, run the
    ops in tf.GraphKeys.UPDATE_OPS (e.g. as control dependencies of the train op) to
    update the moving averages."""
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                               beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
                               renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
                               name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)


# The separable layers (graphrt/depthwise/) subclass Conv2D, so they load on first use:
# importing them here would make layers.py and depthwise/ import each other at import time.
_SEPARABLE = ("SeparableConv1D", "SeparableConv2D", "SeparableConvolution1D", "SeparableConvolution2D",
              "separable_conv1d", "separable_conv2d")
# So are the 3-D layers (graphrt/volumetric/), which subclass _Conv, Conv2DTranspose and _Pooling.
_VOLUMETRIC = ("Conv3D", "Conv3DTranspose", "MaxPooling3D", "AveragePooling3D", "conv3d", "conv3d_transpose",
               "max_pooling3d", "average_pooling3d")


def __getattr__(name):
    if name in _SEPARABLE:
        from .depthwise import layers as separable
        return getattr(separable, name)
    if name in _VOLUMETRIC:
        from .volumetric import layers as volumetric
        return getattr(volumetric, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SEPARABLE) | set(_VOLUMETRIC))

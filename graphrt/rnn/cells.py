"""RNN cells (`tf.nn.rnn_cell`): one time step of a recurrent network.

A cell is a layer called as `output, new_state = cell(inputs, state)` with
`state_size`/`output_size` saying the shapes (an int, or a structure of
ints such as LSTMStateTuple(c, h)). Its variables are made on the first
call, in a variable scope named after the cell inside the caller's scope,
so `dynamic_rnn(BasicLSTMCell(4), ...)` makes `rnn/basic_lstm_cell/kernel`
and `rnn/basic_lstm_cell/bias`, exactly the names TF1 gives (checkpoints
and name-based code carry over). Later calls reuse them.

The gate layouts are TF's too: one matmul of [inputs, h] with a kernel of
shape [input_depth + h_depth, 4 * num_units] split into i, j, f, o for LSTMs;
r, u gates then a candidate for GRUs.
"""
import collections
import numbers

from ..framework import dtypes
from ..framework.constant_value import constant_value
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..layers import Layer
from ..ops import array_ops, math_ops, nest, nn_ops
from ..ops import variable_scope as vs
from ..ops import variables as variables_lib

_BIAS_VARIABLE_NAME = "bias"
_WEIGHTS_VARIABLE_NAME = "kernel"


def _shape_part(value):
    """(int32 vector or None, static TensorShape) of one part of a shape: an
    int, a shape, or a scalar/vector int32 tensor."""
    if isinstance(value, Tensor):
        ndims = value.shape.ndims
        if ndims not in (0, 1):
            raise ValueError(f"Prefix or suffix tensor must be either a scalar or vector, but saw tensor: {value}")
        static = constant_value(value)
        if static is not None:
            known = TensorShape([int(v) for v in static.reshape(-1)])
        elif ndims == 0:
            known = TensorShape([None])
        else:
            known = TensorShape(None) if value.shape[0] is None else TensorShape([None] * value.shape[0])
        return (array_ops.expand_dims(value, 0) if ndims == 0 else value), known
    shape = as_shape([value] if isinstance(value, numbers.Integral) else value)
    vector = constant(shape.as_list(), dtype=dtypes.int32) if shape.is_fully_defined() else None
    return vector, shape


def concat_shape(prefix, suffix, static=False):
    """[prefix..., suffix...] as an int32 vector, or (`static`) as a list of ints and None."""
    p, p_static = _shape_part(prefix)
    s, s_static = _shape_part(suffix)
    if static:
        shape = p_static.concatenate(s_static)
        return shape.as_list() if shape.ndims is not None else None
    if p is None or s is None:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    return array_ops.concat([p, s], 0)


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of shape [batch_size, size] for every size in `state_size`."""
    def zeros(size):
        value = array_ops.zeros(concat_shape(batch_size, size), dtype=dtype)
        value.set_shape(concat_shape(batch_size, size, static=True))
        return value
    return nest.map_structure(zeros, state_size)


def check_supported_dtype(dtype):
    if dtype is None:
        return
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_complex):
        raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: {dtype.name}")


def _check_input_dtypes(values):
    for t in nest.flatten(values):
        check_supported_dtype(t.dtype)


def _activation(activation):
    return activation if activation else math_ops.tanh


def _check_input_depth(input_shape):
    depth = as_shape(input_shape)[-1]
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {as_shape(input_shape)}")
    return depth


class RNNCell(Layer):
    """The base of every cell: `state_size`, `output_size`, `zero_state`, and a
    call that runs one step. Subclasses implement `call(inputs, state)`."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True

    def __call__(self, inputs, state, scope=None):
        """(output, new_state). With `scope`, the variables live directly in that variable scope."""
        if scope is not None:
            with vs.variable_scope(scope) as captured:
                return super().__call__(inputs, state, scope=captured)
        return super().__call__(inputs, state)

    @staticmethod
    def _convert_inputs(inputs):
        return nest.map_structure(lambda x: x if isinstance(x, Tensor) else convert_to_tensor(x), inputs)

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def build(self, input_shape):
        self.built = True

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            batch_size = inputs.shape[0] or array_ops.shape(inputs)[0]
            dtype = inputs.dtype.base_dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing initial state: "
                             f"batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros shaped like the state, for a batch of `batch_size`."""
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)


LayerRNNCell = RNNCell  # TF1 separates the two for Keras; here every cell is a layer


class BasicRNNCell(RNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        check_supported_dtype(self.dtype)
        self._num_units = num_units
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _check_input_depth(input_shape)
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[self._num_units],
                                     initializer=variables_lib.Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated Recurrent Unit (Cho et al. 2014): reset and update gates, then a candidate."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        check_supported_dtype(self.dtype)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _check_input_depth(input_shape)
        n = self._num_units
        self._gate_kernel = self.add_weight(f"gates/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight(f"gates/{_BIAS_VARIABLE_NAME}", shape=[2 * n],
                                          initializer=self._bias_initializer or variables_lib.Constant(1.0))
        self._candidate_kernel = self.add_weight(f"candidate/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight(f"candidate/{_BIAS_VARIABLE_NAME}", shape=[n],
                                               initializer=self._bias_initializer or variables_lib.Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        value = math_ops.sigmoid(nn_ops.bias_add(gate_inputs, self._gate_bias))
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel)
        c = self._activation(nn_ops.bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state `c` and the output `h`."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _split_state(state, state_is_tuple, c_size, h_size):
    if state_is_tuple:
        return state
    return (array_ops.slice(state, [0, 0], [-1, c_size]), array_ops.slice(state, [0, c_size], [-1, h_size]))


class BasicLSTMCell(RNNCell):
    """LSTM without peepholes or projection; `forget_bias` is added to the forget gate."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        check_supported_dtype(self.dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _check_input_depth(input_shape)
        n = self._num_units
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + n, 4 * n])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=variables_lib.Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gate_inputs = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = constant(self._forget_bias, dtype=f.dtype.base_dtype)
        sigmoid = math_ops.sigmoid
        new_c = math_ops.add(math_ops.multiply(c, sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """LSTM with optional peepholes (`use_peepholes`), cell clipping, and a
    projection of the output to `num_proj` units (Sak et al. 2014)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        check_supported_dtype(self.dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: num_unit_shards and num_proj_shards (partitioned weights) are not "
                                      "supported by graphrt")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)
        h = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, h) if state_is_tuple else num_units + h
        self._output_size = h

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, input_shape):
        depth = _check_input_depth(input_shape)
        n = self._num_units
        h_depth = n if self._num_proj is None else self._num_proj
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + h_depth, 4 * n],
                                       initializer=self._initializer)
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=variables_lib.Zeros())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight(f"projection/{_WEIGHTS_VARIABLE_NAME}", shape=[n, self._num_proj],
                                                initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        n = self._num_units
        num_proj = n if self._num_proj is None else self._num_proj
        c_prev, m_prev = _split_state(state, self._state_is_tuple, n, num_proj)
        if inputs.shape.with_rank(2)[1] is None:
            raise ValueError(f"Could not infer input size from inputs.get_shape()[-1]: {inputs.shape}")
        lstm_matrix = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel),
                                      self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        sigmoid = math_ops.sigmoid
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev +
                 sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: layer i's output is layer i+1's input; the state
    is the tuple of the layers' states. Variables: `multi_rnn_cell/cell_<i>/...`."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError(f"Some cells return tuples of states, but the flag state_is_tuple is not set. State "
                             f"sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return zero_state_tensors(self.state_size, batch_size, dtype)

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in cell.trainable_weights]

    @property
    def non_trainable_weights(self):
        weights = [w for cell in self._cells for w in cell.non_trainable_weights]
        if not self.trainable:
            return [w for cell in self._cells for w in cell.trainable_weights] + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def call(self, inputs, state):
        cur_state_pos = 0
        cur_inp = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, cur_state_pos], [-1, cell.state_size])
                    cur_state_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        new_states = tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)
        return cur_inp, new_states


def assert_like_rnncell(cell_name, cell):
    """TypeError unless `cell` has what rnn functions need from a cell."""
    conditions = [hasattr(cell, "output_size"), hasattr(cell, "state_size"),
                  hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state"), callable(cell)]
    messages = ["'output_size' property is missing", "'state_size' property is missing",
                "either 'zero_state' or 'get_initial_state' method is required", "is not callable"]
    missing = [m for m, ok in zip(messages, conditions) if not ok]
    if missing:
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(missing)}.")

"""Cell wrappers: a cell around a cell. A wrapper opens no variable scope of
its own, so the wrapped cell's variables keep their names
(`rnn/basic_lstm_cell/kernel` with or without a DropoutWrapper)."""
import hashlib
import numbers

from ..framework.constant_value import constant_value
from ..framework.graph import get_default_graph
from ..framework.op_builder import convert_to_tensor
from ..framework.tensor_shape import as_shape
from ..ops import math_ops, nest, nn_ops, random_ops
from .cells import LSTMStateTuple, RNNCell, assert_like_rnncell


class RNNCellWrapper(RNNCell):
    """Forwards state_size, output_size and zero_state to the wrapped `cell`."""

    def __init__(self, cell, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__, scope=scope)

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    @property
    def trainable_weights(self):
        return self.cell.trainable_weights

    @property
    def non_trainable_weights(self):
        return self.cell.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)


def _default_dropout_state_filter_visitor(substate):
    """Dropout on an LSTM's h but not its c; not on TensorArrays; on anything else."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    if hasattr(substate, "_with_flow"):
        return False
    return True


def _dropout_mask(filter_fn, value):
    """`value`'s structure with True at the leaves dropout applies to."""
    decision = filter_fn(value)
    if isinstance(decision, bool):
        if not decision or not nest.is_sequence(value):
            return nest.map_structure(lambda _: decision, value)
        return nest.pack_sequence_as(value, [_dropout_mask(filter_fn, v) for v in nest.children(value)])
    children = [_dropout_mask(filter_fn, v) if d else nest.map_structure(lambda _: False, v)
                for v, d in zip(nest.children(value), nest.children(decision))]
    return nest.pack_sequence_as(value, nest.flatten(children))


class DropoutWrapper(RNNCellWrapper):
    """Dropout on a cell's inputs, outputs and state, each with its own keep
    probability (a float or a scalar tensor). With `variational_recurrent`
    one mask per sequence is used at every time step (Gal & Ghahramani 2015)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with get_default_graph().name_scope("DropoutWrapperInit"):
            for prob, attr in [(input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")]:
                tensor_prob = convert_to_tensor(prob)
                const_prob = constant_value(tensor_prob)
                if const_prob is not None:
                    if const_prob < 0 or const_prob > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {float(const_prob):g}")
                    setattr(self, f"_{attr}", float(const_prob))
                else:
                    setattr(self, f"_{attr}", tensor_prob)
        self._variational_recurrent = variational_recurrent
        self._seed = seed
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def noise(sizes, salt):
                flat = [random_ops.random_uniform([1] + as_shape(s).as_list(), seed=self._gen_seed(salt, i),
                                                  dtype=dtype) for i, s in enumerate(nest.flatten(sizes))]
                return nest.pack_sequence_as(sizes, flat)
            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = noise(input_size, "input")
            self._recurrent_state_noise = noise(cell.state_size, "state")
            self._recurrent_output_noise = noise(cell.output_size, "output")

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt_prefix}_{index}".encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def build(self, input_shape):
        self.cell.build(input_shape)
        self.built = True

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, mask=None):
        mask = nest.map_structure(lambda _: True, values) if mask is None else mask
        flat_values, flat_mask = nest.flatten(values), nest.flatten(mask)
        flat_noise = nest.flatten(recurrent_noise) if recurrent_noise is not None else [None] * len(flat_values)
        out = []
        for i, (v, keep, n) in enumerate(zip(flat_values, flat_mask, flat_noise)):
            if not keep:
                out.append(v)
            elif self._variational_recurrent:
                kept = math_ops.divide(v, keep_prob) * math_ops.floor(keep_prob + n)
                kept.set_shape(v.shape)
                out.append(kept)
            else:
                out.append(nn_ops.dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(salt_prefix, i)))
        return nest.pack_sequence_as(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1
        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            mask = _dropout_mask(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob, mask)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(RNNCellWrapper):
    """output = inputs + cell output (or `residual_fn(inputs, outputs)`)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            nest.assert_same_structure(inputs, outputs)
            flat_in, flat_out = nest.flatten(inputs), nest.flatten(outputs)
            for inp, out in zip(flat_in, flat_out):
                inp.shape.assert_is_compatible_with(out.shape)
            return nest.pack_sequence_as(inputs, [i + o for i, o in zip(flat_in, flat_out)])
        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(RNNCellWrapper):
    """Runs the wrapped cell (and makes its zero state) on `device`."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        g = get_default_graph()
        with g.name_scope(type(self).__name__ + "ZeroState"), g.device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with get_default_graph().device(self._device):
            return cell_call_fn(inputs, state, **kwargs)

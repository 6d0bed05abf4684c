"""Running a cell over a sequence, as TF1's rnn.py builds it.

`static_rnn` unrolls the cell once per time step in the graph (a Python
list of inputs in, a list of outputs out). `dynamic_rnn` builds one
`while_loop` over time: the inputs are unstacked into a TensorArray that
the body reads at `time`, each step's output is written into another
TensorArray, stacked after the loop; the state is a loop variable. Its
gradient is the gradient while loop of that loop (control_flow_grad), the
TensorArrays' gradients being gradient TensorArrays.

With `sequence_length`, steps past an entry's length copy its state through
and output zeros (`_rnn_step`), and the loop stops at the longest length.
Variables live in the variable scope `rnn` (or `scope`), the cell's own
scope inside it: `rnn/basic_lstm_cell/kernel`.
"""
from ..framework import dtypes
from ..framework.graph import Tensor, get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops, control_flow_ops, math_ops, nest
from ..ops import variable_scope as vs
from ..ops.extra_ops import assert_op
from ..tensor_array import TensorArray
from .cells import assert_like_rnncell, concat_shape
from .sequence_ops import reverse_sequence


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    static = x.shape
    if static.ndims is not None and static.ndims < 2:
        return x
    rank = array_ops.rank(x)
    x_t = array_ops.transpose(x, array_ops.concat(([1, 0], math_ops.range(2, rank)), axis=0))
    if static.ndims is not None:
        x_t.set_shape(TensorShape([static[1], static[0]]).concatenate(TensorShape(static.dims[2:])))
    return x_t


def _best_effort_input_batch_size(flat_input):
    """The batch size of time-major inputs: static if any input knows it, else a tensor."""
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Expected input tensor {input_} to have rank at least 2")
        if shape[1] is not None:
            return shape[1]
    return array_ops.shape(flat_input[0])[1]


def _infer_state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return explicit_dtype
    if nest.is_sequence(state):
        inferred = [element.dtype.base_dtype for element in nest.flatten(state)]
        if not inferred:
            raise ValueError(f"Unable to infer dtype from empty state: {state}")
        if any(d != inferred[0] for d in inferred):
            raise ValueError(f"State has tensors of different inferred dtypes. Unable to infer a single "
                             f"representative dtype. Dtypes received: {[d.name for d in inferred]}")
        return inferred[0]
    return state.dtype.base_dtype


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _rnn_step(time, sequence_length, min_sequence_length, max_sequence_length, zero_output, state, call_cell,
              state_size, skip_conditionals=False):
    """One step with `sequence_length`: batch entries whose sequence has ended
    get `zero_output` and keep their state; the others get the cell's results.
    Without `skip_conditionals`, conds skip the cell when every entry has ended
    and the selects when none has (static_rnn)."""
    flat_state = nest.flatten(state)
    flat_zero_output = nest.flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_one_through(output, new_output):
        if hasattr(output, "_with_flow") or output.shape.ndims == 0:
            return new_output  # a TensorArray or a scalar: nothing to select per batch entry
        with get_default_graph().colocate_with(new_output):
            return math_ops.where(copy_cond, output, new_output)

    def copy_some_through(flat_new_output, flat_new_state):
        return ([copy_one_through(z, n) for z, n in zip(flat_zero_output, flat_new_output)] +
                [copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)])

    def call_and_flatten():
        new_output, new_state = call_cell()
        nest.assert_same_structure(zero_output, new_output)
        nest.assert_same_structure(state, new_state)
        return nest.flatten(new_output), nest.flatten(new_state)

    if skip_conditionals:
        final_output_and_state = copy_some_through(*call_and_flatten())
    else:
        def maybe_copy_some_through():
            flat_new_output, flat_new_state = call_and_flatten()
            return control_flow_ops.cond(time < min_sequence_length, lambda: flat_new_output + flat_new_state,
                                         lambda: copy_some_through(flat_new_output, flat_new_state))
        final_output_and_state = control_flow_ops.cond(time >= max_sequence_length,
                                                       lambda: flat_zero_output + flat_state,
                                                       maybe_copy_some_through)
    final_output_and_state = list(final_output_and_state)
    final_output = final_output_and_state[:len(flat_zero_output)]
    final_state = final_output_and_state[len(flat_zero_output):]
    for output, zero in zip(final_output, flat_zero_output):
        output.set_shape(zero.shape)
    for substate, flat_substate in zip(final_state, flat_state):
        if isinstance(substate, Tensor):
            substate.set_shape(flat_substate.shape)
    return (nest.pack_sequence_as(zero_output, final_output), nest.pack_sequence_as(state, final_state))


def _zero_output(output_size, batch_size, static_batch_size, dtype):
    def zeros(size):
        value = array_ops.zeros(concat_shape(batch_size, size), dtype)
        value.set_shape(TensorShape(concat_shape(static_batch_size, size, static=True)))
        return value
    return nest.map_structure(zeros, output_size)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """The cell unrolled over a list of [batch, input] tensors; returns (outputs, final state)."""
    assert_like_rnncell("cell", cell)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first_input = inputs
        while nest.is_sequence(first_input):
            first_input = first_input[0]
        if first_input.shape.ndims != 1:
            fixed_batch_size = first_input.shape.with_rank_at_least(2).dims[0]
            for flat_input in nest.flatten(inputs):
                input_shape = flat_input.shape.with_rank_at_least(2)
                if not fixed_batch_size.is_compatible_with(input_shape.dims[0]):
                    raise ValueError(f"Batch sizes of the inputs differ: {fixed_batch_size.value} and "
                                     f"{input_shape.dims[0].value}")
                for i, size in enumerate(input_shape.as_list()[1:]):
                    if size is None:
                        raise ValueError(f"Input size (dimension {i} of inputs) must be accessible via shape "
                                         f"inference, but saw value None.")
        else:
            fixed_batch_size = first_input.shape.with_rank_at_least(1).dims[0]
        static_batch = fixed_batch_size.value
        batch_size = static_batch if static_batch else array_ops.shape(first_input)[0]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("sequence_length must be a vector of length batch_size")
            zero_output = _zero_output(cell.output_size, batch_size, static_batch, _infer_state_dtype(dtype, state))
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            min_sequence_length = math_ops.reduce_min(sequence_length)
            max_sequence_length = math_ops.reduce_max(sequence_length)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            call_cell = lambda: cell(input_, state)  # noqa: E731 - read at once, in this iteration
            if sequence_length is not None:
                output, state = _rnn_step(time=time, sequence_length=sequence_length,
                                          min_sequence_length=min_sequence_length,
                                          max_sequence_length=max_sequence_length, zero_output=zero_output,
                                          state=state, call_cell=call_cell, state_size=cell.state_size)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def _reverse_seq(input_seq, lengths):
    """A list of [batch, ...] tensors in reverse time order; per batch entry when `lengths` is given."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_input_seq = tuple(nest.flatten(input_) for input_ in input_seq)
    flat_results = [[] for _ in input_seq]
    for sequence in zip(*flat_input_seq):
        input_shape = TensorShape(None) if sequence[0].shape.ndims is None else \
            TensorShape([None] * sequence[0].shape.ndims)
        for input_ in sequence:
            input_shape.assert_is_compatible_with(input_.shape)
            input_.set_shape(input_shape)
        s_reversed = reverse_sequence(array_ops.stack(sequence), lengths, 0, 1)
        for r, flat_result in zip(array_ops.unstack(s_reversed), flat_results):
            r.set_shape(input_shape)
            flat_result.append(r)
    return [nest.pack_sequence_as(input_, flat_result) for input_, flat_result in zip(input_seq, flat_results)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """A forward and a backward static_rnn; returns (outputs with the two
    directions concatenated per step, forward final state, backward final state)."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                                    scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, output_state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                              scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_outputs = tuple(array_ops.concat([fw, bw], 1)
                         for fw, bw in zip(nest.flatten(output_fw), nest.flatten(output_bw)))
    return nest.pack_sequence_as(output_fw, flat_outputs), output_state_fw, output_state_bw


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """The cell run over [batch, time, ...] inputs (`time_major`: [time, batch,
    ...]) in one while loop; returns (outputs, final state)."""
    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = nest.flatten(inputs)
        if not time_major:
            flat_input = tuple(_transpose_batch_time(convert_to_tensor(x)) for x in flat_input)
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                                 f"{sequence_length.shape}")
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            with get_default_graph().control_dependencies([_assert_has_shape(sequence_length, [batch_size])]):
                sequence_length = array_ops.identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations=parallel_iterations,
                                                 swap_memory=swap_memory, sequence_length=sequence_length,
                                                 dtype=dtype)
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _assert_has_shape(x, shape):
    x_shape = array_ops.shape(x)
    packed_shape = array_ops.stack(shape)
    return assert_op(math_ops.reduce_all(math_ops.equal(x_shape, packed_shape)),
                  [f"Expected shape for Tensor {x.name} is ", packed_shape, " but saw shape: ", x_shape])


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory, sequence_length=None,
                      dtype=None):
    state = initial_state
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    inputs_got_shape = tuple(x.shape.with_rank_at_least(3) for x in flat_input)
    const_time_steps, const_batch_size = inputs_got_shape[0].as_list()[:2]
    for x, shape in zip(flat_input, inputs_got_shape):
        if not TensorShape(shape.dims[2:]).is_fully_defined():
            raise ValueError(f"Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             f"None for input={x}.")
        if shape[0] != const_time_steps:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch.")
        if shape[1] != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    state_dtype = _infer_state_dtype(dtype, state)
    zero_output = _zero_output(cell.output_size, batch_size, const_batch_size, state_dtype) \
        if sequence_length is not None else None
    if sequence_length is not None:
        min_sequence_length = math_ops.reduce_min(sequence_length)
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    g = get_default_graph()
    with g.name_scope("dynamic_rnn") as base_name:
        pass

    def create_ta(name, element_shape, ta_dtype):
        return TensorArray(dtype=ta_dtype, size=time_steps, element_shape=element_shape,
                           tensor_array_name=base_name + name)
    output_ta = tuple(create_ta(f"output_{i}", TensorShape([const_batch_size]).concatenate(as_shape(size)),
                                state_dtype) for i, size in enumerate(flat_output_size))
    input_ta = tuple(create_ta(f"input_{i}", x.shape.dims[1:], x.dtype.base_dtype) for i, x in enumerate(flat_input))
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def time_step(time, output_ta_t, state):
        input_t = tuple(ta.read(time) for ta in input_ta)
        for input_, shape in zip(input_t, inputs_got_shape):
            input_.set_shape(TensorShape(shape.dims[1:]))
        input_t = nest.pack_sequence_as(inputs, input_t)
        call_cell = lambda: cell(input_t, state)  # noqa: E731
        if sequence_length is not None:
            output, new_state = _rnn_step(time=time, sequence_length=sequence_length,
                                          min_sequence_length=min_sequence_length,
                                          max_sequence_length=max_sequence_length, zero_output=zero_output,
                                          state=state, call_cell=call_cell, state_size=cell.state_size,
                                          skip_conditionals=True)
        else:
            output, new_state = call_cell()
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, nest.flatten(output)))
        return time + 1, output_ta_t, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = control_flow_ops.while_loop(
        cond=lambda time, *_: time < loop_bound, body=time_step, loop_vars=(time, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps, swap_memory=swap_memory)
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, size in zip(final_outputs, flat_output_size):
        output.set_shape(TensorShape(concat_shape([const_time_steps, const_batch_size], size, static=True)))
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward and a backward dynamic_rnn over the same inputs (the backward one
    over each sequence reversed within its length); returns
    ((output_fw, output_bw), (output_state_fw, output_state_bw))."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = dynamic_rnn(
                cell=cell_fw, inputs=inputs, sequence_length=sequence_length, initial_state=initial_state_fw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)

        def reverse(input_):
            if sequence_length is not None:
                return reverse_sequence(input_, seq_lengths=sequence_length, seq_axis=time_axis,
                                        batch_axis=batch_axis)
            return array_ops.reverse(input_, axis=[time_axis])

        with vs.variable_scope("bw") as bw_scope:
            inputs_reverse = nest.map_structure(reverse, inputs)
            tmp, output_state_bw = dynamic_rnn(
                cell=cell_bw, inputs=inputs_reverse, sequence_length=sequence_length, initial_state=initial_state_bw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = reverse(tmp)
    return (output_fw, output_bw), (output_state_fw, output_state_bw)

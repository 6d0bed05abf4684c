"""`tf.nn.raw_rnn`: a cell driven by a user's `loop_fn` (decoders that feed back their own
outputs, attention over a memory), built as TF1 builds it.

`loop_fn(time, cell_output, cell_state, loop_state)` is called once before
the loop (outputs and states None) for the first input, the initial state,
the structure of what is emitted and the initial loop state, then after
every cell step for the next ones and which entries of the batch are
finished. One `while_loop` runs until every entry is; a finished entry
keeps its state and emits zeros, as TF's. Emitted values are written into
dynamically sized TensorArrays, one per component, returned unstacked.
"""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array_ops, control_flow_ops, math_ops, nest
from ..ops import variable_scope as vs
from ..tensor_array import TensorArray
from .cells import assert_like_rnncell


def _size_shape(size):
    """The shape a size stands for: a TensorShape, a list, an int, or a Tensor known only at run time."""
    if hasattr(size, "op"):
        from ..framework.constant_value import constant_value
        value = constant_value(size)
        return TensorShape(None) if value is None else TensorShape([int(v) for v in value])
    return as_shape(size)


def _batch_and(batch_size, size):
    if hasattr(size, "op"):
        return array_ops.concat([array_ops.reshape(batch_size, [1]), size], 0)
    dims = as_shape(size).as_list()
    return [batch_size] + dims


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Returns (emit_ta, final_state, final_loop_state); see the module docstring."""
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = constant(0, dtype=dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(time, None, None, None)
        flat_input = nest.flatten(next_input)
        loop_state = init_loop_state if init_loop_state is not None else constant(0, dtype=dtypes.int32)
        static_batch = TensorShape(None)
        for x in flat_input:
            shape = x.shape
            dim = TensorShape([shape.dims[0] if shape.ndims else None])
            if not static_batch.is_compatible_with(dim):
                raise ValueError(f"Dimension {static_batch[0]} and {dim[0]} are not compatible")
            static_batch = static_batch.merge_with(dim) if static_batch.ndims is not None else dim
        const_batch_size = static_batch[0] if static_batch.ndims else None
        batch_size = const_batch_size if const_batch_size is not None else array_ops.shape(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        state = nest.pack_sequence_as(initial_state, [convert_to_tensor(s) for s in nest.flatten(initial_state)])
        flat_state = nest.flatten(state)
        if emit_structure is not None:
            flat_emit = nest.flatten(emit_structure)
            flat_emit_size = [e.shape if e.shape.is_fully_defined() else array_ops.shape(e) for e in flat_emit]
            flat_emit_dtypes = [e.dtype.base_dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = nest.flatten(emit_structure)
            flat_emit_dtypes = [flat_state[0].dtype.base_dtype] * len(flat_emit_size)
        flat_emit_ta = [TensorArray(dtype=dtype, dynamic_size=True, size=0, tensor_array_name=f"rnn_output_{i}",
                                    element_shape=TensorShape([const_batch_size]).concatenate(_size_shape(size)))
                        for i, (dtype, size) in enumerate(zip(flat_emit_dtypes, flat_emit_size))]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)
        zero_emit = nest.pack_sequence_as(emit_structure, [
            array_ops.zeros(_batch_and(batch_size, size), dtype)
            for size, dtype in zip(flat_emit_size, flat_emit_dtypes)])

        def condition(unused_time, elements_finished, *_):
            return math_ops.logical_not(math_ops.reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            nest.assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            next_finished, next_input, next_state, emit_output, next_loop_state = loop_fn(
                next_time, next_output, cell_state, loop_state)
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current, candidate):
                def copy(cur, cand):
                    if isinstance(cur, TensorArray) or cur.shape.ndims == 0:
                        return cand  # arrays and scalars pass through
                    with get_default_graph().colocate_with(cand.op):
                        return math_ops.where(elements_finished, cur, cand)
                return nest.map_structure(copy, current, candidate)

            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = nest.map_structure(lambda ta, emit: ta.write(time, emit), emit_ta, emit_output)
            elements_finished = math_ops.logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = control_flow_ops.while_loop(
            condition, body, loop_vars=[time, finished, next_input, emit_ta, state, loop_state],
            parallel_iterations=parallel_iterations, swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state

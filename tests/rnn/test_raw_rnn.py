"""raw_rnn's checks (its values, gradients and names are the TF golden case
tests/tf1_programs/cases/raw_rnn.py): a loop_fn must be callable and keep its structures."""
import numpy as np
import pytest

import graphrt as tf


def test_loop_fn_must_be_callable(graph):
    with pytest.raises(TypeError, match="loop_fn must be a callable"):
        tf.nn.raw_rnn(tf.nn.rnn_cell.BasicRNNCell(2), "not a function")


def test_a_loop_fn_that_changes_the_state_structure_is_refused(graph):
    cell = tf.nn.rnn_cell.LSTMCell(2)

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(1, tf.float32) if cell_output is None else cell_state.h  # drops the tuple
        return time >= 2, tf.zeros([1, 3]), state, None, None

    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.nn.raw_rnn(cell, loop_fn)


def test_entries_stop_at_their_own_step_and_emit_zeros_after(graph):
    with tf.variable_scope("unit", initializer=tf.ones_initializer()):
        cell = tf.nn.rnn_cell.BasicRNNCell(1, activation=tf.identity)
    lengths = tf.constant([1, 3])

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
        return time >= lengths, tf.ones([2, 1]), state, cell_output, None

    with tf.variable_scope("unit", initializer=tf.ones_initializer()):
        outputs_ta, final_state, _ = tf.nn.raw_rnn(cell, loop_fn)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        outputs, state = sess.run([outputs_ta.stack(), final_state])
    # state_t = input + state_{t-1} (identity activation, unit weights): 1, 2, 3; entry 0 stops after one step
    np.testing.assert_array_equal(outputs[:, :, 0], [[1, 1], [0, 2], [0, 3]])
    np.testing.assert_array_equal(state[:, 0], [1, 3])

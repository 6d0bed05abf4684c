"""tf.nn.raw_rnn: the documented pattern (inputs read from a TensorArray, entries finishing at
their own lengths), a greedy decoder feeding back its own outputs with a loop state and an emit
structure of its own, an LSTM state tuple, gradients through the loop, and variable names."""


def run(tf, np):
    out = {}
    rng = np.random.RandomState(4)
    inputs = rng.randn(5, 3, 2).astype(np.float32)  # [time, batch, depth]
    lengths = np.array([5, 2, 3], np.int32)
    g = tf.Graph()
    with g.as_default():
        init = tf.constant_initializer(0.1)
        cell = tf.nn.rnn_cell.LSTMCell(4, initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, (6, 16))))
        sequence = tf.constant(inputs)
        inputs_ta = tf.TensorArray(tf.float32, size=5).unstack(sequence)

        def loop_fn(time, cell_output, cell_state, loop_state):
            emit_output = cell_output
            next_state = cell.zero_state(3, tf.float32) if cell_output is None else cell_state
            finished = time >= lengths
            all_done = tf.reduce_all(finished)
            next_input = tf.cond(all_done, lambda: tf.zeros([3, 2]), lambda: inputs_ta.read(time))
            return finished, next_input, next_state, emit_output, None

        outputs_ta, final_state, final_loop = raw_rnn(tf, cell, loop_fn)
        outputs = outputs_ta.stack()
        loss = tf.reduce_sum(outputs * outputs) + tf.reduce_sum(final_state.h)
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, variables + [sequence])
        out["names"] = [v.op.name for v in variables]
        out["static"] = [str(outputs.shape), str(final_state.c.shape), str(final_loop)]

        # a decoder: its own output (projected) is the next input; the loop state counts emitted tokens
        dec = tf.nn.rnn_cell.GRUCell(3, kernel_initializer=init, name="dec")
        projection = tf.constant(rng.randn(3, 2).astype(np.float32))
        start = tf.constant(rng.randn(2, 2).astype(np.float32))

        def decode_fn(time, cell_output, cell_state, loop_state):
            if cell_output is None:
                return (tf.zeros([2], tf.bool), start, dec.zero_state(2, tf.float32),
                        (tf.zeros([3], tf.float32), tf.zeros([], tf.int32)), tf.constant(0.0))
            logits = tf.matmul(cell_output, projection)
            finished = tf.logical_or(time >= 4, tf.reduce_max(logits, axis=1) > 1.5)
            return (finished, tf.nn.tanh(logits), cell_state, (cell_output, tf.argmax(logits, 1, output_type=tf.int32)),
                    loop_state + tf.reduce_sum(tf.cast(tf.logical_not(finished), tf.float32)))

        with tf.variable_scope("decoder"):
            (dec_ta, ids_ta), dec_state, counted = raw_rnn(tf, dec, decode_fn)
        out["decoder_names"] = [v.op.name for v in tf.trainable_variables(scope="decoder")]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["outputs"], out["final_c"], out["final_h"], out["grads"] = sess.run(
                [outputs, final_state.c, final_state.h, grads])
            out["decoder"] = sess.run([dec_ta.stack(), ids_ta.stack(), dec_state, counted, dec_ta.size()])
    return out


def raw_rnn(tf, cell, loop_fn):
    return tf.nn.raw_rnn(cell, loop_fn)

"""RNN cells run by dynamic_rnn and static_rnn: forward values, final states and
gradients of BasicLSTMCell, LSTMCell (peepholes, projection, clipping), GRUCell,
BasicRNNCell, MultiRNNCell and the wrappers; variable names. Weights are set by
assign from a fixed RandomState, so the values do not depend on initializers."""


def set_weights(tf, np, sess, seed):
    rng = np.random.RandomState(seed)
    for v in sorted(tf.trainable_variables(), key=lambda v: v.name):
        sess.run(tf.assign(v, rng.uniform(-0.6, 0.6, v.shape.as_list()).astype(np.float32)))


def run_model(tf, np, build, xv, seed):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, xv.shape, name="x")
        outputs, state = build(tf, x)
        flat_state = _flatten(state)
        loss = tf.reduce_sum(tf.square(outputs)) + tf.add_n([tf.reduce_sum(s) for s in flat_state])
        variables = sorted(tf.trainable_variables(), key=lambda v: v.name)
        grads = tf.gradients(loss, [x] + variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            set_weights(tf, np, sess, seed)
            out, st, gr = sess.run([outputs, flat_state, grads], {x: xv})
    return {"names": [v.name for v in variables], "outputs": out, "state": st, "grads": gr}


def _flatten(s):
    if isinstance(s, (list, tuple)):
        return [y for x in s for y in _flatten(x)]
    return [s]


def run(tf, np):
    rng = np.random.RandomState(3)
    xv = rng.randn(3, 5, 4).astype(np.float32)
    cells = tf.nn.rnn_cell
    out = {}

    def dyn(make_cell, **kw):
        return lambda tf, x: tf.nn.dynamic_rnn(make_cell(), x, dtype=tf.float32, **kw)

    out["basic_lstm"] = run_model(tf, np, dyn(lambda: cells.BasicLSTMCell(6)), xv, 1)
    out["basic_lstm_fb"] = run_model(tf, np, dyn(lambda: cells.BasicLSTMCell(3, forget_bias=0.3)), xv, 2)
    out["gru"] = run_model(tf, np, dyn(lambda: cells.GRUCell(5)), xv, 3)
    out["basic_rnn"] = run_model(tf, np, dyn(lambda: cells.BasicRNNCell(4, activation=tf.nn.relu)), xv, 4)
    out["lstm_peep_proj"] = run_model(tf, np, dyn(lambda: cells.LSTMCell(
        6, use_peepholes=True, num_proj=3, cell_clip=0.8, proj_clip=0.5, forget_bias=0.5)), xv, 5)
    out["lstm_not_tuple"] = run_model(tf, np, dyn(lambda: cells.LSTMCell(4, state_is_tuple=False)), xv, 6)
    out["multi"] = run_model(tf, np, dyn(lambda: cells.MultiRNNCell(
        [cells.BasicLSTMCell(4), cells.ResidualWrapper(cells.GRUCell(4)),
         cells.DropoutWrapper(cells.BasicRNNCell(3), input_keep_prob=1.0, output_keep_prob=1.0)])), xv, 7)
    out["time_major"] = run_model(tf, np, dyn(lambda: cells.GRUCell(3), time_major=True), xv, 8)

    def static(tf, x):
        inputs = tf.unstack(x, axis=1)
        outputs, state = tf.nn.static_rnn(cells.BasicLSTMCell(5), inputs, dtype=tf.float32)
        return tf.stack(outputs, axis=1), state
    out["static_lstm"] = run_model(tf, np, static, xv, 9)

    def static_seq(tf, x):
        inputs = tf.unstack(x, axis=1)
        outputs, state = tf.nn.static_rnn(cells.GRUCell(3), inputs, dtype=tf.float32, sequence_length=[5, 2, 0])
        return tf.stack(outputs, axis=1), state
    out["static_gru_seq"] = run_model(tf, np, static_seq, xv, 10)

    def initial(tf, x):
        cell = cells.BasicLSTMCell(3)
        c0 = tf.constant(np.linspace(-1, 1, 9).reshape(3, 3).astype(np.float32))
        h0 = tf.constant(np.linspace(1, -1, 9).reshape(3, 3).astype(np.float32))
        return tf.nn.dynamic_rnn(cell, x, initial_state=cells.LSTMStateTuple(c0, h0), scope="custom")
    out["initial_state_scope"] = run_model(tf, np, initial, xv, 11)
    return out

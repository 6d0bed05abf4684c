"""dynamic_rnn with sequence_length (zero outputs past each length, the state
copied through), bidirectional_dynamic_rnn and static_bidirectional_rnn, with
gradients; reverse_sequence and its gradient."""


def _flatten(s):
    if isinstance(s, (list, tuple)):
        return [y for x in s for y in _flatten(x)]
    return [s]


def run_model(tf, np, build, xv, seed):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, xv.shape[1], xv.shape[2]], name="x")
        lengths = tf.placeholder(tf.int32, [None], name="lengths")
        outputs, state = build(tf, x, lengths)
        flat_out, flat_state = _flatten(outputs), _flatten(state)
        weights = [np.float32(0.5 + i) for i in range(len(flat_out))]
        loss = tf.add_n([w * tf.reduce_sum(tf.square(o)) for w, o in zip(weights, flat_out)] +
                        [tf.reduce_sum(s) for s in flat_state])
        variables = sorted(tf.trainable_variables(), key=lambda v: v.name)
        grads = tf.gradients(loss, [x] + variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            rng = np.random.RandomState(seed)
            for v in variables:
                sess.run(tf.assign(v, rng.uniform(-0.6, 0.6, v.shape.as_list()).astype(np.float32)))
            feeds = {x: xv, lengths: [4, 2, 0, 3]}
            out, st, gr = sess.run([flat_out, flat_state, grads], feeds)
    return {"names": [v.name for v in variables], "outputs": out, "state": st, "grads": gr}


def run(tf, np):
    rng = np.random.RandomState(5)
    xv = rng.randn(4, 4, 3).astype(np.float32)
    cells = tf.nn.rnn_cell
    out = {}
    out["dynamic_lstm_seq"] = run_model(tf, np, lambda tf, x, n: tf.nn.dynamic_rnn(
        cells.BasicLSTMCell(5), x, sequence_length=n, dtype=tf.float32), xv, 1)
    out["dynamic_gru_seq_time_major"] = run_model(tf, np, lambda tf, x, n: tf.nn.dynamic_rnn(
        cells.GRUCell(3), tf.transpose(x, [1, 0, 2]), sequence_length=n, dtype=tf.float32, time_major=True,
        swap_memory=True, parallel_iterations=2), xv, 2)
    out["dynamic_multi_seq"] = run_model(tf, np, lambda tf, x, n: tf.nn.dynamic_rnn(
        cells.MultiRNNCell([cells.LSTMCell(4, use_peepholes=True), cells.GRUCell(2)]), x, sequence_length=n,
        dtype=tf.float32), xv, 3)
    out["bidirectional_dynamic"] = run_model(tf, np, lambda tf, x, n: tf.nn.bidirectional_dynamic_rnn(
        cells.BasicLSTMCell(3), cells.GRUCell(4), x, sequence_length=n, dtype=tf.float32), xv, 4)
    out["bidirectional_dynamic_nolen"] = run_model(tf, np, lambda tf, x, n: tf.nn.bidirectional_dynamic_rnn(
        cells.GRUCell(2), cells.GRUCell(2), x, dtype=tf.float32), xv, 5)

    def static_bi(tf, x, n):
        outputs, fw, bw = tf.nn.static_bidirectional_rnn(cells.BasicLSTMCell(3), cells.BasicLSTMCell(2),
                                                         tf.unstack(x, axis=1), sequence_length=n,
                                                         dtype=tf.float32)
        return outputs, (fw, bw)
    out["static_bidirectional"] = run_model(tf, np, static_bi, xv, 6)

    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xv)
        r = tf.reverse_sequence(x, [4, 2, 0, 3], seq_axis=1, batch_axis=0)
        r2 = tf.reverse_sequence(tf.transpose(x, [1, 0, 2]), tf.constant([1, 4, 3, 2], tf.int64), seq_axis=0,
                                 batch_axis=1)
        gr = tf.gradients(tf.reduce_sum(r * tf.constant(xv * 2.0)) + tf.reduce_sum(r2 * r2), x)[0]
        with tf.Session() as sess:
            out["reverse_sequence"] = sess.run([r, r2, gr])
    return out

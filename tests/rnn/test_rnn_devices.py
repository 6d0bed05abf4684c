"""dynamic_rnn split across devices (one layer per device): the same values and
gradients as on one device, with transfers inside the forward and the gradient
loops; training steps run; on the simulated accelerator too."""
import numpy as np

import graphrt as tf


def build(devices, seed=0):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3, 6, 4], name="x")
        cells = [tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicLSTMCell(5), devices[0]),
                 tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.GRUCell(3), devices[1])]
        with tf.variable_scope("model", initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=seed)):
            out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), x, sequence_length=[6, 4, 1],
                                           dtype=tf.float32)
        loss = tf.reduce_sum(out * out) + tf.reduce_sum(state[1])
        grads = tf.gradients(loss, [x] + tf.trainable_variables())
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return g, x, loss, grads, train


def run_steps(devices, config):
    g, x, loss, grads, train = build(devices)
    xv = np.random.RandomState(1).randn(3, 6, 4).astype(np.float32)
    md = tf.RunMetadata()
    with tf.Session(graph=g, config=config) as sess:
        sess.run(tf.variables_initializer(g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)))
        first = sess.run(grads, {x: xv}, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
        losses = [sess.run([train, loss], {x: xv})[1] for _ in range(3)]
    return first, losses, md


def test_dynamic_rnn_split_over_two_cpus_matches_one_device():
    one, losses_one, _ = run_steps(["/cpu:0", "/cpu:0"], tf.ConfigProto(device_count={"CPU": 2}))
    two, losses_two, md = run_steps(["/cpu:0", "/cpu:1"], tf.ConfigProto(device_count={"CPU": 2}))
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses_one, losses_two, rtol=1e-5)
    assert losses_two[-1] < losses_two[0]
    assert len(md.partition_graphs) == 2
    sends = [n for pg in md.partition_graphs for n in pg.node if n.op == "_Send"]
    assert any("while" in n.name for n in sends)  # tensors cross devices inside the loops


def test_dynamic_rnn_with_a_layer_on_the_simulated_accelerator():
    one, _, _ = run_steps(["/cpu:0", "/cpu:0"], tf.ConfigProto(device_count={"CPU": 1, "SIM": 1}))
    sim, losses, _ = run_steps(["/cpu:0", "/device:SIM:0"], tf.ConfigProto(device_count={"CPU": 1, "SIM": 1}))
    for a, b in zip(one, sim):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0]

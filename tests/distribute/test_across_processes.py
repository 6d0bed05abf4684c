"""The same collectives over 2 worker processes x 2 CPU devices, through the ZeroMQ rendezvous."""
import numpy as np
import pytest

import graphrt as tf
from tests.distributed.harness import ProcessCluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = ProcessCluster(2, tmp_path_factory.mktemp("distribute"), device_count="CPU:2")
    yield cluster
    cluster.close()


@pytest.mark.parametrize("algorithm", ["ring", "tree", "halving_doubling"])
def test_all_reduce_over_two_tasks_with_two_devices_each(cluster, algorithm):
    devices = [cluster.device(task, index) for task in range(2) for index in range(2)]
    rng = np.random.RandomState(7)
    xs = [rng.randn(3, 7).astype(np.float32) for _ in devices]
    g = tf.Graph()
    with g.as_default():
        values = []
        for x, device in zip(xs, devices):
            with tf.device(device):
                values.append(tf.identity(tf.constant(x)))
        outs = tf.distribute.all_reduce(values, op="mean", algorithm=algorithm)
        gathered = tf.distribute.all_gather(values)
    assert [o.device for o in outs] == devices
    with tf.Session(cluster.target(0), graph=g) as sess:
        md = tf.RunMetadata()
        got, got_gathered = sess.run([outs, gathered], options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True, timeout_in_ms=20000),
            run_metadata=md)
    for out in got:
        np.testing.assert_allclose(out, np.mean(np.stack(xs), 0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out, got[0])
    for out in got_gathered:
        np.testing.assert_array_equal(out, np.concatenate(xs))
    # some hops crossed between the two worker processes
    assert any("task:0" in t.send_device and "task:1" in t.recv_device for t in tf.distribute.transfers(md))


def test_data_parallel_over_two_tasks_trains_like_one_device(cluster):
    devices = [cluster.device(task, index) for task in range(2) for index in range(2)]
    rng = np.random.RandomState(3)
    xs = rng.randn(8, 5).astype(np.float32)
    ys = xs @ np.arange(5, dtype=np.float32).reshape(5, 1)

    def loss_fn(x, y):
        w = tf.get_variable("w", [5, 1], initializer=tf.zeros_initializer())
        return tf.reduce_mean(tf.square(tf.matmul(x, w) - y))

    def run(target, dp_devices):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [8, 5])
            y = tf.placeholder(tf.float32, [8, 1])
            opt = tf.train.MomentumOptimizer(0.05, 0.9)
            if dp_devices:
                dp = tf.distribute.DataParallel(dp_devices, zero_stage=1)
                train_op = dp.minimize(opt, loss_fn, [x, y])
            else:
                train_op = opt.minimize(loss_fn(x, y))
            w = [v for v in tf.trainable_variables() if v.op.name == "w"][0]
            mirrors = dp.mirrors(w) if dp_devices else [w]
            with tf.Session(target, graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(10):
                    sess.run(train_op, {x: xs, y: ys}, options=tf.RunOptions(timeout_in_ms=20000))
                return sess.run(mirrors)
    want = run("", None)[0]
    got = run(cluster.target(0), devices)
    assert len(got) == 4
    for value in got:
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6)

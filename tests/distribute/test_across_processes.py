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

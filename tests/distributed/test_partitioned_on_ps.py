"""A partitioned embedding table spread over two parameter-server tasks (in-process servers):
each part lives on its task, the worker's lookups and Adagrad updates give the values one local
process computes for the same graph, and a sharded Saver writes one data file per task."""
import os

import numpy as np

import graphrt as tf
from graphrt.distributed.cluster import create_local_cluster
from graphrt.train import checkpoint_bundle

TABLE = np.arange(30, dtype=np.float32).reshape(10, 3) / 10.0
IDS = np.array([[1, 7], [4, 4], [9, 0]], np.int64)


def _model(device_fn):
    with tf.device(device_fn):
        emb = tf.get_variable("emb", initializer=tf.constant(TABLE), partitioner=tf.fixed_size_partitioner(3))
        w = tf.get_variable("w", initializer=tf.constant(np.ones((3, 2), np.float32)),
                            partitioner=tf.fixed_size_partitioner(2))
        ids = tf.placeholder(tf.int64, [None, 2])
        h = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids), axis=1)
        loss = tf.reduce_sum(tf.square(tf.matmul(h, w)))
        step = tf.train.AdagradOptimizer(0.1).minimize(loss)
    return emb, w, ids, step


def _train(target, device_fn, steps=3):
    g = tf.Graph()
    with g.as_default():
        emb, w, ids, step = _model(device_fn)
        with tf.Session(target, graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(step, {ids: IDS})
            return g, emb, sess.run([tf.convert_to_tensor(emb), tf.convert_to_tensor(w)])


def test_partitioned_table_on_two_ps_tasks_trains_as_one_process(tmp_path):
    _, _, (emb_local, w_local) = _train("", None)
    workers, ps = create_local_cluster(num_workers=1, num_ps=2)
    try:
        cluster = tf.train.ClusterSpec(workers[0].cluster_spec)
        setter = tf.train.replica_device_setter(cluster=cluster)
        g, emb, (emb_ps, w_ps) = _train(workers[0].target, setter)
        assert [v.device for v in emb] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
        np.testing.assert_allclose(emb_ps, emb_local, rtol=1e-6)
        np.testing.assert_allclose(w_ps, w_local, rtol=1e-6)
        assert not np.allclose(emb_ps, TABLE)  # the rows looked up moved
        with g.as_default():
            saver = tf.train.Saver(sharded=True)
            with tf.Session(workers[0].target, graph=g) as sess:  # the variables live on the ps tasks
                prefix = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    finally:
        for server in workers + ps:
            server.stop()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.data-00000-of-00002", "model.data-00001-of-00002",
                                            "model.index"]
    reader = checkpoint_bundle.BundleReader(prefix)
    assert [str(s) for s in reader.slices("emb")] == ["0,4:0,3", "7,3:0,3", "4,3:0,3"]  # task 0's parts first
    np.testing.assert_allclose(reader.read("emb"), emb_local, rtol=1e-6)
    np.testing.assert_allclose(reader.read("w"), w_local, rtol=1e-6)

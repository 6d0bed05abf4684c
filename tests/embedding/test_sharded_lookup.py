"""Sharded embedding tables (values against a numpy reference; TensorFlow's own
outputs are in tests/tf1_programs/golden/sharded_embeddings.npz): each shard's
gather runs on the shard's device, and bad arguments fail clearly."""
import numpy as np
import pytest

import graphrt as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def _reference(tables, ids, strategy):
    n, total = len(tables), sum(t.shape[0] for t in tables)
    full = np.zeros((total, tables[0].shape[1]), np.float32)
    if strategy == "mod":
        for p, t in enumerate(tables):
            full[p::n][:len(t)] = t
    else:
        full[:] = np.concatenate(tables)
    return full[ids]


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_each_shard_is_gathered_on_its_device(strategy):
    rng = np.random.RandomState(4)
    tables = [rng.randn(3, 2).astype(np.float32), rng.randn(3, 2).astype(np.float32),
              rng.randn(2, 2).astype(np.float32)]
    ids = np.array([[7, 0, 4], [2, 5, 6]], np.int64)
    g = tf.Graph()
    with g.as_default():
        shards = []
        for i, t in enumerate(tables):
            with tf.device(f"/cpu:{i}"):
                shards.append(tf.Variable(t, name=f"shard{i}"))
        rows = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
        assert rows.shape.as_list() == [2, 3, 2]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            got = sess.run(rows, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    np.testing.assert_array_equal(got, _reference(tables, ids, strategy))
    gathers = {n.device for pg in md.partition_graphs for n in pg.node if n.op == "GatherV2"}
    assert gathers == {CPU.format(i) for i in range(3)}


def test_bad_strategy_and_empty_shard_lists_are_value_errors():
    with tf.Graph().as_default():
        tables = [tf.zeros([2, 2]), tf.zeros([2, 2])]
        with pytest.raises(ValueError, match="Unrecognized partition strategy: nope"):
            tf.nn.embedding_lookup(tables, [0], partition_strategy="nope")
        with pytest.raises(ValueError, match="Need at least one param"):
            tf.nn.embedding_lookup([], [0])

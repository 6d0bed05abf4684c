"""Embedding tables sharded over several variables or tensors: embedding_lookup
with the "mod" and "div" partition strategies (uneven shards, max_norm, a fed
shard), the gradients each shard gets, Adagrad updating the shards, and
embedding_lookup_sparse / safe_embedding_lookup_sparse over the shards."""


def run(tf, np):
    out = {}
    rng = np.random.RandomState(0)
    tables = [rng.randn(4, 3).astype(np.float32), rng.randn(3, 3).astype(np.float32),
              rng.randn(3, 3).astype(np.float32)]
    ids = np.array([[0, 5, 9], [2, 7, 1]], np.int64)
    for strategy in ("mod", "div"):
        g = tf.Graph()
        with g.as_default():
            shards = [tf.Variable(t, name=f"shard{i}") for i, t in enumerate(tables)]
            rows = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
            clipped = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy, max_norm=1.0)
            loss = tf.reduce_sum(rows * rows) + tf.reduce_sum(clipped)
            grads = [tf.convert_to_tensor(gr) for gr in tf.gradients(loss, shards)]
            bag = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 8, 1], tf.int64), [2, 2])
            weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([0.5, 2.0, 1.0]), [2, 2])
            bags = [tf.nn.embedding_lookup_sparse(shards, bag, None, partition_strategy=strategy, combiner=c)
                    for c in ("sum", "mean", "sqrtn")]
            weighted = tf.nn.embedding_lookup_sparse(shards, bag, weights, partition_strategy=strategy)
            with_bad = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1]], tf.constant([3, 6, 1, -1], tf.int64), [3, 2])
            safe = tf.nn.safe_embedding_lookup_sparse(shards, with_bad, None, partition_strategy=strategy)
            safe_default = tf.nn.safe_embedding_lookup_sparse(shards, with_bad, None, partition_strategy=strategy,
                                                              default_id=2)
            fed = tf.placeholder(tf.float32, [None, 3])
            mixed = tf.nn.embedding_lookup([fed, tf.constant(tables[1])], [[0, 4], [6, 1]], partition_strategy=strategy)
            train = tf.train.AdagradOptimizer(0.1).minimize(loss)
            out[f"{strategy}/static_shapes"] = [str(t.shape) for t in (rows, bags[0], safe, mixed)]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for key, value in zip(
                        ("rows", "clipped", "grads", "bags", "weighted", "safe", "safe_default", "mixed"),
                        sess.run([rows, clipped, grads, bags, weighted, safe, safe_default, mixed],
                                 {fed: tables[0]})):
                    out[f"{strategy}/{key}"] = value
                for _ in range(2):
                    sess.run(train)
                out[f"{strategy}/after_adagrad"] = sess.run(shards)
    return out

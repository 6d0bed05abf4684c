"""Embedding gradients as IndexedSlices (values, indices, dense_shape; repeated
ids; a sum with a dense gradient), sparse updates by SGD, Momentum (and
Nesterov), Adam and Adagrad, and nce_loss / sampled_softmax_loss training word
vectors on a tiny corpus. The sampled classes are fed (sampled_values), so the
sampler's random draws do not enter the comparison; old aliases arg_max/arg_min."""

CORPUS = ("the cat sat on the mat the dog sat on the log the cat saw the dog "
          "a cat and a dog sat on a mat").split()


def skipgrams(np):
    vocab = sorted(set(CORPUS))
    ids = [vocab.index(w) for w in CORPUS]
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in (i - 1, i + 1) if 0 <= j < len(ids)]
    return vocab, np.array([p[0] for p in pairs], np.int32), np.array([[p[1]] for p in pairs], np.int64)


def log_uniform_expected(np, classes, num_sampled, range_max):
    p = np.log((classes + 2.0) / (classes + 1.0)) / np.log(range_max + 1.0)
    return (p * num_sampled).astype(np.float32)


def train_word_vectors(tf, np, loss_fn, opt, steps=40):
    vocab, centers, contexts = skipgrams(np)
    v, dim, num_sampled = len(vocab), 6, 5
    rng = np.random.RandomState(11)
    samples = rng.randint(0, v, size=(steps, num_sampled)).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        emb = tf.Variable(rng.uniform(-0.5, 0.5, (v, dim)).astype(np.float32), name="emb")
        w = tf.Variable(rng.uniform(-0.5, 0.5, (v, dim)).astype(np.float32), name="w")
        b = tf.Variable(np.zeros(v, np.float32), name="b")
        x = tf.placeholder(tf.int32, [None])
        y = tf.placeholder(tf.int64, [None, 1])
        sampled = tf.placeholder(tf.int64, [num_sampled])
        true_exp = tf.placeholder(tf.float32, [None, 1])
        sampled_exp = tf.placeholder(tf.float32, [num_sampled])
        loss = tf.reduce_mean(loss_fn(tf, w, b, y, tf.nn.embedding_lookup(emb, x), num_sampled, v,
                                      (sampled, true_exp, sampled_exp)))
        train = opt(tf).minimize(loss)
        norm = tf.nn.l2_normalize(emb, 1)
        similarity = tf.matmul(norm, norm, transpose_b=True)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                feeds = {x: centers, y: contexts, sampled: samples[step],
                         true_exp: log_uniform_expected(np, contexts.astype(np.float64), num_sampled, v),
                         sampled_exp: log_uniform_expected(np, samples[step].astype(np.float64), num_sampled, v)}
                losses.append(sess.run([train, loss], feeds)[1])
            sim = sess.run(similarity)
    return {"losses": np.array(losses), "similarity": sim, "nearest_to_cat": vocab[int(np.argsort(-sim[vocab.index("cat")])[1])]}


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        table = tf.Variable(np.arange(20, dtype=np.float32).reshape(5, 4) / 10.0, name="table")
        ids = tf.constant([[3, 1], [3, 0]])
        looked = tf.nn.embedding_lookup(table, ids)
        loss = tf.reduce_sum(looked * looked)
        grad = tf.gradients(loss, table)[0]
        both = tf.gradients(loss + tf.reduce_sum(table * 2.0), table)[0]
        two = tf.gradients(loss + tf.reduce_sum(tf.gather(table, [4, 3])), table)[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["grad"] = {"type": type(grad).__name__, "values": sess.run(grad.values),
                           "indices": sess.run(grad.indices), "dense_shape": sess.run(grad.dense_shape),
                           "dense_sum": sess.run(both), "two_type": type(two).__name__,
                           "two_dense": sess.run(tf.convert_to_tensor(two))}
            out["alias"] = sess.run([tf.arg_max(table, 1), tf.arg_min(table, 0), tf.to_float(tf.constant([1, 2]))])
    for name, opt in [("sgd", lambda tf: tf.train.GradientDescentOptimizer(0.3)),
                      ("momentum", lambda tf: tf.train.MomentumOptimizer(0.2, 0.9)),
                      ("nesterov", lambda tf: tf.train.MomentumOptimizer(0.2, 0.9, use_nesterov=True)),
                      ("adam", lambda tf: tf.train.AdamOptimizer(0.05)),
                      ("adagrad", lambda tf: tf.train.AdagradOptimizer(0.3))]:
        g = tf.Graph()
        with g.as_default():
            table = tf.Variable(np.linspace(-1, 1, 24).reshape(6, 4).astype(np.float32), name="table")
            e = tf.nn.embedding_lookup(table, tf.constant([0, 2, 2, 5]))
            loss = tf.reduce_sum(tf.square(e - 0.3))
            train = opt(tf).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(4):
                    sess.run(train)
                out[name] = sess.run(table)

    def nce(tf, w, b, y, inputs, num_sampled, v, sampled_values):
        return tf.nn.nce_loss(w, b, y, inputs, num_sampled, v, sampled_values=sampled_values)

    def ssm(tf, w, b, y, inputs, num_sampled, v, sampled_values):
        return tf.nn.sampled_softmax_loss(w, b, y, inputs, num_sampled, v, sampled_values=sampled_values)
    out["nce_sgd"] = train_word_vectors(tf, np, nce, lambda tf: tf.train.GradientDescentOptimizer(1.0))
    out["nce_adagrad"] = train_word_vectors(tf, np, nce, lambda tf: tf.train.AdagradOptimizer(0.5), steps=15)
    out["sampled_softmax"] = train_word_vectors(tf, np, ssm, lambda tf: tf.train.GradientDescentOptimizer(1.0),
                                                steps=15)
    return out

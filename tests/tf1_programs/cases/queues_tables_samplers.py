"""PriorityQueue (lowest priority first, with enqueue_many, dequeue_many/up_to, closing, a
shared queue, tf.queue's names), StaticVocabularyTable (string and int64 vocabularies from
tensors and files, out-of-vocabulary buckets, SparseTensor keys), and the all-classes and
fixed-unigram candidate samplers' deterministic outputs."""
import os
import tempfile


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is the output
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        q = tf.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]], shared_name="jobs")
        twin = tf.queue.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]], shared_name="jobs")
        out["spec"] = [[d.name for d in q.dtypes], [str(s) for s in q.shapes], q.queue_ref.op.type]
        one = q.enqueue((tf.constant(5, tf.int64), "five", [5.0, 5.5]))
        many = q.enqueue_many(([3, 9, 1, 7], ["three", "nine", "one", "seven"], [[3, 3], [9, 9], [1, 1], [7, 7]]))
        first = q.dequeue()
        two = twin.dequeue_many(2)
        rest = q.dequeue_many(2)  # (TF's PriorityQueue drops a short dequeue_up_to batch: README)
        with tf.Session() as sess:
            sess.run(one)
            sess.run(many)
            out["size"] = sess.run(q.size())
            p, word, vec = sess.run(first)
            out["first"] = [p, word.decode(), vec]
            p, words, vecs = sess.run(two)
            out["two"] = [p, [w.decode() for w in words], vecs]
            sess.run(q.close())
            p, words, vecs = sess.run(rest)
            out["rest"] = [p, [w.decode() for w in words], vecs]
            out["after_close"] = _error(lambda: sess.run(first))
        out["bad_priority"] = _error(lambda: q.enqueue((tf.constant([1, 2], tf.int64), "x", [0.0, 0.0])))
        out["queue_names"] = sorted(n for n in ("FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase",
                                                "RandomShuffleQueue") if hasattr(tf.queue, n))

    with tempfile.TemporaryDirectory() as tmp:
        vocab_file = os.path.join(tmp, "vocab.txt")
        with open(vocab_file, "w") as f:
            f.write("emerson\nlake\npalmer\n")
        g = tf.Graph()
        with g.as_default():
            words = tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"], tf.constant([0, 1, 2], tf.int64)),
                num_oov_buckets=5)
            from_file = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
                vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER), num_oov_buckets=3, name="from_file")
            numbers = tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20, 30], tf.int64),
                                                    tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=4)
            narrow = tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20, 30], tf.int64),
                                                    tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=4,
                lookup_key_dtype=tf.int32)
            keys = tf.constant(["lake", "king", "palmer", "crimson", "", "emerson"])
            sparse = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["palmer", "yes"]), [2, 3])
            looked = words.lookup(sparse)
            out["names"] = [words.name, from_file.name]
            with tf.Session() as sess:
                sess.run(tf.tables_initializer())
                out["vocab"] = sess.run([words.lookup(keys), from_file.lookup(keys), words.size(),
                                         from_file.size()])
                out["numbers"] = sess.run([numbers.lookup(tf.constant([20, 99, 10, -5, 12345678901], tf.int64)),
                                           narrow.lookup(tf.constant([30, 7], tf.int32))])
                value = sess.run(looked)
                out["sparse"] = [value.indices, value.values, value.dense_shape]
        out["vocab_errors"] = [
            _error(lambda: tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([0], tf.int64)), num_oov_buckets=0)),
            _error(lambda: tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([0], tf.int32)), num_oov_buckets=1)),
        ]

    g = tf.Graph()
    with g.as_default():
        labels = tf.constant([[1], [4]], tf.int64)
        sampled, true_count, sampled_count = tf.nn.all_candidate_sampler(labels, 1, 6, True)
        # without `unique` the expected counts do not depend on the draws (with it, on how many tries they took)
        _, fixed_true, _ = tf.nn.fixed_unigram_candidate_sampler(
            labels, 1, 3, False, 7, unigrams=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], distortion=0.5, num_reserved_ids=1,
            seed=3)
        with tf.Session() as sess:
            out["all_candidates"] = sess.run([sampled, true_count, sampled_count])
            out["fixed_unigram_true_expected"] = sess.run(fixed_true)
    return out

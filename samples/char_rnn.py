"""A character-level LSTM language model (char-rnn) on a few KB of Alice in Wonderland.

The input pipeline is tf.data: the text's character ids are cut into windows,
each split into (input, next-character target), shuffled, batched and repeated,
and read through a one-shot iterator. The model embeds characters, runs an
LSTM with dynamic_rnn and predicts the next character. Every few steps it prints
the loss; at the end it generates a line from the trained model, one character
per run, carrying the LSTM state between runs.

    python samples/char_rnn.py [--steps 300] [--seq-len 40] [--batch 32] [--seed 0]
"""
import argparse
import os
import sys
import time

# The matrices here are small (32 x 160 x 512): one BLAS thread does them faster
# than a team of threads that must be woken for each (7x faster on 2 busy cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import graphrt as tf  # noqa: E402

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "alice.txt")


def load_text(path=TEXT):
    text = open(path, encoding="utf-8").read().replace("\n\n", "\n")
    vocab = sorted(set(text))
    return text, vocab


def input_pipeline(ids, seq_len, batch, seed):
    """(inputs, targets) batches of [batch, seq_len] character ids, forever."""
    windows = tf.data.Dataset.from_tensor_slices(ids).batch(seq_len + 1, drop_remainder=True)
    # windows starting one character later too, so every character is a target in some window
    shifted = tf.data.Dataset.from_tensor_slices(ids).skip(seq_len // 2).batch(seq_len + 1, drop_remainder=True)
    pairs = windows.concatenate(shifted).map(lambda w: (w[:-1], w[1:]))
    pairs = pairs.cache().shuffle(256, seed=seed).batch(batch, drop_remainder=True).repeat().prefetch(1)
    return pairs.make_one_shot_iterator().get_next()


def build(vocab_size, seq_len, batch, units=128, embed=32, learning_rate=0.01, seed=0, ids=None):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(seed)
        inputs, targets = input_pipeline(ids, seq_len, batch, seed)
        cell = tf.nn.rnn_cell.BasicLSTMCell(units)
        with tf.variable_scope("char_rnn"):
            embedding = tf.get_variable("embedding", [vocab_size, embed])
            outputs, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, inputs), dtype=tf.float32)
            logits = tf.layers.dense(outputs, vocab_size, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
        optimizer = tf.train.AdamOptimizer(learning_rate)
        grads, variables = zip(*optimizer.compute_gradients(loss))
        grads, _ = tf.clip_by_global_norm(grads, 5.0)
        train = optimizer.apply_gradients(zip(grads, variables))

        # Generation: one character at a time, the LSTM state fed back in.
        char = tf.placeholder(tf.int32, [1], name="char")
        c_in = tf.placeholder(tf.float32, [1, units], name="c")
        h_in = tf.placeholder(tf.float32, [1, units], name="h")
        with tf.variable_scope("char_rnn", reuse=True):
            x = tf.nn.embedding_lookup(tf.get_variable("embedding"), char)
            with tf.variable_scope("rnn"):
                out, state = cell(x, tf.nn.rnn_cell.LSTMStateTuple(c_in, h_in))
            next_logits = tf.layers.dense(out, vocab_size, name="logits", reuse=True)
        probs = tf.nn.softmax(next_logits)
        init = tf.global_variables_initializer()
    return g, dict(loss=loss, train=train, init=init, char=char, c=c_in, h=h_in, state=state, probs=probs,
                   units=units)


def generate(sess, m, vocab, start, length, rng, temperature=0.6):
    index = {ch: i for i, ch in enumerate(vocab)}
    c = np.zeros([1, m["units"]], np.float32)
    h = np.zeros([1, m["units"]], np.float32)
    text = start
    probs = None
    for ch in start:
        probs, (c, h) = sess.run([m["probs"], m["state"]], {m["char"]: [index[ch]], m["c"]: c, m["h"]: h})
    for _ in range(length):
        p = np.exp(np.log(probs[0] + 1e-9) / temperature)
        nxt = rng.choice(len(vocab), p=p / p.sum())
        text += vocab[nxt]
        if vocab[nxt] == "\n":
            break
        probs, (c, h) = sess.run([m["probs"], m["state"]], {m["char"]: [nxt], m["c"]: c, m["h"]: h})
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seq-len", type=int, default=40)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--print-every", type=int, default=25)
    args = ap.parse_args(argv)

    text, vocab = load_text()
    ids = np.array([vocab.index(ch) for ch in text], dtype=np.int32)
    print(f"text: {len(text)} characters, vocabulary of {len(vocab)}")
    g, m = build(len(vocab), args.seq_len, args.batch, seed=args.seed, ids=ids)
    start = time.time()
    with tf.Session(graph=g) as sess:
        sess.run(m["init"])
        window = []
        for step in range(1, args.steps + 1):
            _, loss = sess.run([m["train"], m["loss"]])
            window.append(loss)
            if step % args.print_every == 0 or step == 1 or step == args.steps:
                print(f"step {step:4d}  loss {np.mean(window):.3f}  ({time.time() - start:.1f} s)", flush=True)
                window = []
        line = generate(sess, m, vocab, "Alice ", 80, np.random.RandomState(args.seed))
    print(f"generated: {line.rstrip()}")


if __name__ == "__main__":
    main()

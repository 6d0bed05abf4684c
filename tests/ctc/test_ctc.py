"""CTC (graphrt/ctc) against references computed here: the loss as a brute-force
sum over every alignment of tiny inputs, gradients against finite differences,
the dense-label loss against the sparse one, beam search with a beam wide enough
to be exact, the greedy decoder and edit distance against direct Python; errors
with TF's classes and messages."""
import itertools

import numpy as np
import pytest

import graphrt as tf
from graphrt import errors

from ..ops.gradcheck import check_gradients


def _run(fetches, feed=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed)


def _log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _collapse(path, blank, merge_repeated):
    out, prev = [], None
    for c in path:
        if c != blank and not (merge_repeated and c == prev):
            out.append(c)
        prev = c
    return out


def _brute_force_nll(logits, target, merge_repeated=True):
    """-log of the summed probability of every path (one class per frame) that reads `target`."""
    t, c = logits.shape
    logp = _log_softmax(logits.astype(np.float64))
    probs = [np.exp(sum(logp[i, k] for i, k in enumerate(path)))
             for path in itertools.product(range(c), repeat=t)
             if _collapse(path, c - 1, merge_repeated) == list(target)]
    return -np.log(sum(probs)) if probs else np.inf


def _sparse(targets):
    indices = [[b, i] for b, t in enumerate(targets) for i in range(len(t))]
    values = [v for t in targets for v in t]
    return tf.SparseTensor(indices, tf.constant(values, tf.int32), [len(targets), max(map(len, targets))])


# -- the loss ---------------------------------------------------------------------------

@pytest.mark.parametrize("merge_repeated", [True, False])
def test_loss_is_the_sum_over_all_alignments(merge_repeated):
    rng = np.random.RandomState(0)
    targets = [[0, 1], [1, 1], [2], [0, 2, 0]]
    lengths = [5, 5, 3, 4]
    logits = rng.randn(5, len(targets), 4)
    loss = tf.nn.ctc_loss(_sparse(targets), tf.constant(logits), lengths, ctc_merge_repeated=merge_repeated)
    got = _run(loss)
    want = [_brute_force_nll(logits[:n, b], targets[b], merge_repeated) for b, n in enumerate(lengths)]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_collapse_repeated_labels_before_the_loss():
    rng = np.random.RandomState(1)
    logits = rng.randn(4, 1, 3)
    loss = tf.nn.ctc_loss(_sparse([[1, 1, 0]]), tf.constant(logits), [4], preprocess_collapse_repeated=True)
    np.testing.assert_allclose(_run(loss), [_brute_force_nll(logits[:, 0], [1, 0])], rtol=1e-10)


def test_impossible_target_is_inf_with_the_softmax_as_gradient():
    logits = np.random.RandomState(2).randn(3, 1, 3)
    x = tf.constant(logits)
    loss = tf.nn.ctc_loss(_sparse([[1, 1, 1]]), x, [3])  # repeats need blanks between: 5 frames
    value, grad = _run([loss, tf.gradients(loss, x)[0]])
    assert value[0] == np.inf
    np.testing.assert_allclose(grad, np.exp(_log_softmax(logits)), rtol=1e-12)


def test_ignored_and_padded_items():
    logits = np.random.RandomState(3).randn(4, 2, 3)
    x = tf.constant(logits)
    loss = tf.nn.ctc_loss(_sparse([[0, 1, 0], [1]]), x, [2, 3], ignore_longer_outputs_than_inputs=True)
    value, grad = _run([loss, tf.gradients(loss, x)[0]])
    assert value[0] == 0.0 and not grad[:, 0].any()
    np.testing.assert_allclose(value[1], _brute_force_nll(logits[:3, 1], [1]), rtol=1e-10)
    assert not grad[3, 1].any()  # past the sequence's end


@pytest.mark.parametrize("merge_repeated", [True, False])
def test_gradient_matches_finite_differences(merge_repeated):
    rng = np.random.RandomState(4)
    labels = [[0, 1, 1], [2, 0], [1]]

    def fn(x):
        return tf.nn.ctc_loss(_sparse(labels), x, [5, 4, 2], ctc_merge_repeated=merge_repeated)

    check_gradients(fn, rng.randn(5, 3, 4), rtol=1e-6, atol=1e-8)


def test_gradient_is_the_op_output_and_blocks_second_derivatives():
    x = tf.constant(np.random.RandomState(5).randn(3, 1, 3))
    loss = tf.nn.ctc_loss(_sparse([[0]]), x, [3])
    (grad,) = tf.gradients(loss, x)
    with pytest.raises(LookupError, match="second  derivative of ctc_loss"):
        tf.gradients(grad, x)


def test_float32_batch_major():
    logits = np.random.RandomState(6).randn(2, 4, 3).astype(np.float32)  # [batch, time, classes]
    loss = tf.nn.ctc_loss(_sparse([[0, 1], [1]]), tf.constant(logits), [4, 3], time_major=False)
    assert loss.dtype == tf.float32 and loss.shape.as_list() == [2]
    want = [_brute_force_nll(logits[0], [0, 1]), _brute_force_nll(logits[1, :3], [1])]
    np.testing.assert_allclose(_run(loss), want, rtol=1e-5)


# -- dense labels -----------------------------------------------------------------------

def test_dense_labels_match_the_sparse_loss_and_its_gradient():
    rng = np.random.RandomState(7)
    logits = rng.randn(6, 3, 5)
    x = tf.constant(logits)
    dense = tf.nn.ctc_loss_v2(tf.constant([[1, 2, 2], [3, 0, 0], [4, 1, 0]]), x, [3, 1, 2], [6, 4, 5])
    sparse = tf.nn.ctc_loss(_sparse([[0, 1, 1], [2], [3, 0]]), tf.concat([x[:, :, 1:], x[:, :, :1]], 2), [6, 4, 5])
    d, s, gd, gs = _run([dense, sparse, tf.gradients(dense, x)[0], tf.gradients(sparse, x)[0]])
    np.testing.assert_allclose(d, s, rtol=1e-6)
    np.testing.assert_allclose(gd, gs, atol=1e-6)


def test_dense_gradient_matches_finite_differences():
    def fn(x):
        return tf.nn.ctc_loss_v2(tf.constant([[1, 1], [2, 0]]), x, [2, 1], [4, 3], blank_index=2)

    check_gradients(fn, np.random.RandomState(8).randn(4, 2, 3), rtol=1e-5, atol=1e-7)


def test_sparse_labels_to_v2_need_a_blank_index():
    with pytest.raises(ValueError, match="blank_index"):
        tf.nn.ctc_loss_v2(_sparse([[0]]), tf.zeros([2, 1, 3]), None, [2])


# -- decoders ---------------------------------------------------------------------------

def test_greedy_decoder_takes_the_best_class_per_frame():
    rng = np.random.RandomState(9)
    logits = rng.randn(6, 2, 4).astype(np.float32)
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(tf.constant(logits), [6, 3])
    got, ns = _run([decoded, neg_sum])
    best = logits.argmax(2)
    want = [_collapse(best[:6, 0], 3, True), _collapse(best[:3, 1], 3, True)]
    assert [list(got.values[got.indices[:, 0] == b]) for b in range(2)] == want
    assert list(got.dense_shape) == [2, max(map(len, want))]
    np.testing.assert_allclose(ns[:, 0], [-logits[:6, 0].max(1).sum(), -logits[:3, 1].max(1).sum()], rtol=1e-6)


def test_wide_beam_finds_the_most_probable_labelings():
    rng = np.random.RandomState(10)
    logits = rng.randn(3, 1, 3)
    labelings = {}
    logp = _log_softmax(logits[:, 0])
    for path in itertools.product(range(3), repeat=3):
        key = tuple(_collapse(path, 2, True))
        labelings[key] = labelings.get(key, 0.0) + np.exp(sum(logp[i, k] for i, k in enumerate(path)))
    ranked = sorted(labelings.items(), key=lambda kv: -kv[1])[:3]
    beams, log_prob = tf.nn.ctc_beam_search_decoder(tf.constant(logits), [3], beam_width=50, top_paths=3)
    got, lp = _run([beams, log_prob])
    assert [tuple(v.values) for v in got] == [k for k, _ in ranked]
    np.testing.assert_allclose(lp[0], np.log([p for _, p in ranked]), rtol=1e-10)


def test_decoder_errors():
    x = tf.zeros([4, 2, 3])
    with pytest.raises(errors.FailedPreconditionError, match=r"sequence_length\(0\) <= 4"):
        _run(tf.nn.ctc_greedy_decoder(x, [5, 1])[1])
    with pytest.raises(errors.InvalidArgumentError, match="requested more paths than the beam width"):
        _run(tf.nn.ctc_beam_search_decoder(x, [4, 1], beam_width=2, top_paths=3)[1])
    with pytest.raises(errors.InvalidArgumentError, match="Less leaves in the beam search than requested"):
        _run(tf.nn.ctc_beam_search_decoder(x, [0, 1], beam_width=2, top_paths=2)[1])
    with pytest.raises(errors.InvalidArgumentError, match="blank_index expected to be between -3 and 2 but was -4"):
        _run(tf.nn.ctc_greedy_decoder(x, [4, 1], blank_index=-4)[1])


# -- loss errors ------------------------------------------------------------------------

@pytest.mark.parametrize("targets, lengths, message", [
    ([[0, 1, 0], [1]], [2, 4], r"Not enough time for target transition sequence \(required: 3, available: 2\)0You"),
    ([[2, 1], [1]], [4, 4], "Saw a non-null label .* following a null label, batch: 0 num_classes: 3 labels: 2,1"),
    ([[-1], [1]], [4, 4], "All labels must be nonnegative integers, batch: 0 labels: -1"),
    ([[0], [1]], [5, 4], r"sequence_length\(0\) <= 4"),
    ([[0], [1]], [-1, 4], r"seq_len\(0\) < 0"),
])
def test_loss_errors(targets, lengths, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        _run(tf.nn.ctc_loss(_sparse(targets), tf.zeros([4, 2, 3]), lengths))


def test_loss_label_errors():
    x = tf.zeros([4, 2, 3])
    empty = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [2, 1])
    with pytest.raises(errors.InvalidArgumentError, match="Labels length is zero in batch 1"):
        _run(tf.nn.ctc_loss(empty, x, [4, 4]))
    unsorted = tf.SparseTensor([[0, 1], [0, 0], [1, 0]], tf.constant([1, 1, 1], tf.int32), [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match=r"label SparseTensor is not valid: indices\[1\] = \[0,0\] "
                                                          "is out of order"):
        _run(tf.nn.ctc_loss(unsorted, x, [4, 4]))
    with pytest.raises(TypeError, match="to be a SparseTensor"):
        tf.nn.ctc_loss(tf.constant([[1]]), x, [4, 4])
    with pytest.raises(ValueError, match="must be equal"):
        tf.nn.ctc_loss(_sparse([[0], [1]]), x, [4, 4, 4])


# -- label helpers ----------------------------------------------------------------------

def test_collapse_repeated_and_unique_labels():
    labels, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 1], [3, 3, 3, 4, 4]]), [5, 3])
    y, idx = tf.nn.ctc_unique_labels(tf.constant([[3, 4, 4, 3], [5, 5, 5, 5]]))
    got = _run([labels, lengths, y, idx])
    np.testing.assert_array_equal(got[0], [[1, 2, 1], [3, 0, 0]])
    np.testing.assert_array_equal(got[1], [3, 1])
    np.testing.assert_array_equal(got[2], [[3, 4, 0, 0], [5, 0, 0, 0]])
    np.testing.assert_array_equal(got[3], [[0, 1, 1, 0], [0, 0, 0, 0]])


# -- edit distance ----------------------------------------------------------------------

def _levenshtein(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def test_edit_distance_of_random_sequences():
    rng = np.random.RandomState(11)
    hyp = [list(rng.randint(0, 3, rng.randint(1, 6))) for _ in range(5)]
    truth = [list(rng.randint(0, 3, rng.randint(1, 6))) for _ in range(5)]

    def sparse(seqs):
        return tf.SparseTensor([[b, i] for b, s in enumerate(seqs) for i in range(len(s))],
                               tf.constant([v for s in seqs for v in s], tf.int64), [5, 6])
    d, raw = _run([tf.edit_distance(sparse(hyp), sparse(truth)),
                   tf.edit_distance(sparse(hyp), sparse(truth), normalize=False)])
    want = [_levenshtein(t, h) for h, t in zip(hyp, truth)]
    np.testing.assert_array_equal(raw, want)
    np.testing.assert_allclose(d, np.array(want) / [len(t) for t in truth], rtol=1e-6)


def test_edit_distance_missing_sequences_and_shape():
    hyp = tf.SparseTensor([[0, 0], [2, 0], [2, 1]], ["a", "b", "c"], [3, 2])
    truth = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "x", "y"], [2, 4])
    d = tf.edit_distance(hyp, truth)
    assert d.shape.as_list() == [3] and d.dtype == tf.float32
    np.testing.assert_array_equal(_run(d), [0.0, 1.0, np.inf])  # no hypothesis: 1; no truth: inf
    np.testing.assert_array_equal(_run(tf.edit_distance(hyp, truth, normalize=False)), [0.0, 2.0, 2.0])


def test_edit_distance_errors():
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor"):
        tf.edit_distance(tf.constant([1]), tf.SparseTensor([[0, 0]], [1], [1, 1]))
    with pytest.raises(ValueError, match="Num elements of hypothesis_shape does not match truth_shape: 3 vs. 2"):
        tf.edit_distance(tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1]), tf.SparseTensor([[0, 0]], [1], [1, 1]))
    far = tf.edit_distance(tf.SparseTensor([[5, 0]], [1], [2, 2]), tf.SparseTensor([[0, 0]], [1], [2, 2]))
    with pytest.raises(errors.InternalError, match="Got an inner product 5 .* \\(max elements 2\\)"):
        _run(far)

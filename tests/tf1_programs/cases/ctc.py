"""CTC and edit distance: tf.nn.ctc_loss (time- and batch-major, collapse and
merge options, ignore_longer_outputs_than_inputs, impossible targets, float64)
with its gradient through tf.gradients; ctc_loss_v2 on dense labels (default
blank 0, a moved blank, batch-major) and on sparse labels; the greedy and
beam-search decoders (merge_repeated, blank_index, top_paths, _v2);
collapse_repeated, ctc_unique_labels; tf.edit_distance (normalize, missing
sequences, rank 3); static shapes, build-time and run-time error classes."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(7)
    T, B, C = 6, 3, 5
    logits_np = rng.randn(T, B, C).astype(np.float32) * 2.0
    out = {}
    g = tf.Graph()
    with g.as_default():
        logits = tf.constant(logits_np)
        seq_len = tf.constant([6, 4, 5], tf.int32)
        labels = tf.SparseTensor(indices=[[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]],
                                 values=tf.constant([1, 1, 2, 3, 0, 2, 2, 2], tf.int32), dense_shape=[3, 3])
        loss = tf.nn.ctc_loss(labels, logits, seq_len)
        loss_nomerge = tf.nn.ctc_loss(labels, logits, seq_len, ctc_merge_repeated=False)
        loss_collapse = tf.nn.ctc_loss(labels, logits, seq_len, preprocess_collapse_repeated=True)
        loss_both = tf.nn.ctc_loss(labels, logits, seq_len, preprocess_collapse_repeated=True,
                                   ctc_merge_repeated=False)
        bm_logits = tf.constant(np.transpose(logits_np, [1, 0, 2]))
        loss_bm = tf.nn.ctc_loss(labels, bm_logits, seq_len, time_major=False)
        short = tf.constant([6, 2, 5], tf.int32)
        loss_ignore = tf.nn.ctc_loss(labels, logits, short, ignore_longer_outputs_than_inputs=True)
        # [2, 2, 2] needs 5 frames: 3 frames make it impossible (inf), yet TF only checks 3 <= 3
        loss_impossible = tf.nn.ctc_loss(labels, logits, tf.constant([6, 4, 3], tf.int32))
        grads = tf.gradients(tf.reduce_sum(loss * [1.0, 2.0, 0.5]), logits)[0]
        grads_nomerge = tf.gradients(tf.reduce_sum(loss_nomerge), logits)[0]
        grads_bm = tf.gradients(tf.reduce_sum(loss_bm), bm_logits)[0]
        grads_ignore = tf.gradients(tf.reduce_sum(loss_ignore), logits)[0]
        grads_impossible = tf.gradients(tf.reduce_sum(loss_impossible), logits)[0]
        logits64 = tf.constant(logits_np.astype(np.float64))
        loss64 = tf.nn.ctc_loss(labels, logits64, seq_len)
        grads64 = tf.gradients(loss64, logits64)[0]

        dense_labels = tf.constant([[1, 1, 2], [3, 4, 0], [2, 2, 2]], tf.int32)
        label_length = tf.constant([3, 2, 1], tf.int32)
        v2 = tf.nn.ctc_loss_v2(dense_labels, logits, label_length, seq_len)
        v2_grad = tf.gradients(tf.reduce_sum(v2), logits)[0]
        v2_last = tf.nn.ctc_loss_v2(dense_labels - 1, logits, label_length, seq_len, blank_index=-1)
        v2_last_grad = tf.gradients(tf.reduce_sum(v2_last), logits)[0]
        v2_mid = tf.nn.ctc_loss_v2(dense_labels, bm_logits, label_length, seq_len, logits_time_major=False,
                                   blank_index=2)
        v2_mid_grad = tf.gradients(tf.reduce_sum(v2_mid), bm_logits)[0]
        v2_impossible = tf.nn.ctc_loss_v2(dense_labels, logits, label_length, tf.constant([6, 1, 5]))
        v2_sparse = tf.nn.ctc_loss_v2(labels, logits, None, seq_len, blank_index=4)
        v2_sparse_mid = tf.nn.ctc_loss_v2(labels, logits, None, seq_len, blank_index=1)
        v2_sparse_grad = tf.gradients(tf.reduce_sum(v2_sparse_mid), logits)[0]

        (greedy,), neg_sum = tf.nn.ctc_greedy_decoder(logits, seq_len)
        (greedy_nm,), neg_sum_nm = tf.nn.ctc_greedy_decoder(logits, seq_len, merge_repeated=False)
        (greedy_b0,), neg_sum_b0 = tf.nn.ctc_greedy_decoder(logits, seq_len, blank_index=0)
        rep = np.zeros((5, 1, 3), np.float32)
        rep[[0, 1, 2, 3, 4], 0, [0, 0, 2, 0, 1]] = 5.0
        (greedy_rep,), _ = tf.nn.ctc_greedy_decoder(tf.constant(rep), [5])
        (greedy_rep_nm,), _ = tf.nn.ctc_greedy_decoder(tf.constant(rep), [5], merge_repeated=False)

        log_softmax = tf.nn.log_softmax(logits)
        beams, beam_lp = tf.nn.ctc_beam_search_decoder(log_softmax, seq_len, beam_width=4, top_paths=3)
        beams_raw, beam_lp_raw = tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=3, top_paths=2,
                                                               merge_repeated=False)
        (beam1,), beam1_lp = tf.nn.ctc_beam_search_decoder(log_softmax, seq_len, beam_width=1)
        beams_v2, beam_v2_lp = tf.nn.ctc_beam_search_decoder_v2(log_softmax, seq_len, beam_width=5, top_paths=2)

        collapsed, collapsed_len = tf.nn.collapse_repeated(
            tf.constant([[1, 1, 2, 2, 1], [3, 4, 4, 5, 6], [7, 7, 7, 0, 0]]), tf.constant([5, 4, 2]))
        uniq_y, uniq_idx = tf.nn.ctc_unique_labels(tf.constant([[3, 4, 4, 3], [1, 2, 1, 0]]))
        collapsed_fed, _ = tf.nn.collapse_repeated(tf.placeholder(tf.int32, [3, 5]), tf.constant([5, 4, 2]))

        hyp = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [3, 0]], ["a", "b", "c", "d", "e", "x"],
                              [4, 3])
        truth = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]],
                                ["a", "c", "b", "c", "q", "r"], [3, 3])
        ed = tf.edit_distance(hyp, truth)
        ed_raw = tf.edit_distance(hyp, truth, normalize=False)
        h3 = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0]], tf.constant([1, 2, 3, 4], tf.int64),
                             [2, 2, 2])
        t3 = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0]], tf.constant([1, 5, 3, 4], tf.int64),
                             [2, 2, 3])
        ed3 = tf.edit_distance(h3, t3)
        ph = tf.sparse_placeholder(tf.int32)
        ed_unknown = tf.edit_distance(ph, tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [1, 1]))

        out["shapes"] = [str(t.shape) for t in (loss, grads, v2, neg_sum, greedy.indices, greedy.values,
                                                beam_lp, beams[0].indices, ed, ed3, ed_unknown, uniq_y, collapsed_fed)]
        out["dtypes"] = [t.dtype.name for t in (loss, loss64, greedy.values, neg_sum, beam_lp, ed, uniq_y, uniq_idx)]
        out["op_types"] = [loss.op.type, neg_sum.op.type, beam_lp.op.type, ed.op.type]

        with tf.Session() as sess:
            r = sess.run({
                "loss": loss, "loss_nomerge": loss_nomerge, "loss_collapse": loss_collapse, "loss_both": loss_both,
                "loss_bm": loss_bm, "loss_ignore": loss_ignore, "loss_impossible": loss_impossible,
                "grads": grads, "grads_nomerge": grads_nomerge, "grads_bm": grads_bm, "grads_ignore": grads_ignore,
                "grads_impossible": grads_impossible, "loss64": loss64, "grads64": grads64,
                "v2": v2, "v2_grad": v2_grad, "v2_last": v2_last, "v2_last_grad": v2_last_grad,
                "v2_mid": v2_mid, "v2_mid_grad": v2_mid_grad, "v2_impossible": v2_impossible,
                "v2_sparse": v2_sparse, "v2_sparse_mid": v2_sparse_mid, "v2_sparse_grad": v2_sparse_grad,
                "neg_sum": neg_sum, "neg_sum_nm": neg_sum_nm, "neg_sum_b0": neg_sum_b0,
                "beam_lp": beam_lp, "beam_lp_raw": beam_lp_raw, "beam1_lp": beam1_lp, "beam_v2_lp": beam_v2_lp,
                "collapsed": collapsed, "collapsed_len": collapsed_len, "uniq_y": uniq_y, "uniq_idx": uniq_idx,
                "ed": ed, "ed_raw": ed_raw, "ed3": ed3,
            })
            out.update({k: np.asarray(v) for k, v in r.items()})
            for key, sp in (("greedy", greedy), ("greedy_nm", greedy_nm), ("greedy_b0", greedy_b0),
                            ("greedy_rep", greedy_rep), ("greedy_rep_nm", greedy_rep_nm), ("beam1", beam1)):
                v = sess.run(sp)
                out[key] = [v.indices, v.values, v.dense_shape]
            for key, sps in (("beams", beams), ("beams_raw", beams_raw), ("beams_v2", beams_v2)):
                for i, v in enumerate(sess.run(sps)):
                    out[f"{key}_{i}"] = [v.indices, v.values, v.dense_shape]
            out["ed_fed"] = sess.run(ed_unknown, {ph: ([[0, 0], [0, 1]], np.array([1, 2], np.int32), [1, 2])})

            def too_short():
                sess.run(tf.nn.ctc_loss(labels, logits, short))

            def zero_label():
                lb = tf.SparseTensor([[0, 0], [2, 0]], tf.constant([1, 2], tf.int32), [3, 1])
                sess.run(tf.nn.ctc_loss(lb, logits, seq_len))

            def unsorted():
                lb = tf.SparseTensor([[0, 1], [0, 0], [1, 0], [2, 0]], tf.constant([1, 2, 1, 1], tf.int32), [3, 2])
                sess.run(tf.nn.ctc_loss(lb, logits, seq_len))

            def long_seq():
                sess.run(tf.nn.ctc_loss(labels, logits, tf.constant([7, 1, 1])))

            def greedy_len():
                sess.run(tf.nn.ctc_greedy_decoder(logits, tf.constant([7, 1, 1]))[1])

            def beam_paths():
                sess.run(tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=2, top_paths=3)[1])

            def greedy_blank():
                sess.run(tf.nn.ctc_greedy_decoder(logits, seq_len, blank_index=9)[1])

            out["errors"] = {
                "not_sparse": err(lambda: tf.nn.ctc_loss(tf.constant([[1]]), logits, seq_len)),
                "rank": err(lambda: tf.nn.ctc_loss(labels, tf.constant(logits_np[0]), seq_len)),
                "batch_mismatch": err(lambda: tf.nn.ctc_loss(labels, logits, tf.constant([1, 2]))),
                "v2_no_blank": err(lambda: tf.nn.ctc_loss_v2(labels, logits, None, seq_len)),
                "ed_not_sparse": err(lambda: tf.edit_distance(tf.constant([1]), truth)),
                "ed_rank": err(lambda: tf.edit_distance(h3, truth)),
                "too_short": err(too_short), "zero_label": err(zero_label), "unsorted": err(unsorted),
                "long_seq": err(long_seq), "greedy_len": err(greedy_len), "beam_paths": err(beam_paths),
                "greedy_blank": err(greedy_blank),
                "second_derivative": err(lambda: tf.gradients(grads, logits)),
            }
    return out

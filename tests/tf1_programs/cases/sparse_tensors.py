"""Sparse tensors: tf.SparseTensor (static shapes, eval, Session.run fetches as
SparseTensorValue, feeds of SparseTensorValues and triples, sparse_placeholder), the
tf.sparse ops (to_dense / sparse_to_dense, from_dense, reorder, reshape, slice, concat,
add with threshold, reduce_sum/max (+ _sparse), sparse_dense_matmul with adjoints, softmax,
retain, fill_empty_rows, reset_shape, transpose, split, maximum/minimum, to_indicator,
merge, eye, sparse_mask, sparse_segment_sum/mean/sqrt_n), embedding_lookup_sparse and
safe_embedding_lookup_sparse with each combiner, gradients (of values and dense operands),
and errors (build-time ValueError/TypeError, run-time InvalidArgumentError)."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def _graph(tf, np):
    t, shapes = {}, {}
    sp = tf.SparseTensor([[0, 1], [1, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])
    unordered = tf.SparseTensor([[2, 3], [0, 1], [1, 0], [0, 0]], [4.0, 1.0, 2.0, -1.0], [3, 4])
    rank3 = tf.SparseTensor([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 2, 2]], [1.0, -2.0, 3.0, 4.0], [2, 3, 3])
    shapes["sp"] = str(sp.shape)
    shapes["sp_dtype"] = sp.dtype.name
    t["sp"] = sp
    t["to_dense"] = tf.sparse.to_dense(sp)
    t["to_dense_default"] = tf.sparse_tensor_to_dense(sp, default_value=-1.0)
    t["sparse_to_dense"] = tf.sparse_to_dense([[0, 0], [1, 2]], [2, 3], [5, 6], default_value=1)
    t["sparse_to_dense_scalar"] = tf.sparse_to_dense([1, 3], [5], 2.0)
    t["sparse_to_dense_unvalidated"] = tf.sparse_to_dense([[1, 0], [0, 1]], [2, 2], [1.0, 2.0],
                                                          validate_indices=False)
    dense = np.array([[0, 2, 0], [3, 0, 0], [0, 0, -1]], np.float32)
    fd = tf.sparse.from_dense(dense)
    t["from_dense"] = fd
    t["reorder"] = tf.sparse.reorder(unordered)
    shapes["reorder"] = str(tf.sparse.reorder(unordered).shape)
    rs = tf.sparse.reshape(sp, [2, -1])
    t["reshape"] = rs
    shapes["reshape"] = str(rs.shape)
    t["reshape3"] = tf.sparse_reshape(rank3, [6, 3])
    t["slice"] = tf.sparse.slice(sp, [1, 0], [5, 2])
    t["concat0"] = tf.sparse.concat(0, [sp, sp])
    t["concat1"] = tf.sparse_concat(1, [sp, unordered])
    shapes["concat1"] = str(tf.sparse_concat(1, [sp, unordered]).shape)
    t["concat_expand"] = tf.sparse.concat(1, [sp, tf.SparseTensor([[0, 0]], [7.0], [2, 2])],
                                          expand_nonconcat_dim=True)
    other = tf.SparseTensor([[0, 1], [1, 1], [2, 3]], [-1.0, 5.0, 0.5], [3, 4])
    t["add"] = tf.sparse.add(sp, other)
    t["add_thresh"] = tf.sparse_add(sp, other, threshold=0.6)
    t["add_dense"] = tf.sparse.add(np.ones((3, 4), np.float32), sp)
    t["reduce_sum_all"] = tf.sparse.reduce_sum(rank3)
    t["reduce_sum_1"] = tf.sparse_reduce_sum(rank3, axis=1)
    t["reduce_sum_keep"] = tf.sparse.reduce_sum(rank3, axis=[0, 2], keepdims=True)
    t["reduce_sum_neg"] = tf.sparse.reduce_sum(rank3, -1)
    shapes["reduce_sum_1"] = str(tf.sparse.reduce_sum(rank3, axis=1).shape)
    t["reduce_max_1"] = tf.sparse.reduce_max(rank3, 1)
    t["reduce_sum_sparse"] = tf.sparse.reduce_sum_sparse(rank3, 1)
    t["reduce_max_sparse"] = tf.sparse_reduce_max_sparse(rank3, [1], keepdims=True)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    t["matmul"] = tf.sparse.sparse_dense_matmul(sp, b)
    t["matmul_adj_a"] = tf.sparse_tensor_dense_matmul(sp, np.arange(6, dtype=np.float32).reshape(3, 2),
                                                      adjoint_a=True)
    t["matmul_adj_b"] = tf.sparse.matmul(sp, b.T, adjoint_b=True)
    shapes["matmul"] = str(tf.sparse.sparse_dense_matmul(sp, b).shape)
    t["softmax"] = tf.sparse.softmax(rank3)
    t["retain"] = tf.sparse.retain(sp, [True, False, True])
    filled, empty = tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [1, 2], [3, 1]], [1.0, 2.0, 3.0],
                                                              [5, 3]), -1.0)
    t["fill"], t["fill_empty"] = filled, empty
    t["reset_shape"] = tf.sparse.reset_shape(sp)
    t["reset_shape_new"] = tf.sparse_reset_shape(sp, [4, 6])
    t["transpose"] = tf.sparse.transpose(rank3)
    t["transpose_perm"] = tf.sparse_transpose(rank3, [1, 0, 2])
    t["split"] = tf.sparse.split(sp_input=sp, num_split=3, axis=1)
    t["maximum"] = tf.sparse.maximum(sp, other)
    t["minimum"] = tf.sparse_minimum(sp, other)
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], np.array([3, 1, 2, 0], np.int64), [3, 2])
    t["indicator"] = tf.sparse.to_indicator(ids, 4)
    t["merge"] = tf.sparse_merge(ids, tf.SparseTensor(ids.indices, [0.5, 1.5, 2.5, 3.5], ids.dense_shape), 5)
    t["eye"] = tf.sparse.to_dense(tf.sparse.eye(3, 4))
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tf.constant([0, 3, 5]),
                              tf.constant([6, 2]))
    masked = tf.sparse_mask(slices, [3])
    t["mask_values"], t["mask_indices"] = masked.values, masked.indices
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    t["seg_sum"] = tf.sparse_segment_sum(data, [0, 2, 1, 3], [0, 0, 2, 2])
    t["seg_mean"] = tf.sparse.segment_mean(data, [0, 2, 1], [0, 0, 1])
    t["seg_sqrt_n"] = tf.sparse_segment_sqrt_n(data, [0, 2, 1], [0, 0, 1])
    t["seg_sum_num"] = tf.sparse_segment_sum(data, [0, 1], [0, 1], num_segments=4)
    shapes["seg_sum_num"] = str(tf.sparse_segment_sum(data, [0, 1], [0, 1], num_segments=4).shape)
    t["mul_dense"] = sp * np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    t["div_dense"] = sp / np.float32(2.0)
    return t, shapes


def _grads(tf, np):
    t = {}
    v = tf.constant([1.0, 2.0, 3.0])
    sp = tf.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4])
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    mm = tf.sparse.sparse_dense_matmul(sp, b)
    t["matmul"] = tf.gradients(tf.reduce_sum(mm * mm), [v, b])
    b3 = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    t["matmul_adj"] = tf.gradients(tf.reduce_sum(tf.sparse.sparse_dense_matmul(sp, b3, adjoint_a=True,
                                                                               adjoint_b=True) ** 2), [v, b3])
    t["to_dense"] = tf.gradients(tf.reduce_sum(tf.sparse.to_dense(sp) * w), v)
    t["add"] = tf.gradients(tf.reduce_sum(tf.sparse.add(sp, tf.SparseTensor([[0, 1], [2, 2]], v[:2] * 2.0,
                                                                             [3, 4])).values ** 2), v)
    t["reduce_sum"] = tf.gradients(tf.reduce_sum(tf.sparse.reduce_sum(sp, 1) * [1.0, 2.0, 3.0]), v)
    t["softmax"] = tf.gradients(tf.reduce_sum(tf.sparse.softmax(
        tf.SparseTensor([[0, 0], [0, 2], [1, 1]], v, [2, 3])).values * [1.0, 3.0, 2.0]), v)
    t["reorder"] = tf.gradients(tf.reduce_sum(tf.sparse.reorder(
        tf.SparseTensor([[2, 0], [0, 1], [1, 1]], v, [3, 4])).values * [1.0, 5.0, 7.0]), v)
    t["reshape"] = tf.gradients(tf.reduce_sum(tf.sparse.reshape(sp, [4, 3]).values * 3.0), v)
    t["fill"] = tf.gradients(tf.reduce_sum(tf.sparse.fill_empty_rows(
        tf.SparseTensor([[0, 1]], v[:1], [3, 4]), v[2])[0].values * [1.0, 2.0, 4.0]), v)
    t["slice"] = tf.gradients(tf.reduce_sum(tf.sparse.slice(sp, [1, 0], [2, 4]).values * [2.0, 5.0]), v)
    t["mul_dense"] = tf.gradients(tf.reduce_sum((sp * tf.constant([1.0, 2.0, 3.0, 4.0])).values), v)
    data = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    for name, fn in (("sum", tf.sparse_segment_sum), ("mean", tf.sparse_segment_mean),
                     ("sqrt_n", tf.sparse_segment_sqrt_n)):
        out = fn(data, [0, 2, 1, 0], [0, 0, 1, 1])
        t["seg_" + name] = tf.gradients(tf.reduce_sum(out * out), data)
    params = tf.constant(np.arange(15, dtype=np.float32).reshape(5, 3) / 10.0)
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], np.array([1, 3, 3, 0, 4], np.int64), [3, 3])
    weights = tf.SparseTensor(ids.indices, [1.0, 2.0, 0.5, -1.0, 3.0], ids.dense_shape)
    for combiner in ("sum", "mean", "sqrtn"):
        plain = tf.nn.embedding_lookup_sparse(params, ids, None, combiner=combiner)
        weighted = tf.nn.embedding_lookup_sparse(params, ids, weights, combiner=combiner)
        safe = tf.nn.safe_embedding_lookup_sparse(params, ids, weights, combiner=combiner)
        t["els_" + combiner] = plain
        t["els_w_" + combiner] = weighted
        t["safe_" + combiner] = safe
        g = tf.gradients(tf.reduce_sum(plain * plain) + tf.reduce_sum(weighted) + tf.reduce_sum(safe * safe),
                         params)[0]
        t["grad_els_" + combiner] = tf.convert_to_tensor(g)
    t["safe_default"] = tf.nn.safe_embedding_lookup_sparse(params, ids, None, default_id=2)
    return t


def _errors(tf, np):
    out = {}
    out["values_len"] = err(lambda: tf.SparseTensor([[1, 0]], [1.0, 2.0], [3, 4]))
    out["rank_mismatch"] = err(lambda: tf.SparseTensor([[1, 0]], [1.0], [3, 4, 5]))
    out["indices_rank"] = err(lambda: tf.SparseTensor([1, 0], [1.0], [3, 4]))
    out["add_shapes"] = err(lambda: tf.sparse.add(tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                                  tf.SparseTensor([[1, 0]], [1.0], [3, 5])))
    out["reshape_size"] = err(lambda: tf.sparse.reshape(tf.SparseTensor([[1, 0]], [1.0], [3, 4]), [5, -1]))
    out["reshape_two"] = err(lambda: tf.sparse.reshape(tf.SparseTensor([[1, 0]], [1.0], [3, 4]), [2, -1, -1]))
    out["matmul_inner"] = err(lambda: tf.sparse.sparse_dense_matmul(tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                                                    np.ones((3, 2), np.float32)))
    out["segment_len"] = err(lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 1], [0]))
    out["default_dtype"] = err(lambda: tf.sparse.to_dense(tf.SparseTensor([[1, 0]], [1], [3, 4]),
                                                          default_value=2.5))
    out["not_sparse"] = err(lambda: tf.sparse.reorder(tf.constant([1.0])))
    out["add_dense_dense"] = err(lambda: tf.sparse.add(tf.constant([1.0]), tf.constant([1.0])))
    out["combiner"] = err(lambda: tf.nn.embedding_lookup_sparse(tf.constant([[1.0]]),
                                                                tf.SparseTensor([[0, 0]], [0], [1, 1]), None,
                                                                combiner="max"))

    run_cases = {
        "to_dense_order": lambda: tf.sparse_to_dense([[1, 0], [0, 1]], [3, 4], [1.0, 2.0]),
        "to_dense_repeat": lambda: tf.sparse_to_dense([[0, 1], [0, 1]], [3, 4], [1.0, 2.0]),
        "to_dense_bounds": lambda: tf.sparse_to_dense([[5, 1]], [3, 4], [1.0]),
        "to_dense_bounds_unvalidated": lambda: tf.sparse_to_dense([[5, 1]], [3, 4], [1.0], validate_indices=False),
        "to_dense_values": lambda: tf.sparse_to_dense([[1, 0], [0, 1]], [3, 4], [1.0, 2.0, 3.0]),
        "sparse_to_dense_unordered": lambda: tf.sparse.to_dense(tf.SparseTensor([[1, 0], [0, 1]], [1.0, 2.0],
                                                                                [3, 4])),
        "matmul_bounds": lambda: tf.sparse.sparse_dense_matmul(tf.SparseTensor([[5, 0]], [1.0], [3, 4]),
                                                               np.ones((4, 2), np.float32)),
        "concat_shapes": lambda: tf.sparse.concat(0, [tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                                      tf.SparseTensor([[1, 0]], [1.0], [3, 5])]).values,
        "segment_order": lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 1], [1, 0]),
        "segment_index": lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 5], [0, 0]),
        "segment_num": lambda: tf.sparse_segment_sum(np.ones((3, 2), np.float32), [0, 1], [0, 5],
                                                     num_segments=3),
        "slice_size": lambda: tf.sparse.slice(tf.SparseTensor([[1, 0]], [1.0], [3, 4]), [0, 0], [2]).values,
        "maximum_shapes": lambda: tf.sparse.maximum(tf.SparseTensor([[1, 0]], [1.0], [3, 4]),
                                                    tf.SparseTensor([[1, 0]], [1.0], [3, 5])).values,
        "fill_rows": lambda: tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [5, 0]], [1.0, 3.0], [3, 4]),
                                                       0.0)[0].values,
    }
    for key, build in run_cases.items():
        g = tf.Graph()
        with g.as_default():
            try:
                fetch = build()
            except Exception as e:
                out[key] = "build: " + type(e).__name__
                continue
            with tf.Session() as sess:
                out[key] = err(lambda: sess.run(fetch))
    return out


def run(tf, np):
    res = {}
    g = tf.Graph()
    with g.as_default():
        t, shapes = _graph(tf, np)
        with tf.Session() as sess:
            res["values"] = sess.run(t)
            res["eval"] = t["sp"].eval()
        res["shapes"] = shapes
    g = tf.Graph()
    with g.as_default():
        grads = _grads(tf, np)
        with tf.Session() as sess:
            res["grads"] = sess.run(grads)
    g = tf.Graph()
    with g.as_default():
        ph = tf.sparse_placeholder(tf.float32, shape=[None, 3], name="sp_in")
        unknown = tf.sparse_placeholder(tf.float32)
        res["placeholder_shape"] = str(ph.shape)
        res["placeholder_unknown_shape"] = str(unknown.shape)
        total = tf.sparse.reduce_sum(ph, 1)
        dense = tf.sparse.to_dense(unknown)
        with tf.Session() as sess:
            res["feed_value"] = sess.run(total, {ph: tf.SparseTensorValue([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])})
            res["feed_triple"] = sess.run(dense, {unknown: ([[0, 1], [1, 0]], [3.0, 4.0], [2, 2])})
            res["feed_fetch"] = sess.run(ph, {ph: ([[0, 2]], [5.0], [1, 3])})
        conv = tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensorValue([[0]], [1.0], [2]))
        res["convert_kind"] = type(conv).__name__
        res["convert_dense_is_tensor"] = isinstance(tf.convert_to_tensor_or_sparse_tensor([1.0]), tf.Tensor)
        res["convert_dtype_err"] = err(lambda: tf.convert_to_tensor_or_sparse_tensor(conv, dtype=tf.int32))
        res["from_value_err"] = err(lambda: tf.SparseTensor.from_value([1, 2]))
    res["errors"] = _errors(tf, np)
    return res

"""Array ops at their edges (from the array-ops sweep): slicing with shrunk axes of unknown size
and int64 tensor indices, concat's gradient with an axis fed at run time and with IndexedSlices
gradients, conjugate and negative-permutation transposes, ascending sorts of integers, string and
scalar pads, a split of one output, constant stacks, meshgrid's names and the build-time errors."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = {}
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xv)
        p = tf.placeholder(tf.float32, [None, None, None], name="p")
        ax = tf.placeholder(tf.int32, [], name="ax")
        t = {
            "shrink_unknown": p[1],
            "shrink_unknown_rev": p[-1, ::-1],
            "shrink_unknown_mid": p[..., 1, :],
            "shrink_all_unknown": p[1, 2, 3],
            "ss_shrink_unknown": tf.strided_slice(p, [1], [2], [1], shrink_axis_mask=1),
            "index_int64": x[tf.constant(1, tf.int64)],
            "slice_int64": x[:, tf.constant(0, tf.int64):2],
            "conj_transpose": tf.transpose(tf.constant(np.array([[1 + 2j, 3 - 1j]], np.complex64)), conjugate=True),
            "real_conj_transpose": tf.transpose(tf.constant([[1.0, 2.0]]), conjugate=True),
            "neg_perm": tf.transpose(x, [-1, 0, 1]),
            "sort_int": tf.sort(tf.constant([3, -1, 2, 0])),
            "argsort_int": tf.argsort(tf.constant([[3, 1], [0, 2]]), axis=0),
            "sort_uint8": tf.sort(tf.constant(np.array([3, 255, 0, 7], np.uint8))),
            "sort_float": tf.sort(tf.constant([2.5, -1.0, 0.5])),
            "pad_string": tf.pad(tf.constant([b"a", b"b"]), [[1, 2]]),
            "pad_scalar": tf.pad(tf.constant(3.0), tf.zeros([0, 2], tf.int32)),
            "zeros_like_string": tf.zeros_like(tf.constant([b"a", b"b"]), optimize=False),
            "single_concat": tf.concat([tf.constant([1, 2])], 0),
            "stack_consts": tf.stack([[1, 2], [3, 4]]),
            "stack_empty": tf.stack([]),
            "stack_axis1": tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1),
        }
        t["split_one"] = tf.split(x, [3], 1)[0]
        t["split_one_ph"] = tf.split(p, [3], 1)[0]
        t["meshgrid"] = tf.meshgrid([1, 2, 3], [4, 5])
        t["meshgrid_ij"] = tf.meshgrid([1.0, 2.0], [3.0], indexing="ij")

        # concat's gradient with an axis known only when the step runs
        a = tf.placeholder(tf.float32, [None, None], name="a")
        b = tf.constant(np.ones((2, 3), np.float32))
        cat = tf.concat([a, b], ax)
        t["concat_grad_fed_axis"] = tf.gradients(tf.reduce_sum(cat * cat), [a, b])

        # IndexedSlices flowing into concat stay IndexedSlices (rows along axis 0, columns along 1)
        c0 = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
        c1 = tf.constant(np.ones((2, 3), np.float32))
        w = tf.constant([[1.0], [2.0], [3.0], [4.0]])
        rows = tf.gradients(tf.reduce_sum(tf.gather(tf.concat([c0, c1], 0), [0, 5, 5, 2]) * w), [c0, c1])
        d1 = tf.constant(np.ones((4, 2), np.float32))
        cols = tf.gradients(tf.reduce_sum(tf.gather(tf.concat([c0, d1], -1), [0, 3, 3]) * 2.0), [c0, d1])
        negs = tf.gradients(tf.reduce_sum(tf.gather(tf.concat([c0, c1], -2), [1, 4])), [c0, c1])
        out["grad_types"] = [type(v).__name__ == "IndexedSlices" for v in rows + cols + negs]
        dense = {"rows": [tf.convert_to_tensor(v) for v in rows], "cols": [tf.convert_to_tensor(v) for v in cols],
                 "negs": [tf.convert_to_tensor(v) for v in negs]}
        t["concat_indexed_slices"] = dense

        def describe(v, ops=True):
            if isinstance(v, dict):
                return {k: describe(u, ops and not k.startswith("concat_")) for k, u in v.items()}
            if isinstance(v, (list, tuple)):
                return [describe(u, ops) for u in v]
            # (concat's gradients are split, where TF slices: their ops differ, their values do not)
            return {"shape": str(v.shape), "dtype": v.dtype.name, **({"name": v.name, "op": v.op.type} if ops else {})}
        out["static"] = describe(t)
        out["errors"] = {
            "unstack_axis": err(lambda: tf.unstack(x, axis=3)),
            "unstack_scalar": err(lambda: tf.unstack(tf.constant(1.0))),
            "stack_axis": err(lambda: tf.stack([tf.constant([1, 2])], axis=2)),
            "one_hot_axis": err(lambda: tf.one_hot([0, 1], 2, axis=-2)),
            "one_hot_float_indices": err(lambda: tf.one_hot([0.0, 1.0], 2)),
            "meshgrid_empty": str(tf.meshgrid()),
        }
        with tf.Session(graph=g) as sess:
            out["values"] = sess.run(t, {p: xv, ax: 1, a: np.arange(6, dtype=np.float32).reshape(2, 3)})
            for k in ("pad_string", "zeros_like_string"):
                out["values"][k] = [v.decode() for v in out["values"][k]]
            out["concat_grad_axis0"] = sess.run(t["concat_grad_fed_axis"],
                                                {ax: 0, a: np.arange(6, dtype=np.float32).reshape(2, 3)})
            out["run_errors"] = {
                "shrink_out_of_range": err(lambda: sess.run(p[5], {p: xv})),
            }
    return out

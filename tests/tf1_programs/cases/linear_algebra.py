"""Linear algebra: matrix_inverse, matrix_determinant, slogdet/logdet, cholesky(_solve),
matrix_solve, matrix_triangular_solve, matrix_solve_ls, qr, svd, self_adjoint_eig(vals),
matrix_band_part, matrix_transpose, trace, diag/diag_part, cross, matrix_square_root, expm:
values on float32 and float64, batched and not; gradients; static shapes; names; errors.

QR, SVD and eigenvectors are unique only up to the sign of each column (LAPACK routines may
pick either), so their factors are compared through sign-invariant quantities: |q|, |r|,
|u|, |v|, reconstructions (q r, u diag(s) v^T) and losses of squares and absolute values.
"""


def err(fn, message=True):
    try:
        fn()
    except Exception as e:
        return type(e).__name__ + (": " + str(e).splitlines()[0] if message else "")
    return "no error"


def full_err(fn):
    try:
        fn()
    except Exception as e:
        return str(e)
    return "no error"


def _inputs(np, rng, batch, dtype):
    shape = ([batch] if batch else []) + [3, 3]
    g = rng.randn(*shape)
    gen = g + 3.0 * np.eye(3)  # well conditioned, not symmetric
    a = rng.randn(*shape)
    spd = a @ np.swapaxes(a, -1, -2) + 3.0 * np.eye(3)
    tall = rng.randn(*(([batch] if batch else []) + [4, 3]))
    rhs = rng.randn(*(([batch] if batch else []) + [3, 2]))
    rhs4 = rng.randn(*(([batch] if batch else []) + [4, 2]))
    wide = rng.randn(*(([batch] if batch else []) + [2, 3]))
    rhs2 = rng.randn(*(([batch] if batch else []) + [2, 2]))
    w = rng.uniform(0.5, 1.5, size=shape)
    return {k: v.astype(dtype) for k, v in dict(gen=gen, spd=spd, tall=tall, rhs=rhs, rhs4=rhs4, wide=wide,
                                                   rhs2=rhs2, w=w).items()}


def _build(tf, np, arrays, tag):
    """Ops on placeholders fed with `arrays`; returns (tensors, grads, feed)."""
    dt = tf.as_dtype(arrays["gen"].dtype)
    ph = {k: tf.placeholder(dt, v.shape, name=f"{k}_{tag}") for k, v in arrays.items()}
    G, S, T, B, B4, Wd, B2, W = (ph[k] for k in ("gen", "spd", "tall", "rhs", "rhs4", "wide", "rhs2", "w"))
    t = {}
    t["inv"] = tf.matrix_inverse(G)
    t["inv_adj"] = tf.linalg.inv(G, adjoint=True)
    t["det"] = tf.matrix_determinant(G)
    t["det_linalg"] = tf.linalg.det(S)
    sign, logabs = tf.linalg.slogdet(G - 3.5 * tf.eye(3, dtype=dt))
    t["slogdet_sign"], t["slogdet_abs"] = sign, logabs
    t["logdet"] = tf.linalg.logdet(S)
    chol = tf.cholesky(S)
    t["chol"] = chol
    t["chol_solve"] = tf.cholesky_solve(chol, B)
    t["solve"] = tf.matrix_solve(G, B)
    t["solve_adj"] = tf.linalg.solve(G, B, adjoint=True)
    t["tri_lower"] = tf.matrix_triangular_solve(G, B)
    t["tri_upper_adj"] = tf.linalg.triangular_solve(G, B, lower=False, adjoint=True)
    t["lstsq_over"] = tf.matrix_solve_ls(T, B4)
    t["lstsq_l2"] = tf.linalg.lstsq(T, B4, l2_regularizer=0.5)
    t["lstsq_under"] = tf.matrix_solve_ls(Wd, B2)
    t["lstsq_slow"] = tf.matrix_solve_ls(T, B4, fast=False)
    q, r = tf.qr(T)
    t["qr_absq"], t["qr_absr"], t["qr_prod"] = tf.abs(q), tf.abs(r), tf.matmul(q, r)
    qf, rf = tf.linalg.qr(T, full_matrices=True)
    t["qrf_absr"], t["qrf_prod"] = tf.abs(rf), tf.matmul(qf, rf)
    s, u, v = tf.svd(T)
    t["svd_s"], t["svd_absu"], t["svd_absv"] = s, tf.abs(u), tf.abs(v)
    t["svd_prod"] = tf.matmul(u * tf.expand_dims(s, -2), v, transpose_b=True)
    t["svd_s_only"] = tf.svd(Wd, compute_uv=False)
    sf, uf, vf = tf.linalg.svd(Wd, full_matrices=True)
    t["svdf_s"], t["svdf_absv"] = sf, tf.abs(vf)
    e, ev = tf.self_adjoint_eig(S)
    t["eig_e"], t["eig_absv"] = e, tf.abs(ev)
    t["eig_prod"] = tf.matmul(ev * tf.expand_dims(e, -2), ev, transpose_b=True)
    t["eigvals"] = tf.linalg.eigvalsh(S)
    t["band_01"] = tf.matrix_band_part(G, 0, 1)
    t["band_lower"] = tf.linalg.band_part(G, -1, 0)
    t["band_tensor"] = tf.matrix_band_part(G, tf.constant(1, tf.int64), tf.constant(-1, tf.int64))
    t["transpose"] = tf.matrix_transpose(T)
    t["adjoint"] = tf.linalg.adjoint(T)
    t["trace"] = tf.trace(G)
    t["trace_linalg"] = tf.linalg.trace(T)
    t["sqrtm"] = tf.matrix_square_root(S)
    t["expm"] = tf.linalg.expm(G * 0.25)
    t["matvec"] = tf.linalg.matvec(G, B[..., 0])
    feed = {ph[k]: arrays[k] for k in arrays}
    losses = {
        "inv": tf.reduce_sum(t["inv"] * W) + tf.reduce_sum(t["inv_adj"] * W * W),
        "det": tf.reduce_sum(t["det"]),
        "slogdet": tf.reduce_sum(logabs),
        "logdet": tf.reduce_sum(t["logdet"]),
        "chol": tf.reduce_sum(chol * W),
        "chol_solve": tf.reduce_sum(t["chol_solve"]),
        "solve": tf.reduce_sum(t["solve"] * B) + tf.reduce_sum(t["solve_adj"]),
        "tri": tf.reduce_sum(t["tri_lower"] * B) + tf.reduce_sum(t["tri_upper_adj"]),
        "lstsq": tf.reduce_sum(t["lstsq_over"]) + tf.reduce_sum(t["lstsq_l2"] * t["lstsq_l2"]),
        "lstsq_under": tf.reduce_sum(t["lstsq_under"]),
        "qr": tf.reduce_sum(tf.abs(tf.matrix_diag_part(r))) + tf.reduce_sum(tf.square(q)[..., :3, :] * W)
        + tf.reduce_sum(tf.abs(r) * W),
        "svd_s": tf.reduce_sum(s * tf.range(1.0, 4.0, dtype=dt)),
        "svd_u": tf.reduce_sum(tf.square(u)[..., :3, :] * W) + tf.reduce_sum(tf.square(v) * W),
        "svd_wide": tf.reduce_sum(t["svd_s_only"]),
        "eig": tf.reduce_sum(e * tf.range(1.0, 4.0, dtype=dt)) + tf.reduce_sum(tf.square(ev) * W),
        "eigvals": tf.reduce_sum(tf.square(t["eigvals"])),
        "band": tf.reduce_sum(t["band_01"] * W) + tf.reduce_sum(t["band_lower"] * W * W),
        "trace": tf.reduce_sum(t["trace"] * t["trace"]),
        "sqrtm": tf.reduce_sum(t["sqrtm"] * W),
        "expm": tf.reduce_sum(t["expm"] * W),
    }
    wrt = {"inv": G, "det": G, "slogdet": G, "logdet": S, "chol": S, "chol_solve": [S, B], "solve": [G, B],
           "tri": [G, B], "lstsq": [T, B4], "lstsq_under": [Wd, B2], "qr": T, "svd_s": T, "svd_u": T,
           "svd_wide": Wd, "eig": S, "eigvals": S, "band": G, "trace": G, "sqrtm": S, "expm": G}
    grads = {}
    for k, loss in losses.items():
        xs = wrt[k] if isinstance(wrt[k], list) else [wrt[k]]
        for i, gr in enumerate(tf.gradients(loss, xs)):
            grads[f"{k}_{i}"] = gr
    return t, grads, feed


def run(tf, np):
    rng = np.random.RandomState(42)
    out = {}
    g = tf.Graph()
    fetch, feed = {}, {}
    with g.as_default():
        for dtype in (np.float32, np.float64):
            for batch in (0, 2):
                tag = f"{np.dtype(dtype).name}_{'b' if batch else 'm'}"
                t, grads, f = _build(tf, np, _inputs(np, rng, batch, dtype), tag)
                fetch[tag] = {"values": t, "grads": grads}
                feed.update(f)
                if tag == "float32_m":
                    out["dtypes"] = {k: v.dtype.name for k, v in t.items()}
                if tag == "float64_b":
                    out["shapes"] = {k: v.shape.as_list() for k, v in t.items()}
        # diag / diag_part / cross (integers too)
        d1 = tf.constant([1.0, 2.0, 3.0])
        d2 = tf.constant([[1, 2], [3, 4]])
        cr_a = tf.constant(rng.randn(2, 4, 3).astype(np.float32))
        cr_b = tf.constant(rng.randn(2, 4, 3).astype(np.float32))
        misc = {
            "diag1": tf.diag(d1),
            "diag2": tf.diag(d2),
            "diag_part1": tf.diag_part(tf.reshape(tf.range(9.0), [3, 3])),
            "diag_part2": tf.diag_part(tf.diag(d2)),
            "tensor_diag": tf.linalg.tensor_diag(d1),
            "tensor_diag_part": tf.linalg.tensor_diag_part(tf.reshape(tf.range(16), [2, 2, 2, 2])),
            "cross": tf.cross(cr_a, cr_b),
            "cross_int": tf.linalg.cross(tf.constant([1, 0, 0]), tf.constant([0, 1, 0])),
            "band_int": tf.matrix_band_part(tf.reshape(tf.range(12), [3, 4]), 1, 0),
        }
        fetch["misc"] = misc
        out["misc_shapes"] = {k: v.shape.as_list() for k, v in misc.items()}
        out["misc_dtypes"] = {k: v.dtype.name for k, v in misc.items()}
        xd = tf.placeholder(tf.float32, [2, 3], name="xd")
        ca = tf.placeholder(tf.float32, [4, 3], name="ca")
        loss_misc = (tf.reduce_sum(tf.diag(xd) * tf.reshape(tf.range(36.0), [2, 3, 2, 3]))
                     + tf.reduce_sum(tf.diag_part(tf.reshape(tf.range(36.0), [2, 3, 2, 3]) * tf.diag(xd)))
                     + tf.reduce_sum(tf.cross(ca, tf.constant(rng.randn(4, 3).astype(np.float32))) * 2.0)
                     + tf.reduce_sum(tf.cross(ca * ca, ca)))
        fetch["misc_grads"] = dict(zip(["xd", "ca"], tf.gradients(loss_misc, [xd, ca])))
        feed[xd] = rng.randn(2, 3).astype(np.float32)
        feed[ca] = rng.randn(4, 3).astype(np.float32)
        # static shapes with unknown dimensions
        P = tf.placeholder(tf.float32, [None, 5, 3], name="P")
        Q = tf.placeholder(tf.float32, [None, None, 4], name="Q")
        Sq = tf.placeholder(tf.float64, [None, 4, None], name="Sq")
        U = tf.placeholder(tf.float32, None, name="U")
        qp, rp = tf.qr(P)
        qpf, rpf = tf.qr(P, full_matrices=True)
        sp, up, vp = tf.svd(Q)
        spf, upf, vpf = tf.svd(P, full_matrices=True)
        ep, vep = tf.self_adjoint_eig(Sq)
        dyn = {"qr_q": qp, "qr_r": rp, "qrf_q": qpf, "qrf_r": rpf, "svd_s": sp, "svd_u": up, "svd_v": vp,
               "svdf_u": upf, "svdf_v": vpf, "svd_only": tf.svd(P, compute_uv=False), "eig_e": ep, "eig_v": vep,
               "inv": tf.matrix_inverse(Sq), "det": tf.matrix_determinant(Sq), "chol": tf.cholesky(Sq),
               "slogdet": tf.linalg.slogdet(Sq)[0], "solve": tf.matrix_solve(Sq, tf.ones([3, 4, 2], tf.float64)),
               "tri": tf.matrix_triangular_solve(Sq, tf.ones([4, 7], tf.float64)),
               "lstsq": tf.matrix_solve_ls(P, tf.ones([2, 5, 6])), "transpose": tf.matrix_transpose(Q),
               "trace": tf.trace(P), "band": tf.matrix_band_part(Q, 1, 1), "unknown_inv": tf.matrix_inverse(U),
               "unknown_svd": tf.svd(U)[1], "diag": tf.diag(P), "diag_part": tf.diag_part(tf.zeros([2, 3, 2, 3])),
               "cross": tf.cross(P, P), "sqrtm": tf.matrix_square_root(Sq)}
        out["dyn_shapes"] = {k: (v.shape.as_list() if v.shape.ndims is not None else "unknown")
                             for k, v in dyn.items()}
        out["names"] = {k: v.name for k, v in dyn.items() if k not in ("lstsq", "tri", "solve", "unknown_svd")}
        out["op_types"] = {k: v.op.type for k, v in dyn.items() if k not in ("lstsq", "transpose", "trace")}
        # build-time errors
        f32 = tf.ones([2, 3])
        f43 = tf.ones([5, 3])
        out["errors"] = {
            "inv_nonsquare": err(lambda: tf.matrix_inverse(f32), message=False),
            "inv_int": err(lambda: tf.matrix_inverse(tf.constant([[1, 2], [3, 4]])), message=False),
            "chol_rank1": err(lambda: tf.cholesky(tf.ones([3])), message=False),
            "det_nonsquare": err(lambda: tf.matrix_determinant(f32), message=False),
            "solve_rows": err(lambda: tf.matrix_solve(tf.eye(3), tf.ones([2, 1])), message=False),
            "solve_dtype": err(lambda: tf.matrix_solve(tf.eye(3), tf.ones([3, 1], tf.float64)), message=False),
            "tri_rows": err(lambda: tf.matrix_triangular_solve(tf.eye(3), tf.ones([4, 1])), message=False),
            "cross_dim": err(lambda: tf.cross(tf.ones([2, 2]), tf.ones([2, 2])), message=False),
            "cross_shapes": err(lambda: tf.cross(tf.ones([2, 3]), tf.ones([4, 3])), message=False),
            "diag_part_odd": err(lambda: tf.diag_part(tf.ones([2, 2, 2])), message=False),
            "diag_part_mismatch": err(lambda: tf.diag_part(tf.ones([2, 3])), message=False),
            "diag_scalar": err(lambda: tf.diag(tf.constant(1.0)), message=False),
            "transpose_rank1": err(lambda: tf.matrix_transpose(tf.ones([3])), message=False),
            "qr_int": err(lambda: tf.qr(tf.ones([2, 2], tf.int32)), message=False),
            "svd_rank1": err(lambda: tf.svd(tf.ones([3])), message=False),
            "eig_nonsquare": err(lambda: tf.self_adjoint_eig(f32), message=False),
            "band_rank1": err(lambda: tf.matrix_band_part(tf.ones([3]), 0, 0), message=False),
            "qr_grad_full_tall": err(lambda: tf.gradients(tf.reduce_sum(tf.qr(f43, full_matrices=True)[1]), f43),
                                     message=False),
            "svd_grad_full": err(lambda: tf.gradients(tf.reduce_sum(tf.svd(f43, full_matrices=True)[1]), f43),
                                 message=False),
            "svd_grad_full_ok": err(lambda: tf.gradients(tf.reduce_sum(tf.svd(f32, full_matrices=True)[2]), f32),
                                    message=False),
        }
    with tf.Session(graph=g) as sess:
        out["run"] = sess.run(fetch, feed)
        singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
        not_pd = np.array([[1.0, 2.0], [2.0, 1.0]], np.float64)
        with g.as_default():
            m32 = tf.placeholder(tf.float32, [2, 2])
            m64 = tf.placeholder(tf.float64, [2, 2])
            inv, chol = tf.matrix_inverse(m32, name="inv_singular"), tf.cholesky(m64, name="chol_not_pd")
            solve = tf.matrix_solve(m32, tf.ones([2, 1]), name="solve_singular")
            sld = tf.linalg.slogdet(m32)
            det = tf.matrix_determinant(m32)
            band1 = tf.matrix_band_part(tf.ones([3]), 0, 0)
        out["runtime_errors"] = {
            "inv_singular": err(lambda: sess.run(inv, {m32: singular}), message=False),
            "inv_singular_msg": "Input is not invertible." in full_err(lambda: sess.run(inv, {m32: singular})),
            "solve_singular_msg": "Input matrix is not invertible." in full_err(lambda: sess.run(solve,
                                                                                               {m32: singular})),
            "band_rank1": err(lambda: sess.run(band1), message=False),
            "solve_singular": err(lambda: sess.run(solve, {m32: singular}), message=False),
        }
        out["singular_det"] = sess.run(det, {m32: singular})
        out["singular_slogdet"] = sess.run(sld[0], {m32: singular})
        # TF 2.21 raises no error for a matrix that is not positive definite: the lower triangle of its
        # factor is NaN (the upper one is left uninitialized: not compared)
        low = np.tril_indices(2)
        out["chol_not_pd"] = sess.run(chol, {m64: not_pd})[low]
        with g.as_default():
            mb = tf.placeholder(tf.float64, [2, 2, 2])
            chol_b = tf.cholesky(mb)
        out["chol_not_pd_batch"] = sess.run(chol_b, {mb: np.stack([not_pd, [[4.0, 2.0], [2.0, 3.0]]])})[:, low[0],
                                                                                                           low[1]]
    return out

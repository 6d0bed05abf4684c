"""More of tf.linalg: lu (TF's pivoting and permutation), lu_solve, lu_matrix_inverse,
lu_reconstruct, pinv, matrix_rank, normalize, tridiagonal_solve and tridiagonal_matmul (the
'compact', 'sequence' and 'matrix' formats, with and without pivoting, perturbed singular
systems), logm (complex only): values, batches, gradients, static shapes, names and errors.

Complex outputs are compared as their real and imaginary parts.
"""


def err(fn, message=False):
    try:
        fn()
    except Exception as e:
        return type(e).__name__ + (": " + str(e).splitlines()[0] if message else "")
    return "no error"


def _shape(t):
    return str(t.shape.as_list()) if t.shape.ndims is not None else "unknown"


def _split_complex(np, value):
    if isinstance(value, dict):
        return {k: _split_complex(np, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_split_complex(np, v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind == "c":
        return np.stack([value.real, value.imag])
    if isinstance(value, np.generic) and np.iscomplexobj(value):
        return np.array([value.real, value.imag])
    return value


def _full_tridiagonal(np, d):
    """The matrix of compact diagonals d [..., 3, m]."""
    m = d.shape[-1]
    a = np.zeros(d.shape[:-2] + (m, m), d.dtype)
    for i in range(m):
        a[..., i, i] = d[..., 1, i]
        if i + 1 < m:
            a[..., i, i + 1] = d[..., 0, i]
            a[..., i + 1, i] = d[..., 2, i + 1]
    return a


def _lu_part(tf, np, rng, fetch, feed, out):
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        x = tf.placeholder(dt, [3, 3], name=f"lu_x_{tag}")
        xb = tf.placeholder(dt, [2, 4, 4], name=f"lu_xb_{tag}")
        feed[x] = np.array([[1., 2, 3], [3, 4, 5], [3, 1, 0]], dt)  # a tie of |3| in the first column
        feed[xb] = rng.randn(2, 4, 4).astype(dt)
        lu, p = tf.linalg.lu(x)
        lub, pb = tf.linalg.lu(xb, output_idx_type=tf.int64)
        rhs = tf.placeholder(dt, [3, 2], name=f"lu_rhs_{tag}")
        rhsb = tf.placeholder(dt, [2, 4, 3], name=f"lu_rhsb_{tag}")
        feed[rhs] = rng.randn(3, 2).astype(dt)
        feed[rhsb] = rng.randn(2, 4, 3).astype(dt)
        rhs4 = tf.placeholder(dt, [4, 2], name=f"lu_rhs4_{tag}")
        feed[rhs4] = rng.randn(4, 2).astype(dt)
        lub32, pb32 = tf.linalg.lu(xb)
        v = {
            "lu": lu, "p": p, "lu_b": lub, "p_b": pb,
            "solve": tf.linalg.lu_solve(lu, p, rhs),
            "solve_b": tf.linalg.lu_solve(lub32, pb32, rhsb),
            "solve_bcast": tf.linalg.lu_solve(lub32, pb32, rhs4),
            "inverse": tf.linalg.lu_matrix_inverse(lu, p),
            "inverse_b": tf.linalg.lu_matrix_inverse(lub32, pb32),
            "reconstruct": tf.linalg.lu_reconstruct(lu, p),
            "reconstruct_b": tf.linalg.lu_reconstruct(lub32, pb32),
        }
        w = tf.constant(rng.uniform(0.5, 1.5, size=(3, 3)).astype(dt))
        wb = tf.constant(rng.uniform(0.5, 1.5, size=(2, 4, 4)).astype(dt))
        loss = (tf.reduce_sum(v["solve"] * v["solve"]) + tf.reduce_sum(tf.sin(v["solve_b"]))
                + tf.reduce_sum(v["solve_bcast"]) + tf.reduce_sum(v["inverse"] * w)
                + tf.reduce_sum(v["reconstruct_b"] * wb) + tf.reduce_sum(v["reconstruct"] * w * w))
        # gradients with respect to the packed factors (Lu itself has no gradient, as in TF)
        grads = tf.gradients(loss, [lu, lub32, rhs, rhsb, rhs4])
        grads[2] = tf.convert_to_tensor(grads[2])  # (gather along axis -2: a dense gradient in TF)
        fetch[f"lu_{tag}"] = {"values": v, "grads": dict(zip(["lu", "lu_b", "rhs", "rhs_b", "rhs4"], grads))}
        if dt == np.float64:
            out["lu_shapes"] = {k: _shape(t) for k, t in v.items()}
            out["lu_dtypes"] = {k: t.dtype.name for k, t in v.items()}
    c = tf.constant(np.array([[1 + 1j, 2], [3, 4j]], np.complex64))
    c2 = tf.constant(np.array([[1 + 1j, 2, 0.5j], [1.5 - 1.5j, 4j, 1], [0.1, 2 - 1j, 3]], np.complex128))
    fetch["lu_complex"] = {"c64": tf.linalg.lu(c), "c128": tf.linalg.lu(c2),
                           "reconstruct": tf.linalg.lu_reconstruct(*tf.linalg.lu(c2)),
                           "inverse": tf.linalg.lu_matrix_inverse(*tf.linalg.lu(c2))}
    # static shapes, names
    p1 = tf.placeholder(tf.float32, [None, 3, None])
    p2 = tf.placeholder(tf.float32, None)
    p3 = tf.placeholder(tf.float32, [None, 3, 2])
    lu1, perm1 = tf.linalg.lu(p1)
    lu2, perm2 = tf.linalg.lu(p2, name="my_lu")
    out["lu_static"] = {"lu1": _shape(lu1), "p1": _shape(perm1), "lu2": _shape(lu2), "p2": _shape(perm2),
                        "solve": _shape(tf.linalg.lu_solve(lu1, perm1, p3)),
                        "inverse": _shape(tf.linalg.lu_matrix_inverse(lu1, perm1)),
                        "reconstruct": _shape(tf.linalg.lu_reconstruct(lu1, perm1)),
                        "reconstruct2": _shape(tf.linalg.lu_reconstruct(lu2, perm2)),
                        "names": [lu2.name, perm2.name, lu1.op.type]}
    out["lu_errors"] = {
        "nonsquare": err(lambda: tf.linalg.lu(tf.ones([2, 3]))),
        "rank1": err(lambda: tf.linalg.lu(tf.ones([3]))),
        "int": err(lambda: tf.linalg.lu(tf.ones([3, 3], tf.int32))),
        "idx_type": err(lambda: tf.linalg.lu(tf.ones([3, 3]), output_idx_type=tf.float32)),
        "grad": err(lambda: tf.gradients(tf.reduce_sum(tf.linalg.lu(p1)[0]), p1)),
        "solve_rank1_rhs": err(lambda: tf.linalg.lu_solve(lu1, perm1, tf.ones([3]))),
        "solve_rows": err(lambda: tf.linalg.lu_solve(lu1, perm1, tf.ones([2, 4, 1]))),
        "solve_perm_rank": err(lambda: tf.linalg.lu_solve(lu1, tf.ones([3], tf.int32), tf.ones([2, 3, 1]))),
        "reconstruct_nonsquare": err(lambda: tf.linalg.lu_reconstruct(tf.ones([3, 4]), tf.ones([3], tf.int32))),
        "reconstruct_rank1": err(lambda: tf.linalg.lu_reconstruct(tf.ones([3]), tf.ones([3], tf.int32))),
        "inverse_perm_rank": err(lambda: tf.linalg.lu_matrix_inverse(tf.ones([3, 3]), tf.ones([1, 3], tf.int32))),
    }


def _pinv_part(tf, np, rng, fetch, feed, out):
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        tall = tf.placeholder(dt, [4, 3], name=f"pinv_tall_{tag}")
        wide = tf.placeholder(dt, [2, 2, 3], name=f"pinv_wide_{tag}")
        deficient = tf.placeholder(dt, [3, 3], name=f"pinv_def_{tag}")
        feed[tall] = rng.randn(4, 3).astype(dt)
        feed[wide] = rng.randn(2, 2, 3).astype(dt)
        a = rng.randn(3, 1)
        feed[deficient] = (a @ a.T + np.outer([1., 0, 2], [0., 1, 1])).astype(dt)  # rank 2
        v = {
            "tall": tf.linalg.pinv(tall),
            "wide": tf.linalg.pinv(wide),
            "deficient": tf.linalg.pinv(deficient),
            "rcond": tf.linalg.pinv(tall, rcond=0.5),
            "rcond_batch": tf.linalg.pinv(wide, rcond=[0.9, 1e-3]),
            "zeros": tf.linalg.pinv(tf.zeros([2, 3], dt)),
            "rank_tall": tf.linalg.matrix_rank(tall),
            "rank_wide": tf.linalg.matrix_rank(wide),
            "rank_deficient": tf.linalg.matrix_rank(deficient),
            "rank_tol": tf.linalg.matrix_rank(wide, tol=1.0),
            "rank_zeros": tf.linalg.matrix_rank(tf.zeros([3, 2], dt)),
        }
        w = tf.constant(rng.uniform(0.5, 1.5, size=(3, 4)).astype(dt))
        loss = (tf.reduce_sum(v["tall"] * w) + tf.reduce_sum(tf.square(v["wide"]))
                + tf.reduce_sum(v["rcond"] * w * w))
        grads = tf.gradients(loss, [tall, wide])
        fetch[f"pinv_{tag}"] = {"values": v, "grads": dict(zip(["tall", "wide"], grads))}
        if dt == np.float32:
            out["pinv_shapes"] = {k: _shape(t) for k, t in v.items()}
            out["pinv_dtypes"] = {k: t.dtype.name for k, t in v.items()}
    fetch["rank_list"] = tf.linalg.matrix_rank([[1, 2], [2, 4]])
    p1 = tf.placeholder(tf.float64, [None, 5, None])
    p2 = tf.placeholder(tf.float32, None)
    dyn = tf.placeholder(tf.float64, [None, None], name="pinv_dyn")
    feed[dyn] = rng.randn(5, 2)
    fetch["pinv_dynamic"] = {"pinv": tf.linalg.pinv(dyn), "rank": tf.linalg.matrix_rank(dyn)}
    out["pinv_static"] = {"pinv1": _shape(tf.linalg.pinv(p1)), "pinv2": _shape(tf.linalg.pinv(p2)),
                          "rank1": _shape(tf.linalg.matrix_rank(p1)), "rank2": _shape(tf.linalg.matrix_rank(p2)),
                          "names": [tf.linalg.pinv(p1, name="pi").name, tf.linalg.matrix_rank(p1).dtype.name]}
    out["pinv_errors"] = {
        "int": err(lambda: tf.linalg.pinv(tf.ones([2, 2], tf.int32)), True),
        "complex": err(lambda: tf.linalg.pinv(tf.ones([2, 2], tf.complex64)), True),
        "rank1": err(lambda: tf.linalg.pinv(tf.ones([3])), True),
        "rank_rank1": err(lambda: tf.linalg.matrix_rank(tf.ones([3])), True),
        "rank_int": err(lambda: tf.linalg.matrix_rank(np.ones([3, 3], np.int32)), True),
        "pinv_list_int": err(lambda: tf.linalg.pinv([[1, 2], [3, 4]])),
        "rcond_rank": err(lambda: tf.linalg.pinv(tf.ones([2, 3]), rcond=[0.1, 0.2])),
    }


def _normalize_part(tf, np, rng, fetch, feed, out):
    x = tf.placeholder(tf.float32, [2, 3, 4], name="norm_x")
    feed[x] = rng.randn(2, 3, 4).astype(np.float32)
    cases = {
        "default": {}, "axis": {"axis": 1}, "axis_neg": {"axis": -1}, "ord1": {"ord": 1, "axis": 0},
        "inf": {"ord": np.inf, "axis": 2}, "p3": {"ord": 3, "axis": 1}, "p_half": {"ord": 0.5},
        "fro": {"ord": "fro", "axis": (1, 2)}, "mat1": {"ord": 1, "axis": [0, 2]},
        "mat_inf": {"ord": np.inf, "axis": (-1, -2)}, "mat2": {"ord": 2, "axis": (1, 2)},
        "mat2_swapped": {"ord": 2, "axis": (2, 0)},
    }
    w = tf.constant(rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(np.float32))
    values, grads, shapes = {}, {}, {}
    for k, kw in cases.items():
        normalized, norm = tf.linalg.normalize(x, **kw)
        values[k] = {"normalized": normalized, "norm": norm}
        shapes[k] = [_shape(normalized), _shape(norm)]
        grads[k] = tf.gradients(tf.reduce_sum(normalized * w) + tf.reduce_sum(norm), x)[0]
    fetch["normalize"] = {"values": values, "grads": grads}
    out["normalize_shapes"] = shapes
    n1, n2 = tf.linalg.normalize(x, axis=1, name="nm")
    out["normalize_names"] = [n1.name, n2.name]
    c = tf.constant(np.array([[1 + 1j, 2], [3, 4j]], np.complex64))
    fetch["normalize_complex"] = {"default": tf.linalg.normalize(c), "axis": tf.linalg.normalize(c, axis=0),
                                  "ord1": tf.linalg.normalize(c, ord=1, axis=1)}
    fetch["normalize_zero"] = tf.linalg.normalize(tf.constant([[3.0, 4.0], [0.0, 0.0]], tf.float64), axis=1)
    u = tf.placeholder(tf.float32, None)
    feed[u] = rng.randn(3, 2, 2).astype(np.float32)
    fetch["normalize_unknown"] = tf.linalg.normalize(u, ord=2, axis=[0, 2])
    out["normalize_unknown_shape"] = _shape(tf.linalg.normalize(u, ord=2, axis=[0, 2])[1])
    out["normalize_errors"] = {
        "fro_vector": err(lambda: tf.linalg.normalize(x, ord="fro"), True),
        "negative": err(lambda: tf.linalg.normalize(x, ord=-1), True),
        "matrix_ord": err(lambda: tf.linalg.normalize(x, ord=3, axis=[0, 1]), True),
        "axis": err(lambda: tf.linalg.normalize(x, axis=[0, 0]), True),
        "axis_type": err(lambda: tf.linalg.normalize(x, axis=1.5)),
        "int": err(lambda: tf.linalg.normalize(tf.constant([1, 2]))),
    }


def _tridiagonal_part(tf, np, rng, fetch, feed, out):
    m = 5
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        d_np = rng.randn(2, 3, m).astype(dt)
        d_np[:, 1] += 3.0 * np.sign(d_np[:, 1])
        d = tf.placeholder(dt, [2, 3, m], name=f"tri_d_{tag}")
        rhs = tf.placeholder(dt, [2, m, 2], name=f"tri_rhs_{tag}")
        vec = tf.placeholder(dt, [2, m], name=f"tri_vec_{tag}")
        rhs_t = tf.placeholder(dt, [2, 3, m], name=f"tri_rhst_{tag}")
        mat = tf.placeholder(dt, [2, m, m], name=f"tri_mat_{tag}")
        feed[d] = d_np
        feed[rhs] = rng.randn(2, m, 2).astype(dt)
        feed[vec] = rng.randn(2, m).astype(dt)
        feed[rhs_t] = rng.randn(2, 3, m).astype(dt)
        full = _full_tridiagonal(np, d_np)
        feed[mat] = full + np.triu(rng.randn(2, m, m), 2).astype(dt)  # entries off the band are ignored
        sup, main, sub = d[..., 0, :-1], d[..., 1, :], d[..., 2, 1:]
        v = {
            "compact": tf.linalg.tridiagonal_solve(d, rhs),
            "no_pivoting": tf.linalg.tridiagonal_solve(d, rhs, partial_pivoting=False),
            "perturb": tf.linalg.tridiagonal_solve(d, rhs, perturb_singular=True),
            "vector": tf.linalg.tridiagonal_solve(d, vec),
            "transposed": tf.linalg.tridiagonal_solve(d, rhs_t, transpose_rhs=True),
            "sequence": tf.linalg.tridiagonal_solve([sup, main, sub], rhs, diagonals_format="sequence"),
            "sequence_full": tf.linalg.tridiagonal_solve([d[..., 0, :], main, d[..., 2, :]], rhs,
                                                         diagonals_format="sequence"),
            "matrix": tf.linalg.tridiagonal_solve(mat, rhs, diagonals_format="matrix"),
            "matmul": tf.linalg.tridiagonal_matmul(d, rhs),
            "matmul_sequence": tf.linalg.tridiagonal_matmul([d[..., 0, :], main, d[..., 2, :]], rhs,
                                                            diagonals_format="sequence"),
            "matmul_matrix": tf.linalg.tridiagonal_matmul(mat, rhs, diagonals_format="matrix"),
        }
        wt = tf.constant(rng.uniform(0.5, 1.5, size=(2, m, 2)).astype(dt))
        losses = {
            "compact": tf.reduce_sum(v["compact"] * wt) + tf.reduce_sum(tf.square(v["vector"])),
            "no_pivoting": tf.reduce_sum(tf.sin(v["no_pivoting"])),
            "transposed": tf.reduce_sum(tf.square(v["transposed"])),
            "sequence": tf.reduce_sum(v["sequence"] * wt),
            "matrix": tf.reduce_sum(v["matrix"] * wt),
            "matmul": tf.reduce_sum(tf.square(v["matmul"])),
            "matmul_matrix": tf.reduce_sum(v["matmul_matrix"] * wt),
        }
        wrt = {"compact": [d, rhs, vec], "no_pivoting": [d, rhs], "transposed": [d, rhs_t], "sequence": [d, rhs],
               "matrix": [mat, rhs], "matmul": [d, rhs], "matmul_matrix": [mat, rhs]}
        grads = {k: tf.gradients(loss, wrt[k]) for k, loss in losses.items()}
        fetch[f"tri_{tag}"] = {"values": v, "grads": grads}
        if dt == np.float64:
            out["tri_shapes"] = {k: _shape(t) for k, t in v.items()}
    # pivoting matters; singular systems give NaNs, no error
    C = lambda a: tf.constant(np.array(a, np.float64))  # noqa: E731
    needs_pivot = C([[1., 1, 0], [1, 1, 1], [0, 1, 1]])
    zero_pivot = C([[1., 1, 0], [0, 1, 1], [0, 1, 1]])
    r3 = C([[1.], [2], [3]])
    fetch["tri_special"] = {
        "pivot": tf.linalg.tridiagonal_solve(needs_pivot, r3),
        "pivot_nopiv": tf.linalg.tridiagonal_solve(needs_pivot, r3, partial_pivoting=False),
        "pivot_perturb": tf.linalg.tridiagonal_solve(needs_pivot, r3, perturb_singular=True),
        "zero_pivot": tf.linalg.tridiagonal_solve(zero_pivot, r3),
        "singular": tf.linalg.tridiagonal_solve(C([[2., 9], [1, 4], [9, 2]]), C([[4.], [6]])),
        "singular_perturb": tf.linalg.tridiagonal_solve(C([[2., 9], [1, 4], [9, 2]]), C([[4.], [6]]),
                                                        perturb_singular=True),
        "zeros": tf.linalg.tridiagonal_solve(C(np.zeros([3, 3])), r3),
        "zeros_perturb": tf.linalg.tridiagonal_solve(C(np.zeros([3, 3])), r3, perturb_singular=True),
        "batch_one_singular": tf.linalg.tridiagonal_solve(
            C([[[1., 1, 0], [0, 1, 1], [0, 1, 1]], [[1., 1, 0], [2, 1, 1], [0, 1, 1]]]), C([[[1.], [2], [3]]] * 2)),
        "scalar": tf.linalg.tridiagonal_solve(C([[5.], [2], [7]]), C([[4., 6]])),
        "scalar_zero": tf.linalg.tridiagonal_solve(C([[5.], [0], [7]]), C([[4., 6]])),
        "scalar_zero_perturb": tf.linalg.tridiagonal_solve(C([[5.], [0], [7]]), C([[4., 6]]), perturb_singular=True),
        "empty": tf.linalg.tridiagonal_solve(C(np.zeros([3, 0])), C(np.zeros([0, 2]))),
        "two": tf.linalg.tridiagonal_solve(C([[1., 9], [1, 2], [9, 1]]), C([[4.], [6]])),
        "matmul_one": tf.linalg.tridiagonal_matmul(C([[5.], [2], [7]]), C([[4., 6]])),
    }
    # complex: conjugate_rhs, transpose_rhs with conjugation
    cd = rng.randn(3, 4) + 1j * rng.randn(3, 4)
    cd[1] += 4
    cr = rng.randn(4, 2) + 1j * rng.randn(4, 2)
    cdt, crt = tf.constant(cd), tf.constant(cr)
    fetch["tri_complex"] = {
        "solve": tf.linalg.tridiagonal_solve(cdt, crt),
        "conj": tf.linalg.tridiagonal_solve(cdt, crt, conjugate_rhs=True),
        "conj_t": tf.linalg.tridiagonal_solve(cdt, tf.transpose(crt), transpose_rhs=True, conjugate_rhs=True),
        "matmul": tf.linalg.tridiagonal_matmul(cdt, crt),
    }
    # static shapes
    pd = tf.placeholder(tf.float32, [None, 3, 4])
    pr = tf.placeholder(tf.float32, [None, 4, 5])
    pu = tf.placeholder(tf.float32, None)
    out["tri_static"] = {
        "solve": _shape(tf.linalg.tridiagonal_solve(pd, pr)),
        "solve_unknown_rhs": _shape(tf.linalg.tridiagonal_solve(pd, pu)),
        "solve_unknown_diags": _shape(tf.linalg.tridiagonal_solve(pu, pr)),
        "vector": _shape(tf.linalg.tridiagonal_solve(pd, tf.placeholder(tf.float32, [None, 4]))),
        "matmul": _shape(tf.linalg.tridiagonal_matmul(pd, tf.placeholder(tf.float32, [None, None, 2]))),
        "matmul_unknown": _shape(tf.linalg.tridiagonal_matmul(pu, pr)),
        "names": [tf.linalg.tridiagonal_solve(pd, pr).name, tf.linalg.tridiagonal_solve(pd, pr, name="ts").name,
                  tf.linalg.tridiagonal_matmul(pd, pr).name, tf.linalg.tridiagonal_matmul(pd, pr, name="tm").name],
    }
    out["tri_errors"] = {
        "int": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3], tf.int32), tf.ones([3, 1], tf.int32))),
        "half": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3], tf.float16), tf.ones([3, 1], tf.float16))),
        "four": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([4, 3]), tf.ones([3, 1])), True),
        "rank1": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3]), tf.ones([3, 1])), True),
        "rhs_rank": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([2, 3, 1])), True),
        "rhs_rows": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([4, 1])), True),
        "batch": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([2, 3, 3]), tf.ones([3, 3, 1])), True),
        "vector_rows": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([4])), True),
        "format": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1]), diagonals_format="x"),
                      True),
        "perturb_no_pivot": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1]),
                                                                    partial_pivoting=False, perturb_singular=True),
                                True),
        "sequence_len": err(lambda: tf.linalg.tridiagonal_solve([tf.ones([3]), tf.ones([3])], tf.ones([3, 1]),
                                                                diagonals_format="sequence"), True),
        "sequence_length": err(lambda: tf.linalg.tridiagonal_solve([tf.ones([1]), tf.ones([3]), tf.ones([3])],
                                                                   tf.ones([3, 1]), diagonals_format="sequence"),
                               True),
        "sequence_batch": err(lambda: tf.linalg.tridiagonal_solve([tf.ones([2, 2]), tf.ones([3, 3]),
                                                                   tf.ones([3, 2])], tf.ones([3, 1]),
                                                                  diagonals_format="sequence"), True),
        "matrix_nonsquare": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 4]), tf.ones([3, 1]),
                                                                    diagonals_format="matrix"), True),
        "dtype": err(lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1], tf.float64))),
        "matmul_rows": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 4]), tf.ones([5, 2]))),
        "matmul_rank": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 4]), tf.ones([4]))),
        "matmul_batch": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([2, 3, 4]), tf.ones([3, 4, 2]))),
        "matmul_bcast": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 4]), tf.ones([3, 4, 2]))),
        "matmul_int": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 4], tf.int32), tf.ones([4, 2], tf.int32))),
        "matmul_format": err(lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 4]), tf.ones([4, 2]),
                                                                  diagonals_format="x"), True),
    }


def _logm_part(tf, np, rng, fetch, feed, out):
    a = rng.randn(2, 3, 3) * 0.3 + np.eye(3) * 2.0
    c64 = tf.placeholder(tf.complex64, [2, 3, 3], name="logm_c64")
    feed[c64] = (a + 0.2j * rng.randn(2, 3, 3)).astype(np.complex64)
    fetch["logm"] = {
        "c64": tf.linalg.logm(c64),
        "c128": tf.linalg.logm(tf.constant(np.array([[1, 2], [3, 4]], np.complex128))),
        "negative": tf.linalg.logm(tf.constant(np.array([[-1, 0], [0, -2]], np.complex128))),
        "jordan": tf.linalg.logm(tf.constant(np.array([[1, 1], [0, 1]], np.complex128))),
        "rotation": tf.linalg.logm(tf.constant(np.array([[0, -1], [1, 0]], np.complex128))),
        "singular": tf.linalg.logm(tf.constant(np.zeros([2, 2], np.complex64))),
        "empty": tf.linalg.logm(tf.constant(np.zeros([0, 0], np.complex64))),
    }
    pu = tf.placeholder(tf.complex64, [None, 3, None])
    out["logm_static"] = [_shape(tf.linalg.logm(pu)), _shape(tf.linalg.logm(tf.placeholder(tf.complex64, None))),
                          tf.linalg.logm(pu, name="lg").name, tf.linalg.logm(pu).op.type]
    out["logm_errors"] = {
        "float": err(lambda: tf.linalg.logm(tf.ones([2, 2]))),
        "nonsquare": err(lambda: tf.linalg.logm(tf.ones([2, 3], tf.complex64))),
        "rank1": err(lambda: tf.linalg.logm(tf.ones([3], tf.complex64))),
        "grad": err(lambda: tf.gradients(tf.reduce_sum(tf.abs(tf.linalg.logm(pu))), pu)),
    }


def run(tf, np):
    rng = np.random.RandomState(7)
    out, fetch, feed = {}, {}, {}
    g = tf.Graph()
    with g.as_default():
        _lu_part(tf, np, rng, fetch, feed, out)
        _pinv_part(tf, np, rng, fetch, feed, out)
        _normalize_part(tf, np, rng, fetch, feed, out)
        _tridiagonal_part(tf, np, rng, fetch, feed, out)
        _logm_part(tf, np, rng, fetch, feed, out)
    with tf.Session(graph=g) as sess:
        out["run"] = sess.run(fetch, feed)
        # run-time errors
        with g.as_default():
            m = tf.placeholder(tf.float64, None)
            r = tf.placeholder(tf.float64, None)
            lu_op = tf.linalg.lu(m)
            solve = tf.linalg.tridiagonal_solve(m, r)
            matmul = tf.linalg.tridiagonal_matmul(m, r)
            cm = tf.placeholder(tf.complex64, None)
            logm = tf.linalg.logm(cm)
            pinv_checked = tf.linalg.pinv(m, validate_args=True)
            rank_unchecked = tf.linalg.matrix_rank(m)
            lu_checked = tf.linalg.lu_reconstruct(m, tf.placeholder_with_default([0, 1], [None]), validate_args=True)

        def run_err(t, feeds, message=True):
            return err(lambda: sess.run(t, feeds), message=False) + (
                (" | " + _last_line(lambda: sess.run(t, feeds))) if message else "")

        out["runtime_errors"] = {
            "lu_singular": run_err(lu_op, {m: [[1.0, 2.0], [2.0, 4.0]]}),
            "lu_zeros": run_err(lu_op, {m: np.zeros([2, 2])}),
            "lu_batch_singular": run_err(lu_op, {m: [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]]}),
            "lu_nonsquare": run_err(lu_op, {m: np.ones([2, 3])}),
            "lu_rank1": run_err(lu_op, {m: np.ones([3])}),
            "solve_rank1": run_err(solve, {m: np.ones([3]), r: np.ones([3, 1])}),
            "solve_rhs_rank": run_err(solve, {m: np.ones([3, 3]), r: np.ones([3])}),
            "solve_four": run_err(solve, {m: np.ones([4, 3]), r: np.ones([3, 1])}),
            "solve_rows": run_err(solve, {m: np.ones([3, 3]), r: np.ones([4, 1])}),
            "solve_batch": run_err(solve, {m: np.ones([2, 3, 3]), r: np.ones([3, 3, 1])}),
            "matmul_rows": run_err(matmul, {m: np.ones([3, 4]), r: np.ones([5, 2])}),
            "matmul_batch": run_err(matmul, {m: np.ones([2, 3, 4]), r: np.ones([3, 4, 2])}),
            "matmul_rank": run_err(matmul, {m: np.ones([2, 3, 4]), r: np.ones([4, 2])}),
            "logm_nonsquare": run_err(logm, {cm: np.ones([2, 3])}),
            "logm_rank1": run_err(logm, {cm: np.ones([3])}),
            "pinv_rank1": run_err(pinv_checked, {m: np.ones([3])}, message=False),
            "rank_rank1": run_err(rank_unchecked, {m: np.ones([3])}, message=False),
            "lu_reconstruct_rank1": run_err(lu_checked, {m: np.ones([2])}, message=False),
        }
        out["lu_singular_batch_ok"] = sess.run(lu_op, {m: [[[0.0, 2.0], [3.0, 4.0]]]})
    return _split_complex(np, out)


def _last_line(fn):
    """The error's message line (TF's run-time messages carry the node after it)."""
    try:
        fn()
    except Exception as e:
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        known = ("Input", "Expected", "All input", "Invalid", "assertion")
        for ln in lines:
            if ln.strip().startswith(known):
                return ln.strip()
        return lines[0] if lines else ""
    return ""

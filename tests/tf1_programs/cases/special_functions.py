"""Special functions (lgamma, digamma, polygamma, zeta, igamma, igammac, lbeta,
erfinv, ndtri, bessel_i0e/i1e/i0/i1, betainc): values on float32 and float64
over negatives, points near poles, large values and edges; gradients through
tf.gradients; build-time errors (type names)."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    inf, nan = np.inf, np.nan
    gam_x = [-4.5, -2.5, -1.25, -0.999, -0.5, -1e-3, 1e-6, 0.1, 0.5, 1.0, 1.4616, 2.0, 2.5, 3.7, 10.0,
             33.3, 170.2, 1e5, 1e15]
    gam_edges = [0.0, -1.0, -2.0, inf, -inf]
    poly_n = [0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 1.0, 2.0, 1.0, 3.0]
    poly_x = [0.5, 0.5, 7.25, 1e-3, 1.5, 40.0, 2.0, 0.75, -1.5, -2.5, -0.25, 1e4]
    zeta_x = [2.0, 2.0, 3.0, 1.5, 4.0, 2.5, 10.0, 1.001, 6.0, 2.0, 3.0, 1.0, 0.5, 2.0]
    zeta_q = [1.0, 0.5, 2.0, 1.0, 0.1, 30.0, 1.5, 1.0, 1e3, -1.5, -2.0, 1.0, 1.0, 0.0]
    ig_a = [0.1, 0.5, 1.0, 1.0, 2.0, 3.5, 5.0, 10.0, 20.0, 50.0, 100.0, 0.5, 7.0, 1e-3, 3.0]
    ig_x = [0.05, 2.0, 1.0, 0.3, 0.0, 3.5, 20.0, 9.0, 25.0, 30.0, 101.0, 1e-4, 6.0, 1.0, 0.0]
    ig_edge_a = [0.0, -1.0, 1.0, 1.0, inf]
    ig_edge_x = [1.0, 1.0, -1.0, inf, 1.0]
    erfinv_x = [-0.999999, -0.99, -0.9, -0.5, -0.1, 0.0, 1e-7, 0.3, 0.5, 0.75, 0.95, 0.9999, 0.99999]
    erfinv_edges = [-1.0, 1.0, 1.5, -2.0]
    ndtri_p = [1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.25, 0.4, 0.5, 0.6, 0.8, 0.975, 0.999, 0.9999999]
    ndtri_edges = [0.0, 1.0, -0.1, 1.1]
    bes_x = [-50.0, -20.0, -7.5, -1.0, -1e-3, 0.0, 1e-4, 0.5, 2.0, 8.0, 15.0, 19.9, 20.1, 40.0, 500.0, 1e5]
    bi_a = [0.5, 1.0, 2.0, 2.0, 5.0, 0.1, 30.0, 100.0, 1.0, 3.0, 2.0]
    bi_b = [0.5, 1.0, 3.0, 3.0, 1.5, 0.2, 20.0, 120.0, 1.0, 2.0, 2.0]
    bi_x = [0.5, 0.3, 0.3, 0.9, 0.99, 0.01, 0.6, 0.45, 0.0, 1.0, 1.5]

    out = {}
    for dt_name in ("float32", "float64"):
        dt = getattr(tf, dt_name)
        g = tf.Graph()
        with g.as_default():
            def c(v):
                return tf.constant(np.array(v, dtype=dt_name), dtype=dt)
            x = c(gam_x)
            px = c([0.3, 1.7, 4.2, -1.5])
            t = {
                "lgamma": tf.lgamma(x),
                "lgamma_edges": tf.lgamma(c(gam_edges)),
                "digamma": tf.digamma(x),
                "digamma_edges": tf.digamma(c(gam_edges)),
                "polygamma": tf.polygamma(c(poly_n), c(poly_x)),
                "polygamma_bad_n": tf.polygamma(c([1.5, -1.0]), c([1.0, 1.0])),
                "zeta": tf.zeta(c(zeta_x), c(zeta_q)),
                "igamma": tf.igamma(c(ig_a), c(ig_x)),
                "igammac": tf.igammac(c(ig_a), c(ig_x)),
                "igamma_edges": tf.math.igamma(c(ig_edge_a), c(ig_edge_x)),
                "igammac_edges": tf.math.igammac(c(ig_edge_a), c(ig_edge_x)),
                "igamma_bcast": tf.igamma(c([[0.5], [2.0], [8.0]]), c([0.1, 1.0, 5.0, 12.0])),
                "lbeta": tf.lbeta(c([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [10.0, 0.1, 4.0]])),
                "lbeta_vec": tf.math.lbeta(c([2.5, 3.5])),
                "lbeta_empty": tf.lbeta(tf.zeros([2, 0], dtype=dt)),
                "erfinv": tf.math.erfinv(c(erfinv_x)),
                "erfinv_edges": tf.math.erfinv(c(erfinv_edges)),
                "ndtri": tf.math.ndtri(c(ndtri_p)),
                "ndtri_edges": tf.math.ndtri(c(ndtri_edges)),
                "i0e": tf.math.bessel_i0e(c(bes_x)),
                "i1e": tf.math.bessel_i1e(c(bes_x)),
                "i0": tf.math.bessel_i0(c(bes_x[1:-3])),
                "i1": tf.math.bessel_i1(c(bes_x[1:-3])),
                "betainc": tf.math.betainc(c(bi_a), c(bi_b), c(bi_x)),
                "betainc_scalar_x": tf.betainc(c([1.0, 2.0, 4.0]), c([3.0, 2.0, 0.5]), c(0.4)),
            }
            if dt_name == "float64":
                t["zeta_edges"] = tf.zeta(c([1.0, 0.5, 2.0, 2.0, 3.0, 2.5]), c([1.0, 1.0, 0.0, -1.0, -2.0, -1.5]))
                t["ndtri_tiny"] = tf.math.ndtri(c([1e-100, 1e-300]))
            # gradients
            gx = c([0.3, 1.7, 4.2, 12.5])
            ev = c([-0.9, -0.2, 0.4, 0.99])
            bv = c([-3.0, -0.5, 0.0, 25.0])
            iv = c([-3.0, -0.5, 0.7, 2.0])
            ga = c([0.5, 2.0, 3.0, 9.0])
            gb = c([0.3, 0.55, 0.8, 0.95])
            losses = {
                "lgamma": tf.reduce_sum(tf.lgamma(px) * [1.0, 2.0, 3.0, 4.0]),
                "digamma": tf.reduce_sum(tf.digamma(px)),
                "polygamma": tf.reduce_sum(tf.polygamma(c(2.0), px)),
                "zeta": tf.reduce_sum(tf.zeta(c([2.0, 3.0, 4.5, 2.5]), gx)),
                "igamma": tf.reduce_sum(tf.igamma(ga, gx)),
                "igammac": tf.reduce_sum(tf.igammac(ga, gx) * 2.0),
                "erfinv": tf.reduce_sum(tf.math.erfinv(ev)),
                "ndtri": tf.reduce_sum(tf.math.ndtri(gb)),
                "i0e": tf.reduce_sum(tf.math.bessel_i0e(bv)),
                "i1e": tf.reduce_sum(tf.math.bessel_i1e(bv)),
                "i0": tf.reduce_sum(tf.math.bessel_i0(iv)),
                "i1": tf.reduce_sum(tf.math.bessel_i1(iv)),
                "betainc": tf.reduce_sum(tf.math.betainc(ga, c([2.0, 1.0, 0.5, 4.0]), gb)),
                "lbeta": tf.reduce_sum(tf.lbeta(tf.reshape(gx, [2, 2]))),
            }
            srcs = {"lgamma": px, "digamma": px, "polygamma": px, "zeta": gx, "igamma": [ga, gx],
                    "igammac": [ga, gx], "erfinv": ev, "ndtri": gb, "i0e": bv, "i1e": bv, "i0": iv, "i1": iv,
                    "betainc": gb, "lbeta": gx}
            grads = {k: tf.gradients(losses[k], src) for k, src in srcs.items()}
            bx = c([0.2, 0.5, 0.7])
            grads["betainc_x3"] = tf.gradients(tf.math.betainc(c([1.0, 2.0, 0.5]), c([3.0, 1.0, 2.5]), bx), bx)
            grads["betainc_ab"] = [str(v) for v in tf.gradients(
                tf.math.betainc(ga, c([2.0, 1.0, 0.5, 4.0]), gb), [ga])]
            grads["polygamma_n"] = [str(v) for v in tf.gradients(tf.polygamma(ga, gx), [ga])]
            grads["zeta_x"] = [str(v) for v in tf.gradients(tf.zeta(ga + 1.0, gx), [ga])]
            ab = c([[0.5], [2.0]])
            xb = c([0.1, 1.0, 5.0])
            grads["igamma_bcast"] = tf.gradients(tf.igamma(ab, xb), [ab, xb])
            second = tf.gradients(tf.gradients(tf.lgamma(px), px)[0], px)
            grads["lgamma_second"] = second
            with tf.Session() as sess:
                vals = sess.run({k: v for k, v in t.items()})
                gvals = sess.run({k: v for k, v in grads.items() if not isinstance(v[0], str)})
            out[dt_name] = {"values": vals, "grads": gvals,
                            "no_grads": {k: v for k, v in grads.items() if isinstance(v[0], str)},
                            "dtypes": {k: v.dtype.name for k, v in t.items()},
                            "shapes": {k: v.shape.as_list() for k, v in t.items()}}
    g = tf.Graph()
    with g.as_default():
        i = tf.constant([1, 2])
        f32 = tf.constant([1.0, 2.0])
        f64 = tf.constant([1.0, 2.0], dtype=tf.float64)
        out["errors"] = {
            "lgamma_int": err(lambda: tf.lgamma(i)),
            "digamma_int": err(lambda: tf.digamma(i)),
            "erfinv_int": err(lambda: tf.math.erfinv(i)),
            "ndtri_int": err(lambda: tf.math.ndtri(i)),
            "i0e_int": err(lambda: tf.math.bessel_i0e(i)),
            "polygamma_half": err(lambda: tf.polygamma(tf.constant(1.0, tf.float16), tf.constant(1.0, tf.float16))),
            "polygamma_mixed": err(lambda: tf.polygamma(f32, f64)),
            "zeta_int": err(lambda: tf.zeta(i, i)),
            "igamma_mixed": err(lambda: tf.igamma(f32, f64)),
            "igamma_shapes": err(lambda: tf.igamma(f32, tf.constant([1.0, 2.0, 3.0]))),
            "betainc_shapes": err(lambda: tf.math.betainc(tf.constant([1.0]), tf.constant([1.0]),
                                                          tf.constant([0.5, 0.2, 0.1]))),
            "lbeta_scalar": err(lambda: tf.lbeta(tf.constant(1.0))),
        }
        out["names"] = [tf.lgamma(f32).name, tf.digamma(f32).name, tf.polygamma(f32, f32).name,
                        tf.zeta(f32, f32).name, tf.igamma(f32, f32).name, tf.igammac(f32, f32).name,
                        tf.math.erfinv(f32).name, tf.math.ndtri(f32).name, tf.math.bessel_i0e(f32).name,
                        tf.math.bessel_i1e(f32).name, tf.math.betainc(f32, f32, f32).name,
                        tf.lbeta(f32).name, tf.lgamma(f32, name="my_lgamma").name]
        half = tf.constant([0.5, 3.0], dtype=tf.float16)
        hv = {"lgamma": tf.lgamma(half), "digamma": tf.digamma(half), "i1e": tf.math.bessel_i1e(half)}
        with tf.Session() as sess:
            out["half"] = sess.run(hv)
    return out

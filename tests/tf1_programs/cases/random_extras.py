"""tf.random_gamma / tf.random_poisson, the stateless random ops, fold_in/split,
the candidate samplers and tf.random_crop. graphrt draws from numpy, so the
numbers differ from TF's: the case compares static shapes, dtypes, op types
where they are TF's, statistics (means within a tolerance, as bools), ranges,
determinism (a seeded stateless op gives the same numbers in two sessions, a
different seed other numbers), the gamma gradient in alpha (its mean over many
draws is d E[x] / d alpha = 1 / beta) and build-time error classes."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        alpha = tf.constant([0.5, 2.0, 7.0])
        beta = tf.constant([[1.0], [4.0]])
        gam = tf.random_gamma([4000], alpha, beta, seed=1)
        gam64 = tf.random.gamma([3, 2], 2.0, dtype=tf.float64, seed=2)
        grad = tf.gradients(tf.reduce_mean(gam), alpha)[0]
        poi = tf.random_poisson([0.5, 3.0, 20.0], [4000], seed=3)
        poi_int = tf.random.poisson(4.0, [5], dtype=tf.int32, seed=4)
        seed = tf.constant([7, 11])
        st = {
            "uniform": tf.random.stateless_uniform([2000], seed, minval=-1.0, maxval=3.0),
            "uniform_int": tf.random.stateless_uniform([2000], seed, minval=3, maxval=9, dtype=tf.int32),
            "normal": tf.random.stateless_normal([2000, 2], seed, mean=1.0, stddev=2.0),
            "truncated": tf.random.stateless_truncated_normal([2000], seed, stddev=2.0, dtype=tf.float64),
            "categorical": tf.random.stateless_categorical(tf.math.log([[0.2, 0.8], [0.9, 0.1]]), 2000, seed),
            "binomial": tf.random.stateless_binomial([2000], seed, counts=10.0, probs=0.3),
            "gamma": tf.random.stateless_gamma([2000, 2], seed, alpha=[1.0, 5.0]),
            "poisson": tf.random.stateless_poisson([2000], seed, lam=6.0),
        }
        other = tf.random.stateless_normal([2000, 2], [7, 12], mean=1.0, stddev=2.0)
        sa = tf.constant([2.0, 3.0])
        st_gam = tf.random.stateless_gamma([3000, 2], [1, 2], alpha=sa)
        st_grad = tf.gradients(tf.reduce_mean(st_gam), sa)[0]
        fold, spl = tf.random.fold_in([1, 2], 5), tf.random.split([1, 2], 3)
        true = tf.constant([[1, 2], [0, 4]], dtype=tf.int64)
        all_s = tf.random.all_candidate_sampler(true, 2, 5, True)
        uni = tf.random.uniform_candidate_sampler(true, 2, 3, True, 10, seed=5)
        logu = tf.random.log_uniform_candidate_sampler(true, 2, 3, False, 10, seed=5)
        fixed = tf.random.fixed_unigram_candidate_sampler(true, 2, 3, True, 5, unigrams=[1.0, 2.0, 3.0, 4.0, 0.0],
                                                          seed=6)
        crop = tf.random_crop(tf.reshape(tf.range(60), [3, 4, 5]), [2, 2, 5], seed=7)
        for key, t in [("gamma", gam), ("gamma64", gam64), ("grad", grad), ("poisson", poi), ("poisson_int", poi_int),
                       ("fold", fold), ("split", spl), ("crop", crop), ("st_grad", st_grad)] + list(st.items()):
            out[f"static/{key}"] = str(t.shape)
            out[f"dtype/{key}"] = t.dtype.name
        out["op_types"] = [gam.op.type, gam.op.inputs[1].op.inputs[0].op.type,
                           poi.op.type, st["categorical"].op.type]
        with tf.Session() as sess:
            r = sess.run({"gam": gam, "gam64": gam64, "grad": grad, "poi": poi, "poi_int": poi_int, "st": st,
                          "st_grad": st_grad, "fold": fold, "spl": spl, "all": all_s, "uni": uni, "logu": logu,
                          "fixed": fixed, "crop": crop, "other": other})
            again = sess.run(st)
        with tf.Session() as sess:
            again2 = sess.run([st, fold, spl])
    out["gamma_mean_ok"] = bool(np.all(np.abs(r["gam"].mean(0) - np.array([0.5, 2.0, 7.0]) / np.array([[1.0], [4.0]]))
                                       < 0.08 * np.array([0.5, 2.0, 7.0]) + 0.02))
    out["gamma_positive"] = bool((r["gam"] > 0).all() and (r["gam64"] > 0).all())
    out["gamma_grad_ok"] = bool(np.all(np.abs(r["grad"] - 4000 * 2 * (1.0 + 0.25) / gam.shape.num_elements())
                                       < 0.1))
    out["poisson_mean_ok"] = bool(np.all(np.abs(r["poi"].mean(0) - [0.5, 3.0, 20.0]) < [0.1, 0.2, 0.5]))
    out["poisson_integral"] = bool(np.all(r["poi"] == np.round(r["poi"])))
    s = r["st"]
    out["st_uniform_ok"] = bool(s["uniform"].min() >= -1 and s["uniform"].max() < 3 and abs(s["uniform"].mean() - 1)
                                < 0.1)
    out["st_uniform_int_ok"] = bool(s["uniform_int"].min() == 3 and s["uniform_int"].max() == 8)
    out["st_normal_ok"] = bool(np.all(np.abs(s["normal"].mean(0) - 1) < 0.15) and
                               np.all(np.abs(s["normal"].std(0) - 2) < 0.15))
    out["st_truncated_ok"] = bool(np.abs(s["truncated"]).max() <= 4.0 and abs(s["truncated"].mean()) < 0.15)
    out["st_categorical_ok"] = bool(np.all(np.abs(s["categorical"].mean(1) - [0.8, 0.1]) < 0.05))
    out["st_binomial_ok"] = bool(abs(s["binomial"].mean() - 3.0) < 0.15 and s["binomial"].max() <= 10)
    out["st_gamma_ok"] = bool(np.all(np.abs(s["gamma"].mean(0) - [1.0, 5.0]) < [0.1, 0.3]))
    out["st_poisson_ok"] = bool(abs(s["poisson"].mean() - 6.0) < 0.25)
    out["st_gamma_grad_ok"] = bool(np.all(np.abs(r["st_grad"] - 1.0 / 2) < 0.1))
    out["st_same_in_run"] = bool(all(np.array_equal(s[k], again[k]) for k in s))
    out["st_same_across_sessions"] = bool(all(np.array_equal(s[k], again2[0][k]) for k in s)
                                          and np.array_equal(r["fold"], again2[1])
                                          and np.array_equal(r["spl"], again2[2]))
    out["st_other_seed_differs"] = bool(not np.array_equal(s["normal"], r["other"]))
    out["fold_second"] = r["fold"][1]
    out["all_sampler"] = r["all"]
    out["uni_expected_shapes"] = [x.shape for x in r["uni"][1:]]
    out["uni_expected_ok"] = bool(all(((x >= 0.27) & (x <= 1.0)).all() for x in r["uni"][1:]))
    out["uni_unique"] = len(set(r["uni"][0].tolist())) == 3
    out["logu_shapes"] = [x.shape for x in r["logu"]]
    out["fixed_in_range"] = bool(set(r["fixed"][0].tolist()) <= {0, 1, 2, 3} and len(set(r["fixed"][0].tolist())) == 3)
    out["crop_is_slice"] = bool(r["crop"].shape == (2, 2, 5) and np.all(np.diff(r["crop"], axis=-1) == 1))
    with tf.Graph().as_default():
        out["errors"] = {
            "seed_shape": err(lambda: tf.random.stateless_uniform([2], seed=[1, 2, 3])),
            "int_no_maxval": err(lambda: tf.random.stateless_uniform([2], [1, 2], minval=0, dtype=tf.int32)),
            "bad_dtype": err(lambda: tf.random.stateless_normal([2], [1, 2], dtype=tf.int32)),
            "gamma_int": err(lambda: tf.random_gamma([2], 1, dtype=tf.int32)),
            "float_seed": err(lambda: tf.random.stateless_uniform([2], seed=[1.0, 2.0])),
        }
    return out

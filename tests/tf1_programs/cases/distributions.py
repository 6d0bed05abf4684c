"""tf.distributions: log_prob, prob, cdf, log_cdf, survival functions, entropy,
mean, variance, stddev, mode and registered KL divergences of every
distribution (values, float32 and float64), gradients of log_prob and KL in
the parameters, batch/event shapes, names, reparameterization types and
build-time errors. Samples differ from TF's (numpy draws), so they are
compared by shape, dtype and statistics (a mean within a tolerance, as a bool)."""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    tfd = tf.distributions
    out = {}
    for dt_name in ("float32", "float64"):
        g = tf.Graph()
        with g.as_default():
            def c(v):
                return tf.constant(np.array(v, dtype=dt_name))
            x = c([-2.5, -0.3, 0.0, 0.7, 3.0])
            pos = c([0.1, 0.5, 1.0, 2.5, 7.0])
            unit = c([0.05, 0.3, 0.5, 0.8, 0.99])
            dists = {
                "normal": (tfd.Normal(loc=c([0.0, 1.0, -1.0, 0.5, 2.0]), scale=c([1.0, 0.5, 2.0, 3.0, 0.1])), x),
                "normal_tail": (tfd.Normal(c(0.0), c(1.0)), c([-40.0, -15.0, -9.0, 6.0, 9.0])),
                "laplace": (tfd.Laplace(c([0.0, 1.0, -1.0, 0.5, 2.0]), c([1.0, 0.5, 2.0, 3.0, 0.7])), x),
                "uniform": (tfd.Uniform(c([-3.0, 0.0, -1.0, 0.5, 1.0]), c([3.0, 1.0, 1.0, 0.9, 5.0])), x),
                "student_t": (tfd.StudentT(c([0.5, 1.5, 2.5, 5.0, 30.0]), c([0.0, 1.0, -1.0, 0.5, 2.0]),
                                           c([1.0, 0.5, 2.0, 3.0, 0.7])), x),
                "gamma": (tfd.Gamma(c([0.5, 1.0, 2.0, 3.5, 9.0]), c([1.0, 2.0, 0.5, 1.5, 3.0])), pos),
                "exponential": (tfd.Exponential(c([0.5, 1.0, 2.0, 3.5, 9.0])), pos),
                "beta": (tfd.Beta(c([0.5, 1.0, 2.0, 3.5, 9.0]), c([0.7, 1.0, 4.0, 1.5, 3.0])), unit),
            }
            t = {}
            for key, (d, v) in dists.items():
                t[key] = {"log_prob": d.log_prob(v), "prob": d.prob(v), "cdf": d.cdf(v), "log_cdf": d.log_cdf(v),
                          "survival": d.survival_function(v), "log_survival": d.log_survival_function(v),
                          "entropy": d.entropy(), "mean": d.mean()}
                if not (key == "student_t" and dt_name == "float64"):  # TF's fills a float32 2.0 there: TypeError
                    t[key]["stddev"], t[key]["variance"] = d.stddev(), d.variance()
                if key not in ("uniform",):
                    t[key]["mode"] = d.mode()
                out[f"{dt_name}/{key}/batch_shape"] = str(d.batch_shape)
                out[f"{dt_name}/{key}/event_shape"] = str(d.event_shape)
                out[f"{dt_name}/{key}/reparam"] = repr(d.reparameterization_type)
            n0 = dists["normal"][0]
            t["normal_quantile"] = n0.quantile(unit)
            bern = tfd.Bernoulli(logits=c([-3.0, -0.5, 0.0, 1.2, 4.0]))
            bern_p = tfd.Bernoulli(probs=c([0.1, 0.5, 0.9]))
            t["bernoulli"] = {"log_prob": bern.log_prob([0, 1, 1, 0, 1]), "prob": bern.prob([[1], [0]]),
                              "entropy": bern.entropy(), "mean": bern.mean(), "variance": bern.variance(),
                              "mode": bern.mode(), "probs": bern.probs, "logits_of_p": bern_p.logits,
                              "kl": tfd.kl_divergence(bern, tfd.Bernoulli(probs=c(0.3)))}
            logits = c([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
            cat = tfd.Categorical(logits=logits)
            cat_p = tfd.Categorical(probs=c([0.2, 0.3, 0.5]))
            t["categorical"] = {"log_prob": cat.log_prob([2, 0]), "prob": cat.prob([[1], [2]]),
                                "cdf": cat.cdf([1, 2]), "entropy": cat.entropy(), "mode": cat.mode(),
                                "probs": cat.probs, "p_log_prob": cat_p.log_prob([0, 1, 2]),
                                "kl": tfd.kl_divergence(cat, cat_p)}
            conc = c([[1.5, 2.0, 3.0], [0.5, 4.0, 1.0]])
            dirichlet = tfd.Dirichlet(conc)
            simplex = c([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
            t["dirichlet"] = {"log_prob": dirichlet.log_prob(simplex), "prob": dirichlet.prob(simplex),
                              "entropy": dirichlet.entropy(), "mean": dirichlet.mean(),
                              "variance": dirichlet.variance(), "covariance": dirichlet.covariance(),
                              "mode": tfd.Dirichlet(c([1.5, 2.0, 3.0])).mode(),
                              "kl": tfd.kl_divergence(dirichlet, tfd.Dirichlet(c([1.0, 1.0, 1.0])))}
            counts = c([[1.0, 2.0, 2.0], [0.0, 4.0, 1.0]])
            multi = tfd.Multinomial(total_count=c([5.0, 5.0]), logits=logits)
            t["multinomial"] = {"log_prob": multi.log_prob(counts), "prob": multi.prob(counts),
                                "mean": multi.mean(), "variance": multi.variance(),
                                "covariance": multi.covariance()}
            dm = tfd.DirichletMultinomial(total_count=c(5.0), concentration=conc)
            t["dirichlet_multinomial"] = {"log_prob": dm.log_prob(counts), "prob": dm.prob(counts),
                                          "mean": dm.mean(), "variance": dm.variance(),
                                          "covariance": dm.covariance()}
            for key, d in (("dirichlet", dirichlet), ("multinomial", multi), ("dm", dm), ("cat", cat)):
                out[f"{dt_name}/{key}/batch_shape"] = str(d.batch_shape)
                out[f"{dt_name}/{key}/event_shape"] = str(d.event_shape)
            kls = {
                "normal": tfd.kl_divergence(n0, tfd.Normal(c(0.5), c(1.5))),
                "gamma": tfd.kl_divergence(dists["gamma"][0], tfd.Gamma(c(2.0), c(1.0))),
                "exp_gamma": tfd.kl_divergence(dists["exponential"][0], tfd.Gamma(c(2.0), c(1.0))),
                "beta": tfd.kl_divergence(dists["beta"][0], tfd.Beta(c(2.0), c(2.0))),
                "method": n0.kl_divergence(tfd.Normal(c(0.0), c(1.0))),
                "cross_entropy": n0.cross_entropy(tfd.Normal(c(0.0), c(1.0))),
            }
            t["kl"] = kls
            # gradients in the parameters
            loc, scale = c([0.3, -1.0]), c([1.5, 0.4])
            conc_g, rate_g = c([0.7, 3.0]), c([2.0, 0.5])
            lp = (tf.reduce_sum(tfd.Normal(loc, scale).log_prob(c([1.0, 0.0])))
                  + tf.reduce_sum(tfd.Gamma(conc_g, rate_g).log_prob(c([0.5, 4.0])))
                  + tf.reduce_sum(tfd.Beta(conc_g, rate_g).log_prob(c([0.25, 0.6])))
                  + tf.reduce_sum(tfd.kl_divergence(tfd.Normal(loc, scale), tfd.Normal(c(0.0), c(1.0))))
                  + tf.reduce_sum(tfd.Dirichlet(tf.stack([conc_g, rate_g], 1)).log_prob(c([[0.3, 0.7], [0.5, 0.5]]))))
            t["grads"] = tf.gradients(lp, [loc, scale, conc_g, rate_g])
            # samples: shape, dtype and statistics
            samples = {
                "normal": tfd.Normal(c([1.0, -2.0]), c([0.5, 2.0])).sample(4000, seed=1),
                "gamma": tfd.Gamma(c([2.0, 5.0]), c([1.0, 2.0])).sample([2000, 2], seed=2),
                "beta": tfd.Beta(c([2.0, 5.0]), c([3.0, 1.0])).sample(4000, seed=3),
                "exponential": tfd.Exponential(c([2.0])).sample(4000, seed=4),
                "laplace": tfd.Laplace(c(1.0), c(2.0)).sample(4000, seed=5),
                "uniform": tfd.Uniform(c(-1.0), c(3.0)).sample(4000, seed=6),
                "student_t": tfd.StudentT(c(10.0), c(1.0), c(1.0)).sample(4000, seed=7),
                "dirichlet": tfd.Dirichlet(c([1.0, 2.0, 5.0])).sample(4000, seed=8),
                "bernoulli": tfd.Bernoulli(probs=c([0.2, 0.7])).sample(4000, seed=9),
                "categorical": tfd.Categorical(probs=c([0.2, 0.3, 0.5])).sample(4000, seed=10),
                "dm": tfd.DirichletMultinomial(c(10.0), c([1.0, 2.0, 5.0])).sample(500, seed=12),
            }
            expected_means = {
                "normal": [1.0, -2.0], "gamma": [[2.0, 2.5]], "beta": [0.4, 5.0 / 6.0], "exponential": [0.5],
                "laplace": 1.0, "uniform": 1.0, "student_t": 1.0, "dirichlet": [0.125, 0.25, 0.625],
                "bernoulli": [0.2, 0.7], "categorical": 1.3, "multinomial": [2.0, 3.0, 5.0],
                "dm": [1.25, 2.5, 6.25]}
            if dt_name == "float32":  # TF's float64 Multinomial.sample fails (float32 one_hot in a float64 map_fn)
                samples["multinomial"] = tfd.Multinomial(c(10.0), probs=c([0.2, 0.3, 0.5])).sample(500, seed=11)
            for key, s in samples.items():
                out[f"{dt_name}/sample_static/{key}"] = str(s.shape)
                out[f"{dt_name}/sample_dtype/{key}"] = s.dtype.name
            with tf.Session() as sess:
                vals, svals = sess.run([t, samples])
            for key, s in svals.items():
                axis = (0, 1) if key == "gamma" else 0
                mean = np.mean(s.astype(np.float64), axis=axis)
                out[f"{dt_name}/sample_shape/{key}"] = np.array(s.shape)
                tol = 0.25 if key in ("multinomial", "dm") else 0.12
                out[f"{dt_name}/sample_mean_ok/{key}"] = bool(np.all(np.abs(mean - expected_means[key]) < tol))
            out[dt_name] = vals
    with tf.Graph().as_default():
        out["errors"] = {
            "both_logits_probs": err(lambda: tfd.Bernoulli(logits=0.5, probs=0.5)),
            "neither": err(lambda: tfd.Categorical()),
            "mixed_dtypes": err(lambda: tfd.Normal(tf.constant(0.0), tf.constant(1.0, tf.float64))),
            "int_logits": err(lambda: tfd.Bernoulli(logits=[1, 2])),
            "no_kl": err(lambda: tfd.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Laplace(0.0, 1.0))),
            "sample_rank2": err(lambda: tfd.Normal(0.0, 1.0).sample([[2, 3]])),
        }
        n = tfd.Normal(0.0, 1.0, name="my_normal")
        out["names"] = {"dist": n.name, "log_prob": n.log_prob(0.5).op.name, "sample": n.sample(2, seed=1).op.name,
                        "params": sorted(n.parameters), "str": str(n),
                        "same": str(tfd.FULLY_REPARAMETERIZED == tfd.FULLY_REPARAMETERIZED),
                        "diff": str(tfd.FULLY_REPARAMETERIZED == tfd.NOT_REPARAMETERIZED)}
        with tf.Session() as sess:
            out["errors"]["validate_args_build"] = err(lambda: tfd.Normal(0.0, -1.0, validate_args=True))
            scale = tf.placeholder(tf.float32, [])
            bad = tfd.Normal(0.0, scale, validate_args=True)
            out["errors"]["validate_args_run"] = err(lambda: sess.run(bad.mean(), {scale: -1.0}))
            out["validate_args_ok"] = sess.run(bad.log_prob(0.5), {scale: 2.0})
            nan_kl = tfd.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Normal(0.0, tf.constant(np.nan)),
                                       allow_nan_stats=False)
            out["errors"]["kl_nan_run"] = err(lambda: sess.run(nan_kl))
            out["errors"]["mode_undefined_build"] = err(lambda: tfd.Gamma(0.5, 1.0, allow_nan_stats=False).mode())
            conc = tf.placeholder(tf.float32, [])
            no_nan = tfd.Gamma(conc, 1.0, allow_nan_stats=False).mode()
            out["errors"]["mode_undefined_run"] = err(lambda: sess.run(no_nan, {conc: 0.5}))
    return out

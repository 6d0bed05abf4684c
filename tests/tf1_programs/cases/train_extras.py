"""tf.train extras: Adadelta, FTRL (l1/l2, l2 shrinkage, learning_rate_power), ProximalAdagrad,
ProximalGradientDescent and AdagradDA on dense and sparse (embedding) gradients, their slots;
ExponentialMovingAverage (num_updates, zero_debias, average_name, variables_to_restore and a
Saver restoring averages); cosine_decay_restarts, linear_cosine_decay; init_from_checkpoint,
checkpoints_iterator, get_checkpoint_mtimes, assert_global_step, basic_train_loop; and the
initializers he/lecun, orthogonal, identity, uniform_unit_scaling.

Random draws differ from TensorFlow's (graphrt's random ops draw from numpy), so
noisy_linear_cosine_decay and the random initializers are compared by invariants: shapes,
dtypes, orthogonality, bounds, and sample variances within a tolerance, never their numbers.
"""
import contextlib
import os
import shutil
import tempfile


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def optimizers(tf, np):
    out = {}
    makers = {
        "adadelta": lambda gs: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
        "ftrl": lambda gs: tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01,
                                                  l2_regularization_strength=0.1),
        "ftrl_v2": lambda gs: tf.train.FtrlOptimizer(0.3, learning_rate_power=-0.7, initial_accumulator_value=0.5,
                                                     l1_regularization_strength=0.05,
                                                     l2_shrinkage_regularization_strength=0.1),
        "ftrl_beta": lambda gs: tf.train.FtrlOptimizer(0.3, learning_rate_power=0.0, beta=0.2,
                                                       accum_name="acc", linear_name="lin"),
        "prox_adagrad": lambda gs: tf.train.ProximalAdagradOptimizer(0.3, l1_regularization_strength=0.01,
                                                                     l2_regularization_strength=0.1),
        "prox_adagrad_plain": lambda gs: tf.train.ProximalAdagradOptimizer(0.3),
        "prox_gd": lambda gs: tf.train.ProximalGradientDescentOptimizer(0.3, l1_regularization_strength=0.05,
                                                                        l2_regularization_strength=0.1),
        "prox_gd_l2": lambda gs: tf.train.ProximalGradientDescentOptimizer(0.3, l2_regularization_strength=0.1),
        "adagrad_da": lambda gs: tf.train.AdagradDAOptimizer(0.3, gs, l1_regularization_strength=0.01,
                                                             l2_regularization_strength=0.1),
        "adagrad_da_plain": lambda gs: tf.train.AdagradDAOptimizer(0.3, gs),
    }
    for name, make in makers.items():
        g = tf.Graph()
        with g.as_default():
            gs = tf.train.get_or_create_global_step()
            with tf.variable_scope("model"):
                w = tf.get_variable("w", initializer=np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
                e = tf.get_variable("emb", initializer=np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5)
            loss = tf.reduce_sum(tf.square(w)) + tf.reduce_sum(tf.sin(tf.nn.embedding_lookup(e, [0, 2, 2])))
            opt = make(gs)
            train = opt.minimize(loss, global_step=gs)
            slot_names = opt.get_slot_names()
            slots = {s: [opt.get_slot(v, s).name for v in (w, e)] for s in slot_names}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                traj = []
                for _ in range(4):
                    sess.run(train)
                    traj.append(sess.run([w, e]))
                slot_vals = sess.run({s: [opt.get_slot(v, s) for v in (w, e)] for s in slot_names})
            out[name] = {"slots": slots, "traj": traj, "slot_vals": slot_vals, "train": train.name,
                         "names": [v.name for v in tf.global_variables()]}
    # float64 variables with float32 hyperparameters: the ones TF casts work.
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.array([1.0, -1.0]), name="v64")
        train = tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.1).minimize(tf.reduce_sum(v * v * v))
        train2 = tf.train.AdadeltaOptimizer(1.0).minimize(tf.reduce_sum(v * v))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([train, train2])
            out["float64"] = sess.run(v)
    out["errors"] = {
        "ftrl_power": err(lambda: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)),
        "ftrl_l1": err(lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)),
        "ftrl_acc": err(lambda: tf.train.FtrlOptimizer(0.1, initial_accumulator_value=-1.0)),
        "ftrl_shrink": err(lambda: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=-1.0)),
        "prox_acc": err(lambda: tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)),
        "da_acc": err(lambda: tf.train.AdagradDAOptimizer(0.1, None,
                                                          initial_gradient_squared_accumulator_value=0.0)),
    }
    return out


def moving_averages(tf, np, tmp):
    out = {}
    g = tf.Graph()
    with g.as_default():
        step = tf.Variable(0, trainable=False, name="step")
        with tf.variable_scope("m"):
            w = tf.get_variable("w", initializer=np.array([1.0, 2.0], np.float32))
        b = tf.Variable(5.0, name="b")
        t = tf.constant([3.0, 4.0]) * 2.0
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step, zero_debias=True)
        out["name"] = ema.name
        out["name_before"] = ema.average_name(w)
        update = ema.apply([w, b, t])
        out["update"] = update.name
        out["globals"] = [v.name for v in tf.global_variables()]
        out["trainables"] = [v.name for v in tf.trainable_variables()]
        out["ma_vars"] = [v.name for v in tf.moving_average_variables()]
        out["avg_names"] = [ema.average(x).name for x in (w, b, t)]
        out["avg_shape"] = ema.average(w).shape.as_list()
        out["average_name"] = [ema.average_name(w), ema.average_name(step)]
        out["unaveraged"] = str(ema.average(step))
        out["to_restore"] = sorted((k, v.name) for k, v in ema.variables_to_restore().items())
        out["to_restore_w"] = sorted(ema.variables_to_restore([w]))
        ema2 = tf.train.ExponentialMovingAverage(0.5, name="EMA2")
        update2 = ema2.apply([w])
        out["ema2"] = ema2.average(w).name
        with tf.control_dependencies([update, update2]):
            train = tf.group(w.assign_add([1.0, -1.0]), b.assign(b * 2), step.assign_add(1))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = []
            for _ in range(3):
                sess.run(train)
                values.append(sess.run([ema.average(w), ema.average(b), ema.average(t), ema2.average(w)]))
            out["values"] = values
            path = tf.train.Saver().save(sess, os.path.join(tmp, "ema", "model"))
        out["bad_dtype"] = err(lambda: tf.train.ExponentialMovingAverage(0.9).apply([step]))
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("m"):
            w = tf.get_variable("w", initializer=np.array([0.0, 0.0], np.float32))
        b = tf.Variable(0.0, name="b")
        restore_map = tf.train.ExponentialMovingAverage(0.9).variables_to_restore()
        out["restore_keys"] = sorted(restore_map)
        saver = tf.train.Saver(restore_map)
        with tf.Session() as sess:
            saver.restore(sess, path)
            out["restored"] = sess.run([w, b])
    return out


def decays(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(tf.int64, [])
        lrs = {
            "restarts": tf.train.cosine_decay_restarts(0.1, step, 10),
            "restarts_m": tf.train.cosine_decay_restarts(0.1, step, 10, t_mul=1.5, m_mul=0.5, alpha=0.1),
            "restarts_t1": tf.train.cosine_decay_restarts(0.1, step, 8, t_mul=1.0, m_mul=0.9),
            "linear_cosine": tf.train.linear_cosine_decay(0.1, step, 20),
            "linear_cosine_p": tf.train.linear_cosine_decay(0.1, step, 20, num_periods=2.0, alpha=0.1, beta=0.01),
            "piecewise": tf.train.piecewise_constant_decay(step, [np.int64(5)], [1.0, 0.5]),
        }
        noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 20)
        out["names"] = {k: v.op.name for k, v in lrs.items() if k != "piecewise"}
        out["noisy_static"] = [noisy.dtype.name, noisy.shape.as_list()]
        out["dtype64"] = err(lambda: tf.train.linear_cosine_decay(np.float64(0.1), step, 20))
        with tf.Session() as sess:
            out["values"] = {k: [sess.run(v, {step: s}) for s in (0, 3, 9, 10, 17, 25, 40)] for k, v in lrs.items()}
            draws = np.array([sess.run(noisy, {step: s}) for s in (0, 5, 10) for _ in range(40)])
            end = [sess.run(noisy, {step: 20}) for _ in range(5)]
    # The noise moves the linear term only: before the end the draws spread, at decay_steps the
    # cosine is 0 and the rate is lr * beta whatever the noise.
    out["noisy_spread"] = bool(draws.std() > 1e-3)
    out["noisy_finite"] = bool(np.all(np.isfinite(draws)))
    out["noisy_end"] = bool(np.allclose(end, 0.1 * 0.001, atol=1e-7))
    return out


def checkpoints(tf, np, tmp):
    out = {}
    ckdir = os.path.join(tmp, "ck")
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("old"):
            a = tf.get_variable("a", initializer=np.array([1.0, 2.0, 3.0], np.float32))
            b = tf.get_variable("b", initializer=np.array([[4.0, 5.0]], np.float32))
        c = tf.get_variable("c", initializer=np.int64(7))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver = tf.train.Saver()
            path = saver.save(sess, os.path.join(ckdir, "model"), global_step=1)
            sess.run(a.assign([9.0, 9.0, 9.0]))
            path2 = saver.save(sess, os.path.join(ckdir, "model"), global_step=2)
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("new"):
            a = tf.get_variable("a", [3])
            b = tf.get_variable("b", [1, 2])
        with tf.variable_scope("other"):
            x = tf.get_variable("x", [3])
        c = tf.get_variable("c", [], dtype=tf.int64)
        tf.train.init_from_checkpoint(ckdir, {"old/": "new/"})
        tf.train.init_from_checkpoint(path, {"old/a": x, "c": "c"})
        out["initial_value_shape"] = a.initial_value.shape.as_list()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["init_scope"] = sess.run([a, b])
            out["init_var"] = sess.run([x, c])
        out["errors"] = {
            "missing": err(lambda: tf.train.init_from_checkpoint(ckdir, {"nope": x})),
            "shape": err(lambda: tf.train.init_from_checkpoint(ckdir, {"old/b": x})),
            "scope_to_var": err(lambda: tf.train.init_from_checkpoint(ckdir, {"old/a": "new/"})),
            "scope_missing": err(lambda: tf.train.init_from_checkpoint(ckdir, {"zzz/": "new/"})),
        }
    found = list(tf.train.checkpoints_iterator(ckdir, timeout=0.2))
    out["iterator"] = [os.path.basename(p) for p in found]
    out["iterator_empty"] = list(tf.train.checkpoints_iterator(os.path.join(tmp, "none"), timeout=0.1))
    mtimes = tf.train.get_checkpoint_mtimes([path, path2, os.path.join(ckdir, "missing")])
    out["mtimes"] = [len(mtimes), all(isinstance(m, float) and m > 1e9 for m in mtimes)]
    return out


def global_steps_and_loops(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        out["assert_ok"] = str(tf.train.assert_global_step(gs))
        out["assert_tensor_ok"] = str(tf.train.assert_global_step(tf.constant(3)))
        out["assert_float"] = err(lambda: tf.train.assert_global_step(tf.constant(1.0)))
        out["assert_vector"] = err(lambda: tf.train.assert_global_step(tf.constant([1, 2])))
        out["assert_python"] = err(lambda: tf.train.assert_global_step(3))
        inc = tf.assign_add(gs, 1)

        class Supervisor:
            """The two methods basic_train_loop uses; the first session is aborted once."""

            def __init__(self):
                self.sessions = 0
                self.sess = None

            @contextlib.contextmanager
            def managed_session(self, master):
                self.sessions += 1
                with tf.Session(master) as sess:
                    self.sess = sess
                    sess.run(tf.global_variables_initializer())
                    yield sess

            def should_stop(self):
                return self.sess.run(gs) >= 3

        def step(sess, amount, raise_at=None):
            value = sess.run(inc)
            if value == raise_at and sup.sessions == 1:
                raise tf.errors.AbortedError(None, None, "aborted")
            steps.append((sup.sessions, int(value) * amount))

        sup, steps = Supervisor(), []
        tf.train.basic_train_loop(sup, step, args=[10], kwargs={"raise_at": 2})
        out["loop_steps"] = steps
        out["loop_sessions"] = sup.sessions
    return out


def initializers(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(7)
        ortho = {
            "square": tf.orthogonal_initializer()([6, 6]),
            "wide": tf.initializers.orthogonal(gain=2.0)([3, 7]),
            "conv": tf.orthogonal_initializer(seed=3)([2, 2, 3, 5]),
            "f64": tf.orthogonal_initializer(dtype=tf.float64)([4, 3]),
        }
        ident = {"square": tf.initializers.identity()([3, 3]), "rect": tf.initializers.identity(gain=3.0)([2, 4]),
                 "f64": tf.initializers.identity(dtype=tf.float64)([2, 2]), "i_dtype": tf.initializers.identity()(
                     [2, 3], dtype=tf.float64)}
        shape = [400, 300]
        var_inits = {
            "he_normal": (tf.initializers.he_normal(seed=1), 2.0 / 400),
            "he_uniform": (tf.initializers.he_uniform(seed=1), 2.0 / 400),
            "lecun_normal": (tf.initializers.lecun_normal(seed=1), 1.0 / 400),
            "lecun_uniform": (tf.initializers.lecun_uniform(seed=1), 1.0 / 400),
            "uus": (tf.uniform_unit_scaling_initializer(factor=1.5, seed=1), 1.5 ** 2 / 400),
            "uus_ns": (tf.initializers.uniform_unit_scaling(), 1.0 / 400),
        }
        drawn = {k: init(shape) for k, (init, _) in var_inits.items()}
        conv = tf.uniform_unit_scaling_initializer()([3, 3, 8, 4])
        with tf.variable_scope("vs", initializer=tf.orthogonal_initializer()):
            v = tf.get_variable("v", [5, 4])
        out["static"] = {k: [t.dtype.name, t.shape.as_list()] for k, t in {**ortho, **ident, **drawn}.items()}
        out["he_config"] = [tf.initializers.he_normal().scale, tf.initializers.he_normal().mode,
                            tf.initializers.he_uniform().distribution, tf.initializers.lecun_normal().scale]
        out["errors"] = {
            "ortho_1d": err(lambda: tf.orthogonal_initializer()([3])),
            "ortho_int": err(lambda: tf.orthogonal_initializer(dtype=tf.int32)),
            "ident_3d": err(lambda: tf.initializers.identity()([2, 2, 2])),
            "uus_int": err(lambda: tf.uniform_unit_scaling_initializer(dtype=tf.int32)),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, i, d, cv, vv = sess.run([ortho, ident, drawn, conv, v])
    out["identity"] = i
    props = {}
    for k, q in o.items():
        m = q.reshape(-1, q.shape[-1])
        gain = 2.0 if k == "wide" else 1.0
        small = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
        props[k] = bool(np.allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5))
    props["vs"] = bool(np.allclose(vv.T @ vv, np.eye(4), atol=1e-5))
    out["orthogonal"] = props
    stats = {}
    for k, (_, variance) in var_inits.items():
        x = d[k]
        stats[k] = [bool(abs(x.var() / variance - 1) < 0.05), bool(abs(x.mean()) < 0.01)]
        if "uniform" in k or k.startswith("uus"):
            stats[k].append(bool(np.abs(x).max() <= np.sqrt(3 * variance) + 1e-6))
    stats["uus_conv_bound"] = bool(np.abs(cv).max() <= np.sqrt(3.0 / 72) + 1e-6 and np.abs(cv).max() > 0.1)
    out["stats"] = stats
    return out


def run(tf, np):
    tmp = tempfile.mkdtemp()
    try:
        return {"optimizers": optimizers(tf, np), "ema": moving_averages(tf, np, tmp), "decays": decays(tf, np),
                "checkpoints": checkpoints(tf, np, tmp), "loops": global_steps_and_loops(tf, np),
                "initializers": initializers(tf, np)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

"""tf.metrics: streaming values over three batches, reset by local_variables_initializer;
names of values, updates and local variables; collections, weights, dtypes, shapes, errors.
(Update ops of the count metrics are not named here: TF 2's compat.v1 makes resource
variables, whose assign_add is an AssignAddVariableOp, graphrt's a ref AssignAdd.)"""


def err(fn, message=True):
    try:
        fn()
    except Exception as e:
        return type(e).__name__ + (": " + str(e).splitlines()[0] if message else "")
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(3)
    n, c = 8, 4
    batches = []
    for _ in range(3):
        batches.append({"lab": rng.randint(0, 2, n).astype(np.int64), "prob": rng.rand(n).astype(np.float32),
                        "cls": rng.randint(0, c, n).astype(np.int64), "logits": rng.rand(n, c).astype(np.float32),
                        "y": rng.randn(n, 3).astype(np.float32), "yhat": rng.randn(n, 3).astype(np.float32),
                        "w": rng.randint(0, 3, n).astype(np.float32),
                        "multi": rng.randint(0, c + 1, (n, 2)).astype(np.int64)})
    g = tf.Graph()
    out = {}
    with g.as_default():
        lab = tf.placeholder(tf.int64, [None])
        prob = tf.placeholder(tf.float32, [None])
        cls = tf.placeholder(tf.int64, [None])
        logits = tf.placeholder(tf.float32, [None, c])
        y = tf.placeholder(tf.float32, [None, 3])
        yhat = tf.placeholder(tf.float32, [None, 3])
        w = tf.placeholder(tf.float32, [None])
        multi = tf.placeholder(tf.int64, [None, 2])
        pred_cls = tf.argmax(logits, 1)
        pred_bin = tf.greater(prob, 0.5)
        unit = tf.nn.l2_normalize(y, 1)
        unit_hat = tf.nn.l2_normalize(yhat, 1)
        thr = [0.25, 0.5, 0.75]
        m = {
            "accuracy": tf.metrics.accuracy(cls, pred_cls),
            "accuracy_w": tf.metrics.accuracy(cls, pred_cls, weights=w, name="acc_w"),
            "mean": tf.metrics.mean(y),
            "mean_w": tf.metrics.mean(prob, weights=w),
            "mean_tensor": tf.metrics.mean_tensor(tf.reduce_mean(y, 0)),
            "auc": tf.metrics.auc(lab, prob),
            "auc_pr": tf.metrics.auc(lab, prob, curve="PR", num_thresholds=50),
            "auc_pr_careful": tf.metrics.auc(lab, prob, curve="PR", summation_method="careful_interpolation"),
            "auc_min": tf.metrics.auc(lab, prob, weights=w, summation_method="minoring", num_thresholds=20),
            "auc_maj": tf.metrics.auc(lab, prob, summation_method="majoring", thresholds=[0.3, 0.1, 0.6]),
            "precision": tf.metrics.precision(lab, pred_bin),
            "recall": tf.metrics.recall(lab, pred_bin, weights=w),
            "mse": tf.metrics.mean_squared_error(y, yhat),
            "rmse": tf.metrics.root_mean_squared_error(y, yhat, weights=w[:, None]),
            "mae": tf.metrics.mean_absolute_error(y, yhat),
            "fp": tf.metrics.false_positives(lab, pred_bin),
            "fn": tf.metrics.false_negatives(lab, pred_bin, weights=w),
            "tp": tf.metrics.true_positives(lab, pred_bin),
            "tn": tf.metrics.true_negatives(lab, pred_bin),
            "tp_thr": tf.metrics.true_positives_at_thresholds(lab, prob, thr),
            "fp_thr": tf.metrics.false_positives_at_thresholds(lab, prob, thr, weights=w),
            "tn_thr": tf.metrics.true_negatives_at_thresholds(lab, prob, thr),
            "fn_thr": tf.metrics.false_negatives_at_thresholds(lab, prob, thr),
            "precision_thr": tf.metrics.precision_at_thresholds(lab, prob, thr),
            "recall_thr": tf.metrics.recall_at_thresholds(lab, prob, thr, weights=w),
            "mean_iou": tf.metrics.mean_iou(cls, pred_cls, c),
            "mean_iou_w": tf.metrics.mean_iou(cls, pred_cls, c, weights=w),
            "per_class": tf.metrics.mean_per_class_accuracy(cls, pred_cls, c),
            "relative": tf.metrics.mean_relative_error(y, yhat, normalizer=tf.abs(y) + 0.5),
            "cosine": tf.metrics.mean_cosine_distance(unit, unit_hat, dim=1),
            "below": tf.metrics.percentage_below(prob, 0.3, weights=w),
            "p_at_1": tf.metrics.precision_at_k(cls, logits, 1),
            "p_at_2_multi": tf.metrics.precision_at_k(multi, logits, 2),
            "p_at_2_class": tf.metrics.precision_at_k(multi, logits, 2, class_id=1),
            "r_at_2": tf.metrics.recall_at_k(multi, logits, 2, weights=w),
            "r_at_3_class": tf.metrics.recall_at_k(cls, logits, 3, class_id=2),
            "p_top_k": tf.metrics.precision_at_top_k(cls, tf.nn.top_k(logits, 2)[1]),
            "r_top_k": tf.metrics.recall_at_top_k(multi, tf.cast(tf.nn.top_k(logits, 3)[1], tf.int64), k=3),
            "sens": tf.metrics.sensitivity_at_specificity(lab, prob, 0.6, num_thresholds=11),
            "spec": tf.metrics.specificity_at_sensitivity(lab, prob, 0.4, num_thresholds=11),
            "ap_at_2": tf.metrics.average_precision_at_k(multi, logits, 2),
            "ap_at_2_in_range": tf.metrics.average_precision_at_k(tf.minimum(multi, c - 1), logits, 2),
            "ap_at_3_w": tf.metrics.average_precision_at_k(cls, logits, 3, weights=w),
        }
        values = {k: v for k, (v, _) in m.items()}
        updates = {k: u for k, (_, u) in m.items()}
        out["value_names"] = {k: v.name for k, v in values.items()}
        out["update_names"] = {k: u.name for k, u in updates.items()
                               if k not in ("fp", "fn", "tp", "tn", "tp_thr", "fp_thr", "tn_thr", "fn_thr",
                                            "mean_iou", "mean_iou_w")}
        out["dtypes"] = {k: v.dtype.name for k, v in values.items()}
        out["shapes"] = {k: str(v.shape) for k, v in values.items()}
        out["update_shapes"] = {k: str(u.shape) for k, u in updates.items()}
        out["local_variables"] = [v.name for v in tf.local_variables()]
        out["metric_variables"] = [v.name for v in g.get_collection(tf.GraphKeys.METRIC_VARIABLES)]
        out["global_variables"] = [v.name for v in tf.global_variables()]
        out["variable_dtypes"] = [v.dtype.base_dtype.name for v in tf.local_variables()]
        vc, uc = tf.metrics.mean(prob, metrics_collections=["my_values"], updates_collections=["my_updates"],
                                 name="collected")
        out["collections"] = [[t.name for t in g.get_collection("my_values")],
                              [t.name for t in g.get_collection("my_updates")]]
        init = tf.local_variables_initializer()
        out["errors"] = {
            "shape": err(lambda: tf.metrics.accuracy(tf.constant([1, 0, 1]), tf.constant([1, 0]))),
            # (up to the names of the tensors TF converts the inputs to)
            "weights": err(lambda: tf.metrics.mean([1.0, 2.0], weights=[1.0, 2.0, 3.0])).split(" Received")[0],
            "weights_rank": err(lambda: tf.metrics.true_positives(lab, pred_bin, weights=tf.ones([4, 1, 1]))),
            "curve": err(lambda: tf.metrics.auc(lab, prob, curve="XX")),
            "summation": err(lambda: tf.metrics.auc(lab, prob, summation_method="XX")),
            "specificity": err(lambda: tf.metrics.sensitivity_at_specificity(lab, prob, 1.5)),
            "sensitivity": err(lambda: tf.metrics.specificity_at_sensitivity(lab, prob, -0.5)),
            "k": err(lambda: tf.metrics.average_precision_at_k(cls, logits, 0)),
            "label_dtype": err(lambda: tf.metrics.precision_at_k(tf.cast(cls, tf.int32), logits, 1)),
            "labels_rank": err(lambda: tf.metrics.recall_at_k(tf.zeros([2, 3, 4], tf.int64), logits, 1)),
            "prob_range": err(lambda: tf.metrics.auc([1, 0], tf.constant([0.5, 1.5])), message=False),
        }
        bad_prob_v, bad_prob_u = tf.metrics.auc(lab, prob, name="bad_prob")
    with tf.Session(graph=g) as sess:
        sess.run(init)
        out["initial"] = sess.run(values)
        steps = []
        for b in batches:
            feed = {lab: b["lab"], prob: b["prob"], cls: b["cls"], logits: b["logits"], y: b["y"],
                    yhat: b["yhat"], w: b["w"], multi: b["multi"]}
            steps.append(sess.run(updates, feed))
        out["updates"] = steps
        out["final"] = sess.run(values)
        sess.run(init)
        out["reset"] = sess.run({k: values[k] for k in ("accuracy", "auc", "tp_thr", "mean_iou", "ap_at_2")})
        out["bad_prob"] = err(lambda: sess.run(bad_prob_u, {lab: [1, 0], prob: [0.5, 1.5]}), message=False)
    return out

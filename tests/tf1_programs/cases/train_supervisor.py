"""The rest of TF1's tf.train: `Supervisor` (a chief trains a tiny model in a temporary logdir with
its checkpoint, summary and step-counter threads and the graph's queue runners, stops; a new
Supervisor restores the latest checkpoint and continues; errors from the block; non-chief and
no-logdir errors), the conditional batchers `maybe_batch`, `maybe_batch_join`,
`maybe_shuffle_batch`, `maybe_shuffle_batch_join` (scalar and vector `keep_input`),
`warm_start` with `VocabInfo`, `remove_checkpoint`, `generate_checkpoint_state_proto`,
`GlobalStepWaiterHook`, `ProfilerHook`, and the `ClusterDef`/`JobDef`/`ServerDef` protos.

Only values and step numbers are compared, never paths or times. The Supervisor's checkpoint
thread saves once as it starts; the program waits for that checkpoint before training, so which
checkpoints exist does not depend on thread timing. Shuffling batchers draw from numpy in graphrt,
so they are compared by invariants (which elements, batch shapes), never their order.
"""
import os
import shutil
import tempfile
import time


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def _wait_for_checkpoint(tf, logdir):
    deadline = time.time() + 30
    while tf.train.latest_checkpoint(logdir) is None and time.time() < deadline:
        time.sleep(0.01)


def _model(tf, np):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        init = tf.placeholder(tf.float32, [2], name="init_value")
        w = tf.Variable(init, name="w")
        seen = tf.Variable(0, name="seen", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        loss = tf.reduce_sum(tf.square(w - [3.0, -1.0]))
        tf.summary.scalar("loss", loss)
        with tf.control_dependencies([tf.assign_add(seen, 1)]):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return g, init, {"gs": gs, "w": w, "seen": seen, "loss": loss, "train": train}


def supervisor(tf, np, tmp):
    out = {}
    logdir = os.path.join(tmp, "sv")
    g, init, m = _model(tf, np)
    sv = tf.train.Supervisor(graph=g, logdir=logdir, init_feed_dict={init: np.array([1.0, 2.0], np.float32)},
                             save_model_secs=3600, save_summaries_secs=3600)
    out["props"] = {"is_chief": sv.is_chief, "save_path": os.path.basename(sv.save_path),
                    "global_step": sv.global_step.name, "init_op": sv.init_op.name,
                    "has_summary_op": sv.summary_op is not None, "saver": type(sv.saver).__name__,
                    "secs": [sv.save_model_secs, sv.save_summaries_secs], "finalized": g.finalized,
                    "ready_for_local_init": str(sv.ready_for_local_init_op),
                    "session_manager": type(sv.session_manager).__name__, "coord": type(sv.coord).__name__}

    def add_op():
        with g.as_default():
            tf.constant(1.0)
    out["add_op_after"] = err(add_op)
    ticks = []
    with sv.managed_session() as sess:
        _wait_for_checkpoint(tf, logdir)
        out["ready"] = sess.run(sv.ready_op).tolist()
        out["start"] = sess.run([m["gs"], m["w"], m["seen"]])
        sv.loop(0.01, lambda: ticks.append(1))
        losses = []
        while not sv.should_stop():
            losses.append(sess.run([m["loss"], m["train"]])[0])
            if sess.run(m["gs"]) >= 5:
                sv.request_stop()
        out["losses1"] = losses
        sv.summary_computed(sess, sess.run(sv.summary_op))
        out["end1"] = sess.run([m["gs"], m["w"], m["seen"]])
        out["saved"] = os.path.basename(sv.saver.save(sess, sv.save_path, global_step=sv.global_step))
    out["stopped"] = sv.should_stop()
    out["looped"] = len(ticks) >= 1
    out["files"] = sorted(f for f in os.listdir(logdir) if f.startswith("model.ckpt") or f in ("graph.pbtxt",
                                                                                             "checkpoint"))
    out["events"] = any(f.startswith("events.out.tfevents") for f in os.listdir(logdir))

    # A new Supervisor of the same model restores the latest checkpoint and continues.
    g, init, m = _model(tf, np)
    sv = tf.train.Supervisor(graph=g, logdir=logdir, summary_op=None, save_model_secs=0)
    with sv.managed_session() as sess:
        out["restored"] = sess.run([m["gs"], m["w"], m["seen"]])
        out["losses2"] = [sess.run([m["loss"], m["train"]])[0] for _ in range(3)]
        out["end2"] = sess.run([m["gs"], m["w"], m["seen"]])
        sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    state = tf.train.get_checkpoint_state(logdir)
    out["state"] = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
    out["latest"] = os.path.basename(tf.train.latest_checkpoint(logdir))

    # Errors from the block come out of it after the stop; OutOfRangeError is a clean end.
    def raise_in_block(exc):
        g, init, m = _model(tf, np)
        sv = tf.train.Supervisor(graph=g, init_feed_dict={init: np.zeros(2, np.float32)})
        with sv.managed_session() as sess:
            sess.run(m["train"])
            raise exc
    out["block_error"] = err(lambda: raise_in_block(ValueError("boom")))
    out["block_out_of_range"] = err(lambda: raise_in_block(tf.errors.OutOfRangeError(None, None, "done")))

    # Without a logdir: no services, no summary writer.
    g, init, m = _model(tf, np)
    sv = tf.train.Supervisor(graph=g, init_feed_dict={init: np.zeros(2, np.float32)})
    sess = sv.prepare_or_wait_for_session("")
    out["no_logdir"] = {"save_path": str(sv.save_path), "writer": str(sv.summary_writer),
                        "services": str(sv.start_standard_services(sess)), "step": sess.run(m["gs"]),
                        "summary_computed": err(lambda: sv.summary_computed(sess, b""))}
    sv.stop()
    sess.close()

    # A non-chief needs every variable placed; it does not write.
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
            tf.Variable(1.0, name="v")
    sv = tf.train.Supervisor(graph=g, is_chief=False, logdir=logdir)
    out["nonchief"] = [str(sv.save_path), str(sv.summary_writer), str(sv.save_model_secs),
                       err(lambda: sv.start_standard_services(None))]
    return out


def supervisor_queues(tf, np):
    """The managed session starts the graph's queue runners and stops them with the services."""
    g = tf.Graph()
    with g.as_default():
        n = tf.train.range_input_producer(7, num_epochs=1, shuffle=False).dequeue()
        batch = tf.train.batch([n * 10], batch_size=3, allow_smaller_final_batch=True)
        total = tf.Variable(0, name="total")
        add = tf.assign_add(total, tf.reduce_sum(batch))
    sv = tf.train.Supervisor(graph=g)
    batches = []
    with sv.managed_session() as sess:
        while not sv.should_stop():
            batches.append(sess.run([batch, add])[0])  # the third run ends with OutOfRangeError
    return {"batches": batches, "stopped": sv.should_stop()}


def _drain(tf, sess, fetch, limit=20):
    got = []
    try:
        for _ in range(limit):
            got.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        pass
    return got


def batchers(tf, np):
    out = {}
    g = tf.Graph()
    with g.as_default():
        n = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        evens = tf.train.maybe_batch([n], tf.equal(n % 2, 0), 2, allow_smaller_final_batch=True)
        rows = tf.constant(np.arange(12).reshape(6, 2))
        ids = tf.train.limit_epochs(tf.constant(np.arange(6)), 1)
        many = tf.train.maybe_batch({"x": rows, "i": ids}, [True, False, True, True, False, True], 3,
                                    enqueue_many=True)
        out["static"] = {"evens": [evens.dtype.name, evens.shape.as_list()],
                         "many": {k: v.shape.as_list() for k, v in many.items()}}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            out["evens"] = _drain(tf, sess, evens)
            out["many"] = sess.run(many)
            coord.request_stop()
            coord.join(threads)
    g = tf.Graph()
    with g.as_default():
        a = tf.train.limit_epochs(tf.constant([1, 2, 3, 4]), 1)
        b = tf.train.limit_epochs(tf.constant([10, 20, 30, 40]), 1)
        joined = tf.train.maybe_batch_join([[a], [b]], tf.constant([True, False, True, True]), 20,
                                           enqueue_many=True, allow_smaller_final_batch=True)
        m = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
        shuffled = tf.train.maybe_shuffle_batch([m], 4, capacity=30, min_after_dequeue=2, keep_input=m < 12,
                                                allow_smaller_final_batch=True, seed=1)
        c = tf.train.limit_epochs(tf.constant([5, 6, 7]), 1)
        d = tf.train.limit_epochs(tf.constant([8, 9, 10]), 1)
        sjoin = tf.train.maybe_shuffle_batch_join([[c], [d]], 10, capacity=10, min_after_dequeue=1,
                                                  keep_input=[True, False, True], enqueue_many=True,
                                                  allow_smaller_final_batch=True, seed=2)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            out["joined"] = sorted(np.concatenate(_drain(tf, sess, joined)).tolist())
            got = _drain(tf, sess, shuffled)
            out["shuffled"] = {"sizes": sorted(len(x) for x in got), "values": sorted(np.concatenate(got).tolist())}
            out["shuffle_join"] = sorted(np.concatenate(_drain(tf, sess, sjoin)).tolist())
            coord.request_stop()
            coord.join(threads)
        x = tf.constant(1.0)
        out["errors"] = {
            "vector_not_many": err(lambda: tf.train.maybe_batch([x], [True], 2)),
            "rank2": err(lambda: tf.train.maybe_batch([x], tf.constant([[True]]), 2, enqueue_many=True)),
            "unknown_rank": err(lambda: tf.train.maybe_batch([x], tf.placeholder(tf.bool), 2)),
            "capacity": err(lambda: tf.train.maybe_shuffle_batch([x], 2, 5, 5, True)),
        }
    return out


def checkpoint_files(tf, np, tmp):
    out = {}
    d = os.path.join(tmp, "rm")
    g = tf.Graph()
    with g.as_default():
        tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            p1 = saver.save(sess, os.path.join(d, "m"), global_step=1)
            saver.save(sess, os.path.join(d, "m"), global_step=2)
    tf.train.remove_checkpoint(p1)
    out["after_remove"] = sorted(os.listdir(d))
    out["exists"] = [tf.train.checkpoint_exists(p1), tf.train.checkpoint_exists(p1[:-1] + "2")]
    tf.train.remove_checkpoint(p1)  # again: nothing left to delete
    rel = tf.train.generate_checkpoint_state_proto("run", "run/m-3", ["run/m-1", "run/m-2"],
                                                   last_preserved_timestamp=5.0)
    out["state_rel"] = [rel.model_checkpoint_path, list(rel.all_model_checkpoint_paths), rel.last_preserved_timestamp]
    ab = tf.train.generate_checkpoint_state_proto("/ckpt", "/ckpt/m-3", ["/ckpt/m-3"],
                                                  all_model_checkpoint_timestamps=[1.0])
    out["state_abs"] = [ab.model_checkpoint_path, list(ab.all_model_checkpoint_paths),
                        list(ab.all_model_checkpoint_timestamps)]
    out["state_bad"] = err(lambda: tf.train.generate_checkpoint_state_proto("/c", "/c/m", ["/c/a"], [1.0]))
    return out


def warm_starting(tf, np, tmp):
    out = {}
    d = os.path.join(tmp, "ws")
    os.makedirs(d)
    with open(os.path.join(d, "old_vocab"), "w") as f:
        f.write("apple\nbanana\ncherry\ndate\n")
    with open(os.path.join(d, "new_vocab"), "w") as f:
        f.write("cherry\nfig\napple\ndate\n")
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("old"):
            tf.get_variable("emb", initializer=np.arange(8, dtype=np.float32).reshape(4, 2))
            tf.get_variable("dense", initializer=np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], np.float32))
        tf.get_variable("w", initializer=np.array([0.5, -0.5], np.float32))
        tf.get_variable("acc", initializer=np.float32(9.0), trainable=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.Saver().save(sess, os.path.join(d, "model"))
    g = tf.Graph()
    with g.as_default():
        emb = tf.get_variable("emb", [5, 2], initializer=tf.ones_initializer())
        dense = tf.get_variable("dense", [2, 4], initializer=tf.ones_initializer())
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        acc = tf.get_variable("acc", [], initializer=tf.zeros_initializer(), trainable=False)
        other = tf.get_variable("other", [2], initializer=tf.constant_initializer(7.0))
        tf.train.warm_start(
            d, vars_to_warm_start=["emb", "dense", "w", "acc"],
            var_name_to_vocab_info={
                "emb": tf.train.VocabInfo(os.path.join(d, "new_vocab"), 4, 1, os.path.join(d, "old_vocab"),
                                          backup_initializer=tf.random_uniform_initializer(-1.0, -1.0)),
                "dense": tf.train.VocabInfo(os.path.join(d, "new_vocab"), 4, 0, os.path.join(d, "old_vocab"),
                                            old_vocab_size=3, axis=1)},
            var_name_to_prev_var_name={"emb": "old/emb", "dense": "old/dense"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["list"] = sess.run([emb, dense, w, acc, other])
    g = tf.Graph()
    with g.as_default():
        w = tf.get_variable("w", [2])
        acc = tf.get_variable("acc", [], trainable=False)
        tf.train.warm_start(ckpt, vars_to_warm_start=".*")  # trainable variables only
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["regex"] = [sess.run(w), float(sess.run(acc)) != 9.0]
        out["errors"] = {
            "unused_prev": err(lambda: tf.train.warm_start(ckpt, "w", var_name_to_prev_var_name={"nope": "w"})),
            "unused_vocab": err(lambda: tf.train.warm_start(ckpt, "w", var_name_to_vocab_info={
                "nope": tf.train.VocabInfo("a", 1, 0, "b")})),
            "bad_type": err(lambda: tf.train.warm_start(ckpt, vars_to_warm_start=3)),
            "mixed_list": err(lambda: tf.train.warm_start(ckpt, vars_to_warm_start=["w", w])),
            "axis": err(lambda: tf.train.VocabInfo("a", 1, 0, "b", axis=2)),
        }
    out["vocab_info"] = list(tf.train.VocabInfo("a", 3, 1, "b")._asdict().items())
    return out


def _writer_cache(tf):
    # ProfilerHook's writer lives in TF's tf.summary.FileWriterCache, graphrt's tf.train.SummaryWriterCache;
    # closing it ends the writer's thread.
    return getattr(tf.summary, "FileWriterCache", None) or tf.train.SummaryWriterCache


def hooks(tf, np, tmp):
    out = {}
    d = os.path.join(tmp, "prof")
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        step = tf.assign_add(gs, 1)
        jump = tf.assign(gs, 4)
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(jump))
        waiter = tf.train.GlobalStepWaiterHook(3)
        profiler = tf.train.ProfilerHook(save_steps=2, output_dir=d)
        with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold),
                                       hooks=[waiter, profiler, tf.train.GlobalStepWaiterHook(0)]) as sess:
            out["steps"] = [sess.run(step) for _ in range(5)]
    _writer_cache(tf).clear()
    names = sorted(f for f in os.listdir(d) if f.startswith("timeline"))
    out["timelines"] = names
    with open(os.path.join(d, names[0])) as f:
        out["trace_has_events"] = '"traceEvents"' in f.read()
    g = tf.Graph()
    with g.as_default():
        out["no_global_step"] = [err(tf.train.GlobalStepWaiterHook(1).begin),
                                 err(tf.train.ProfilerHook(save_steps=1, output_dir=d).begin)]
        out["profiler_args"] = err(lambda: tf.train.ProfilerHook(output_dir=d))
    _writer_cache(tf).clear()
    return out


def protos(tf, np):
    cluster = tf.train.ClusterDef(job=[tf.train.JobDef(name="ps", tasks={0: "localhost:2222"}),
                                       tf.train.JobDef(name="worker", tasks={0: "a:1", 1: "b:2"})])
    parsed = tf.train.ClusterDef.FromString(cluster.SerializeToString())
    return {"bytes": np.frombuffer(cluster.SerializeToString(), np.uint8),
            "jobs": [(j.name, sorted(j.tasks.items())) for j in parsed.job]}


def run(tf, np):
    tmp = tempfile.mkdtemp()
    try:
        return {"supervisor": supervisor(tf, np, tmp), "queues": supervisor_queues(tf, np),
                "batchers": batchers(tf, np), "checkpoint_files": checkpoint_files(tf, np, tmp),
                "warm_start": warm_starting(tf, np, tmp), "hooks": hooks(tf, np, tmp), "protos": protos(tf, np)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

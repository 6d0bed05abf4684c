"""tf.distribute.pipeline: GPipe and 1F1B give the unpipelined step, follow
their schedule, and keep the activations the schedule says."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.runtime.step_stats import DeviceStepStats, NodeExecStats, StepStats

K, BATCH, WIDTH = 4, 16, 8


def _stage(k, width=WIDTH):
    def fn(h):
        return tf.layers.dense(h, width, tf.nn.tanh, name=f"fc{k}",
                               kernel_initializer=tf.glorot_uniform_initializer(seed=k),
                               bias_initializer=tf.constant_initializer(0.01 * k))
    return fn


def _loss(out, labels):
    return tf.reduce_mean(tf.square(out - labels))


def _train(micro_batches=None, schedule="gpipe", device_type="CPU", steps=2, sim_options=None):
    """Parameters after `steps` steps; micro_batches=None trains the unpipelined model."""
    g = tf.Graph()
    rng = np.random.RandomState(0)
    with g.as_default():
        x = tf.constant(rng.randn(BATCH, WIDTH).astype(np.float32))
        y = tf.constant(rng.randn(BATCH, WIDTH).astype(np.float32))
        fns = [_stage(k) for k in range(K)]
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        if micro_batches is None:
            h = x
            for fn in fns:
                h = fn(h)
            loss = _loss(h, y)
            train = opt.minimize(loss)
        else:
            devices = [f"/device:{device_type}:{k}" for k in range(K)]
            pipe = tf.distribute.pipeline(fns, devices, inputs=x, labels=y, loss_fn=_loss,
                                          micro_batches=micro_batches, schedule=schedule)
            loss, train = pipe.loss, pipe.minimize(opt)
        config = tf.ConfigProto(device_count={device_type: K}, sim_options=sim_options or {})
        with tf.Session(graph=g, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss])[1] for _ in range(steps)]
            return losses, sess.run(tf.trainable_variables())


@pytest.fixture(scope="module")
def unpipelined():
    return _train()


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("micro_batches", [1, 4, 8])
def test_pipeline_gives_the_parameters_of_the_unpipelined_model(unpipelined, schedule, micro_batches):
    losses, params = _train(micro_batches, schedule)
    np.testing.assert_allclose(losses, unpipelined[0], rtol=1e-5)
    assert len(params) == 2 * K
    for got, want in zip(params, unpipelined[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sim_options", [None, {"kernel_launch_latency": 1e-4, "copy_latency": 1e-4}],
                         ids=["unmodelled", "modelled"])
def test_pipeline_on_sim_devices_gives_the_same_parameters(unpipelined, sim_options):
    # With modelled costs a kernel's outputs reach the executor before its modelled time has passed,
    # ready at an event: the values must not change.
    losses, params = _train(4, "1f1b", device_type="SIM", sim_options=sim_options)
    np.testing.assert_allclose(losses, unpipelined[0], rtol=1e-5)
    for got, want in zip(params, unpipelined[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_schedules():
    gpipe = tf.distribute.schedule_tasks("gpipe", 3, 4)
    assert gpipe[1] == [("F", 0), ("F", 1), ("F", 2), ("F", 3), ("B", 3), ("B", 2), ("B", 1), ("B", 0)]
    one_f_one_b = tf.distribute.schedule_tasks("1f1b", 3, 4)
    assert one_f_one_b[0] == [("F", 0), ("F", 1), ("F", 2), ("B", 0), ("F", 3), ("B", 1), ("B", 2), ("B", 3)]
    assert one_f_one_b[2] == [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2), ("F", 3), ("B", 3)]
    for k, tasks in enumerate(one_f_one_b):
        in_flight = peak = 0
        for kind, _ in tasks:
            in_flight += 1 if kind == "F" else -1
            peak = max(peak, in_flight)
        assert peak == 3 - k  # at most K - k micro-batches of activations on stage k


def _gate_order(schedule, micro_batches=4):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.ones([BATCH, WIDTH], np.float32))
        pipe = tf.distribute.pipeline([_stage(k) for k in range(K)], [f"/device:CPU:{k}" for k in range(K)],
                                      inputs=x, labels=x, loss_fn=_loss, micro_batches=micro_batches,
                                      schedule=schedule)
        train = pipe.minimize(tf.train.GradientDescentOptimizer(0.1))
        with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": K})) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(train, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    order = {}
    for dev in md.step_stats.dev_stats:
        gates = [ns for ns in dev.node_stats if ns.op == "Identity" and "/stage" in ns.node_name]
        seen = []
        for ns in sorted(gates, key=lambda s: (s.all_start_micros, s.node_name)):
            task = ns.node_name.split("/")[2]
            if task not in seen:
                seen.append(task)
        order[int(dev.device.rsplit(":", 1)[1])] = seen
    return pipe.tasks, order


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_each_device_runs_its_tasks_in_schedule_order(schedule):
    tasks, order = _gate_order(schedule)
    for k in range(K):
        assert order[k] == [f"{kind}{i}" for kind, i in tasks[k]]


def _stage0_peak(schedule, micro_batches, rows=256, width=32):
    """Stage 0's peak allocator bytes above what it held before, for micro-batches of `rows` rows."""
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.ones([rows * micro_batches, width], np.float32))
        y = tf.constant(np.ones([rows * micro_batches, width], np.float32))
        fns = [_stage(k, width) for k in range(K)]
        pipe = tf.distribute.pipeline(fns, [f"/device:SIM:{k}" for k in range(K)], inputs=x, labels=y,
                                      loss_fn=_loss, micro_batches=micro_batches, schedule=schedule)
        grads = [gr for gr, _ in pipe.grads_and_vars]
        with tf.Session(graph=g, config=tf.ConfigProto(device_count={"SIM": K})) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(grads)
            allocator = sess.device("/job:localhost/replica:0/task:0/device:SIM:0").executor.allocator
            before = allocator.stats().bytes_in_use
            allocator.clear_stats()
            sess.run(grads)
            return allocator.stats().peak_bytes_in_use - before


def test_1f1b_keeps_k_micro_batches_alive_and_gpipe_all_of_them():
    # Each micro-batch keeps two tensors on stage 0 (a tanh layer) for its backward: its input piece
    # (the MatMul's gradient reads it) and its tanh output. Weights are small next to them.
    micro_batch = 2 * 256 * 32 * 4
    gpipe = _stage0_peak("gpipe", 16)
    one_f_one_b = {m: _stage0_peak("1f1b", m) for m in (8, 16)}
    # GPipe: all M forwards run before the first backward, and every one keeps its two tensors.
    assert gpipe >= 16 * micro_batch
    # 1F1B: K = 4 micro-batches in flight, plus the next one's input piece (prefetched), one
    # backward's temporaries with its incoming gradient and the next gradient already received
    # (2.5 micro-batches' worth), plus a micro-batch of margin for frees that lag on a loaded machine.
    assert one_f_one_b[16] <= (K + 0.5 + 2 + 1) * micro_batch
    assert one_f_one_b[16] - one_f_one_b[8] <= 1.5 * micro_batch  # bounded by K, not by M


def test_bubble_fraction_from_step_stats():
    def stats(device, spans):
        return DeviceStepStats(device, [NodeExecStats(f"op{i}", "MatMul", s, e, 0, "", stream="compute")
                                        for i, (s, e) in enumerate(spans)])
    step = StepStats([stats("/job:localhost/replica:0/task:0/device:SIM:0", [(0, 10), (5, 20)]),
                      stats("/job:localhost/replica:0/task:0/device:SIM:1", [(20, 40)])])
    # busy 20 + 20 of 2 x 40
    assert tf.distribute.bubble_fraction(step, ["/device:SIM:0", "/device:SIM:1"]) == pytest.approx(0.5)
    assert tf.distribute.textbook_bubble(4, 4) == pytest.approx(3 / 7)
    with pytest.raises(tf.errors.InvalidArgumentError, match="FULL_TRACE"):
        tf.distribute.bubble_fraction(StepStats(), ["/device:SIM:0"])


def test_micro_batches_that_do_not_divide_the_batch_are_refused(graph):
    x = tf.placeholder(tf.float32, [10, WIDTH], name="images")
    with pytest.raises(tf.errors.InvalidArgumentError, match="4 micro-batches do not divide the batch of 10 of "
                                                             "inputs images:0"):
        tf.distribute.pipeline([_stage(0), _stage(1)], ["/cpu:0", "/cpu:1"], inputs=x, micro_batches=4)


def test_stages_whose_shapes_do_not_chain_are_refused(graph):
    x = tf.placeholder(tf.float32, [8, WIDTH])

    def wrong_width(h):
        return tf.matmul(h, tf.ones([WIDTH + 1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"pipeline stage 1 \(wrong_width\) cannot take its "
                                                             r"input of shape \(2, 8\) from stage 0"):
        tf.distribute.pipeline([_stage(0), wrong_width], ["/cpu:0", "/cpu:1"], inputs=x, micro_batches=4)


def test_other_bad_arguments_are_refused(graph):
    x = tf.placeholder(tf.float32, [8, WIDTH])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one device per stage: 2 stages, 1 devices"):
        tf.distribute.pipeline([_stage(0), _stage(1)], ["/cpu:0"], inputs=x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="schedule must be one of"):
        tf.distribute.pipeline([_stage(0)], ["/cpu:0"], inputs=x, schedule="interleaved")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"stage 0 \(fn\) is the last: it \(or loss_fn\) "
                                                             "must return a scalar loss"):
        tf.distribute.pipeline([_stage(0)], ["/cpu:0"], inputs=x, micro_batches=2)


def test_the_batch_is_split_on_the_host_not_on_the_first_stage(graph):
    x = tf.placeholder(tf.float32, [8, WIDTH], name="images")
    y = tf.placeholder(tf.float32, [8, WIDTH], name="targets")
    tf.distribute.pipeline([_stage(0), _stage(1)], ["/device:SIM:0", "/device:SIM:1"], inputs=x, labels=y,
                           loss_fn=_loss, micro_batches=4)
    splits = {op.name: op.device for op in graph.get_operations() if op.type == "Split"}
    assert set(splits) == {"pipeline/split_inputs", "pipeline/split_labels"}
    assert all(tf.DeviceSpec.from_string(d).device_type == "CPU" for d in splits.values()), splits


def _ancestors(op):
    seen, stack = set(), [op]
    while stack:
        o = stack.pop()
        for parent in [t.op for t in o.inputs] + list(o.control_inputs):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_every_op_of_a_task_waits_for_the_previous_task_of_its_device(graph, schedule):
    # The gradients of the loss's SquaredDifference read only forward values: without control edges on
    # every op of a backward that nothing else of the task feeds, they ran as soon as the forward had,
    # in the middle of the last stage's next forwards.
    x = tf.placeholder(tf.float32, [BATCH, WIDTH])
    pipe = tf.distribute.pipeline(
        [_stage(k) for k in range(K)], [f"/device:CPU:{k}" for k in range(K)], inputs=x, labels=x,
        loss_fn=lambda out, lab: tf.reduce_mean(tf.squared_difference(out, lab)), micro_batches=4,
        schedule=schedule)
    ops = graph.get_operations()
    checked = 0
    for k, tasks in enumerate(pipe.tasks):
        for (kind0, i0), (kind, i) in zip(tasks, tasks[1:]):
            before = {op for op in ops if op.name.startswith(f"pipeline/stage{k}/{kind0}{i0}/")}
            for op in ops:
                if op.name.startswith(f"pipeline/stage{k}/{kind}{i}/"):
                    assert _ancestors(op) & before, f"{op.name} does not wait for {kind0}{i0}"
                    checked += 1
    assert checked > 200


def test_stage0_computes_no_gradient_for_the_batch():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.ones([BATCH, WIDTH], np.float32))
        pipe = tf.distribute.pipeline([_stage(k) for k in range(2)], ["/device:CPU:0", "/device:CPU:1"], inputs=x,
                                      labels=x, loss_fn=_loss, micro_batches=2)
        train = pipe.minimize(tf.train.GradientDescentOptimizer(0.1))
        with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(train, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    matmul_grads = {}
    for dev in md.step_stats.dev_stats:
        for ns in dev.node_stats:
            if "/B" in ns.node_name and ns.op == "MatMul":
                matmul_grads.setdefault(ns.node_name.split("/")[1], set()).add(ns.node_name.rsplit("/", 1)[1])
    # dense: MatMul_grad/MatMul is the input's gradient (dy W^T), MatMul_1 the kernel's (x^T dy)
    assert matmul_grads == {"stage0": {"MatMul_1"}, "stage1": {"MatMul", "MatMul_1"}}


def test_the_labels_get_no_gradient(graph):
    x = tf.placeholder(tf.float32, [BATCH, WIDTH])
    tf.distribute.pipeline([_stage(k) for k in range(2)], ["/device:CPU:0", "/device:CPU:1"], inputs=x,
                           labels=x, loss_fn=lambda out, lab: tf.reduce_mean(tf.squared_difference(out, lab)),
                           micro_batches=2)
    # SquaredDifference's gradient makes -gx for the labels; no task waits for it, so it never runs.
    negs = [op for op in graph.get_operations() if op.type == "Neg"]
    assert negs and all(not op.outputs[0].consumers() and not op._control_outputs for op in negs)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_a_pipeline_across_two_tasks_gives_the_unpipelined_parameters(unpipelined, schedule):
    # Stages alternate between the tasks of a two-task cluster (servers in this process, over 127.0.0.1):
    # the schedule's gates, the pieces prefetched from the host and the gradients cross the wire.
    from graphrt.distributed.cluster import free_port
    ports = []
    while len(ports) < 2:
        port = free_port()
        if port not in ports:
            ports.append(port)
    cluster = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{p}" for p in ports]})
    servers = [tf.train.Server(cluster, "worker", i) for i in range(2)]
    try:
        g = tf.Graph()
        rng = np.random.RandomState(0)
        with g.as_default():
            with tf.device("/job:worker/task:0/cpu:0"):
                x = tf.constant(rng.randn(BATCH, WIDTH).astype(np.float32))
                y = tf.constant(rng.randn(BATCH, WIDTH).astype(np.float32))
            devices = [f"/job:worker/task:{k % 2}/cpu:0" for k in range(K)]
            pipe = tf.distribute.pipeline([_stage(k) for k in range(K)], devices, inputs=x, labels=y, loss_fn=_loss,
                                          micro_batches=4, schedule=schedule)
            train = pipe.minimize(tf.train.MomentumOptimizer(0.1, 0.9))
            with tf.Session(servers[0].target) as sess:
                sess.run(tf.global_variables_initializer())
                losses = [sess.run([train, pipe.loss])[1] for _ in range(2)]
                params = sess.run(tf.trainable_variables())
    finally:
        for server in servers:
            server.stop()
    np.testing.assert_allclose(losses, unpipelined[0], rtol=1e-5)
    for got, want in zip(params, unpipelined[1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

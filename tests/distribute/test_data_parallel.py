"""DataParallel: same parameters as one device on the full batch, for every
optimizer, bucket size, algorithm and ZeRO stage; mirrors; errors."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.distribute import bucketing, zero

BATCH = 32
RNG = np.random.RandomState(0)
X = RNG.randn(BATCH, 10).astype(np.float32)
Y = RNG.randint(0, 3, BATCH).astype(np.int32)
CPUS = [f"/cpu:{i}" for i in range(4)]

OPTIMIZERS = {
    "sgd_decay": lambda step: tf.train.GradientDescentOptimizer(tf.train.exponential_decay(0.5, step, 5, 0.9)),
    "momentum": lambda step: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda step: tf.train.AdamOptimizer(0.01),
    "rmsprop": lambda step: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "adagrad": lambda step: tf.train.AdagradOptimizer(0.1),
}


def mlp(x, y):
    # explicit op seeds: the same initial values whatever else the graph holds
    h = tf.layers.dense(x, 16, activation=tf.nn.relu, kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    emb = tf.get_variable("emb", [3, 16], initializer=tf.random_normal_initializer(seed=3))
    h = h + tf.nn.embedding_lookup(emb, y) * 0.1  # a sparse (IndexedSlices) gradient too
    logits = tf.layers.dense(h, 3, kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def train(devices, optimizer, steps=20, device_count=None, **kw):
    """Trains mlp for `steps` steps; returns (trainable values, global step, loss, mirror values, dp)."""
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [BATCH, 10], name="x")
        y = tf.placeholder(tf.int32, [BATCH], name="y")
        step = tf.train.get_or_create_global_step()
        dp = None
        if devices is None:
            loss = mlp(x, y)
            train_op = OPTIMIZERS[optimizer](step).minimize(loss, global_step=step)
        else:
            dp = tf.distribute.DataParallel(devices, **kw)
            train_op = dp.minimize(OPTIMIZERS[optimizer](step), mlp, [x, y], global_step=step)
            loss = dp.loss
        variables = tf.trainable_variables()
        mirrors = [m for v in variables for m in dp.mirrors(v)] if dp else []
        config = tf.ConfigProto(device_count=device_count or {"CPU": 4})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train_op, {x: X, y: Y})
            values, step_value, loss_value, mirror_values = sess.run([variables, step, loss, mirrors], {x: X, y: Y})
    return values, step_value, loss_value, mirror_values, dp


@pytest.fixture(scope="module")
def reference():
    return {name: train(None, name) for name in OPTIMIZERS}


def _assert_same_training(got, want):
    values, step, loss, mirrors, dp = got
    for v, w in zip(values, want[0]):
        np.testing.assert_allclose(v, w, rtol=1e-5, atol=1e-6)
    assert step == want[1] == 20
    np.testing.assert_allclose(loss, want[2], rtol=1e-5)
    n = dp.num_replicas
    for k in range(len(values)):  # every replica holds bitwise the same parameters
        for m in mirrors[k * n:(k + 1) * n]:
            assert m.tobytes() == values[k].tobytes()


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("config", [dict(), dict(bucket_bytes=0, algorithm="tree"),
                                    dict(zero_stage=1, gradient_buffers=True),
                                    dict(zero_stage=2, bucket_bytes=100, algorithm="halving_doubling")])
def test_four_replicas_train_like_one_device_on_the_full_batch(reference, optimizer, config):
    _assert_same_training(train(CPUS, optimizer, **config), reference[optimizer])


def test_on_sim_devices_with_three_replicas_and_every_stage(reference):
    # 3 does not divide 32: the batch must split evenly, so train on 30 examples on both sides
    global BATCH, X, Y
    saved = BATCH, X, Y
    BATCH, X, Y = 30, X[:30], Y[:30]
    try:
        want = train(None, "adam", steps=5)
        sims = [f"/device:SIM:{i}" for i in range(3)]
        for stage in (0, 1, 2):
            got = train(sims, "adam", steps=5, device_count={"CPU": 1, "SIM": 3}, zero_stage=stage, bucket_bytes=256)
            for v, w in zip(got[0], want[0]):
                np.testing.assert_allclose(v, w, rtol=1e-5, atol=1e-6)
    finally:
        BATCH, X, Y = saved


def test_the_same_program_twice_gives_bitwise_identical_parameters():
    first = train(CPUS, "adam", steps=5, zero_stage=1)
    second = train(CPUS, "adam", steps=5, zero_stage=1)
    for a, b in zip(first[0], second[0]):
        assert a.tobytes() == b.tobytes()


def test_mirrors_slots_and_owners(graph):
    x = tf.placeholder(tf.float32, [8, 10])
    y = tf.placeholder(tf.int32, [8])
    dp = tf.distribute.DataParallel(["/cpu:0", "/cpu:1"], zero_stage=1)
    opt = tf.train.AdamOptimizer(0.1)
    dp.minimize(opt, mlp, [x, y])
    kernel = graph.get_tensor_by_name("dense/kernel:0").op
    (primary,) = [v for v in tf.trainable_variables() if v.op is kernel]
    mirror = dp.mirrors(primary)[1]
    assert mirror.name == "dense/kernel/replica_1:0" and mirror.device == "/device:CPU:1"
    assert mirror not in tf.trainable_variables() and mirror in tf.global_variables()
    assert len(tf.trainable_variables()) == 5  # two dense layers and the embedding
    # largest first, each to the least loaded replica: the 640-byte kernel alone on replica 0
    assert {v.op.name: r for v, r in dp.owners.items()} == {
        "dense/kernel": 0, "emb": 1, "dense_1/kernel": 1, "dense/bias": 1, "dense_1/bias": 1}
    for v, owner in dp.owners.items():  # only the owner has Adam slots for a variable
        for r, replica_opt in enumerate(dp.optimizers):
            slot = replica_opt.get_slot(dp.mirrors(v)[r], "m")
            assert (slot is not None) == (r == owner)
    assert dp.optimizers[0] is opt and dp.optimizers[1] is not opt
    assert zero.assign_owners([40, 64, 48, 48, 12], 3) == [1, 0, 1, 2, 2]  # 64 | 48+40 | 48+12


def test_buckets_fuse_gradients_in_reverse_order():
    f32 = tf.float32
    specs = [([100], f32), ([10], f32), ([50], f32), ([5], tf.float64), ([20], f32)]
    plan = bucketing.plan_buckets(specs, bucket_bytes=200)
    # reverse order; a bucket closes at >= 200 bytes, and a dtype change starts a new one
    assert [b.indices for b in plan] == [(4,), (3,), (2,), (1, 0)]
    assert [b.nbytes for b in plan] == [80, 40, 200, 440]
    assert [b.indices for b in bucketing.plan_buckets(specs, 0)] == [(4,), (3,), (2,), (1,), (0,)]
    assert [b.indices for b in bucketing.plan_buckets(specs, 1 << 20)] == [(4,), (3,), (2, 1, 0)]


@pytest.mark.parametrize("bucket_bytes,all_reduces", [(0, 5), (200, 3), (1 << 20, 1)])
def test_bucketing_cuts_the_messages_per_step(graph, bucket_bytes, all_reduces):
    x = tf.placeholder(tf.float32, [6, 10])
    y = tf.placeholder(tf.int32, [6])
    dp = tf.distribute.DataParallel(["/cpu:0", "/cpu:1", "/cpu:2"], bucket_bytes=bucket_bytes)
    train_op = dp.minimize(tf.train.GradientDescentOptimizer(0.1), mlp, [x, y])
    assert len(dp.buckets) == all_reduces
    md = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {x: X[:6], y: Y[:6]}, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True), run_metadata=md)
    ring = [t for t in tf.distribute.transfers(md) if "/ring/" in t.recv_node]
    # each ring all-reduce sends 2(N-1) = 4 messages per device
    assert len(ring) == all_reduces * 4 * 3


def test_bad_input(graph):
    x = tf.placeholder(tf.float32, [9, 10], name="x")
    y = tf.placeholder(tf.int32, [9])
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(errors.InvalidArgumentError, match="input x:0 has batch size 9, not divisible by the 2"):
        tf.distribute.DataParallel(["/cpu:0", "/cpu:1"]).minimize(sgd, mlp, [x, y])
    unknown = tf.placeholder(tf.float32, [None, 10], name="unknown_batch")
    uneven = tf.distribute.DataParallel(["/cpu:0", "/cpu:1"]).minimize(
        sgd, lambda x: tf.reduce_mean(tf.matmul(x, tf.get_variable("wu", [10, 1]))), unknown)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(uneven, {unknown: np.ones((4, 10))})
        with pytest.raises(errors.InvalidArgumentError, match=r"(?s)evenly divide.*size = 5.*split_input0"):
            sess.run(uneven, {unknown: np.ones((5, 10))})
    with pytest.raises(errors.InvalidArgumentError, match="listed twice"):
        tf.distribute.DataParallel(["/cpu:0", "/device:CPU:0"])
    with pytest.raises(errors.InvalidArgumentError, match="zero_stage must be 0, 1 or 2"):
        tf.distribute.DataParallel(["/cpu:0"], zero_stage=3)
    with pytest.raises(errors.InvalidArgumentError, match="at least 1 device"):
        tf.distribute.DataParallel([])
    x8 = tf.placeholder(tf.float32, [8, 10])

    def regularized(x):
        w = tf.get_variable("wr", [10, 1], regularizer=tf.nn.l2_loss)
        return tf.reduce_mean(tf.matmul(x, w))
    with pytest.raises(errors.InvalidArgumentError, match="variable wr has a regularizer"):
        tf.distribute.DataParallel(["/cpu:0", "/cpu:1"]).minimize(sgd, regularized, x8)

    def plain_variable(x):
        return tf.reduce_mean(x * tf.Variable(1.0, name="plain"))
    with pytest.raises(errors.InvalidArgumentError, match="plain.* without tf.get_variable"):
        tf.distribute.DataParallel(["/cpu:0", "/cpu:1"]).minimize(sgd, plain_variable, x8)

    def not_scalar(x):
        return tf.matmul(x, tf.get_variable("wv", [10, 1]))
    with pytest.raises(errors.InvalidArgumentError, match="must return a floating scalar"):
        tf.distribute.DataParallel(["/cpu:0", "/cpu:1"]).minimize(sgd, not_scalar, x8)


@pytest.mark.parametrize("stage,bytes_per_param", [(0, 16), (1, 8 + 8 / 4), (2, 4 + 12 / 4)])
def test_zero_model_state_per_device_measured_from_the_allocator(stage, bytes_per_param):
    """Adam, 8 equal variables over 4 SIM devices, gradient buffers kept: what each device's
    allocator holds after a step is 16, 8 + 8/N and 4 + 12/N bytes per parameter."""
    n, layers, width = 4, 8, 64
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [n, width])

        def deep_linear(x):
            for k in range(layers):
                x = tf.matmul(x, tf.get_variable(f"w{k}", [width, width],
                                                 initializer=tf.random_normal_initializer(0.0, 0.1, seed=k)))
            return tf.reduce_mean(tf.square(x))
        dp = tf.distribute.DataParallel([f"/device:SIM:{i}" for i in range(n)], zero_stage=stage, bucket_bytes=0,
                                        gradient_buffers=True)
        train_op = dp.minimize(tf.train.AdamOptimizer(1e-3), deep_linear, x)
        config = tf.ConfigProto(device_count={"CPU": 1, "SIM": n})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(train_op, {x: np.ones((n, width), np.float32)},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    params = layers * width * width
    memory = tf.distribute.device_memory(md)
    assert len(memory) == n
    for device, used in memory.items():
        # the model state is what stays live after the step (Adam's two scalar accumulators aside)
        assert used.live_bytes == pytest.approx(bytes_per_param * params, rel=0.10), device
        assert used.peak_bytes >= used.live_bytes

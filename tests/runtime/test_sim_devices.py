"""SIM devices in sessions: creation and configuration, kernels on the
compute stream over device memory, variables in device memory, errors,
and GPU devices only where cupy and a GPU exist."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.client import local_backend as session_lib
from graphrt.executor import DeviceTensor, SimOptions, get_platform
from graphrt.executor.platforms.sim import SimPlatform
from graphrt.framework import registry
from graphrt.framework.op_builder import apply_op
from graphrt.ops import shape_fns
from graphrt.runtime.accelerator import AcceleratorDevice
from graphrt.runtime.device_kernels import StreamTensor

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
SIM = "/job:localhost/replica:0/task:0/device:SIM:{}"
MiB = 1 << 20


def sim_config(n=1, **kw):
    kw.setdefault("sim_options", SimOptions(memory_bytes=8 * MiB))
    return tf.ConfigProto(device_count={"CPU": 1, "SIM": n}, **kw)


@pytest.fixture
def sent_values(monkeypatch):
    """Every value a step puts into its rendezvous: (tensor name, value)."""
    sent = []
    real = session_lib.LocalRendezvous

    class Recording(real):
        def send(self, key, value, is_dead=False):
            sent.append((key.edge_name, value))
            return super().send(key, value, is_dead)
    monkeypatch.setattr(session_lib, "LocalRendezvous", Recording)
    return sent


def sim_device(sess, i=0):
    return sess.device(SIM.format(i))


# -- devices and configuration ------------------------------------------------------------

def test_device_count_creates_sim_devices_with_their_own_executors():
    with tf.Session(graph=tf.Graph(), config=sim_config(2)) as sess:
        names = [d.name for d in sess.list_devices()]
        assert names == [CPU0, SIM.format(0), SIM.format(1)]
        sims = [sim_device(sess, 0), sim_device(sess, 1)]
        assert all(isinstance(d, AcceleratorDevice) and d.device_type == "SIM" for d in sims)
        assert [d.executor.name for d in sims] == ["sim:0", "sim:1"]
        # Per-session executors, not the platform's shared cache.
        assert all(d.executor is not get_platform("sim").executors().get(i) for i, d in enumerate(sims))
        assert sims[0].memory_limit_bytes == 8 * MiB
        assert sess.list_devices()[1].memory_limit_bytes == 8 * MiB
        with tf.Session(graph=tf.Graph(), config=sim_config(1)) as other:
            assert sim_device(other).executor is not sims[0].executor
        executors = [d.executor for d in sims]
    assert all(e.is_shut_down for e in executors)


def test_sim_options_take_the_executor_spelling_or_a_dict():
    assert tf.SimOptions is SimOptions
    assert tf.ConfigProto().sim_options == SimOptions()
    config = tf.ConfigProto(sim_options={"memory_bytes": 4 * MiB, "copy_latency": 1e-4})
    assert config.sim_options == SimOptions(memory_bytes=4 * MiB, copy_latency=1e-4)
    with pytest.raises(errors.InvalidArgumentError, match="Unknown SimOptions field.*memory_limit_bytes"):
        tf.ConfigProto(sim_options={"memory_limit_bytes": 4 * MiB})
    with pytest.raises(errors.InvalidArgumentError, match="sim_options takes"):
        tf.ConfigProto(sim_options=42)
    config = tf.ConfigProto(device_count={"SIM": 1})
    config.sim_options = {"memory_bytes": 2 * MiB, "kernel_launch_latency": 0.0}  # set after construction
    with tf.Session(graph=tf.Graph(), config=config) as sess:
        options = sim_device(sess).executor.options
        assert options.memory_bytes == 2 * MiB and sim_device(sess).allocator_stats().bytes_limit == 2 * MiB


def test_unplaced_ops_go_to_sim0_and_give_the_cpu_values(graph):
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    w = tf.constant(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), name="w")
    h = tf.nn.relu(tf.matmul(x, w) + 0.25, name="h")
    out = tf.reduce_sum(tf.reshape(h, [-1]) * 2.0, name="out")
    xv = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    with tf.Session(config=tf.ConfigProto()) as cpu:
        want = cpu.run([h, out], {x: xv})
    with tf.Session(config=sim_config()) as sess:
        got = sess.run([h, out], {x: xv})
        placement = sess.plan_for([h, out], {x: xv}).placement
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] and type(got[1]) is type(want[1])
    assert {placement[n] for n in ("MatMul", "add", "h", "Reshape", "out")} == {SIM.format(0)}


# -- device memory --------------------------------------------------------------------------

def test_sim_kernel_outputs_are_device_tensors_in_the_bfc_arena(graph, sent_values):
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    y = tf.tanh(x * 2.0, name="y")
    shape = tf.shape(y, name="shape")
    with tf.Session(config=sim_config()) as sess:
        dev = sim_device(sess)
        before = dev.allocator_stats().num_allocs
        got_y, got_shape = sess.run([y, shape], {x: np.ones((64, 64), np.float32)})
        stats = dev.allocator_stats()
        from_sim = {name: value for name, value in sent_values if name.endswith(("_y", "_shape"))}
        sent_values.clear()
        device_values = [v for n, v in from_sim.items() if n.endswith("_y")]
        assert device_values and all(isinstance(v, StreamTensor) and v.executor is dev.executor
                                     for v in device_values)
        # Shape is a host-memory output (and int32 lives on the host, as in TF).
        assert all(isinstance(v, np.ndarray) for n, v in from_sim.items() if n.endswith("_shape"))
        del from_sim, device_values
        # Only the constant (2.0, uploaded once when the kernel was built) outlives the step.
        assert dev.allocator_stats().bytes_in_use == 256
    np.testing.assert_allclose(got_y, np.tanh(2.0), rtol=1e-6)
    assert list(got_shape) == [64, 64]
    # x came in (h2d), mul and tanh wrote outputs: all in the device's arena.
    assert stats.num_allocs - before >= 3
    assert stats.peak_bytes_in_use >= 2 * 64 * 64 * 4


def test_host_code_cannot_read_sim_memory(graph):
    v = tf.Variable(np.ones(4, np.float32), name="v")
    with tf.Session(config=sim_config()) as sess:
        sess.run(v.initializer)
        state = sim_device(sess).resources.lookup("", "v")
        assert isinstance(state.value, DeviceTensor)
        with pytest.raises(errors.FailedPreconditionError, match="host code cannot read it"):
            state.value.as_array()


def test_int32_and_string_tensors_stay_in_host_memory_on_sim(graph, sent_values):
    with tf.device("/device:SIM:0"):
        n = tf.constant([1, 2, 3], name="n") * 2
        s = tf.constant(["a", "bc"], name="s")
        s2 = tf.identity(s, name="s2")
    with tf.Session(config=sim_config()) as sess:
        got_n, got_s = sess.run([n, s2])
    assert got_n.tolist() == [2, 4, 6] and got_s.tolist() == [b"a", b"bc"]
    assert sent_values and all(isinstance(v, np.ndarray) for _, v in sent_values)


# -- variables ----------------------------------------------------------------------------

def train_mlp(config, device, optimizer, steps=8):
    g = tf.Graph()
    rng = np.random.RandomState(0)
    xs = rng.randn(32, 6).astype(np.float32)
    ys = (xs[:, :1] + xs[:, 1:2] > 0).astype(np.float32)
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.device(device):
            w1 = tf.Variable(tf.random_normal([6, 16], stddev=0.5, seed=1), name="w1")
            b1 = tf.Variable(tf.zeros([16]), name="b1")
            w2 = tf.Variable(tf.random_normal([16, 1], stddev=0.5, seed=2), name="w2")
            b2 = tf.Variable(tf.zeros([1]), name="b2")
            hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
            logits = tf.matmul(hidden, w2) + b2
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
            train = optimizer().minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g, config=config) as sess:
        sess.run(init)
        losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(steps)]
        weights = sess.run(w1)
        where = {d.name: d for d in sess.devices}[sess.plan_for(train, {x: xs, y: ys}).placement["w1"]]
        state = where.resources.lookup("", "w1")
        return np.array(losses), weights, where, type(state.value)


@pytest.mark.parametrize("optimizer", [lambda: tf.train.AdamOptimizer(0.05),
                                       lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                                       lambda: tf.train.GradientDescentOptimizer(0.5)],
                         ids=["adam", "momentum", "sgd"])
def test_training_an_mlp_with_variables_on_sim0_gives_the_cpu_losses(optimizer):
    cpu_losses, cpu_w, cpu_dev, cpu_kind = train_mlp(tf.ConfigProto(), "/cpu:0", optimizer)
    sim_losses, sim_w, sim_dev, sim_kind = train_mlp(sim_config(), "/device:SIM:0", optimizer)
    assert cpu_dev.device_type == "CPU" and cpu_kind is np.ndarray
    assert sim_dev.device_type == "SIM" and issubclass(sim_kind, DeviceTensor)
    assert sim_losses[-1] < sim_losses[0]
    np.testing.assert_array_equal(sim_losses, cpu_losses)
    np.testing.assert_array_equal(sim_w, cpu_w)


def test_a_read_in_flight_keeps_its_value_when_the_variable_is_updated(graph):
    v = tf.Variable(np.arange(4, dtype=np.float32), name="v")
    read = tf.identity(v, name="read")  # on SIM this shares the variable's buffer
    with tf.control_dependencies([read]):
        bump = tf.assign_add(v, np.ones(4, np.float32), name="bump")
    with tf.Session(config=sim_config()) as sess:
        sess.run(v.initializer)
        got_read, got_bump = sess.run([read, bump])
        again = sess.run(v)
    assert got_read.tolist() == [0, 1, 2, 3]
    assert got_bump.tolist() == [1, 2, 3, 4] and again.tolist() == [1, 2, 3, 4]


def test_int32_counter_and_float_variable_on_sim(graph):
    counter = tf.Variable(0, name="counter")
    v = tf.Variable([1.0, 2.0], name="v")
    inc = tf.assign_add(counter, 1)
    with tf.control_dependencies([inc]):
        doubled = tf.assign(v, v * 2.0)
    with tf.Session(config=sim_config()) as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(tf.report_uninitialized_variables()).size
        for _ in range(3):
            out = sess.run(doubled)
        assert out.tolist() == [8.0, 16.0] and sess.run(counter) == 3
        dev = sim_device(sess)
        assert isinstance(dev.resources.lookup("", "counter").value, np.ndarray)  # int32: host memory
        assert isinstance(dev.resources.lookup("", "v").value, DeviceTensor)


# -- errors -------------------------------------------------------------------------------

def test_a_kernel_error_on_sim_names_the_node_and_the_device_stays_usable(graph):
    params = tf.constant(np.arange(6, dtype=np.float32), name="params")
    k = tf.placeholder(tf.int32, [], name="k")
    picked = tf.gather(params * 2.0, k, name="picked")
    with tf.Session(config=sim_config()) as sess:
        with pytest.raises(errors.InvalidArgumentError, match=r"indices\[\] = 9 is not in \[0, 6\)") as info:
            sess.run(picked, {k: 9})
        assert info.value.node == "picked"
        assert "picked" in str(info.value) and "SIM:0" in str(info.value)
        assert sess.run(picked, {k: 4}) == 8.0
        assert sim_device(sess).executor.compute_stream.ok()


def test_an_uninitialized_variable_on_sim_is_failed_precondition(graph):
    v = tf.Variable(np.ones(3, np.float32), name="v")
    with tf.Session(config=sim_config()) as sess:
        with pytest.raises(errors.FailedPreconditionError, match="uninitialized value v"):
            sess.run(v + 1.0)


def test_out_of_memory_on_sim_is_resource_exhausted_with_the_arena_summary(graph):
    small = tf.ConfigProto(device_count={"SIM": 1}, sim_options=SimOptions(memory_bytes=1 * MiB))
    n = tf.placeholder(tf.int32, [], name="n")
    big = tf.fill(tf.stack([n, 1024]), 1.0, name="big")
    total = tf.reduce_sum(big, name="total")
    with tf.Session(config=small) as sess:
        with pytest.raises(errors.ResourceExhaustedError) as info:
            sess.run(total, {n: 512})  # 2 MiB into a 1 MiB arena
        message = str(info.value)
        assert info.value.node == "big"
        assert "ran out of memory trying to allocate 2.0 MiB" in message
        assert "Allocator (sim:0)" in message and "limit 1.0 MiB" in message
        assert "BFCAllocator sim:0" in message and "largest free chunk" in message  # the arena summary
        assert sess.run(total, {n: 16}) == 16 * 1024  # and the device still works
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.negative(x, name="y")
    with tf.Session(config=small) as sess:
        with pytest.raises(errors.ResourceExhaustedError, match="SameWorkerRecvDone unable to allocate"):
            sess.run(y, {x: np.ones(512 * 1024, np.float32)})  # the feed itself does not fit


if "TestCpuOnlyAfterSim" not in registry.registered_ops():
    registry.register_op("TestCpuOnlyAfterSim", ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged)


def test_an_op_without_a_sim_kernel_is_an_error_naming_op_and_device(graph):
    x = tf.constant([1.0, 2.0])
    with tf.device("/device:SIM:0"):
        y = apply_op("TestCpuOnlyAfterSim", [x], name="odd").outputs[0]
    with tf.Session(config=sim_config()) as sess:
        if registry.get_kernel_def("TestCpuOnlyAfterSim", "CPU") is None:
            # A host-only kernel (as file readers and image codecs are): SIM has none.
            registry.register_kernel("TestCpuOnlyAfterSim", ("CPU",), host_only=True)(lambda ctx: lambda x: x)
        with pytest.raises(errors.InvalidArgumentError, match=r"'odd'.*SIM devices.*TestCpuOnlyAfterSim"):
            sess.run(y)


def test_sim_devices_pick_up_cpu_kernels_registered_later(graph):
    op = "TestCpuKernelAddedLate"
    if op not in registry.registered_ops():
        registry.register_op(op, ["x: T"], ["y: T"], shape_fn=shape_fns.unchanged)
    with tf.Session(config=sim_config()):
        pass  # SIM kernels exist from here on, but not yet for the new op
    registry.register_kernel(op, ("CPU",))(lambda ctx: lambda x: x * 10)
    with tf.device("/device:SIM:0"):
        y = apply_op(op, [tf.constant([1.0, 2.0])], name="late").outputs[0]
    with tf.Session(config=sim_config()) as sess:
        assert sess.run(y).tolist() == [10.0, 20.0]


# -- GPU (cuda) -----------------------------------------------------------------------------

def _cuda_available():
    return get_platform("cuda").is_available()


@pytest.mark.skipif(_cuda_available(), reason="this machine has cupy and a GPU")
def test_gpu_devices_are_absent_without_cupy_or_a_gpu(graph):
    with tf.device("/gpu:0"):
        y = tf.constant([1.0, 2.0]) * 3.0
    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 2})) as sess:
        assert [d.device_type for d in sess.devices] == ["CPU"]
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"explicitly assigned to /device:GPU:0 but available devices are"):
            sess.run(y)
    soft = tf.ConfigProto(device_count={"GPU": 1, "SIM": 1}, allow_soft_placement=True)
    with tf.Session(config=soft) as sess:
        assert sess.run(y).tolist() == [3.0, 6.0]
        placed = set(sess.plan_for(y).placement.values())
        assert SIM.format(0) in placed  # soft placement takes the best device that exists


@pytest.mark.skipif(not _cuda_available(), reason="needs cupy and a CUDA GPU")
def test_gpu_devices_run_on_cuda_where_a_gpu_exists(graph):
    x = tf.placeholder(tf.float32, [8, 8], name="x")
    with tf.device("/gpu:0"):
        y = tf.reduce_sum(tf.tanh(tf.matmul(x, x)), axis=1)
    xv = np.random.RandomState(0).randn(8, 8).astype(np.float32)
    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 1})) as sess:
        dev = sess.device("/job:localhost/replica:0/task:0/device:GPU:0")
        assert isinstance(dev, AcceleratorDevice) and dev.executor.platform.name == "cuda"
        np.testing.assert_allclose(sess.run(y, {x: xv}), np.tanh(xv @ xv).sum(axis=1), rtol=1e-4, atol=1e-5)


def test_a_session_on_sim_can_be_run_from_many_threads(graph):
    import threading
    x = tf.placeholder(tf.float32, [8, 8], name="x")
    v = tf.Variable(np.zeros(3, np.float32), name="v")
    with tf.device("/device:SIM:1"):
        y = tf.matmul(x, x) + 1.0
    z = tf.reduce_sum(tf.tanh(y) * 2.0, axis=0)
    bump = tf.assign_add(v, tf.ones([3]))
    failures = []
    with tf.Session(config=sim_config(2)) as sess:
        sess.run(v.initializer)

        def work(k):
            try:
                for i in range(10):
                    xv = np.full((8, 8), (k + i) / 50, np.float32)
                    np.testing.assert_allclose(sess.run(z, {x: xv}), (np.tanh(xv @ xv + 1.0) * 2).sum(axis=0),
                                               rtol=1e-5)
                    sess.run(bump)
            except Exception as e:  # noqa: BLE001 - reported below
                failures.append(e)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert failures == []
        assert sess.run(v).tolist() == [40.0, 40.0, 40.0]  # no update lost: all ran on SIM:0's compute stream


def test_a_completed_ready_event_of_another_stream_is_dropped_and_a_pending_one_kept(gate):
    from graphrt.runtime.device_kernels import ready_events
    executor = SimPlatform().create_executor(0, SimOptions(memory_bytes=1 << 20))
    try:
        copy, compute = executor.h2d_stream, executor.compute_stream
        done_event, pending_event = executor.create_event(), executor.create_event()
        copy.then_record_event(done_event).block_host_until_done(5)
        uploaded = StreamTensor.allocate(executor, (4,), np.float32, ready=done_event, stream=copy)
        assert ready_events([uploaded], compute) == [] and uploaded.ready is None  # later reads skip it
        copy.then_launch(gate.wait, 5).then_record_event(pending_event)
        in_flight = StreamTensor.allocate(executor, (4,), np.float32, ready=pending_event, stream=copy)
        assert ready_events([in_flight], compute) == [pending_event] and in_flight.ready is pending_event
        own = StreamTensor.allocate(executor, (4,), np.float32, ready=pending_event, stream=compute)
        assert ready_events([own], compute) == [] and own.ready is pending_event  # its stream's order suffices
        gate.set()
        copy.block_host_until_done(5)
    finally:
        executor.shutdown()

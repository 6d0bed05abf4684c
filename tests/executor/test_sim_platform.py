"""What only the simulated accelerator does: private memory, peers, modelled costs."""
import threading

import numpy as np
import pytest

from graphrt import errors
from graphrt.executor import DeviceTensor, SimOptions
from graphrt.executor.platforms.host import HostPlatform
from graphrt.executor.platforms.sim import SimPlatform

WAIT = 5.0


@pytest.fixture
def sim():
    platform = SimPlatform(options=SimOptions(memory_bytes=1 << 20), device_count=2)
    yield platform
    platform.reset()


def test_device_memory_is_not_host_readable(sim):
    executor = sim.executor(0)
    tensor = DeviceTensor.empty(executor, (4,), np.float32)
    with pytest.raises(errors.FailedPreconditionError, match="host code cannot read it"):
        tensor.as_array()
    seen = []
    executor.compute_stream.then_launch(lambda: seen.append(tensor.as_array().shape))
    executor.compute_stream.block_host_until_done(WAIT)
    assert seen == [(4,)]


def test_kernels_of_another_device_cannot_read_it_either(sim):
    mine, other = sim.executor(0), sim.executor(1)
    tensor = DeviceTensor.empty(mine, (4,), np.float32)
    other.compute_stream.then_launch(tensor.as_array)
    with pytest.raises(errors.FailedPreconditionError, match="simulated device sim:0"):
        other.compute_stream.block_host_until_done(WAIT)


def test_strict_host_access_can_be_turned_off():
    executor = SimPlatform().create_executor(0, SimOptions(memory_bytes=1 << 20, strict_host_access=False))
    try:
        tensor = DeviceTensor.empty(executor, (3,), np.int32)
        executor.synchronous_memcpy_h2d(tensor, np.array([1, 2, 3], np.int32))
        np.testing.assert_array_equal(tensor.as_array(), [1, 2, 3])
    finally:
        executor.shutdown()


def test_peer_copy_between_sim_devices(sim):
    a, b = sim.executor(0), sim.executor(1)
    host = np.arange(16, dtype=np.float64)
    src, dst = a.allocate(host.nbytes), b.allocate(host.nbytes)
    a.h2d_stream.then_memcpy_h2d(src, host).block_host_until_done(WAIT)
    a.d2d_stream.then_memcpy_d2d(dst, src).block_host_until_done(WAIT)
    out = np.zeros_like(host)
    b.d2h_stream.then_memcpy_d2h(out, dst).block_host_until_done(WAIT)
    np.testing.assert_array_equal(out, host)


def test_plain_copies_copy_views_made_at_enqueue_and_keep_their_tensors_alive(sim):
    a, b = sim.executor(0), sim.executor(1)
    modelled = SimPlatform().create_executor(0, SimOptions(memory_bytes=1 << 20, kernel_launch_latency=1e-4))
    try:
        assert a.plain_copies and not modelled.plain_copies  # a modelled kernel waits for the copies before it
    finally:
        modelled.shutdown()
    host = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]  # not contiguous
    gate, started = threading.Event(), threading.Event()
    stream = a.compute_stream
    stream.then_launch(lambda: (started.set(), gate.wait(WAIT)))
    tensor = DeviceTensor.empty(a, host.shape, host.dtype)
    offset = tensor.memory.opaque
    stream.then_memcpy_h2d(tensor, host)
    peer = DeviceTensor.empty(b, host.shape, host.dtype)
    stream.then_memcpy_d2d(peer, tensor)
    del tensor  # only the queued copies hold it now
    assert started.wait(WAIT)
    assert a.allocator.is_live(offset), "a queued copy's destination was freed before the copy ran"
    gate.set()
    stream.block_host_until_done(WAIT)
    assert not a.allocator.is_live(offset)  # freed once the copies that held it have run
    out = np.zeros((3, 4), np.float32).T  # a non-contiguous destination too
    b.d2h_stream.then_memcpy_d2h(out, peer).block_host_until_done(WAIT)
    np.testing.assert_array_equal(out, host)


def test_device_to_device_copies_stay_within_one_platform(sim):
    host_platform = HostPlatform()
    host_executor = host_platform.create_executor(0)
    try:
        host_memory = host_executor.allocate(64)
        sim_memory = sim.executor(0).allocate(64)
        with pytest.raises(errors.InvalidArgumentError, match="not on a sim device"):
            sim.executor(0).d2d_stream.then_memcpy_d2d(sim_memory, host_memory)
    finally:
        host_executor.shutdown()


def test_arena_exhaustion_reports_the_device(sim):
    executor = sim.executor(0)
    executor.allocate(600 << 10)
    with pytest.raises(errors.ResourceExhaustedError, match=r"^Allocator \(sim:0\) ran out of memory") as info:
        executor.allocate(600 << 10)
    assert info.value.device == "sim:0"
    assert "limit 1.0 MiB" in str(info.value)


def test_allocation_retry_waits_for_a_free():
    executor = SimPlatform().create_executor(
        0, SimOptions(memory_bytes=1 << 20, allocation_retry_timeout=WAIT))
    try:
        big = executor.allocate(1 << 20)
        got = []
        waiter = threading.Thread(target=lambda: got.append(executor.allocate(1024)))
        waiter.start()
        executor.deallocate(big)
        waiter.join(WAIT)
        assert len(got) == 1 and got[0].size == 1024
    finally:
        executor.shutdown()


def test_modelled_costs_keep_results_exact():
    options = SimOptions(memory_bytes=1 << 20, copy_bandwidth=1e9, d2d_bandwidth=5e9, copy_latency=1e-4,
                         kernel_launch_latency=1e-4)
    assert options.models_costs and not SimOptions().models_costs
    executor = SimPlatform().create_executor(0, options)
    try:
        host = np.arange(1000, dtype=np.float32)
        a, b = DeviceTensor.empty(executor, host.shape, host.dtype), DeviceTensor.empty(executor, host.shape,
                                                                                        host.dtype)
        out = np.zeros_like(host)
        stream = executor.compute_stream
        stream.then_memcpy_h2d(a, host).then_memcpy_d2d(b, a)
        stream.then_launch(lambda: b.as_array().__imul__(2)).then_memcpy_d2h(out, b)
        stream.block_host_until_done(WAIT)
        np.testing.assert_array_equal(out, host * 2)
    finally:
        executor.shutdown()


def test_executor_repr_shows_usage_and_streams(sim):
    executor = sim.executor(0)
    executor.allocate(1000)
    executor.compute_stream  # noqa: B018 - creates the standing streams
    assert repr(executor) == "<SimExecutor sim:0 1.0 KiB/1.0 MiB in use, 4 streams>"


def test_a_reuse_pool_hands_back_what_its_thread_freed_and_frees_it_at_the_end():
    from graphrt.executor.reuse_pool import ReusePool
    executor = SimPlatform().create_executor(0, SimOptions(memory_bytes=1 << 20))
    try:
        base = executor.allocator_stats()
        out = {}

        def loop():  # on a stream thread, as a compiled loop
            pool = out["pool"] = executor.open_reuse_pool()
            out["second"] = executor.open_reuse_pool()  # one at a time
            first = DeviceTensor(pool.take(1000), np.float32, (250,), executor, owned=True)
            address = first.memory.opaque
            del first  # kept, not freed
            out["kept"] = executor.allocator_stats()
            again = DeviceTensor(pool.take(1000), np.float32, (250,), executor, owned=True)
            out["same_address"] = again.memory.opaque == address
            other = DeviceTensor(pool.take(512), np.float32, (128,), executor, owned=True)
            out["other_address"] = other.memory.opaque != address
            out["from_elsewhere"] = []
            t = threading.Thread(target=lambda: out["from_elsewhere"].append(pool.give(other.memory)))
            t.start()
            t.join(5)
            del again, other
            out["before_close"] = executor.allocator_stats()
            executor.close_reuse_pool(pool)
        executor.compute_stream.then_launch(loop).block_host_until_done(5)
        assert isinstance(out["pool"], ReusePool) and out["second"] is None
        assert out["kept"].bytes_in_use == base.bytes_in_use + 1024  # kept: still allocated
        assert out["same_address"] and out["other_address"] and out["from_elsewhere"] == [False]
        assert out["before_close"].num_allocs == base.num_allocs + 2  # the reuse was no allocation
        assert out["pool"].reused == 1 and "1 reused" in repr(out["pool"])
        after = executor.allocator_stats()
        assert after.bytes_in_use == base.bytes_in_use and executor._pool is None  # all given back
    finally:
        executor.shutdown()

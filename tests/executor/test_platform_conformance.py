"""The StreamExecutor contract, run on every platform (host, sim, and cuda where present)."""
import gc
import threading
import time

import numpy as np
import pytest

from graphrt import errors
from graphrt.executor import COMPLETE, ERROR, PENDING, DeviceMemory, DeviceTensor, Stream, current_stream

WAIT = 5.0  # generous bound on every wait: a broken implementation fails instead of hanging


def to_device(executor, host):
    mem = executor.allocate(host.nbytes)
    executor.h2d_stream.then_memcpy_h2d(mem, host).block_host_until_done(WAIT)
    return mem


def from_device(executor, mem, like):
    out = np.empty_like(like)
    executor.d2h_stream.then_memcpy_d2h(out, mem).block_host_until_done(WAIT)
    return out


def scale_kernel(executor, mem, dtype, shape, factor):
    def kernel():
        array = executor.as_array(mem, dtype, shape)
        array *= factor
    return kernel


# -- ordering -------------------------------------------------------------------------


def test_work_on_one_stream_runs_in_fifo_order(executor):
    seen = []
    stream = executor.create_stream("fifo")
    for i in range(200):
        stream.then_launch(seen.append, i)
    stream.then_host_callback(lambda: seen.append("done"))
    stream.block_host_until_done(WAIT)
    assert seen == list(range(200)) + ["done"]


def test_every_then_call_returns_the_stream(executor):
    stream = executor.create_stream()
    mem = executor.allocate(8)
    host = np.zeros(2, np.float32)
    event = executor.create_event()
    assert stream.then_memcpy_h2d(mem, host) is stream
    assert stream.then_memcpy_d2h(host, mem) is stream
    assert stream.then_memcpy_d2d(mem, mem, 8) is stream
    assert stream.then_launch(lambda: None) is stream
    assert stream.then_record_event(event) is stream
    assert stream.then_wait_for(event) is stream
    assert stream.then_host_callback(lambda: None) is stream
    assert stream.block_host_until_done(WAIT) is stream


def test_streams_run_concurrently(executor, gate):
    blocked, other = executor.create_stream("blocked"), executor.create_stream("other")
    blocked.then_launch(gate.wait, WAIT)
    ran = threading.Event()
    other.then_host_callback(ran.set)
    # `other` finishes although `blocked` is still held: streams are independent.
    other.block_host_until_done(WAIT)
    assert ran.is_set() and blocked.pending == 1
    gate.set()
    blocked.block_host_until_done(WAIT)


def test_wait_for_event_orders_work_across_streams(executor, gate):
    producer, consumer = executor.create_stream("producer"), executor.create_stream("consumer")
    order = []
    ready = executor.create_event()
    producer.then_launch(gate.wait, WAIT).then_launch(order.append, "produced").then_record_event(ready)
    consumer.then_wait_for(ready).then_launch(order.append, "consumed")
    time.sleep(0.02)
    assert order == []  # the consumer is held by the event, not just slow
    gate.set()
    consumer.block_host_until_done(WAIT)
    assert order == ["produced", "consumed"]


def test_wait_for_stream_waits_for_everything_enqueued_on_it(executor, gate):
    first, second = executor.create_stream("first"), executor.create_stream("second")
    order = []
    first.then_launch(gate.wait, WAIT).then_launch(order.append, 1)
    second.then_wait_for(first).then_launch(order.append, 2)
    first.then_launch(order.append, 3)  # enqueued after the wait: not waited for
    gate.set()
    second.block_host_until_done(WAIT)
    first.block_host_until_done(WAIT)
    assert order.index(1) < order.index(2)
    assert sorted(order) == [1, 2, 3]


def test_waiting_for_an_unrecorded_event_or_itself_is_a_noop(executor):
    stream = executor.create_stream()
    stream.then_wait_for(executor.create_event(), stream)
    stream.block_host_until_done(WAIT)
    assert stream.ok()


def test_wait_for_rejects_other_objects(executor):
    with pytest.raises(errors.InvalidArgumentError, match="Events or Streams"):
        executor.create_stream().then_wait_for("not an event")


def test_host_callback_runs_after_earlier_work_and_before_later_work(executor):
    host = np.arange(1, 5, dtype=np.float32)
    mem = executor.allocate(host.nbytes)
    seen = []
    out = np.zeros_like(host)
    stream = executor.create_stream()
    stream.then_memcpy_h2d(mem, host)
    stream.then_launch(scale_kernel(executor, mem, np.float32, (4,), 3))
    stream.then_memcpy_d2h(out, mem)
    # The callback sees the copy made before it, and (read on another stream) device
    # memory that the kernel enqueued after it has not zeroed yet.
    stream.then_host_callback(lambda: seen.extend([out.copy(), from_device(executor, mem, host)]))
    stream.then_launch(scale_kernel(executor, mem, np.float32, (4,), 0))
    stream.block_host_until_done(WAIT)
    np.testing.assert_array_equal(seen[0], host * 3)
    np.testing.assert_array_equal(seen[1], host * 3)
    np.testing.assert_array_equal(from_device(executor, mem, host), np.zeros_like(host))  # the later work ran


def test_current_stream_inside_work(executor):
    stream = executor.create_stream("me")
    seen = []
    stream.then_launch(lambda: seen.append(current_stream()))
    stream.block_host_until_done(WAIT)
    assert seen == [stream] and current_stream() is None


# -- errors ----------------------------------------------------------------------------


def test_failed_kernel_makes_the_error_sticky(executor, gate):
    stream = executor.create_stream("s")
    boom = errors.InvalidArgumentError("boom")
    skipped = []

    def failing():
        raise boom

    stream.then_launch(gate.wait, WAIT).then_launch(failing).then_host_callback(lambda: skipped.append(1))
    gate.set()
    with pytest.raises(errors.InvalidArgumentError) as info:
        stream.block_host_until_done(WAIT)
    assert info.value is boom and boom.device == executor.name
    assert not stream.ok() and stream.error is boom and skipped == []
    for call in (lambda: stream.then_launch(print), lambda: stream.then_host_callback(print),
                 lambda: stream.block_host_until_done(WAIT), lambda: stream.then_wait_for(stream)):
        with pytest.raises(errors.InvalidArgumentError) as again:
            call()
        assert again.value is boom
    assert "error InvalidArgumentError: boom" in repr(stream)


def test_python_exception_is_wrapped_with_the_stream_and_kernel_name(executor):
    stream = executor.create_stream("s")

    def divide_by_zero():
        return 1 / 0

    stream.then_launch(divide_by_zero)
    with pytest.raises(errors.UnknownError, match=rf"{executor.name}/s: kernel .*divide_by_zero failed: "
                                                  "ZeroDivisionError") as info:
        stream.block_host_until_done(WAIT)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    with pytest.raises(errors.UnknownError) as again:
        stream.then_launch(print)
    assert again.value is info.value


def test_work_enqueued_before_the_failure_is_skipped(executor, gate):
    stream = executor.create_stream()
    ran = []
    event = executor.create_event()
    stream.then_launch(gate.wait, WAIT).then_launch(_raise_internal).then_launch(ran.append, 1)
    stream.then_record_event(event)
    gate.set()
    with pytest.raises(errors.InternalError, match="kernel failed"):
        event.synchronize(WAIT)
    assert ran == [] and event.query() == ERROR and isinstance(event.error, errors.InternalError)


def test_error_propagates_to_streams_waiting_on_the_failed_one(executor, gate):
    failed, waiter = executor.create_stream("failed"), executor.create_stream("waiter")
    failed.then_launch(_raise_internal)
    with pytest.raises(errors.InternalError):
        failed.block_host_until_done(WAIT)
    ran = []
    waiter.then_launch(gate.wait, WAIT).then_wait_for(failed).then_launch(ran.append, 1)
    gate.set()
    with pytest.raises(errors.InternalError) as info:
        waiter.block_host_until_done(WAIT)
    assert info.value is failed.error and ran == []


def test_block_host_until_done_times_out_and_the_stream_stays_usable(executor, gate):
    stream = executor.create_stream("slow")
    stream.then_launch(gate.wait, WAIT)
    with pytest.raises(errors.DeadlineExceededError, match=rf"{executor.name}/slow: .*timed out after 0.05s"):
        stream.block_host_until_done(timeout=0.05)
    gate.set()
    stream.block_host_until_done(WAIT)
    assert stream.ok()


def test_block_host_until_done_from_own_work_is_refused(executor):
    stream = executor.create_stream()
    stream.then_host_callback(lambda: stream.block_host_until_done(WAIT))
    with pytest.raises(errors.FailedPreconditionError, match="same stream"):
        stream.block_host_until_done(WAIT)


def test_close_cancels_pending_work_and_fails_its_events(executor, gate):
    stream = executor.create_stream()
    ran = []
    event = executor.create_event()
    stream.then_launch(gate.wait, WAIT).then_launch(ran.append, 1).then_record_event(event)
    stream.close(timeout=0.01)
    gate.set()
    with pytest.raises(errors.CancelledError):
        event.synchronize(WAIT)
    with pytest.raises(errors.CancelledError, match="shut down"):
        stream.then_launch(print)
    assert ran == []


def test_close_aborts_a_wait_for_another_stream(executor, gate):
    held, waiter = executor.create_stream("held"), executor.create_stream("waiter")
    ready = executor.create_event()
    held.then_launch(gate.wait, WAIT).then_record_event(ready)
    after = executor.create_event()
    waiter.then_wait_for(ready).then_record_event(after)
    waiter.close(timeout=WAIT)  # returns once the worker has left its wait
    with pytest.raises(errors.CancelledError):
        after.synchronize(WAIT)
    gate.set()
    held.block_host_until_done(WAIT)


def test_idle_worker_threads_exit_and_restart_on_demand(executor, monkeypatch):
    import graphrt.executor.stream as stream_module
    monkeypatch.setattr(stream_module, "_IDLE_EXIT_SECONDS", 0.01)
    stream = executor.create_stream()
    stream.then_launch(lambda: None).block_host_until_done(WAIT)
    deadline = time.monotonic() + WAIT
    while stream._thread is not None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert stream._thread is None
    seen = []
    stream.then_launch(seen.append, 1).block_host_until_done(WAIT)
    assert seen == [1]


def test_then_deallocate_still_frees_after_a_failure(executor, gate):
    stream = executor.create_stream()
    base = executor.allocator_stats().bytes_in_use
    queued, late = executor.allocate(1024), executor.allocate(1024)
    stream.then_launch(gate.wait, WAIT).then_launch(_raise_internal).then_deallocate(queued)
    gate.set()
    with pytest.raises(errors.InternalError):
        stream.block_host_until_done(WAIT)
    with pytest.raises(errors.InternalError):  # reported, as by every then_* call, yet freed
        stream.then_deallocate(late)
    stream.close(WAIT)
    assert executor.allocator_stats().bytes_in_use == base


def test_device_tensor_is_not_a_host_array(executor):
    tensor = DeviceTensor.empty(executor, (2,), np.float32)
    with pytest.raises(errors.FailedPreconditionError, match="lives in device memory"):
        np.asarray(tensor)
    with pytest.raises(errors.FailedPreconditionError, match="lives in device memory"):
        executor.h2d_stream.then_memcpy_h2d(tensor, tensor)


def test_device_tensor_must_fit_its_memory(executor):
    mem = executor.allocate(8)
    with pytest.raises(errors.FailedPreconditionError, match="not large enough for array: 8 < 16"):
        DeviceTensor(mem, np.float32, (4,))


def test_shutdown_stops_the_executor(executor):
    stream = executor.compute_stream
    stream.then_launch(lambda: None).block_host_until_done(WAIT)
    executor.shutdown()
    assert executor.is_shut_down
    with pytest.raises(errors.CancelledError):
        stream.then_launch(print)
    with pytest.raises(errors.FailedPreconditionError, match="shut down"):
        executor.allocate(16)


# -- events ----------------------------------------------------------------------------


def test_event_query_and_synchronize(executor, gate):
    stream = executor.create_stream()
    event = executor.create_event("e")
    assert event.query() == COMPLETE  # never recorded
    event.record(stream.then_launch(gate.wait, WAIT))
    assert event.query() == PENDING
    with pytest.raises(errors.DeadlineExceededError, match="waiting for <Event e"):
        event.synchronize(timeout=0.02)
    gate.set()
    event.synchronize(WAIT)
    assert event.query() == COMPLETE and event.error is None


def test_rerecorded_event_refers_to_the_latest_record(executor, gate):
    first, second = executor.create_stream("a"), executor.create_stream("b")
    event = executor.create_event()
    first.then_record_event(event)
    first.block_host_until_done(WAIT)
    second.then_launch(gate.wait, WAIT).then_record_event(event)
    assert event.query() == PENDING
    gate.set()
    event.synchronize(WAIT)
    assert event.query() == COMPLETE


def test_record_on_a_failed_stream_fails_the_event(executor):
    stream = executor.create_stream()
    stream.then_launch(_raise_internal)
    with pytest.raises(errors.InternalError):
        stream.block_host_until_done(WAIT)
    event = executor.create_event()
    with pytest.raises(errors.InternalError):
        stream.then_record_event(event)
    assert event.query() == ERROR


# -- memory and copies --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "uint16", "bool", "complex64"])
def test_copy_round_trip_preserves_bytes(executor, dtype):
    host = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    mem = to_device(executor, host)
    np.testing.assert_array_equal(from_device(executor, mem, host), host)


def test_copies_accept_strided_host_arrays(executor):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    mem = to_device(executor, host.T)  # non-contiguous source
    out = np.zeros((8, 3), np.float32)[::2]  # non-contiguous destination
    executor.d2h_stream.then_memcpy_d2h(out, mem).block_host_until_done(WAIT)
    np.testing.assert_array_equal(out, host.T)


def test_device_to_device_copy(executor):
    host = np.arange(10, dtype=np.int32)
    src = to_device(executor, host)
    dst = executor.allocate(host.nbytes)
    executor.d2d_stream.then_memcpy_d2d(dst, src).block_host_until_done(WAIT)
    np.testing.assert_array_equal(from_device(executor, dst, host), host)


def test_synchronous_copies(executor):
    host = np.arange(6, dtype=np.float64)
    mem, copy = executor.allocate(host.nbytes), executor.allocate(host.nbytes)
    executor.synchronous_memcpy_h2d(mem, host)
    executor.synchronous_memcpy_d2d(copy, mem)
    out = np.zeros_like(host)
    executor.synchronous_memcpy_d2h(out, copy)
    np.testing.assert_array_equal(out, host)


def test_kernel_reads_and_writes_device_arrays(executor):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = DeviceTensor.empty(executor, host.shape, host.dtype)
    b = DeviceTensor.empty(executor, host.shape, host.dtype)

    def add_one(src, dst):
        xp = executor.array_module
        xp.add(src.as_array(), 1, out=dst.as_array())

    stream = executor.compute_stream
    stream.then_memcpy_h2d(a, host).then_launch(add_one, a, b)
    out = np.empty_like(host)
    stream.then_memcpy_d2h(out, b).block_host_until_done(WAIT)
    np.testing.assert_array_equal(out, host + 1)


def test_copy_into_too_small_memory_is_refused_at_enqueue(executor):
    stream = executor.create_stream()
    mem = executor.allocate(8)
    with pytest.raises(errors.FailedPreconditionError,
                       match=r"^Allocation on device not large enough for array: 8 < 16$"):
        stream.then_memcpy_h2d(mem, np.zeros(4, np.float32))
    with pytest.raises(errors.FailedPreconditionError, match="8 < 16"):
        stream.then_memcpy_d2h(np.zeros(2, np.float64), mem)
    assert stream.ok()  # argument errors do not poison the stream


def test_string_and_object_arrays_are_not_dma_safe(executor):
    mem = executor.allocate(64)
    for host in (np.array(["ab", "cd"]), np.array([b"x"]), np.array([object()], dtype=object)):
        with pytest.raises(errors.InvalidArgumentError,
                           match="^Non-DMA-safe string tensor may not be copied from/to a device$"):
            executor.h2d_stream.then_memcpy_h2d(mem, host)


def test_memory_of_another_device_is_refused(executor, platform):
    other = platform.create_executor(0)
    try:
        foreign = other.allocate(16)
        with pytest.raises(errors.InvalidArgumentError, match=f"is on {other.name}, not on {executor.name}"):
            executor.h2d_stream.then_memcpy_h2d(foreign, np.zeros(4, np.float32))
        with pytest.raises(errors.InvalidArgumentError, match="belongs to"):
            executor.deallocate(foreign)
    finally:
        other.shutdown()


def test_deallocated_memory_is_refused(executor):
    mem = executor.allocate(16)
    executor.deallocate(mem)
    with pytest.raises(errors.FailedPreconditionError, match="has been deallocated"):
        executor.h2d_stream.then_memcpy_h2d(mem, np.zeros(4, np.float32))
    with pytest.raises(errors.InternalError, match="double free"):
        executor.deallocate(mem)


def test_allocation_stats_and_memory_usage(executor):
    before = executor.allocator_stats()
    usage = executor.memory_usage()
    mem = executor.allocate(1000)
    stats = executor.allocator_stats()
    assert stats.num_allocs == before.num_allocs + 1
    assert stats.bytes_in_use >= before.bytes_in_use + 1000
    assert stats.peak_bytes_in_use >= stats.bytes_in_use
    assert executor.memory_usage().free <= usage.free - 1000
    assert executor.memory_usage().total == stats.bytes_limit
    executor.deallocate(mem)
    assert executor.allocator_stats().bytes_in_use == before.bytes_in_use


def test_zero_byte_allocation_is_the_null_handle(executor):
    mem = executor.allocate(0)
    assert mem.is_null() and mem.size == 0 and "null" in repr(mem)
    executor.deallocate(mem)  # no-op
    stream = executor.create_stream()
    shapes = []
    stream.then_memcpy_h2d(mem, np.zeros(0, np.float32))
    stream.then_launch(lambda: shapes.append(executor.as_array(mem, np.float32, (0, 3)).shape))
    stream.block_host_until_done(WAIT)
    assert shapes == [(0, 3)]


def test_too_large_allocation_is_resource_exhausted(executor):
    limit = executor.allocator_stats().bytes_limit
    with pytest.raises(errors.ResourceExhaustedError, match=r"ran out of memory"):
        executor.allocate(limit + 1)


def test_then_deallocate_frees_in_stream_order(executor, gate):
    stream = executor.create_stream()
    base = executor.allocator_stats().bytes_in_use
    mem = executor.allocate(4096)
    stream.then_launch(gate.wait, WAIT).then_deallocate(mem)
    assert executor.allocator_stats().bytes_in_use > base
    gate.set()
    stream.block_host_until_done(WAIT)
    assert executor.allocator_stats().bytes_in_use == base


def test_device_tensor_is_freed_when_dropped_but_not_while_work_uses_it(executor, gate):
    base = executor.allocator_stats().bytes_in_use
    stream = executor.create_stream()
    tensor = DeviceTensor.empty(executor, (256,), np.float32)
    stream.then_launch(gate.wait, WAIT).then_memcpy_h2d(tensor, np.ones(256, np.float32))
    del tensor
    gc.collect()
    assert executor.allocator_stats().bytes_in_use > base  # the pending copy holds it
    gate.set()
    stream.block_host_until_done(WAIT)
    gc.collect()
    assert executor.allocator_stats().bytes_in_use == base


def test_a_dropped_device_tensor_frees_at_once_and_its_memory_is_reused(executor):
    gc.disable()  # freed by its last reference going, not by a collection
    try:
        base = executor.allocator_stats().bytes_in_use
        tensor = DeviceTensor.empty(executor, (64,), np.float32)
        address = tensor.memory.opaque
        keep = DeviceTensor(tensor.memory, np.float32, (64,), executor)  # not owning: frees nothing
        del keep
        assert executor.allocator_stats().bytes_in_use > base
        del tensor
        assert executor.allocator_stats().bytes_in_use == base
        again = DeviceTensor.empty(executor, (64,), np.float32)
        if executor.platform.name != "host":  # (the host heap hands out fresh buffers)
            assert again.memory.opaque == address
        freed = DeviceTensor.empty(executor, (64,), np.float32)
        memory = freed.memory
        freed.free()
        third = DeviceTensor.empty(executor, (64,), np.float32)  # (on sim, at the address just freed)
        in_use = executor.allocator_stats().bytes_in_use
        stale = DeviceTensor(memory, np.float32, (64,), executor, owned=True)  # an owner of the freed one
        del stale  # must leave the live allocation alone
        assert executor.allocator_stats().bytes_in_use == in_use
        assert third.owns_memory and executor.allocator.is_live(third.memory.opaque, third.memory._alloc_id)
        del again, third
        assert executor.allocator_stats().bytes_in_use == base
    finally:
        gc.enable()


def test_device_tensor_free_is_idempotent_and_shows_in_repr(executor):
    tensor = DeviceTensor.empty(executor, (2, 3), "float32")
    assert repr(tensor).startswith(f"<DeviceTensor float32[2,3] on {executor.name} @0x")
    assert repr(tensor).endswith("(24 B)>") and tensor.nbytes == 24 and tensor.owns_memory
    tensor.free()
    tensor.free()
    assert repr(tensor).endswith("freed>") and not tensor.owns_memory


# -- streams of a device ---------------------------------------------------------------


def test_each_device_has_compute_and_copy_streams(executor):
    streams = executor.streams
    assert [s.name for s in streams] == [f"{executor.name}/{role}" for role in ("compute", "h2d", "d2h", "d2d")]
    assert executor.compute_stream is streams.compute and executor.h2d_stream is streams.h2d
    assert all(isinstance(s, Stream) for s in streams)
    assert repr(executor.compute_stream) == f"<Stream {executor.name}/compute ok, 0 pending>"


def test_sub_streams_are_pooled(executor):
    main = executor.compute_stream
    sub = main.get_or_create_sub_stream()
    assert sub is not main and sub.executor is executor
    main.return_sub_stream(sub)
    assert main.get_or_create_sub_stream() is sub


def test_synchronize_all_activity(executor, gate):
    streams = [executor.create_stream() for _ in range(3)]
    done = []
    for i, stream in enumerate(streams):
        stream.then_launch(gate.wait, WAIT).then_launch(done.append, i)
    gate.set()
    assert executor.synchronize_all_activity(WAIT) is True
    assert sorted(done) == [0, 1, 2]


def test_description(executor, platform):
    description = executor.description()
    assert description.name == executor.name == f"{platform.name}:0"
    assert description.device_type == platform.device_type and description.ordinal == 0
    assert description.memory_limit == executor.allocator_stats().bytes_limit


def test_device_memory_repr(executor):
    mem = executor.allocate(24)
    assert isinstance(mem, DeviceMemory)
    assert repr(mem) == f"<DeviceMemory {executor.name} @{mem.opaque:#x} (24 B)>"
    assert mem.platform == executor.platform.name and mem.ordinal == 0


def _raise_internal():
    raise errors.InternalError("kernel failed")

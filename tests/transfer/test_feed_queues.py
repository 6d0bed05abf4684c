"""Infeed and outfeed: FIFO order, device-side loop, bounds, timeouts and close."""
import threading
import time

import numpy as np
import pytest

from graphrt import errors
from graphrt.executor import DeviceTensor
from graphrt.transfer import (HostInfeedQueue, InfeedQueue, OutfeedQueue, get_transfer_manager, infeed, outfeed,
                              transfer_from_device)

WAIT = 5.0


def test_infeed_delivers_device_tensors_in_order(executor):
    queue = infeed(executor)
    assert isinstance(queue, InfeedQueue) and infeed(executor) is queue
    for i in range(3):
        queue.put(np.full(4, i, np.float32), timeout=WAIT)
    assert len(queue) == 3
    manager = get_transfer_manager(executor)
    for i in range(3):
        tensor = queue.get(timeout=WAIT)
        assert isinstance(tensor, DeviceTensor) and tensor.executor is executor
        np.testing.assert_array_equal(manager.transfer_from_device(tensor), np.full(4, i, np.float32))


def test_on_device_loop_reads_infeed_and_writes_outfeed(executor):
    inputs, outputs = infeed(executor), outfeed(executor)
    assert isinstance(outputs, OutfeedQueue)

    def train_step():
        x = inputs.get(timeout=WAIT)
        y = DeviceTensor.empty(executor, x.shape, x.dtype)
        executor.array_module.multiply(x.as_array(), 2, out=y.as_array())
        outputs.put(y, timeout=WAIT)

    for step in range(4):
        inputs.put(np.arange(3, dtype=np.float64) + step)
        executor.compute_stream.then_launch(train_step)
    results = [outputs.get(timeout=WAIT) for _ in range(4)]
    for step, result in enumerate(results):
        np.testing.assert_array_equal(result, (np.arange(3) + step) * 2.0)


def test_get_on_an_empty_queue_times_out(executor):
    with pytest.raises(errors.DeadlineExceededError, match=f"infeed of {executor.name}: get timed out after 0.01s"):
        infeed(executor).get(timeout=0.01)
    with pytest.raises(errors.DeadlineExceededError, match="outfeed .* queue empty"):
        outfeed(executor).get(timeout=0.01)


def test_put_on_a_full_queue_times_out(executor):
    queue = get_transfer_manager(executor).infeed(executor, capacity=1)
    queue.put(np.ones(2))
    with pytest.raises(errors.DeadlineExceededError, match="put timed out after 0.01s, queue full"):
        queue.put(np.ones(2), timeout=0.01)
    assert len(queue) == 1
    full_out = get_transfer_manager(executor).outfeed(executor, capacity=1)
    full_out.put(DeviceTensor.empty(executor, (1,), np.int8))
    with pytest.raises(errors.DeadlineExceededError):
        full_out.put(DeviceTensor.empty(executor, (1,), np.int8), timeout=0.01)


def test_close_wakes_waiting_getters_and_putters_with_cancelled(executor):
    empty = infeed(executor)
    full = get_transfer_manager(executor).outfeed(executor, capacity=1)
    full.put(DeviceTensor.empty(executor, (1,), np.int8))
    failures = []

    def wait_and_record(call):
        try:
            call()
        except errors.CancelledError as exc:
            failures.append(exc)

    waiters = [threading.Thread(target=wait_and_record, args=(lambda: empty.get(),)),
               threading.Thread(target=wait_and_record,
                                args=(lambda: full.put(DeviceTensor.empty(executor, (1,), np.int8)),))]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.05)  # let both block first (if they are late they see the closed queue: same outcome)
    empty.close()
    full.close()
    for waiter in waiters:
        waiter.join(WAIT)
    assert len(failures) == 2 and all("was closed" in str(exc) for exc in failures)
    with pytest.raises(errors.CancelledError, match=f"infeed of {executor.name} was closed"):
        empty.put(np.ones(1))
    assert "closed" in repr(empty)
    assert infeed(executor) is not empty  # a closed queue is replaced on the next request


def test_close_frees_queued_device_tensors(executor):
    base = executor.allocator_stats().bytes_in_use
    queue = infeed(executor)
    queue.put(np.ones(1000))
    assert executor.allocator_stats().bytes_in_use > base
    queue.close()
    assert executor.allocator_stats().bytes_in_use == base


def test_outfeed_only_takes_this_devices_tensors(executor):
    with pytest.raises(errors.InvalidArgumentError, match="put takes a DeviceTensor"):
        outfeed(executor).put(np.ones(2))


def test_capacity_must_be_positive(executor):
    with pytest.raises(errors.InvalidArgumentError, match="capacity must be >= 1"):
        InfeedQueue(executor, get_transfer_manager(executor), capacity=0)


def test_a_stop_event_ends_a_wait_and_leaves_the_queue_usable(executor):
    queue = get_transfer_manager(executor).infeed(executor, capacity=1)
    stop = threading.Event()
    threading.Timer(0.05, lambda: (stop.set(), queue.wake())).start()
    with pytest.raises(errors.CancelledError, match=f"infeed of {executor.name}: get was aborted"):
        queue.get(timeout=10, stop=stop)
    queue.put(np.ones(2, np.float32))
    with pytest.raises(errors.CancelledError, match="put was aborted"):
        queue.put(np.ones(2, np.float32), timeout=10, stop=stop)  # full, and stopped already
    assert len(queue) == 1 and queue.get_nowait() is not None and queue.get_nowait() is None


def test_a_tuple_is_one_item_with_components_kept_on_the_host_as_asked(executor):
    queue = infeed(executor)
    queue.put((np.arange(3, dtype=np.float32), np.arange(2, dtype=np.int32)), keep_on_host=(1,))
    on_device, on_host = queue.get(timeout=1)
    np.testing.assert_array_equal(transfer_from_device(on_device), [0.0, 1.0, 2.0])
    assert isinstance(on_host, np.ndarray) and on_host.tolist() == [0, 1]
    queue.put((on_device,))  # a tensor of this device is queued as is
    assert queue.get(timeout=1)[0] is on_device


def test_a_host_infeed_queues_copies():
    queue = HostInfeedQueue("/device:CPU:0", capacity=2)
    batch = np.arange(4.0)
    queue.put((batch,))
    batch[:] = -1  # the caller may reuse its array at once
    np.testing.assert_array_equal(queue.get(timeout=1)[0], [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(errors.DeadlineExceededError, match="infeed of /device:CPU:0: get timed out"):
        queue.get(timeout=0.01)
    queue.close()
    with pytest.raises(errors.CancelledError, match="infeed of /device:CPU:0 was closed"):
        queue.put((batch,))


def test_discard_takes_back_the_items_of_a_tag(executor):
    queue = infeed(executor)
    mine, other = object(), object()
    queue.put(np.zeros(1, np.float32), tag=mine)
    queue.put(np.ones(1, np.float32), tag=other)
    queue.put(np.full(1, 2.0, np.float32), tag=mine)
    assert queue.discard(mine) == 2 and len(queue) == 1 and queue.discard(mine) == 0
    np.testing.assert_array_equal(transfer_from_device(queue.get(timeout=1)), [1.0])

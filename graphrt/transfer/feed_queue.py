"""Infeed and outfeed: bounded queues between the host and a device's kernels.

An on-device training loop reads its inputs from the device's infeed and
writes results to its outfeed, so the host can keep feeding and draining
while the device runs (XLA's infeed/outfeed):

    host:    infeed(ex).put(batch)            device kernel:  x = infeed(ex).get()
    host:    y = outfeed(ex).get(timeout=5)   device kernel:  outfeed(ex).put(y_tensor)

The host side moves data (`InfeedQueue.put` copies to the device,
`OutfeedQueue.get` copies back); the device side only passes DeviceTensors.
Both queues are bounded; every blocking call takes a timeout
(DeadlineExceededError) and a `stop` event (set it, then `wake()` the
queue: the wait ends with CancelledError, as a graph op's does when its
step is aborted), and `close()` wakes all waiters with CancelledError and
drops whatever was queued. An item may be a tuple of tensors (one batch of
several components, as InfeedEnqueueTuple puts it) and carry a `tag`:
`discard(tag)` takes back those still queued (what a failed step put).

A CPU device's memory is the host's: `HostInfeedQueue` is its infeed,
the same queue with numpy copies instead of device transfers.
"""
import collections
import threading
import time

import numpy as np

from graphrt import errors
from graphrt.executor import DeviceTensor

DEFAULT_CAPACITY = 16


class FeedQueue:
    """A bounded FIFO with timeouts and cancellation; the base of infeed and outfeed.

    Args:
        executor: the device this queue feeds or drains.
        transfer_manager: the TransferManager that moves host data.
        capacity: most items queued at once.
    """

    kind = "feed"

    def __init__(self, executor, transfer_manager, capacity=DEFAULT_CAPACITY):
        if capacity < 1:
            raise errors.InvalidArgumentError(f"{self.kind} capacity must be >= 1, got {capacity}")
        self.executor = executor
        self.device_name = executor.name
        self.capacity = capacity
        self._transfer_manager = transfer_manager
        self._cond = threading.Condition(threading.Lock())
        self._items = collections.deque()
        self._reserved = 0  # slots promised to puts still copying their data
        self._closed = False

    @property
    def closed(self):
        return self._closed

    def __len__(self):
        return len(self._items)

    def close(self):
        """Cancels every waiting and future put/get; queued items are dropped."""
        with self._cond:
            self._closed = True
            dropped = [item for item, _ in self._items]
            self._items.clear()
            self._cond.notify_all()
        for item in dropped:
            _free(item)

    def discard(self, tag):
        """Drops (and frees) the queued items put with `tag`; returns how many."""
        with self._cond:
            dropped = [item for item, t in self._items if t is tag]
            if dropped:
                self._items = collections.deque(entry for entry in self._items if entry[1] is not tag)
                self._cond.notify_all()
        for item in dropped:
            _free(item)
        return len(dropped)

    def wake(self):
        """Wakes every waiter to look at its `stop` event again."""
        with self._cond:
            self._cond.notify_all()


    def __repr__(self):
        state = "closed" if self._closed else f"{len(self._items)}/{self.capacity}"
        return f"<{type(self).__name__} {self.device_name} {state}>"

    # -- the queue itself ------------------------------------------------------

    def _reserve_slot(self, timeout, stop=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self._raise_if_closed()
                self._raise_if_stopped(stop, "put")
                if len(self._items) + self._reserved < self.capacity:
                    self._reserved += 1
                    return
                if not self._wait(deadline):
                    raise errors.DeadlineExceededError(
                        f"{self._name()}: put timed out after {timeout}s, queue full "
                        f"({self.capacity} items)", device=self.device_name)

    def _fill_slot(self, item, tag=None):
        with self._cond:
            self._reserved -= 1
            if self._closed:
                cancelled = True
            else:
                cancelled = False
                self._items.append((item, tag))
                self._cond.notify_all()
        if cancelled:
            _free(item)
            self._raise_closed()

    def _release_slot(self):
        with self._cond:
            self._reserved -= 1
            self._cond.notify_all()

    def _pop(self, timeout, stop=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self._raise_if_closed()
                if self._items:
                    item = self._items.popleft()[0]
                    self._cond.notify_all()
                    return item
                self._raise_if_stopped(stop, "get")
                if not self._wait(deadline):
                    raise errors.DeadlineExceededError(
                        f"{self._name()}: get timed out after {timeout}s, queue empty",
                        device=self.device_name)

    def _wait(self, deadline):
        if deadline is None:
            self._cond.wait()  # close() notifies: the wait can always be aborted
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self._cond.wait(remaining)
        return True

    def _raise_if_closed(self):
        if self._closed:
            self._raise_closed()

    def _raise_if_stopped(self, stop, what):
        if stop is not None and stop.is_set():
            raise errors.CancelledError(f"{self._name()}: {what} was aborted", device=self.device_name)

    def _raise_closed(self):
        raise errors.CancelledError(f"{self._name()} was closed", device=self.device_name)

    def _name(self):
        return f"{self.kind} of {self.device_name}"


class InfeedQueue(FeedQueue):
    """Host -> device: the host puts arrays, kernels get DeviceTensors."""

    kind = "infeed"

    def put(self, host_array, timeout=None, stop=None, keep_on_host=(), tag=None):
        """Copies `host_array` to the device and queues it; blocks while the queue is full.

        Args:
            host_array: an array, or a tuple of arrays: one item whose
                components are copied one by one (a tuple of DeviceTensors).
            timeout: seconds to wait at most for room and for the copy.
            stop: a threading.Event; once set (and the queue woken), the
                wait for room ends with CancelledError.
                A DeviceTensor of this device is queued as is.
            keep_on_host: positions of a tuple's components that stay in host
                memory (numpy copies), as int32 tensors do on accelerators.
            tag: marks the item for `discard(tag)`.

        Raises:
            DeadlineExceededError: no room within `timeout` seconds.
            CancelledError: the queue is or gets closed, or `stop` was set.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self._reserve_slot(timeout, stop)
        try:
            if isinstance(host_array, tuple):
                item = tuple(np.array(a, copy=True) if k in keep_on_host else self._copy_in(a, deadline)
                             for k, a in enumerate(host_array))
            else:
                item = self._copy_in(host_array, deadline)
        except BaseException:
            self._release_slot()
            raise
        self._fill_slot(item, tag)

    def _copy_in(self, host_array, deadline):
        if isinstance(host_array, DeviceTensor) and host_array.executor is self.executor:
            return host_array  # already on the device (device tensors are immutable): queued as is
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self._transfer_manager.transfer_to_device(self.executor, host_array, timeout=remaining)

    def get(self, timeout=None, stop=None):
        """The oldest queued item (device side, e.g. inside a kernel): a DeviceTensor or a tuple.

        Raises:
            DeadlineExceededError: nothing within `timeout` seconds.
            CancelledError: the queue is or gets closed, or `stop` was set.
        """
        return self._pop(timeout, stop)

    def make_room(self, n):
        """Raises the capacity, if need be, so that `n` more items fit besides those queued
        (a sunk loop's K batches put at once, before the loop takes them)."""
        with self._cond:
            self.capacity = max(self.capacity, len(self._items) + self._reserved + n)
            self._cond.notify_all()

    def get_nowait(self):
        """The oldest queued item, or None when the queue is empty (CancelledError once closed)."""
        with self._cond:
            self._raise_if_closed()
            if not self._items:
                return None
            item = self._items.popleft()[0]
            self._cond.notify_all()
            return item


class HostInfeedQueue(InfeedQueue):
    """The infeed of a CPU device, whose memory is the host's: `put` queues numpy
    copies (the caller may reuse its arrays at once) and `get` returns them.

    Args:
        device_name: the device this queue feeds, for messages.
        capacity: most items queued at once.
    """

    def __init__(self, device_name, capacity=DEFAULT_CAPACITY):
        FeedQueue.__init__(self, _HostSide(device_name), None, capacity)

    def _copy_in(self, host_array, deadline):
        return np.array(host_array, copy=True)


class _HostSide:
    """What a FeedQueue asks of its executor, for a device without one (a CPU)."""

    def __init__(self, name):
        self.name = name


class OutfeedQueue(FeedQueue):
    """Device -> host: kernels put DeviceTensors, the host gets numpy arrays."""

    kind = "outfeed"

    def put(self, tensor, timeout=None):
        """Hands a DeviceTensor of this device to the host (device side); blocks while full.

        The queue takes the tensor over: `get` frees it once copied out.
        """
        if not isinstance(tensor, DeviceTensor) or tensor.executor is not self.executor:
            raise errors.InvalidArgumentError(
                f"{self._name()}: put takes a DeviceTensor on {self.device_name}, got {tensor!r}",
                device=self.device_name)
        self._reserve_slot(timeout)
        self._fill_slot(tensor)

    def get(self, timeout=None):
        """Copies the oldest queued tensor to the host and returns it as a numpy array."""
        tensor = self._pop(timeout)
        try:
            return self._transfer_manager.transfer_from_device(tensor, timeout=timeout)
        finally:
            tensor.free()



def _free(item):
    for tensor in item if isinstance(item, tuple) else (item,):
        if isinstance(tensor, DeviceTensor):
            tensor.free()

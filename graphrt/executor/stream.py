"""Stream: an ordered queue of device work run by its own worker thread.

The model is TF's host stream: one thread draining a FIFO of closures.
Everything enqueued on one stream runs in order; different streams run
concurrently and only order against each other through events
(`then_record_event` / `then_wait_for`). Every `then_*` returns the stream,
so work reads as a chain:

    stream.then_wait_for(ev).then_launch(kernel, x, y).then_record_event(done)

Errors come in two kinds:

* Bad arguments (wrong device, too small a buffer, non-DMA-safe dtype,
  deallocated memory) raise at once from the `then_*` call and leave the
  stream untouched: nothing was enqueued.
* A failure of enqueued work puts the stream in a sticky error state. Work
  enqueued after it is skipped, events recorded after it carry the error,
  streams waiting on those events fail with it too, and every later
  `then_*` or `block_host_until_done` raises that same, original error.

The worker thread is a daemon, is started by the first enqueue and exits
after a few idle seconds (the next enqueue starts another), so streams that
are dropped do not pin threads. Waits inside the worker are abortable by
`close()` (called by `StreamExecutor.shutdown()`).
"""
import collections
import threading
import time

import numpy as np

from graphrt import errors

from . import event as event_module
from .device_tensor import DeviceTensor, memory_of
from .dma import DMA_SAFE_KINDS, check_dma_safe

_IDLE_EXIT_SECONDS = 5.0
_local = threading.local()


def current_stream():
    """The Stream whose worker thread is running the caller, else None.

    Kernels launched with `then_launch` (and host callbacks) see their own
    stream here.
    """
    return getattr(_local, "stream", None)


class Stream:
    """A FIFO of device work on one StreamExecutor (TF stream_executor::Stream).

    Create streams with `executor.create_stream(name)`; each device also has
    a compute stream and h2d/d2h/d2d copy streams (`executor.streams`).

    Attributes:
        executor: the StreamExecutor whose device this stream drives.
        name: '<device>/<stream name>', e.g. 'sim:0/compute'.

    Example:
        >>> s = executor.create_stream("work")
        >>> s.then_memcpy_h2d(mem, x).then_launch(double, mem).then_memcpy_d2h(out, mem)
        >>> s.block_host_until_done(timeout=5)
        >>> s
        <Stream sim:0/work ok, 0 pending>
    """

    def __init__(self, executor, name):
        self.executor = executor
        self.name = f"{executor.name}/{name}"
        self.platform_stream = None  # e.g. the cupy.cuda.Stream on cuda; set on the worker
        self._lock = threading.Lock()  # _cond's: entered directly where a Python-level __enter__ costs
        self._cond = threading.Condition(self._lock)
        self._queue = collections.deque()  # (fn, args, on_skip, kind, keep) not yet taken by the worker
        self._running = 0  # ops the worker has taken and not finished
        self._worker_waiting = False
        self._thread = None
        self._error = None
        self._error_traceback = None
        self._closed = False
        self._sub_streams = []
        # For platforms that model a device clock (sim): when the kernel being launched was enqueued,
        # when the last other work that later work waits behind (a copy, a wait, a host callback)
        # ended, and when the last kernel ended on the device's clock, in time.perf_counter() seconds.
        # Set on the worker thread.
        self.launch_enqueued = 0.0
        self.ready_floor = 0.0
        self.modelled_free_at = 0.0

    # -- state ------------------------------------------------------------------

    def ok(self):
        """False once any enqueued work has failed (sticky)."""
        return self._error is None

    @property
    def error(self):
        """The original error that put the stream in its error state, else None."""
        return self._error

    @property
    def pending(self):
        """Operations enqueued and not yet finished (including a running one)."""
        return len(self._queue) + self._running

    def __repr__(self):
        if self._error is None:
            state = "ok"
        else:
            first_line = str(self._error).split("\n", 1)[0]
            state = f"error {type(self._error).__name__}: {first_line[:80]}"
        return f"<Stream {self.name} {state}, {self.pending} pending>"

    # -- memory copies -------------------------------------------------------

    def then_memcpy_h2d(self, dst, host_array):
        """Copies `host_array`'s bytes to the start of `dst` (DeviceMemory or DeviceTensor).

        The host array must not be modified until the copy has run (wait on
        an event recorded after it).
        """
        host = np.asarray(host_array)
        if host.nbytes == 0:
            return self._check_ok()
        mem = self._checked_memory(dst, host, "destination")
        ex = self.executor
        if ex.plain_copies:
            # np.copyto itself, its views made here: the worker then makes no Python call per copy
            # (through _run_h2d's six a sim copy of 1 MiB took ~8 us more than np.copyto's ~50)
            return self._enqueue((np.copyto, (ex._device_view(mem, host.dtype, host.shape), host), None,
                                  "memcpy h2d", dst))
        return self._enqueue((self._run_h2d, (dst, host), None, "memcpy h2d", None))

    def then_memcpy_d2h(self, host_array, src):
        """Copies the first `host_array.nbytes` bytes of `src` into `host_array` (in place)."""
        if not isinstance(host_array, np.ndarray):
            raise errors.InvalidArgumentError(
                f"{self.name}: then_memcpy_d2h needs a numpy array to copy into, got "
                f"{type(host_array).__name__}", device=self.executor.name)
        if host_array.nbytes == 0:
            return self._check_ok()
        if not host_array.flags.writeable:
            raise errors.InvalidArgumentError(f"{self.name}: then_memcpy_d2h destination array is read-only",
                                              device=self.executor.name)
        mem = self._checked_memory(src, host_array, "source")
        ex = self.executor
        if ex.plain_copies:
            return self._enqueue((np.copyto, (host_array, ex._device_view(mem, host_array.dtype, host_array.shape)),
                                  None, "memcpy d2h", src))
        return self._enqueue((self._run_d2h, (host_array, src), None, "memcpy d2h", None))

    def _checked_memory(self, x, host, role):
        """The DeviceMemory of `x` (DeviceMemory or DeviceTensor) for a copy to or from `host`, once
        `host`'s dtype is DMA-safe and the memory this device's, live and large enough."""
        mem = x.memory if type(x) is DeviceTensor else memory_of(x, self, role)
        if host.dtype.kind not in DMA_SAFE_KINDS:
            check_dma_safe(host.dtype, device=self.executor.name)
        self.executor._check_memory(mem, host.nbytes, self, role)
        return mem

    def then_memcpy_d2d(self, dst, src, nbytes=None):
        """Copies `nbytes` (default: all of `src`) from `src` to `dst`.

        Either side may live on another device of the same platform (a peer
        copy); the copy is ordered on this stream.
        """
        src_mem = memory_of(src, self, "source")
        dst_mem = memory_of(dst, self, "destination")
        nbytes = src_mem.size if nbytes is None else int(nbytes)
        if nbytes == 0:
            return self._check_ok()
        self.executor._check_peer_memory(src_mem, nbytes, self, "source")
        self.executor._check_peer_memory(dst_mem, nbytes, self, "destination")
        if self.executor.plain_copies:
            return self._enqueue((np.copyto, (dst_mem.executor._device_bytes(dst_mem)[:nbytes],
                                              src_mem.executor._device_bytes(src_mem)[:nbytes]),
                                  None, "memcpy d2d", (dst, src)))
        return self._enqueue((self._run_d2d, (dst, src, nbytes), None, "memcpy d2d", None))

    # -- kernels and callbacks -----------------------------------------------

    def then_launch(self, kernel, *args, **kwargs):
        """Runs `kernel(*args, **kwargs)` on this stream, after earlier work.

        The kernel runs on the stream's worker thread (on `cuda`, with this
        stream current, so the cupy work it issues is queued on it); inside
        it `executor.as_array` gives the device arrays. Pass DeviceTensors
        (not bare DeviceMemory) to keep the buffers alive until it has run.
        An exception from the kernel puts the stream in its error state.
        """
        return self._enqueue((self._run_launch, (kernel, args, kwargs, time.perf_counter()), None, "launch", None))

    def then_host_callback(self, fn):
        """Calls `fn()` on the host once all earlier work on this stream is done.

        The callback occupies the stream like a kernel (later work waits for
        it); an exception puts the stream in its error state. It must not
        block on this same stream.
        """
        return self._enqueue((self._run_host_callback, (fn,), None, "host callback", None))

    def then_deallocate(self, memory):
        """Frees `memory` (DeviceMemory, or DeviceTensor.free()) after earlier work on this stream.

        Frees even when the stream has failed, so memory is not leaked (the
        stream's error is still raised afterwards, as from every then_* call).
        """
        memory_of(memory, self, "memory")
        with self._cond:
            self._push_locked((self._run_deallocate, (memory,), self._skip_deallocate, "deallocate", None))
        return self._check_ok()

    # -- synchronisation -----------------------------------------------------

    def then_record_event(self, event):
        """Arms `event`; it completes once all work enqueued so far has run."""
        generation = event._arm()
        try:
            return self._enqueue((self._run_record, (event, generation), self._skip_record, "record event", None))
        except BaseException as exc:
            event._reach(generation, error=exc, traceback=self._error_traceback)
            raise

    def then_wait_for(self, *events_or_streams):
        """Makes this stream's later work wait for events and/or other streams.

        Waiting for a stream waits for everything enqueued on it so far;
        waiting for an event waits for its most recent record (an event never
        recorded is a no-op). If what we wait for fails, this stream fails
        with the same error.
        """
        self._check_ok()
        for item in events_or_streams:
            if isinstance(item, Stream):
                if item is self:
                    continue  # FIFO order already waits for our own earlier work
                marker = event_module.Event(item.executor, name=f"end of {item.name}")
                item._record_quietly(marker)
                item = marker
            elif not isinstance(item, event_module.Event):
                raise errors.InvalidArgumentError(
                    f"{self.name}: then_wait_for takes Events or Streams, got {type(item).__name__}",
                    device=self.executor.name)
            generation = item._current_generation()
            if generation == 0:
                continue  # never recorded: nothing to wait for
            self._enqueue((self._run_wait, (item, generation), None, "wait for event", None))
        return self

    def block_host_until_done(self, timeout=None):
        """Blocks until all work enqueued so far has run.

        Args:
            timeout: seconds to wait at most; None waits as long as it takes.

        Raises:
            DeadlineExceededError: work still pending after `timeout` seconds
                (the stream itself stays usable).
            FailedPreconditionError: called from this stream's own worker.
            OpError: the stream's original error, if it has one.
        """
        if current_stream() is self:
            raise errors.FailedPreconditionError(
                f"{self.name}: block_host_until_done called from work running on the same stream "
                "would wait for itself forever", device=self.executor.name)
        self._check_ok()
        deadline = None if timeout is None else time.monotonic() + timeout
        marker = event_module.Event(self.executor, name=f"block {self.name}")
        generation = self._record_quietly(marker)
        if not marker._wait_complete(generation, deadline):
            raise errors.DeadlineExceededError(
                f"{self.name}: block_host_until_done timed out after {timeout}s with "
                f"{self.pending} operation(s) still pending", device=self.executor.name)
        return self._check_ok()

    # -- sub-streams (for synchronous helpers that may run inside callbacks) ----

    def get_or_create_sub_stream(self):
        """A pooled helper stream on the same device; give it back with return_sub_stream."""
        with self._cond:
            while self._sub_streams:
                sub = self._sub_streams.pop()
                if sub.ok():
                    return sub
        return self.executor.create_stream(f"{self.name.rsplit('/', 1)[-1]}.sub")

    def return_sub_stream(self, sub):
        """Returns a sub-stream to the pool; a failed one is closed instead of reused."""
        if sub.ok():
            with self._cond:
                self._sub_streams.append(sub)
        else:
            sub.close()

    def close(self, timeout=1.0):
        """Stops the worker: pending work is skipped with CancelledError.

        Waits up to `timeout` seconds for the worker thread to exit.
        """
        with self._cond:
            self._closed = True
            if self._error is None:
                self._error = errors.CancelledError(f"{self.name} was shut down", device=self.executor.name)
            thread = self._thread
            subs, self._sub_streams = self._sub_streams, []
            self._cond.notify_all()
        for sub in subs:
            sub.close(timeout)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- enqueue / worker ------------------------------------------------------

    def _check_ok(self):
        if self._error is not None:
            raise self._error.with_traceback(self._error_traceback)
        return self

    def _enqueue(self, op):
        with self._lock:  # _cond's lock (Condition's own __enter__ is a Python call): on every enqueue
            if self._error is not None:
                raise self._error.with_traceback(self._error_traceback)
            self._queue.append(op)  # _push_locked, inlined
            if self._thread is None:
                self._start_worker()
            elif self._worker_waiting:
                self._cond.notify()
        return self

    def _push_locked(self, op):
        self._queue.append(op)
        if self._thread is None:
            self._start_worker()
        elif self._worker_waiting:
            self._cond.notify()

    def _record_quietly(self, event):
        """Records `event` without raising: a failed stream fails the event instead."""
        generation = event._arm()
        with self._cond:
            if self._error is None:
                self._push_locked((self._run_record, (event, generation), self._skip_record, "record event", None))
                return generation
            error, traceback = self._error, self._error_traceback
        event._reach(generation, error=error, traceback=traceback)
        return generation

    def _start_worker(self):
        self._thread = threading.Thread(target=self._work, name=f"graphrt-stream {self.name}", daemon=True)
        self._thread.start()

    def _work(self):
        _local.stream = self
        try:
            self.executor._on_stream_thread_start(self)
        except BaseException as exc:  # noqa: BLE001 - any failure becomes the stream's error
            self._fail(exc, "stream start")
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            # Taking everything queued at once keeps the worker off the lock while
            # the host keeps enqueuing: one acquisition per batch, not two per op.
            while batch:
                # keep: what must stay alive until the op has run (a plain copy's DeviceTensors, whose
                # memory its views are of: a DeviceTensor frees its memory when it is dropped)
                fn, args, on_skip, kind, keep = batch.popleft()
                error = self._error
                if error is None:
                    try:
                        fn(*args)
                    except BaseException as exc:  # noqa: BLE001
                        self._fail(exc, kind, args)
                elif on_skip is not None:
                    try:
                        on_skip(error, *args)
                    except BaseException:  # noqa: BLE001 - skipping must never kill the worker
                        pass
                del fn, args, on_skip, keep  # drop buffers the op kept alive now, not at the next op
                self._running -= 1

    def _take_batch(self):
        """All queued ops, waiting for some; None when the worker should exit."""
        with self._cond:
            while not self._queue:
                if self._closed:
                    self._thread = None
                    return None
                self._worker_waiting = True
                woken = self._cond.wait(_IDLE_EXIT_SECONDS)
                self._worker_waiting = False
                if not woken and not self._queue:
                    self._thread = None  # idle: exit; the next enqueue starts a new worker
                    return None
            batch, self._queue = self._queue, collections.deque()
            self._running = len(batch)
            return batch

    def _fail(self, exc, kind, args=()):
        if isinstance(exc, errors.OpError):
            error, traceback = exc, exc.__traceback__
            if error.device is None:
                error.device = self.executor.name
        else:
            what = kind
            if kind == "launch":
                kernel = args[0]
                what = f"kernel {getattr(kernel, '__qualname__', None) or repr(kernel)}"
            error = errors.UnknownError(f"{self.name}: {what} failed: {type(exc).__name__}: {exc}",
                                        device=self.executor.name)
            error.__cause__ = exc
            traceback = None
        with self._cond:
            if self._error is None:
                self._error, self._error_traceback = error, traceback

    def _abort_reason(self):
        return self._error if self._closed else None

    # -- operations (run on the worker) ------------------------------------------

    def _run_h2d(self, dst, host):
        self.executor._copy_h2d(self, memory_of(dst), host)
        self.ready_floor = time.perf_counter()

    def _run_d2h(self, host, src):
        self.executor._copy_d2h(self, host, memory_of(src))
        self.ready_floor = time.perf_counter()

    def _run_d2d(self, dst, src, nbytes):
        self.executor._copy_d2d(self, memory_of(dst), memory_of(src), nbytes)
        self.ready_floor = time.perf_counter()

    def _run_launch(self, kernel, args, kwargs, enqueued):
        self.launch_enqueued = enqueued
        self.executor._launch(self, kernel, args, kwargs)

    def _run_host_callback(self, fn):
        self.executor._synchronize_device(self)
        fn()
        self.ready_floor = time.perf_counter()

    def _run_deallocate(self, memory):
        if isinstance(memory, DeviceTensor):
            memory.free()
        else:
            memory.executor.deallocate(memory)

    def _skip_deallocate(self, error, memory):
        del error
        try:
            self._run_deallocate(memory)
        except errors.OpError:
            pass  # already freed elsewhere; the stream already has its error

    def _run_record(self, event, generation):
        event._reach(generation, device_marker=self.executor._record_device_marker(self))

    def _skip_record(self, error, event, generation):
        event._reach(generation, error=error, traceback=self._error_traceback)

    def _run_wait(self, event, generation):
        event._wait_reached(generation, None, aborted=self._abort_reason)
        self.ready_floor = time.perf_counter()
        event._raise_if_failed()  # what we waited for failed: so do we, with its error
        marker = event._device_marker
        if marker is not None:
            self.executor._wait_device_marker(self, marker)


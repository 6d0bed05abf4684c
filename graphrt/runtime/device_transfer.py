"""Copies on receipt: what a `_Recv` does with a value that crossed devices.

As in TF (IntraProcessRendezvous::SameWorkerRecvDone -> CopyTensor::ViaDMA)
all copying happens on the receiving side. `_Send` puts its value in the
step's rendezvous as it is, and the `_Recv` kernel (runtime/comm_kernels.py,
one kernel for every device type) hands what it receives to the copier
made here for its (send device, recv device) pair. The bytes move with the
TransferManager on the devices' copy streams:

    value sent              received on        copy
    ----------              -----------        ----
    numpy array (host)      CPU                none: the buffer is shared
    numpy array (host)      SIM / GPU          h2d on the receiver's h2d stream
    DeviceTensor            CPU                d2h on the sender's d2h stream
    DeviceTensor            the same device    none
    DeviceTensor            SIM / GPU (peer)   d2d on the sender's d2d stream

A copy out of a device first waits for the tensor's ready event (the
producing kernel), not for the whole device. Every copy records an event
on its copy stream, and the `_Recv` completes when that event has fired
(a host callback behind it, TF's EventMgr::ThenExecute): the consumer's
kernel is launched after the copy's event, the compute stream never
blocks on a copy in flight, and kernels of data that has already arrived
keep running meanwhile, so copies overlap compute. (Completing the Recv
at enqueue instead would queue consumers on the in-order compute stream
behind a wait for their copy, stalling every kernel queued after them.)
The received StreamTensor keeps the event as its `ready` event. int32 and
string tensors stay in host memory on accelerators (see device_kernels.py),
so they are never copied.

A failed copy (no memory for the received tensor, a stream shut down)
fails the `_Recv` with that error; out of memory reads
`SameWorkerRecvDone unable to allocate output tensor. Key: ...` followed
by the arena summary, as in TF.

With tracing on, every copy is recorded in the step stats on the device
whose stream ran it, with `stream` set to 'h2d', 'd2h' or 'd2d' and the
times taken on that stream's thread.
"""
import threading
import time

import numpy as np

from .. import errors
from ..executor import DeviceTensor
from ..transfer import get_transfer_manager
from . import step_stats
from .device_kernels import StreamTensor, host_resident_array, ready_events


def device_copy_for(ctx):
    """The copier for a `_Recv` node (built once, with its kernel), or None
    when both ends are host devices and nothing can ever need a copy."""
    send_type = _device_type(ctx.attr("send_device") or "")
    if send_type == "CPU" and getattr(ctx.device, "executor", None) is None:
        return None
    return _Copier(ctx)


def copy_to_host(tensor, host_device, send_device, tensor_name, done):
    """Copies an accelerator's `tensor` into host memory for `host_device` (a worker answering a
    RecvTensor, as TF's sender does) and calls done(error, host array); untraced."""
    _Copier.between(send_device, host_device, tensor_name, f"RecvTensor({tensor_name})")(None, tensor, done)


def _device_type(name):
    tail = name.rsplit("/device:", 1)[-1]
    return tail.split(":", 1)[0].upper()


class _Copier:
    """Moves one `_Recv` node's received values into its device's memory."""

    __slots__ = ("recv_name", "tensor_name", "key_text", "send_device", "recv_device", "device", "executor")

    def __init__(self, ctx):
        self.recv_name = ctx.name
        self.tensor_name = ctx.attr("tensor_name")
        self.send_device = ctx.attr("send_device")
        self.recv_device = ctx.device.name
        self.key_text = f"{self.send_device};{self.recv_device};{self.tensor_name}"
        self.device = ctx.device
        self.executor = getattr(ctx.device, "executor", None)  # None: a host device

    @classmethod
    def between(cls, send_device, device, tensor_name, recv_name):
        """A copier made without a `_Recv` node's kernel context."""
        copier = cls.__new__(cls)
        copier.recv_name = recv_name
        copier.tensor_name = tensor_name
        copier.send_device = send_device
        copier.recv_device = device.name
        copier.key_text = f"{send_device};{device.name};{tensor_name}"
        copier.device = device
        copier.executor = getattr(device, "executor", None)
        return copier

    def __call__(self, step, value, done):
        """Delivers `value` to `done` in this device's memory; never raises. `step` None: untraced."""
        try:
            if isinstance(value, DeviceTensor):
                if self.executor is None:
                    self._to_host(step, value, done)
                elif value.executor is self.executor:
                    done(None, value)
                else:
                    self._to_peer(step, value, done)
            elif self.executor is not None and isinstance(value, (np.ndarray, np.generic)) and \
                    not host_resident_array(value):
                self._to_device(step, np.asarray(value), done)
            else:
                done(None, value)
        except Exception as exc:  # noqa: BLE001 - a failed copy fails the Recv
            done(_copy_error(exc, self.key_text))

    def _to_device(self, step, host, done):
        executor = self.executor
        stream = executor.h2d_stream
        if not host.flags.c_contiguous:
            host = host.copy(order="C")
        tensor = _allocate(executor, host.shape, host.dtype, stream, self.key_text)
        end = self._bracket(step, stream, self.recv_device, "MEMCPYHtoD", tensor)
        tensor.ready = get_transfer_manager(executor).transfer_to_device_async(stream, host, tensor)
        self._complete_after(stream, end, done, tensor)

    def _to_host(self, step, tensor, done):
        executor = tensor.executor
        stream = executor.d2h_stream
        if executor.array_module is np:
            host = np.empty(tensor.shape, dtype=tensor.dtype)
        else:  # pinned host memory, so the copy is truly asynchronous
            host = executor.host_memory_allocate(tensor.nbytes).view(tensor.dtype).reshape(tensor.shape)
        self._wait_until_ready(stream, tensor)
        end = self._bracket(step, stream, self.send_device, "MEMCPYDtoH", tensor)
        get_transfer_manager(executor).transfer_from_device_async(stream, tensor, host)

        def arrived():
            if end is not None:
                end()
            done(None, host)
        stream.then_host_callback(arrived)

    def _to_peer(self, step, tensor, done):
        src = tensor.executor
        stream = src.d2d_stream
        dst = _allocate(self.executor, tensor.shape, tensor.dtype, stream, self.key_text)
        self._wait_until_ready(stream, tensor)
        end = self._bracket(step, stream, self.send_device, "MEMCPYDtoD", tensor)
        dst.ready = get_transfer_manager(src).transfer_device_to_device_async(stream, tensor, dst)
        self._complete_after(stream, end, done, dst)

    @staticmethod
    def _wait_until_ready(stream, tensor):
        """Orders a copy out of `tensor` after the work that produced it: its ready
        event; for a DeviceTensor made outside the runtime (no event), the
        producing device's compute stream so far, as TF's d2h copy does."""
        if isinstance(tensor, StreamTensor):
            waits = ready_events((tensor,), stream)
            if waits:
                stream.then_wait_for(*waits)
        else:
            stream.then_wait_for(tensor.executor.compute_stream)

    def _complete_after(self, stream, end, done, tensor):
        """Completes the Recv with `tensor` once its ready event has fired (a host
        callback right after it on the copy stream: TF's EventMgr::ThenExecute)."""
        device = self.device

        def copied():
            if end is not None:
                end()
            device.complete(done, None, tensor)
        stream.then_host_callback(copied)

    def _bracket(self, step, stream, device_name, op, tensor):
        """With tracing on: marks the copy's start on `stream`; returns the callback that records it."""
        stats = step.stats if step is not None else None
        if stats is None:
            return None
        start = []
        stream.then_host_callback(lambda: start.append(time.time_ns()))
        label = f"{self.recv_name} = {op}({self.tensor_name})"
        output = [step_stats.NodeOutput(0, str(tensor.dtype), tuple(tensor.shape), int(tensor.nbytes))]
        role = stream.name.rsplit("/", 1)[-1]

        def end():
            t1 = time.time_ns()
            t0 = start[0] if start else t1
            stats.record(device_name, step_stats.NodeExecStats(
                self.recv_name, op, t0 // 1000, t1 // 1000, threading.get_ident(), label, output, stream=role))
        return end


def _allocate(executor, shape, dtype, stream, key_text):
    try:
        return StreamTensor.allocate(executor, shape, dtype, stream=stream)
    except errors.ResourceExhaustedError as e:
        raise errors.ResourceExhaustedError(
            f"SameWorkerRecvDone unable to allocate output tensor. Key: {key_text}\n{e.message}",
            device=executor.name) from None


def _copy_error(exc, key_text):
    if isinstance(exc, errors.OpError):
        return exc
    err = errors.InternalError(f"Copy of {key_text} failed: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err

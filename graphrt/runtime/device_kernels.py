"""Kernels of accelerator devices (SIM on `sim`, GPU on `cuda`): the host
kernels, run by the device on its compute stream over its own memory.

Every op keeps one kernel definition, written against `ctx.xp`. An
accelerator device gets a `DeviceKernel` around it for each node:

    executor thread                          compute stream (its own thread)
    ---------------                          -------------------------------
    make the compute stream wait for     ->  view the input DeviceTensors as arrays
      inputs' pending ready events           run the host kernel on the views
    launch                                   allocate outputs in the BFC arena, copy in
                                             done(outputs)

So from the dataflow executor's point of view a device kernel is ASYNC: it
returns at once and `done` is called from the stream when the kernel has
run. `done` goes through the device's completion hook, which the dataflow
executor hands the device (graph_executor.run_device_callback): it runs the
executor loop right there on the stream thread and launches the next kernels
onto the same stream: a chain of device kernels costs no thread hand-off.

Outputs are `StreamTensor`s. On sim a kernel has finished when it returns
on the stream thread, so its outputs are ready when `done` is called. On
cuda the work is still queued on the GPU, so each output carries the event
recorded after the kernel; so does it on sim with modelled kernel costs,
where the stream stays busy for the kernel's modelled time after `done`
(executor/platforms/sim.py): the executor queues the next kernels meanwhile,
and a copy to another device waits for the modelled end. Tensors that come from copies (h2d, d2d, a
constant's upload) carry their copy's event. A kernel on the compute
stream waits only for the pending events of its own inputs (never for a
whole stream), and work on the stream that recorded an event needs no wait.

Where tensors live (TF's memory types): on an accelerator a value is a
`StreamTensor` in device memory, except

* inputs and outputs the kernel registration marks `host_memory` (shapes,
  axes, Shape/Size/Rank results),
* int32 and non-DMA-safe (string) tensors, which TF keeps in host memory
  on GPUs too (`MTypeFromDType`),

which are numpy arrays. A kernel whose inputs and outputs are all in host
memory runs at once on the executor's thread, as TF runs host-memory
kernels of a GPU on the CPU.

Device tensors are immutable once their event has fired: kernels see
read-only views of their inputs, and a variable update (Assign, AssignAdd,
Apply*) writes a new buffer and swaps it into the variable (copy on write).
So a read of a variable that is still in flight on any stream (a copy to
the host, a peer copy) always sees the value it read, with no locks and no
refcount tricks. A kernel output that is a view of an input at the same
address (Identity, Reshape, ExpandDims, ...) shares the input's buffer
instead of copying it.

Kernel errors (bad indices, OOM in the arena) are returned through `done`
like any kernel error, so the stream stays usable: the next step runs.
"""
import threading
import time
from threading import get_ident

import numpy as np

from ..executor import COMPLETE, DeviceTensor, Event, is_dma_safe
from ..executor.dma import DMA_SAFE_KINDS
from ..framework import registry
from ..framework.op_categories import CALL_FRAME_OPS, ENTER_OPS, EXIT_OPS, MERGE_OPS, NEXT_ITERATION_OPS, TRANSFER_OPS
from ..framework.registry import ASYNC, STEP, SYNC
from ..ops.state_ops import VariableState
from . import memory_stats, step_stats

# Ops whose accelerator kernel is the host kernel, run as is on the executor's
# thread: they touch no tensor data (a variable handle, nothing, tensor
# metadata), belong to the step's rendezvous, or only pass their input
# tensors on (TF forwards the buffer: the output is the same immutable
# device tensor, with the same ready event).
_AS_IS = (frozenset({"VariableV2", "NoOp", "Shape", "Size", "Rank", "IsVariableInitialized", "Identity", "Snapshot",
                     "StopGradient", "PreventGradient", "PlaceholderWithDefault", "ControlTrigger"})
          | TRANSFER_OPS | ENTER_OPS | EXIT_OPS | NEXT_ITERATION_OPS | MERGE_OPS)
# The step's call frame (CALL_FRAME_OPS) lives on the client CPU device only.


class StreamTensor(DeviceTensor):
    """A DeviceTensor produced by work on a stream.

    Attributes:
        ready: Event after which the bytes are valid (None: valid now).
        stream: the Stream that records `ready`; work on that same stream
            is ordered after the producer already and needs no wait.
        base: the tensor whose buffer this one shares (kept alive), or None.
    """

    __slots__ = ("ready", "stream", "base", "array")

    def __init__(self, memory, dtype, shape, executor=None, owned=False, ready=None, stream=None, base=None,
                 array=None):
        super().__init__(memory, dtype, shape, executor, owned)
        self.ready = ready
        self.stream = stream
        self.base = base
        self.array = array  # the read-only device array its producer wrote: for the device's own kernels

    @classmethod
    def allocate(cls, executor, shape, dtype, ready=None, stream=None):
        """A new tensor in `executor`'s memory (ResourceExhaustedError if it does not fit)."""
        dtype = np.dtype(dtype)
        shape = tuple(int(d) for d in shape)
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        return cls._owning(executor.allocate(nbytes), dtype, shape, executor, ready, stream)

    @classmethod
    def _owning(cls, memory, dtype, shape, executor, ready, stream):
        """A tensor owning `memory`, just allocated for exactly `shape` of `dtype` (a numpy dtype;
        shape a tuple of ints): what __init__ checks holds by construction, so it is not checked
        (this runs for every output of every device kernel)."""
        tensor = object.__new__(cls)
        tensor._owned = None if memory.opaque is None else memory
        tensor.memory = memory
        tensor.dtype = dtype
        tensor.shape = shape
        tensor.executor = executor
        tensor.ready = ready
        tensor.stream = stream
        tensor.base = None
        tensor.array = None
        return tensor

    @classmethod
    def _sharing(cls, tensor, array, ready, stream):
        """A tensor over `tensor`'s memory whose bytes (from its start) are `array`, a view of it
        (Identity, Reshape ...): it keeps `tensor` alive and frees nothing."""
        alias = object.__new__(cls)
        alias._owned = None
        alias.memory = tensor.memory
        alias.dtype = array.dtype
        alias.shape = array.shape
        alias.executor = tensor.executor
        alias.ready = ready
        alias.stream = stream
        alias.base = tensor
        alias.array = array
        return alias


def ready_events(values, stream):
    """The ready events of `values` that `stream` must wait for (pending, from other streams)."""
    waits = []
    for v in values:
        if type(v) is VariableState:
            v = v.value
        if isinstance(v, StreamTensor):
            ev = v.ready
            if ev is not None and v.stream is not stream:
                if ev.query() != COMPLETE:
                    waits.append(ev)
                else:
                    v.ready = None  # valid for good: later readers (a loop's, every iteration) skip the query
    return waits


def host_resident(dtype):
    """True when tensors of `dtype` (a DType) stay in host memory on an accelerator (int32, strings)."""
    base = dtype.base_dtype
    return base.name == "int32" or not is_dma_safe(base.np)


_INT32 = np.dtype(np.int32)
_SCALARS = (bool, int, float, complex)


def host_resident_array(array):
    """True when a numpy array received by an accelerator stays in host memory (int32, strings)."""
    dtype = array.dtype
    return dtype == _INT32 or not is_dma_safe(dtype)


# -- registration ---------------------------------------------------------------------

_lock = threading.Lock()


def register_device_kernels(device_type, source_type="CPU"):
    """Gives `device_type` a kernel for every `source_type` kernel, made when it is looked up
    (idempotent): SIM runs the CPU kernels (numpy); GPU runs the xp kernels registered for GPU,
    over cupy. Kernels registered later are found too; the kernel table is not rewritten."""
    with _lock:
        registry.register_kernel_adapter(device_type, kernel_adapter(device_type, source_type))


def kernel_adapter(device_type, source_type):
    """adapt(op_type) -> the KernelDef `device_type` runs for it, or None (see register_device_kernels)."""
    made = {}   # op type -> (the source KernelDef, the device's KernelDef made from it)

    def adapt(op):
        direct = registry.registered_kernel_def(op, device_type)
        if direct is not None and source_type != device_type:
            return direct  # a kernel written for this device type wins
        source = registry.registered_kernel_def(op, source_type)
        if source is None and op in TRANSFER_OPS:  # the step's rendezvous: host kernels, which copy on receipt
            source = registry.registered_kernel_def(op, "CPU")
        if source is None or op in CALL_FRAME_OPS or source.host_only:
            return direct
        hit = made.get(op)
        if hit is not None and hit[0] is source:
            return hit[1]
        if op in _AS_IS or source.kind == ASYNC:
            factory, kind = source.factory, source.kind  # (an ASYNC host kernel cannot run on a stream)
        elif op == "Const":
            factory, kind = _const_factory(source), SYNC
        else:
            factory, kind = _device_factory(source), ASYNC
        kdef = registry.KernelDef(op, device_type, factory, kind, source.host_memory, source.inexpensive)
        made[op] = (source, kdef)
        return kdef
    return adapt


def _device_factory(kdef):
    def factory(ctx):
        return DeviceKernel(ctx, kdef).run
    factory.__name__ = f"device_{kdef.op_type}"
    return factory


def _const_factory(kdef):
    """Const on an accelerator: the value is copied to the device once, when
    the kernel is built, and every step returns that same (immutable) tensor."""
    def factory(ctx):
        value = kdef.factory(ctx)()
        if ctx.xp is not np:
            value = np.asarray(ctx.attr("value"))  # the host value, not the xp (cupy) one
        if host_resident(ctx.output_dtypes[0]):
            return lambda: value
        device = ctx.device
        host = np.asarray(value)
        if not host.flags.c_contiguous:
            host = host.copy(order="C")  # (np.ascontiguousarray would make a 0-d value 1-d)
        stream = device.executor.h2d_stream
        tensor = StreamTensor.allocate(device.executor, host.shape, host.dtype, stream=stream)
        tensor.ready = device.transfer_manager.transfer_to_device_async(stream, host, tensor)
        return lambda: tensor
    factory.__name__ = f"device_{kdef.op_type}"
    return factory


def _positions(arg_defs, attrs, names):
    """Flat positions of the args called `names` (list args expand to N positions)."""
    out, pos = set(), 0
    for arg in arg_defs:
        n = attrs[arg.number_attr] if arg.number_attr else 1
        if arg.name in names:
            out.update(range(pos, pos + n))
        pos += n
    return out


# -- the kernel -------------------------------------------------------------------------

class DeviceKernel:
    """One node's kernel on an accelerator device (see the module docstring)."""

    __slots__ = ("fn", "name", "op", "label", "device", "device_name", "executor", "stream", "xp", "n_out",
                 "out_host", "out_ref", "host_in", "always_device", "numpy", "queued", "takes_step", "shape_in",
                 "out_itemsize", "modelled", "memory_total", "plain_out", "inline_plain")

    def __init__(self, ctx, kdef):
        self.fn = kdef.factory(ctx)
        self.takes_step = kdef.kind == STEP  # fn(step, *inputs) rather than fn(*inputs)
        self.name = ctx.name
        self.op = ctx.op_type
        self.label = step_stats.label(ctx.node)
        self.device = ctx.device
        self.device_name = ctx.device.name
        self.executor = ctx.device.executor
        self.stream = self.executor.compute_stream
        self.xp = ctx.xp
        self.numpy = ctx.xp is np
        # On sim the kernel has finished when it returns on the stream thread, so
        # its outputs are ready when done is called. On cuda the work it issued
        # is still queued on the GPU: outputs carry the event recorded after it.
        # a modelled kernel time (sim's cost model) is spent by the executor's _launch, after the kernel
        # has run and called done: its outputs are then ready only at the event recorded after it.
        options = getattr(self.executor, "options", None)
        self.modelled = bool(getattr(options, "models_costs", False))
        self.queued = not self.numpy or bool(getattr(options, "models_kernel_costs", False))
        op_def = registry.get_op_def(ctx.op_type)
        host_out = _positions(op_def.outputs, ctx.attrs, kdef.host_memory)
        self.n_out = len(ctx.output_dtypes)
        self.out_ref = tuple(dt.is_ref_dtype for dt in ctx.output_dtypes)
        self.out_host = tuple(k in host_out or (not dt.is_ref_dtype and host_resident(dt))
                              for k, dt in enumerate(ctx.output_dtypes))
        # one output, in device memory: _outputs' common case
        self.plain_out = self.n_out == 1 and not self.out_host[0] and not self.out_ref[0]
        self.host_in = frozenset(_positions(op_def.inputs, ctx.attrs, kdef.host_memory))
        # Runs on the device whatever its inputs: it makes a device tensor, or
        # updates a variable that lives in device memory.
        self.always_device = (any(not (h or r) for h, r in zip(self.out_host, self.out_ref))
                              or any(dt.is_ref_dtype and not host_resident(dt) for dt in ctx.input_dtypes))
        # An op whose output shape is an input (Fill's dims, random ops' shape, BroadcastTo): its output is
        # checked against the device's memory before the host computes it, so a tensor that cannot fit
        # fails at once instead of being built in host memory first.
        makes_one_tensor = self.n_out == 1 and not self.out_host[0] and not self.out_ref[0]
        self.shape_in = next((i for i, a in enumerate(op_def.inputs) if a.name in _SHAPE_INPUTS and not a.number_attr),
                             None) if makes_one_tensor else None
        self.out_itemsize = _itemsize(ctx.output_dtypes[0]) if self.shape_in is not None else 0
        self.memory_total = False  # the device's memory, read at the first check (_check_fits)
        self.inline_plain = self.numpy and self.plain_out and not self.modelled and self.shape_in is None

    def run(self, step, args, done):
        """The executor's entry point (ASYNC): launch on the compute stream, or run on the host."""
        if not self.always_device:
            for a in args:
                if isinstance(a, DeviceTensor):
                    break
            else:
                self._run_on_host(step, args, done)
                return
        stream = self.stream
        waits = ready_events(args, stream)
        if waits:
            stream.then_wait_for(*waits)
        if self.queued:
            event = Event(self.executor)
            stream.then_launch(self._compute, step, args, done, event)
            stream.then_record_event(event)
        else:
            stream.then_launch(self._compute, step, args, done, None)

    def run_inline(self, step, args):
        """Runs the kernel on `args` (a sequence) on the calling thread and returns its
        outputs (raises its error). For a compiled loop launched as one piece of work on
        this device's compute stream (runtime/compiled_loop.py): the caller is that
        stream's thread, and on sim a kernel has finished when it returns (no event)."""
        if not self.always_device:
            for a in args:
                if isinstance(a, DeviceTensor):
                    break
            else:
                return self.fn(step, *args) if self.takes_step else self.fn(*args)
        if self.inline_plain:
            # The common case in one frame (what ready_events, _inputs and _outputs do for it): the
            # device inputs are ready tensors of this device with their arrays, one output.
            executor, stream = self.executor, self.stream
            views = []
            for a in args:
                if type(a) is StreamTensor:
                    array = a.array
                    if array is None or a.executor is not executor or (a.ready is not None and a.stream is not stream):
                        break
                    views.append(array)
                elif type(a) is VariableState or isinstance(a, DeviceTensor):
                    break
                else:
                    views.append(a)  # a host value
            else:
                out = self.fn(step, *views) if self.takes_step else self.fn(*views)
                if hasattr(out, "dtype") or isinstance(out, _SCALARS):
                    return self._to_device(out, args, views, None)
                return out
        for event in ready_events(args, self.stream):
            event.synchronize()  # another stream's copy (a constant's upload): never this stream's work
        if self.modelled:  # the modelled kernel time, as a launch would spend it (from the arguments' bytes)
            box = []
            self.executor._launch(self.stream, self._compute_inline, (step, args, box), {})
            return box[0]
        return self._compute_inline(step, args)

    def _compute_inline(self, step, args, box=None):
        views, swaps = self._inputs(args)
        if self.shape_in is not None and self.out_itemsize:
            self._check_fits(views[self.shape_in])
        out = self.fn(step, *views) if self.takes_step else self.fn(*views)
        result = self._outputs(out, args, views, swaps, None)
        if box is not None:
            box.append(result)
        return result

    def _run_on_host(self, step, args, done):
        try:
            out = self.fn(step, *args) if self.takes_step else self.fn(*args)
        except Exception as exc:  # noqa: BLE001 - reported through done, as from the stream
            done(exc)
            return
        done(None, out)

    # -- on the compute stream -------------------------------------------------------

    def _compute(self, step, args, done, event):
        stats = step.stats
        if stats is not None:
            # A modelled kernel (sim) holds the stream from its launch to the modelled end, which is
            # after this returns: its trace event spans that.
            stream = self.stream
            start = getattr(stream, "launch_started_ns", None) or time.time_ns()
            modelled_end = getattr(stream, "launch_ends_ns", None) or 0
            stream.launch_started_ns = stream.launch_ends_ns = None
        try:
            views, swaps = self._inputs(args)
            if self.shape_in is not None and self.out_itemsize:
                self._check_fits(views[self.shape_in])
            with np.errstate(all="ignore"):  # inf/nan are values, as on the CPU device
                out = self.fn(step, *views) if self.takes_step else self.fn(*views)
            result = self._outputs(out, args, views, swaps, event)
        except Exception as exc:  # noqa: BLE001 - a kernel error is the step's, the stream stays ok
            self.device.complete(done, exc)
            return
        if stats is not None:
            self._record(stats, start, max(time.time_ns(), modelled_end), result)
        self.device.complete(done, None, result)

    def _check_fits(self, shape):
        try:
            count = 1
            for d in np.asarray(shape).ravel().tolist():
                count *= max(int(d), 0)
        except (TypeError, ValueError):
            return  # not a shape: the kernel reports it
        nbytes = count * self.out_itemsize
        total = self.memory_total
        if total is False:  # (the first time: the arena's size does not change)
            total = self.memory_total = self.executor.memory_usage().total
        if total is not None and nbytes > total:
            # The allocator refuses at once what can never fit, with its usual summary of the arena.
            self.executor.deallocate(self.executor.allocate(nbytes))

    def _inputs(self, args):
        """Arrays for the host kernel: device tensors as read-only views; variables
        whose value is in device memory as stand-ins holding such a view."""
        views = list(args)
        swaps = None
        for i, a in enumerate(args):
            if type(a) is StreamTensor and a.array is not None and a.executor is self.executor and self.numpy:
                views[i] = a.array  # (the common case, as _view does it)
            elif isinstance(a, DeviceTensor):
                views[i] = self._view(a, i in self.host_in)
            elif type(a) is VariableState and not host_resident(a.dtype):
                stand_in = VariableState(a.name, a.dtype, a.shape)
                value = a.value
                stand_in.value = None if value is None else self._view(value, False)
                views[i] = stand_in
                if swaps is None:
                    swaps = []
                swaps.append((a, stand_in, stand_in.value))
        return views, swaps

    def _view(self, tensor, on_host):
        array = getattr(tensor, "array", None)
        if array is None or tensor.executor is not self.executor:
            array = tensor.as_array()
            if self.numpy:
                array.flags.writeable = False  # device tensors are immutable once ready
                if type(tensor) is StreamTensor and tensor.executor is self.executor:
                    # ready (the kernel waited for it) and immutable: this device's later kernels
                    # take the same view (a constant's, a fed batch's, read every loop iteration)
                    tensor.array = array
        if on_host and not self.numpy:
            array = array.get()  # a host-memory input that was produced in device memory
        return array

    def _outputs(self, out, args, views, swaps, event):
        if swaps is not None:
            # Copy on write: the kernel left a new array in the stand-in; it
            # becomes a new device buffer, swapped into the variable.
            for state, stand_in, before in swaps:
                if stand_in.value is not before:
                    state.value = self._to_device(stand_in.value, args, views, event)
        n = self.n_out
        if n == 1 and self.plain_out and (hasattr(out, "dtype") or isinstance(out, _SCALARS)):
            return self._to_device(out, args, views, event)  # (the common case, as the loop below does it)
        if n == 0:
            return None
        outs = (out,) if n == 1 else out
        result = []
        for k in range(n):
            r = outs[k]
            if self.out_ref[k]:
                if swaps is not None:
                    for state, stand_in, _ in swaps:
                        if r is stand_in:
                            r = state
                            break
            elif not hasattr(r, "dtype") and not isinstance(r, _SCALARS):
                pass  # not a tensor value (None, or a marker of another runtime layer): as it is
            elif self.out_host[k]:
                r = self._to_host(r)
            else:
                r = self._to_device(r, args, views, event)
            result.append(r)
        return result[0] if n == 1 else tuple(result)

    def _to_host(self, r):
        if not self.numpy and hasattr(r, "get"):
            return r.get()
        r = np.asarray(r)
        if r.base is not None and r.dtype.kind in "biufc":
            r = r.copy()  # may be a view of device memory, which does not outlive this kernel
        return r

    def _to_device(self, r, args, views, event):
        xp = self.xp
        if type(r) is not np.ndarray or not self.numpy:
            r = xp.asarray(r)
        dtype = r.dtype
        if dtype.kind not in DMA_SAFE_KINDS:
            return self._to_host(r)
        executor = self.executor
        if r.base is not None:
            alias = self._alias(r, args, views, event)
            if alias is not None:
                return alias
        shape = r.shape
        pool = executor._pool  # open while a compiled loop runs on this stream: its buffers are reused
        memory = pool.take(r.nbytes) if pool is not None and pool.thread == get_ident() else \
            executor.allocate(r.nbytes)
        tensor = StreamTensor._owning(memory, dtype, shape, executor, event, self.stream)
        # Memory this executor just allocated for exactly these bytes, viewed on its own stream: none of
        # as_array's checks can fail (an empty tensor has no memory to view).
        dst = executor._device_view(tensor.memory, dtype, shape) if r.size else \
            executor.as_array(tensor.memory, dtype, shape)
        if self.numpy:
            dst[...] = r  # (np.copyto and .flags cost about twice as much)
            dst.setflags(write=False)
        elif isinstance(r, np.ndarray):
            dst.set(r)
        else:
            xp.copyto(dst, r)
        tensor.array = dst
        return tensor

    def _alias(self, r, args, views, event):
        """A tensor sharing an input's buffer when `r` is that input's bytes, from the start."""
        for a, v in zip(args, views):
            if v is r and isinstance(a, DeviceTensor):  # the input itself, passed on (no address to compare)
                return StreamTensor._sharing(a, r, event, self.stream)
        if not r.flags.c_contiguous:
            return None
        ptr = _address(r)
        for a, v in zip(args, views):
            if isinstance(a, DeviceTensor) and v is not a and r.nbytes <= a.nbytes and v.size and \
                    _address(v) == ptr:
                return StreamTensor._sharing(a, r, event, self.stream)
        return None

    def _record(self, stats, start, end, result):
        values = (result,) if self.n_out == 1 else (result or ())
        outputs = [step_stats.NodeOutput(k, str(getattr(v, "dtype", "")), tuple(getattr(v, "shape", ())),
                                         int(getattr(v, "nbytes", 0) or 0)) for k, v in enumerate(values)]
        stats.record(self.device_name, step_stats.NodeExecStats(
            self.name, self.op, start // 1000, end // 1000, threading.get_ident(), self.label, outputs,
            stream=_role(self.stream), memory=memory_stats.node_memory(self.executor)))

    def __repr__(self):
        return f"<DeviceKernel {self.name} = {self.op} on {self.device_name}>"


_SHAPE_INPUTS = ("shape", "dims")


def _itemsize(dtype):
    try:
        return np.dtype(dtype.base_dtype.np).itemsize if dtype.base_dtype.np is not None else 0
    except (TypeError, AttributeError):
        return 0


def _address(array):
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr  # cupy


def _role(stream):
    """'compute', 'h2d', 'd2h' or 'd2d' from a stream's name ('sim:0/compute')."""
    return stream.name.rsplit("/", 1)[-1]

"""Step statistics (TF's StepStats proto, as plain objects): per device, per
node, when it started and ended, on which thread, and what it produced; and
per device with an allocator (SIM, GPU), its memory over the step."""
import threading
import time

from ..framework.op_categories import RECV_OPS, SEND_OPS


class NodeOutput:
    __slots__ = ("slot", "dtype", "shape", "requested_bytes")

    def __init__(self, slot, dtype, shape, requested_bytes):
        self.slot = slot
        self.dtype = dtype
        self.shape = shape
        self.requested_bytes = requested_bytes

    def __repr__(self):
        return f"<NodeOutput {self.slot}: {self.dtype}{list(self.shape)} {self.requested_bytes} B>"


class NodeExecStats:
    __slots__ = ("node_name", "op", "all_start_micros", "op_start_rel_micros", "op_end_rel_micros",
                 "all_end_rel_micros", "scheduled_micros", "thread_id", "timeline_label", "output", "stream",
                 "memory")

    def __init__(self, node_name, op, start_micros, end_micros, thread_id, timeline_label, output=(),
                 scheduled_micros=0, stream=None, memory=()):
        self.node_name = node_name
        self.op = op
        self.all_start_micros = start_micros
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = end_micros - start_micros
        self.all_end_rel_micros = end_micros - start_micros
        self.scheduled_micros = scheduled_micros
        self.thread_id = thread_id
        self.timeline_label = timeline_label
        self.output = list(output)
        self.stream = stream
        self.memory = list(memory)  # AllocatorMemoryUsed when the kernel ended (runtime/memory_stats.py)

    def __repr__(self):
        return f"<NodeExecStats {self.node_name} +{self.all_end_rel_micros}us>"


class AllocatorMemoryUsed:
    """TF's AllocatorMemoryUsed message, for one allocator over one step.

    Attributes:
        allocator_name: e.g. 'sim:0'.
        total_bytes: bytes allocated during the step.
        peak_bytes: highest bytes in use during the step (what was already
            held when it started, variables included, counts).
        live_bytes: bytes the allocations live when the step ended asked for.
        allocator_bytes_in_use: bytes in use when the step ended, as the
            allocator counts them (requests rounded up, chunks handed out
            whole), TF's allocator total.
    """

    __slots__ = ("allocator_name", "total_bytes", "peak_bytes", "live_bytes", "allocator_bytes_in_use")

    def __init__(self, allocator_name, total_bytes=0, peak_bytes=0, live_bytes=0, allocator_bytes_in_use=0):
        self.allocator_name = allocator_name
        self.total_bytes = total_bytes
        self.peak_bytes = peak_bytes
        self.live_bytes = live_bytes
        self.allocator_bytes_in_use = allocator_bytes_in_use

    def __repr__(self):
        return (f"<AllocatorMemoryUsed {self.allocator_name} peak {self.peak_bytes} B, "
                f"in use {self.allocator_bytes_in_use} B, allocated {self.total_bytes} B>")


class DeviceStepStats:
    """One device's part of a step. `memory` (graphrt keeps TF's per-node
    AllocatorMemoryUsed once per device and step) lists the device's
    allocators; it is empty for CPU devices, whose tensors are numpy arrays
    that no allocator of graphrt hands out."""

    __slots__ = ("device", "node_stats", "memory")

    def __init__(self, device, node_stats=None, memory=None):
        self.device = device
        self.node_stats = node_stats if node_stats is not None else []
        self.memory = memory if memory is not None else []

    def __repr__(self):
        return f"<DeviceStepStats {self.device}: {len(self.node_stats)} nodes>"


class StepStats:
    def __init__(self, dev_stats=None):
        self.dev_stats = dev_stats if dev_stats is not None else []

    def __repr__(self):
        return f"<StepStats {len(self.dev_stats)} devices>"


class StepStatsCollector:
    """Collects NodeExecStats from the executors of one step (thread-safe),
    and watches the allocators of `devices` from now until finalize()."""

    def __init__(self, devices=()):
        self._lock = threading.Lock()
        self._by_device = {}
        self._watches = []  # (device name, allocator, MemoryWatch)
        for device in devices:
            allocator = getattr(getattr(device, "executor", None), "allocator", None)
            if allocator is not None:
                self._watches.append((device.name, allocator, allocator.start_watch()))

    def record(self, device, stats):
        with self._lock:
            dev = self._by_device.get(device)
            if dev is None:
                dev = self._by_device[device] = DeviceStepStats(device)
            dev.node_stats.append(stats)

    def finalize(self, into=None):
        into = into if into is not None else StepStats()
        watches, self._watches = self._watches, []
        for device, allocator, watch in watches:
            allocator.stop_watch(watch)
            with self._lock:
                dev = self._by_device.get(device)
                if dev is None:
                    dev = self._by_device[device] = DeviceStepStats(device)
            dev.memory.append(AllocatorMemoryUsed(watch.allocator_name, watch.total_bytes, watch.peak_bytes,
                                                  watch.end_requested_bytes, watch.end_bytes))
        with self._lock:
            for device in sorted(self._by_device):
                into.dev_stats.append(self._by_device[device])
        return into


def now_micros():
    return time.time_ns() // 1000


def label(node, input_names=None):
    """TF's timeline label: `name = Op(in1, in2)`; transfers say where to/from."""
    if node.op in SEND_OPS:
        return f"{node.name} = {node.op}({node.attrs.get('tensor_name')} @{node.attrs.get('recv_device')})"
    if node.op in RECV_OPS:
        return f"{node.name} = {node.op}({node.attrs.get('tensor_name')} @{node.attrs.get('send_device')})"
    inputs = input_names if input_names is not None else node.data_inputs()
    return f"{node.name} = {node.op}({', '.join(inputs)})"

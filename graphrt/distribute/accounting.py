"""What a traced step moved and held, per device, read from its RunMetadata.

    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
    sess.run(outs, options=opts, run_metadata=md)
    tf.distribute.bytes_sent(md)     # {'/job:.../device:SIM:0': 6000, ...}
    tf.distribute.device_memory(md)  # {'/job:.../device:SIM:0': Memory(peak_bytes, bytes_in_use, live_bytes)}

Transfers are counted on the receiving side, as they happen: each `_Recv`
that ran, with the bytes of the value it produced, is charged to the
`send_device` its partition graph names.
"""
import collections

from .. import errors
from ..framework.op_categories import RECV_OPS

Transfer = collections.namedtuple("Transfer", "send_device recv_device nbytes recv_node")
Transfer.__doc__ = "One value that crossed devices in a traced step."


def transfers(run_metadata):
    """Every `_Recv` of the step as a Transfer (needs trace_level > 0 and output_partition_graphs)."""
    if not run_metadata.partition_graphs:
        raise errors.InvalidArgumentError(
            "transfers() needs the partition graphs: run with RunOptions(output_partition_graphs=True)")
    ends = {}
    for graph in run_metadata.partition_graphs:
        for node in graph.node:
            if node.op in RECV_OPS:
                ends[(node.attrs["recv_device"], node.name)] = node.attrs["send_device"]
    out = []
    for dev in run_metadata.step_stats.dev_stats:
        for ns in dev.node_stats:
            send = ends.get((dev.device, ns.node_name)) if ns.op in RECV_OPS else None
            if send is not None:
                out.append(Transfer(send, dev.device, sum(o.requested_bytes for o in ns.output), ns.node_name))
    return out


def _selected(devices):
    if devices is None:
        return None
    from .replicas import canonical_device
    return {canonical_device(d) for d in devices}


def _matches(name, wanted):
    if wanted is None:
        return True
    from .replicas import canonical_device
    local = canonical_device(name)
    return local in wanted or any(local.endswith(w) for w in wanted)


def bytes_sent(run_metadata, devices=None):
    """{send device: bytes it sent} over transfers between `devices` (all devices when None)."""
    wanted = _selected(devices)
    out = collections.Counter()
    for t in transfers(run_metadata):
        if _matches(t.send_device, wanted) and _matches(t.recv_device, wanted):
            out[t.send_device] += t.nbytes
    return dict(sorted(out.items()))  # by device name: the same order whichever device finished first


def messages_sent(run_metadata, devices=None):
    """{send device: number of values it sent} over transfers between `devices`."""
    wanted = _selected(devices)
    out = collections.Counter()
    for t in transfers(run_metadata):
        if _matches(t.send_device, wanted) and _matches(t.recv_device, wanted):
            out[t.send_device] += 1
    return dict(sorted(out.items()))


Memory = collections.namedtuple("Memory", "peak_bytes bytes_in_use live_bytes")
Memory.__doc__ = ("A device's memory over one step: the allocator's peak and final bytes in use, and the bytes "
                  "the allocations live at the end asked for (AllocatorMemoryUsed's fields).")


def device_memory(run_metadata):
    """{device: Memory(peak_bytes, bytes_in_use, live_bytes)} of the step, summed over each
    device's allocators; devices without an allocator (CPU) are absent."""
    out = {}
    for dev in run_metadata.step_stats.dev_stats:
        if dev.memory:
            out[dev.device] = Memory(sum(m.peak_bytes for m in dev.memory),
                                     sum(m.allocator_bytes_in_use for m in dev.memory),
                                     sum(m.live_bytes for m in dev.memory))
    return dict(sorted(out.items()))


def step_time_micros(run_metadata):
    """Wall time of the traced step: first node start to last node end, in microseconds."""
    starts, ends = [], []
    for dev in run_metadata.step_stats.dev_stats:
        for ns in dev.node_stats:
            starts.append(ns.all_start_micros)
            ends.append(ns.all_start_micros + ns.all_end_rel_micros)
    if not starts:
        raise errors.InvalidArgumentError("step_time_micros() needs a traced run (RunOptions.trace_level > 0)")
    return max(ends) - min(starts)

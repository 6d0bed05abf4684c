"""Allocator memory in traced steps, per kernel.

Per step and device, `DeviceStepStats.memory` (step_stats.py) has the
allocator's peak, in-use and live bytes over the step, from a MemoryWatch
the collector opens on each device allocator. This module adds what the
Chrome trace's memory counter track is drawn from: each kernel of an
accelerator device records, in `NodeExecStats.memory`, the bytes its
device's allocator held when it ended (TF's NodeExecStats.memory with
allocator_bytes_in_use), and `counter_events` turns those into counter
events ("ph": "C"), one track per device allocator.
"""
from .step_stats import AllocatorMemoryUsed


def node_memory(executor):
    """[AllocatorMemoryUsed] of `executor`'s allocator now (empty without one)."""
    allocator = getattr(executor, "allocator", None)
    if allocator is None:
        return ()
    stats = allocator.stats()
    return (AllocatorMemoryUsed(allocator.name, peak_bytes=stats.peak_bytes_in_use,
                                allocator_bytes_in_use=stats.bytes_in_use),)


def counter_events(step_stats, new_pid):
    """Chrome trace counter events of every device's allocator bytes in use.

    `new_pid(process_name)` gives the trace process id of a (new) process row.
    Each device with samples gets a row '<device> Memory' whose counter
    steps at each kernel's end, and ends with what the step left in use.
    """
    events = []
    for dev in step_stats.dev_stats:
        samples = sorted((ns.all_start_micros + max(ns.all_end_rel_micros, 0), m.allocator_name,
                          m.allocator_bytes_in_use)
                         for ns in dev.node_stats for m in getattr(ns, "memory", ()))
        if not samples:
            continue
        end = max(ns.all_start_micros + max(ns.all_end_rel_micros, 0) for ns in dev.node_stats) + 1
        # What the step left behind, once every kernel's inputs were freed.
        samples += [(end, used.allocator_name, used.allocator_bytes_in_use) for used in getattr(dev, "memory", ())]
        process = f"{dev.device} Memory"
        pid = new_pid(process)
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
        for ts, allocator, in_use in samples:
            events.append({"name": f"Memory {allocator}", "cat": "Memory", "ph": "C", "pid": pid, "ts": ts,
                           "args": {"bytes_in_use": in_use}})
        labels = [f"{used.allocator_name}: step peak {used.peak_bytes} B, {used.allocator_bytes_in_use} B in use "
                  f"at the end" for used in getattr(dev, "memory", ())]
        if labels:
            events.append({"name": "process_labels", "ph": "M", "pid": pid, "args": {"labels": "; ".join(labels)}})
    return events

"""StepStats -> Chrome trace JSON (opens in Perfetto or chrome://tracing).

As TF's timeline.py: one process per device (and one per device stream when
kernels and copies ran on streams), ops as complete events on greedy lanes,
and flow arrows for data that crosses lanes. Unlike TF 1.x, `_Send`/`_Recv`
are in the stats, so every cross-device transfer shows as an arrow from the
Send to its Recv, labelled with its rendezvous edge name. With
show_memory=True each device allocator gets a counter track of its bytes in
use (runtime/memory_stats.py).
"""
import json
import re

from ..runtime import memory_stats

_LABEL = re.compile(r"^(.*?) = (\w+)\((.*)\)?$")
_TRANSFER_LABEL = re.compile(r"^(.*?) = (_\w*(?:Send|Recv))\(([^ ]*) @(.*)$")


class Timeline:
    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False, op_time="schedule"):
        """The trace as JSON; `show_memory` adds a counter track of each device
        allocator's bytes in use (sampled at every kernel's end)."""
        return json.dumps(self.trace_events(show_dataflow, show_memory), indent=4)

    def trace_events(self, show_dataflow=True, show_memory=False):
        events = []
        pids = {}
        producers = {}   # node name -> (pid, tid, end ts)
        sends = {}       # tensor name -> (pid, tid, ts)
        recvs = []       # (tensor name, pid, tid, ts)
        consumers = []   # (node name, inputs, pid, tid, ts)
        for dev in self._step_stats.dev_stats:
            by_stream = {}
            for ns in dev.node_stats:
                by_stream.setdefault(getattr(ns, "stream", None), []).append(ns)
            for stream, stats in sorted(by_stream.items(), key=lambda kv: kv[0] or ""):
                process = f"{dev.device} Compute" if stream is None else f"{dev.device}/stream:{stream}"
                pid = pids.setdefault(process, len(pids) + 1)
                events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}})
                events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
                lanes = []
                for ns in sorted(stats, key=lambda s: s.all_start_micros):
                    start, dur = ns.all_start_micros, max(ns.all_end_rel_micros, 0)
                    tid = next((i for i, end in enumerate(lanes) if end <= start), len(lanes))
                    if tid == len(lanes):
                        lanes.append(0)
                        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                                       "args": {"name": f"lane {tid}"}})
                    lanes[tid] = start + dur
                    name, op, inputs, peer = _parse_label(ns)
                    args = {"name": name, "op": op}
                    if peer is not None:
                        args["tensor"] = inputs[0] if inputs else ""
                        args["peer_device"] = peer
                    else:
                        args.update({f"input{i}": inp for i, inp in enumerate(inputs)})
                    if ns.output:
                        args["output_bytes"] = sum(o.requested_bytes for o in ns.output)
                    events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": tid, "ts": start,
                                   "dur": dur, "args": args})
                    producers[name] = (pid, tid, start + dur)
                    if op.endswith("Send") and peer is not None:
                        sends[inputs[0]] = (pid, tid, start)
                    elif op.endswith("Recv") and peer is not None:
                        recvs.append((inputs[0], pid, tid, start + dur))
                    else:
                        consumers.append((name, inputs, pid, tid, start))
        if show_dataflow:
            flow_id = 0
            for tensor, pid, tid, ts in recvs:
                if tensor in sends:
                    spid, stid, sts = sends[tensor]
                    flow_id += 1
                    events.append({"name": tensor, "cat": "DataFlow", "ph": "s", "id": flow_id, "pid": spid,
                                   "tid": stid, "ts": sts})
                    events.append({"name": tensor, "cat": "DataFlow", "ph": "f", "bp": "e", "id": flow_id,
                                   "pid": pid, "tid": tid, "ts": max(ts - 1, sts)})
            for name, inputs, pid, tid, ts in consumers:
                for inp in inputs:
                    src = inp.lstrip("^").partition(":")[0]
                    where = producers.get(src)
                    if where is None or (where[0], where[1]) == (pid, tid):
                        continue
                    flow_id += 1
                    events.append({"name": src, "cat": "DataFlow", "ph": "s", "id": flow_id, "pid": where[0],
                                   "tid": where[1], "ts": max(where[2] - 1, 0)})
                    events.append({"name": src, "cat": "DataFlow", "ph": "f", "bp": "e", "id": flow_id,
                                   "pid": pid, "tid": tid, "ts": ts})
        if show_memory:
            events += memory_stats.counter_events(self._step_stats, lambda name: pids.setdefault(name, len(pids) + 1))
        return {"traceEvents": events, "displayTimeUnit": "ns"}


def _parse_label(ns):
    """(node name, op, inputs, peer device or None) from a stats label."""
    label = ns.timeline_label or f"{ns.node_name} = {ns.op}()"
    m = _TRANSFER_LABEL.match(label)
    if m:
        return m.group(1), m.group(2), [m.group(3)], m.group(4)
    m = _LABEL.match(label)
    if not m:
        return ns.node_name, ns.op, [], None
    inputs = [i.strip() for i in m.group(3).rstrip(")").split(",") if i.strip()]
    return m.group(1), m.group(2), inputs, None

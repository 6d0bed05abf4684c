"""Looking at placed and partitioned graphs: a text view (one table per
device, then the transfers with their rendezvous keys and byte sizes once a
traced run has measured them) and DOT (one cluster per device, transfers as
dashed edges, every node labelled with why it is where it is).

    view = graphrt.partition.inspect(graph, devices="CPU:3")
    print(view.text());  open("p.dot", "w").write(view.dot())

or, for the partitions a session actually runs:

    view = graphrt.partition.inspect(session=sess, fetches=train_op, feeds={x: ...},
                                     run_metadata=traced_metadata)
"""
import shutil
import subprocess

from ..framework.device_spec import DeviceInfo, canonical_name, local_device_names, parse_device_count
from ..framework.graph_def import GraphDef
from ..framework.op_categories import RECV_OPS, TRANSFER_OPS
from ..framework.rendezvous_key import format_key
from .plan import build_plan

class PartitionView:
    """The placement and partitions of one graph, renderable as text, DOT or SVG."""

    def __init__(self, graph_def, placement, partitions, transfer_bytes=None):
        self.graph_def = graph_def
        self.placement = placement
        self.partitions = partitions
        self.transfers = list(partitions.transfers)
        self.transfer_bytes = dict(transfer_bytes or {})
        self._incarnations = {}
        for gd in partitions.values():
            for n in gd.node:
                if n.op in TRANSFER_OPS:
                    self._incarnations[n.attrs["send_device"]] = int(n.attrs.get("send_device_incarnation", 0))
        names = sorted(partitions)
        self._prefix = _common_task_prefix(names)

    def short(self, device):
        return device[len(self._prefix):].replace("/device:", "") if self._prefix and device.startswith(
            self._prefix) else device

    def key_of(self, t):
        return format_key(canonical_name(t.send_device), self._incarnations.get(t.send_device, 0),
                          canonical_name(t.recv_device), t.tensor_name)

    # -- text -------------------------------------------------------------------------
    def text(self):
        lines = []
        reasons = self.placement.reasons
        for device in sorted(self.partitions):
            nodes = self.partitions[device].node
            lines.append(f"== {device}  ({len(nodes)} nodes)")
            rows = [("node", "op", "inputs", "placement")]
            for n in nodes:
                if n.op in TRANSFER_OPS:
                    peer = n.attrs["recv_device"] if "Send" in n.op else n.attrs["send_device"]
                    arrow = "->" if "Send" in n.op else "<-"
                    why = f"{arrow} {self.short(peer)} {n.attrs['tensor_name']}"
                else:
                    why = reasons.get(n.name, "transfer (partitioner)")
                inputs = ", ".join(n.input)
                rows.append((n.name, n.op, inputs if len(inputs) <= 40 else inputs[:37] + "...", why))
            lines.extend("  " + line for line in _table(rows))
            lines.append("")
        lines.append(f"== transfers ({len(self.transfers)})")
        rows = [("edge", "tensor", "from -> to", "bytes", "rendezvous key")]
        for t in self.transfers:
            tensor = "(control)" if t.control else f"{t.src}:{t.src_slot} {t.dtype.name}"
            size = self.transfer_bytes.get(t.recv_node)
            rows.append((t.tensor_name, tensor, f"{self.short(t.send_device)} -> {self.short(t.recv_device)}",
                         "?" if size is None else _bytes(size), self.key_of(t)))
        lines.extend("  " + line for line in _table(rows))
        return "\n".join(lines) + "\n"

    __str__ = text

    # -- dot ----------------------------------------------------------------------------
    def dot(self):
        out = ["digraph partitions {", '  rankdir=TB; compound=true; newrank=true;',
               '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", fontsize=10];',
               '  edge [fontname="Helvetica", fontsize=9];']
        reasons = self.placement.reasons
        colors = ["#e8f0fe", "#e6f4ea", "#fef7e0", "#fce8e6", "#f3e8fd", "#e0f7fa"]
        for i, device in enumerate(sorted(self.partitions)):
            gd = self.partitions[device]
            out.append(f"  subgraph cluster_{i} {{")
            out.append(f'    label="{_esc(self.short(device))}"; style="rounded,filled"; '
                       f'fillcolor="{colors[i % len(colors)]}"; color="#888888";')
            names = {n.name for n in gd.node}
            for n in gd.node:
                if n.op in TRANSFER_OPS:
                    label = f"{n.name}\\n{n.op} {n.attrs['tensor_name']}"
                    shape = ', shape=cds, fillcolor="#ffe0b2"'
                else:
                    label = f"{n.name}\\n{n.op}\\n{reasons.get(n.name, 'transfer')}"
                    shape = ""
                out.append(f'    "{_esc(device)}::{_esc(n.name)}" [label="{_esc(label)}"{shape}];')
            for n in gd.node:
                for inp in n.input:
                    ctrl = inp.startswith("^")
                    src = inp[1:] if ctrl else inp.partition(":")[0]
                    if src in names:
                        style = ' [style=dotted, arrowhead=odot]' if ctrl else ""
                        out.append(f'    "{_esc(device)}::{_esc(src)}" -> "{_esc(device)}::{_esc(n.name)}"{style};')
            out.append("  }")
        for t in self.transfers:
            size = self.transfer_bytes.get(t.recv_node)
            label = t.tensor_name + ("" if size is None else f"\\n{_bytes(size)}")
            src = f"{_esc(self._loc_of(t.send_device))}::{_esc(t.send_node)}"
            dst = f"{_esc(self._loc_of(t.recv_device))}::{_esc(t.recv_node)}"
            out.append(f'  "{src}" -> "{dst}" [style=dashed, color="#d93025", fontcolor="#d93025", '
                       f'label="{_esc(label)}"];')
        out.append("}")
        return "\n".join(out) + "\n"

    def _loc_of(self, device):
        if device in self.partitions:
            return device
        for loc in self.partitions:
            if device.startswith(loc):
                return loc
        return device

    def svg(self):
        """SVG via Graphviz `dot`; a RuntimeError saying how to get it when it is absent."""
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError("SVG output needs Graphviz's `dot` program, which is not installed "
                               "(e.g. `apt install graphviz`); use format 'dot' and render it elsewhere.")
        result = subprocess.run([exe, "-Tsvg"], input=self.dot().encode(), capture_output=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"dot failed: {result.stderr.decode(errors='replace')[:500]}")
        return result.stdout.decode()

    def render(self, fmt):
        fmt = (fmt or "text").lower()
        if fmt == "text":
            return self.text()
        if fmt == "dot":
            return self.dot()
        if fmt == "svg":
            return self.svg()
        raise ValueError(f"unknown format {fmt!r}: use text, dot or svg")

    def __repr__(self):
        return f"<PartitionView {len(self.partitions)} partitions, {len(self.transfers)} transfers>"


def inspect(graph=None, devices="CPU:1", fetches=None, feeds=None, allow_soft_placement=False, session=None,
            run_metadata=None, format=None):
    """Places and partitions `graph` (a Graph or GraphDef) over `devices`
    ('CPU:3', 'CPU:1,SIM:2', or a list of full names) — or shows the plan a
    `session` built for `fetches`/`feeds`. Returns a PartitionView (or its
    rendering when `format` is 'text', 'dot' or 'svg')."""
    if session is not None:
        plan = session.plan_for(fetches, feeds)
        # The partitions that run: per device (a cluster's workers split their task's graph per device).
        parts = _Parts(plan.device_partitions, plan.layout.transfers)
        view = PartitionView(plan.layout.graph_def, plan.layout.placement, parts, _transfer_bytes(run_metadata))
        return view.render(format) if format else view
    if graph is None:
        raise ValueError("inspect needs a graph (or a session)")
    tensors, ops = [], []
    if isinstance(graph, GraphDef):
        source = graph
    elif fetches is not None:
        fetch_list = fetches if isinstance(fetches, (list, tuple)) else [fetches]
        tensors = [f for f in fetch_list if hasattr(f, "value_index")]
        ops = [f for f in fetch_list if not hasattr(f, "value_index")]
        source = graph
    else:
        source = graph.as_graph_def()
    plan = build_plan(source, list(feeds or []), tensors, ops, _devices(devices),
                      allow_soft_placement=allow_soft_placement)
    view = PartitionView(plan.graph_def, plan.placement, plan.partitions, _transfer_bytes(run_metadata))
    return view.render(format) if format else view


class _Parts(dict):
    def __init__(self, graphs, transfers):
        super().__init__(graphs)
        self.transfers = transfers


def _devices(devices):
    if isinstance(devices, str):
        return [DeviceInfo(n) for n in local_device_names(parse_device_count(devices))]
    return [d if isinstance(d, DeviceInfo) else DeviceInfo(getattr(d, "name", d), getattr(d, "incarnation", 0))
            for d in devices]


def _transfer_bytes(run_metadata):
    """Recv node name -> bytes received, from a traced run's step stats."""
    if run_metadata is None:
        return {}
    sizes = {}
    for dev in run_metadata.step_stats.dev_stats:
        for ns in dev.node_stats:
            if ns.op in RECV_OPS and ns.output:
                sizes[ns.node_name] = sum(o.requested_bytes for o in ns.output)
    return sizes


def _common_task_prefix(names):
    prefixes = {n.split("/device:")[0] for n in names}
    return prefixes.pop() if len(prefixes) == 1 else ""


def _table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _esc(text):
    return str(text).replace('"', '\\"')

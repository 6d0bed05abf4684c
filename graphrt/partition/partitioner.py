"""The partitioner: a pure function from a placed graph to one GraphDef per
device, with a `_Send`/`_Recv` pair on every edge that crosses devices
(TF's graph_partition.cc). The distributed master partitions per device
too, and sends each task its devices' partitions.

* One pair per (source tensor, destination device): several consumers of
  one tensor on one device share its `_Recv`. Ref-typed tensors are never
  shared (each read is its own transfer).
* The pair's `tensor_name` is `edge_<id>_<source node>`, the edge id from
  the whole graph; nodes are named `<source>/_<n>` (the session's counter).
* A control edge that crosses devices sends a zero-element float tensor
  from a dummy `Const` (controlled by the source) and the destination takes
  a control input from an `Identity` of the received tensor.
* A variable read that crosses devices (a ref-typed edge) is read by the
  `_Send` on the variable's device, so the Send also waits for the
  consumer's control inputs: `with control_dependencies([assign]): read`
  reads after the assign even when the read is on another device.
* Control flow (control_flow.py): a while loop spanning devices first gets
  a control loop per (frame, device); the control edge it gives a
  destination node moves onto the `_Recv` made for that node's
  cross-device input, so the `_Recv` runs once per iteration. In a graph
  with control flow a cross-device `_Recv` may receive a dead tensor (an
  untaken branch); it is marked `_may_be_dead` so its partition's executor
  tracks deadness even if the partition has no control-flow op itself.
  Deadness starts only at a Switch (or a `_Recv` marked so), so only a
  tensor downstream of one is marked: a fed placeholder sent to a device
  whose partition runs a loop is never dead.
* A transfer between two CPU devices of one task hands over the array
  itself. When the sender's kernel makes a fresh array and the `_Send` is
  its only reader, nothing else can see that array once it is sent, so both
  nodes are marked `_sole_reference` and the receiving partition may let a
  kernel overwrite it, as it would a fresh value of its own (TF forwards a
  received buffer whose reference count is one).
"""
import itertools

import numpy as np

from ..framework import dtypes, registry
from ..framework.device_spec import DeviceSpec
from ..framework.graph_def import GraphDef, NodeDef
from . import control_flow


class Partitions(dict):
    """device -> GraphDef, plus the transfers that connect them."""

    def __init__(self, graphs, transfers):
        super().__init__(graphs)
        self.transfers = transfers  # list of Transfer

    def __repr__(self):
        return f"<Partitions {len(self)} devices, {len(self.transfers)} transfers>"


class Transfer:
    """One Send/Recv pair: for inspection and for reporting hangs."""

    __slots__ = ("tensor_name", "src", "src_slot", "dst", "send_node", "recv_node", "send_device", "recv_device",
                 "dtype", "control")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        kind = "control" if self.control else f"{self.src}:{self.src_slot}"
        return f"<Transfer {self.tensor_name} {kind}: {self.send_device} -> {self.recv_device}>"


def new_name_counter():
    counter = itertools.count()
    return lambda prefix: f"{prefix}/_{next(counter)}"


def partition(graph_def, placement, incarnations, new_name=None):
    """Splits `graph_def` by device. `placement` maps node -> device,
    `incarnations` device -> int."""
    new_name = new_name or new_name_counter()
    graph_def, placement = control_flow.add_control_flow(graph_def, placement, new_name)
    nodes = graph_def.node
    may_be_dead = control_flow.has_control_flow(nodes) or any(n.attrs.get("_may_be_dead") for n in nodes)
    by_name = {n.name: n for n in nodes}
    dead_able = _may_be_dead_nodes(nodes) if may_be_dead else frozenset()
    out_dtypes = {n.name: registry.get_op_def(n.op).output_dtypes(n.attrs) for n in nodes}
    handed_over = _handed_over_tensors(nodes, by_name, placement, out_dtypes, dead_able)
    graphs = {}
    transfers = []
    data_recvs = {}     # (src, slot, dst device) -> recv node name
    control_recvs = {}  # (src, dst device) -> identity node name
    edge_ids = itertools.count()

    def part(device):
        if device not in graphs:
            graphs[device] = GraphDef()
        return graphs[device]

    def transfer_attrs(tensor_name, src_dev, dst_dev, src, dst):
        attrs = {"tensor_name": tensor_name, "send_device": src_dev,
                 "send_device_incarnation": int(incarnations.get(src_dev, 0)), "recv_device": dst_dev,
                 "client_terminated": False, "_src": src, "_dst": dst}
        if src in dead_able:
            attrs["_may_be_dead"] = True
        return attrs

    def recv_inputs(frame_controls):
        """A _Recv inside a loop frame takes one of its consumer's control-loop edges."""
        return [frame_controls.pop()] if frame_controls else []

    def control_transfer(src, dst_dev, dst_name, frame_controls=None):
        """The name of a node on dst's device that completes after `src` runs."""
        src_dev = placement[src]
        key = (src, dst_dev)
        if key not in control_recvs:
            tensor_name = f"edge_{next(edge_ids)}_{src}"
            attrs = transfer_attrs(tensor_name, src_dev, dst_dev, src, dst_name)
            dummy = NodeDef(new_name(f"{src}/ctrl"), "Const", [f"^{src}"], src_dev,
                            {"dtype": dtypes.float32, "value": _EMPTY_FLOAT})
            send = NodeDef(new_name(src), "_Send", [dummy.name], src_dev, dict(T=dtypes.float32, **attrs))
            recv = NodeDef(new_name(src), "_Recv", recv_inputs(frame_controls), dst_dev,
                           dict(tensor_type=dtypes.float32, **attrs))
            ident = NodeDef(new_name(src), "Identity", [recv.name], dst_dev, {"T": dtypes.float32})
            part(src_dev).node.extend([dummy, send])
            part(dst_dev).node.extend([recv, ident])
            control_recvs[key] = ident.name
            transfers.append(Transfer(tensor_name=tensor_name, src=src, src_slot=-1, dst=dst_name,
                                      send_node=send.name, recv_node=recv.name, send_device=src_dev,
                                      recv_device=dst_dev, dtype=dtypes.float32, control=True))
        return control_recvs[key]

    for n in nodes:
        dst_dev = placement[n.name]
        inputs = []
        frame_controls = [inp for inp in n.input if inp.startswith("^" + control_flow.CONTROL_LOOP_PREFIX)
                          and by_name[inp[1:]].op == "Merge"] if may_be_dead else []
        for inp in n.input:
            edge_id = next(edge_ids)
            if inp.startswith("^"):
                src = inp[1:]
                if frame_controls and inp in frame_controls:
                    continue  # a control-loop edge: it goes to this node's _Recvs (what is left, below)
                if placement[src] == dst_dev:
                    inputs.append(inp)
                else:
                    inputs.append(f"^{control_transfer(src, dst_dev, n.name, frame_controls)}")
                continue
            src, _, slot = inp.partition(":")
            slot = int(slot) if slot else 0
            if src not in by_name:
                raise ValueError(f"Node '{n.name}': input '{inp}' is not in the graph")
            src_dev = placement[src]
            if src_dev == dst_dev:
                inputs.append(inp)
                continue
            dtype = out_dtypes[src][slot]
            key = (src, slot, dst_dev)
            if key in data_recvs and not dtype.is_ref_dtype:
                inputs.append(data_recvs[key])
                continue
            tensor_name = f"edge_{edge_id}_{src}"
            base = dtype.base_dtype
            send_inputs = [inp]
            if dtype.is_ref_dtype:
                # The Send reads the variable; it must read after everything the
                # consumer waits for (its control inputs), not whenever the
                # variable happens to be ready.
                # (A control-loop edge is not one of those: it belongs to the _Recv.)
                for c in n.control_inputs():
                    if f"^{c}" in frame_controls:
                        continue
                    send_inputs.append(f"^{c}" if placement[c] == src_dev else
                                       f"^{control_transfer(c, src_dev, n.name)}")
            attrs = transfer_attrs(tensor_name, src_dev, dst_dev, src, n.name)
            if (src, slot) in handed_over and not frame_controls:
                attrs["_sole_reference"] = True
            send = NodeDef(new_name(src), "_Send", send_inputs, src_dev, dict(T=base, **attrs))
            recv = NodeDef(new_name(src), "_Recv", recv_inputs(frame_controls), dst_dev,
                           dict(tensor_type=base, **attrs))
            part(src_dev).node.append(send)
            part(dst_dev).node.append(recv)
            data_recvs[key] = recv.name
            transfers.append(Transfer(tensor_name=tensor_name, src=src, src_slot=slot, dst=n.name,
                                      send_node=send.name, recv_node=recv.name, send_device=src_dev,
                                      recv_device=dst_dev, dtype=base, control=False))
            inputs.append(recv.name)
        for c in dict.fromkeys(frame_controls):  # control-loop edges no new _Recv took
            if c not in inputs:
                inputs.append(c)
        part(dst_dev).node.append(NodeDef(n.name, n.op, inputs, dst_dev, n.attrs))
    return Partitions(graphs, transfers)


_EMPTY_FLOAT = np.zeros([0], dtype=np.float32)
_EMPTY_FLOAT.flags.writeable = False


def _handed_over_tensors(nodes, by_name, placement, out_dtypes, dead_able):
    """The (node, slot) tensors whose array the `_Send` hands over whole: made
    fresh by a CPU kernel (KernelDef.fresh_outputs), read by nodes of one other
    CPU device of the same task only, so the `_Send` is the array's one reader
    on its own device and the receiver gets the only reference."""
    readers = {}
    for n in nodes:
        for inp in n.input:
            if not inp.startswith("^"):
                src, _, slot = inp.partition(":")
                readers.setdefault((src, int(slot) if slot else 0), set()).add(placement[n.name])
    handed = set()
    for (src, slot), devices in readers.items():
        if len(devices) != 1 or src in dead_able or src not in by_name:
            continue
        src_dev, dst_dev = placement[src], next(iter(devices))
        if src_dev == dst_dev or out_dtypes[src][slot].is_ref_dtype or not _same_task_cpus(src_dev, dst_dev):
            continue
        kdef = registry.get_kernel_def(by_name[src].op, "CPU")
        if kdef is not None and kdef.fresh_outputs:
            handed.add((src, slot))
    return handed


def _same_task_cpus(a, b):
    a, b = DeviceSpec.from_string(a), DeviceSpec.from_string(b)
    return (a.device_type == b.device_type == "CPU"
            and (a.job, a.replica, a.task) == (b.job, b.replica, b.task))


def _may_be_dead_nodes(nodes):
    """Names of the nodes whose outputs may be dead: those downstream (by data or
    control edges) of a Switch or of a `_Recv` that may receive a dead tensor."""
    consumers = {}
    for n in nodes:
        for inp in n.input:
            src = inp[1:] if inp.startswith("^") else inp.split(":")[0]
            consumers.setdefault(src, []).append(n.name)
    todo = [n.name for n in nodes if n.op in control_flow.SWITCH_OPS or n.attrs.get("_may_be_dead")]
    seen = set(todo)
    while todo:
        for dst in consumers.get(todo.pop(), ()):
            if dst not in seen:
                seen.add(dst)
                todo.append(dst)
    return frozenset(seen)

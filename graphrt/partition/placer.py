"""The placer: a pure function from (graph, devices, options) to an
assignment of every node to a full device name (TF's placer.cc).

1. Colocation groups (union-find): a node joins the groups named by its
   `_class` attr (`loc:@v`) or else the group of its own name; the two ends
   of a reference edge (an input that takes a variable itself, e.g. Assign)
   or of a resource edge (a TensorArray handle) are joined too.
2. Each group merges its members' requested device specs (a conflict is an
   error unless soft placement clears the conflicting fields) and keeps
   only device types every member has a kernel for.
3. Candidates: devices matching the merged spec with a supported type,
   highest type priority first, then by name. With soft placement, a spec
   that matches nothing is retried without its type and index.
4. Every group takes its first candidate, except that a lone "generator"
   (no inputs, one output: constants) goes where all its consumers are,
   and a lone metadata op (Shape, Size, Rank) goes where its input is.
5. With `default_task` (the distributed master passes its client task), a
   group whose request leaves the task open (no job, or the default's job)
   prefers that task's devices: ops without a device request run where the
   client is, not on the first task by name (`/job:ps` < `/job:worker`).

Every node also gets a reason ("requested /device:CPU:1", "colocated with v",
"soft-placed: ...", "default", "next to its consumers") for inspection.
"""
import sys

from .. import errors
from ..framework import dtypes, registry
from ..framework.device_spec import DeviceSpec
from . import control_flow

_METADATA_OPS = frozenset({"Shape", "Size", "Rank"})


class Placement(dict):
    """node name -> full device name, plus `reasons` (node name -> why)."""

    def __init__(self, assignment, reasons):
        super().__init__(assignment)
        self.reasons = reasons

    def devices(self):
        return sorted(set(self.values()))


class _DSU:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
        return ra


def _device_sort_key(device):
    s = device.spec
    return (-device.priority, s.job, s.replica, s.task, s.device_type, s.device_index)


def place(graph_def, devices, allow_soft_placement=False, log_device_placement=False, out=None,
          default_task=None):
    """Assigns every node of `graph_def` to one of `devices` (objects with
    `.name`, `.spec`, `.device_type`, `.priority`). Returns a Placement.
    `default_task` ('/job:j/replica:r/task:t') is preferred where a request
    leaves the task open (see rule 5)."""
    if default_task is not None and not isinstance(default_task, DeviceSpec):
        default_task = DeviceSpec.from_string(default_task)
    if not devices:
        raise errors.FailedPreconditionError("No devices are registered")
    devices = sorted(devices, key=_device_sort_key)
    nodes = graph_def.node
    by_name = {n.name: n for n in nodes}
    dsu = _DSU()
    for n in nodes:
        node_key = ("node", n.name)
        dsu.find(node_key)
        groups = [c[5:] for c in n.attrs.get("_class", ()) if isinstance(c, str) and c.startswith("loc:@")]
        for group in groups or [n.name]:
            dsu.union(("group", group), node_key)
    for n in nodes:
        op_def = registry.get_op_def(n.op)
        data_inputs = n.data_inputs()
        declared = op_def.input_dtypes(n.attrs) if _has_type_attrs(op_def, n.attrs) else []
        for pos, inp in enumerate(data_inputs):
            if pos < len(declared) and (declared[pos].is_ref_dtype or declared[pos] in (dtypes.resource, dtypes.variant)):
                src = inp.partition(":")[0]
                if src in by_name:
                    dsu.union(("node", src), ("node", n.name))

    members = {}
    for n in nodes:
        members.setdefault(dsu.find(("node", n.name)), []).append(n)

    assignment, reasons = {}, {}
    deferred = []
    for root, group in members.items():
        spec, requested_by, soft_note = _merged_spec(group, allow_soft_placement)
        supported = _supported_types(group)
        candidates = [d for d in devices if spec.matches(d.spec) and d.device_type in supported]
        if not candidates and allow_soft_placement and not spec.is_empty():
            relaxed = spec.replace(device_type=None, device_index=None)
            candidates = [d for d in devices if relaxed.matches(d.spec) and d.device_type in supported]
            if candidates:
                soft_note = f"soft-placed: {spec.to_string()} " + (
                    "does not exist" if not any(spec.matches(d.spec) for d in devices) else
                    f"has no kernel for {', '.join(sorted({n.op for n in group}))}")
        if not candidates:
            raise _placement_error(group, spec, supported, devices)
        if default_task is not None:
            candidates = _prefer_task(candidates, spec, default_task)
        lone = len(group) == 1 and spec.is_empty()
        node = group[0]
        if lone and node.op in _METADATA_OPS and node.data_inputs():
            deferred.append((node, candidates, "metadata"))
            continue
        if lone and _is_generator(node):
            deferred.append((node, candidates, "generator"))
            continue
        device = candidates[0]
        for n in group:
            assignment[n.name] = device.name
            reasons[n.name] = _reason(n, group, requested_by, soft_note)
    consumers = _consumers(nodes)
    for node, candidates, kind in deferred:
        device, reason = candidates[0], "default"
        names = {d.name: d for d in candidates}
        if kind == "metadata":
            src = node.data_inputs()[0].partition(":")[0]
            if assignment.get(src) in names:
                device, reason = names[assignment[src]], f"next to its input {src}"
        else:
            where = {assignment.get(c) for c in consumers.get(node.name, ())}
            if len(where) == 1 and next(iter(where)) in names:
                device, reason = names[next(iter(where))], "next to its consumers"
        assignment[node.name] = device.name
        reasons[node.name] = reason
    control_flow.colocate_control_flow(nodes, assignment, reasons)  # loop plumbing next to its data
    placement = Placement(assignment, reasons)
    if log_device_placement:
        stream = out or sys.stdout
        for n in nodes:
            print(f"{n.name}: ({n.op}): {assignment[n.name]}", file=stream)
    return placement


def _prefer_task(candidates, spec, default):
    """Candidates on the default task first (stable), for the fields `spec` leaves open."""
    if spec.job is not None and spec.job != default.job:
        return candidates
    fields = [f for f in ("job", "replica", "task") if getattr(spec, f) is None]
    if not fields:
        return candidates
    preferred = [d for d in candidates if all(getattr(d.spec, f) == getattr(default, f) for f in fields)]
    if not preferred or len(preferred) == len(candidates):
        return candidates
    chosen = set(id(d) for d in preferred)
    return preferred + [d for d in candidates if id(d) not in chosen]


def _has_type_attrs(op_def, attrs):
    try:
        op_def.input_dtypes(attrs)
        return True
    except KeyError:
        return False


def _merged_spec(group, allow_soft):
    spec = DeviceSpec()
    requested_by = None
    soft_note = None
    for n in group:
        if not n.device:
            continue
        try:
            req = DeviceSpec.from_string(n.device)
        except ValueError as e:
            raise errors.InvalidArgumentError(f"Malformed device specification '{n.device}' in node "
                                              f"'{n.name}': {e}", node=n.name) from None
        for field in DeviceSpec.__slots__:
            mine, theirs = getattr(spec, field), getattr(req, field)
            if theirs is None:
                continue
            if mine is None:
                setattr(spec, field, theirs)
            elif mine != theirs:
                if allow_soft and field in ("device_type", "device_index"):
                    spec.device_index = None
                    if field == "device_type":
                        spec.device_type = None
                    soft_note = f"soft-placed: conflicting requests in its colocation group ({n.device})"
                    continue
                other = next(m for m in group if m.device and getattr(DeviceSpec.from_string(m.device), field)
                             == mine)
                raise errors.InvalidArgumentError(
                    f"Cannot colocate nodes '{other.name}' and '{n.name}': Cannot merge devices with incompatible "
                    f"{field.replace('device_', '')}s: '{other.device}' and '{n.device}'", node=n.name)
        requested_by = requested_by or n
    return spec, requested_by, soft_note


def _supported_types(group):
    supported = None
    for n in group:
        types = set(registry.kernel_device_types(n.op))
        supported = types if supported is None else supported & types
    return supported or set()


def _is_generator(node):
    if node.data_inputs():
        return False
    try:
        outs = registry.get_op_def(node.op).output_dtypes(node.attrs)
    except KeyError:
        return False
    return len(outs) == 1 and not outs[0].is_ref_dtype


def _consumers(nodes):
    out = {}
    for n in nodes:
        for inp in n.input:
            src = inp[1:] if inp.startswith("^") else inp.partition(":")[0]
            out.setdefault(src, []).append(n.name)
    return out


def _reason(node, group, requested_by, soft_note):
    if node.op in ("_Arg", "_Retval") or node.attrs.get("client_terminated"):
        return "feed/fetch: on the client device"
    if soft_note:
        return soft_note
    anchors = [g[len("loc:@"):] for g in node.attrs.get("_class", ()) if g != f"loc:@{node.name}"]
    if anchors:  # its device, if any, was copied from the op it is colocated with
        return f"colocated with {anchors[0]}"
    if node.device:
        return f"requested {DeviceSpec.from_string(node.device).to_string()}"
    if len(group) > 1:
        anchor = requested_by or next((m for m in group if m.op == "VariableV2"), group[0])
        if anchor is not node:
            return f"colocated with {anchor.name}"
    return "default"


def _placement_error(group, spec, supported, devices):
    node = next((n for n in group if n.device), group[0])
    available = ", ".join(d.name for d in devices)
    if not any(spec.matches(d.spec) for d in devices):
        msg = (f"Cannot assign a device for operation '{node.name}': Operation was explicitly assigned to "
               f"{spec.to_string()} but available devices are [ {available} ]. Make sure the device "
               f"specification refers to a valid device.")
    elif not supported:
        ops = ", ".join(sorted({n.op for n in group}))
        msg = (f"Cannot assign a device for operation '{node.name}': no device type supports all of the ops "
               f"colocated with it ({ops}). Registered kernels: " +
               "; ".join(f"{n.op}: {registry.kernel_device_types(n.op)}" for n in group))
    else:
        ops = ", ".join(sorted({n.op for n in group}))
        msg = (f"Cannot assign a device for operation '{node.name}': Could not satisfy explicit device "
               f"specification '{spec.to_string()}' because no supported kernel for "
               f"{spec.device_type} devices is available for {ops}. Registered kernels: "
               f"{sorted(supported)}")
    if len(group) > 1:
        msg += "\nColocation group: " + ", ".join(f"{n.name} ({n.op}{', ' + n.device if n.device else ''})"
                                                  for n in group[:10])
    return errors.InvalidArgumentError(msg, node=node.name)

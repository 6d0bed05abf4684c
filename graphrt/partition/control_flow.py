"""Control flow across devices (TF's AddControlFlow / OptimizeControlFlowColocation).

Frames: every node runs in a frame, the root frame or the frame of a while
loop. `control_flow_info` finds each node's *home* frame (where its inputs
arrive; an Enter's is the enclosing frame) from the Enter/Exit structure;
the executor uses it too.

Colocation (`colocate_control_flow`, run by the placer): a Switch goes where
its data is, an Exit where its input is, a (non-ref) Enter and a
NextIteration where their first consumer is, so a loop's plumbing sits
next to the values it moves.

Control loops (`add_control_flow`, run by the partitioner): a device that
runs part of a loop body but not the loop's LoopCond still needs the loop's
iteration structure to know when an iteration starts and when the loop is
over. For every edge that crosses devices inside a frame, the destination
device gets (once per frame and device) a "control loop":

    Enter -> Merge -> Switch(pred = the frame's LoopCond) -> NextIteration -> Merge

named `_cloop<name>`; the LoopCond's value reaches it through a _Send/_Recv
every iteration, so the device that owns the LoopCond (the frame's leader)
drives every device's iterations. A nested frame's control loop is entered
from its parent frame's control loop; the outermost from an empty Const.
Each destination node gets a control edge from its control loop's Merge,
which the partitioner moves onto the `_Recv` it creates for that edge: the
`_Recv` then runs once per iteration, in the right frame and iteration.
"""
import collections

import numpy as np

from .. import errors
from ..framework import dtypes
from ..framework.graph_def import GraphDef, NodeDef
from ..framework.op_categories import CONTROL_FLOW_OPS, ENTER_OPS, EXIT_OPS, NEXT_ITERATION_OPS, SWITCH_OPS

CONTROL_LOOP_PREFIX = "_cloop"

_EMPTY_FLOAT = np.zeros([0], dtype=np.float32)
_EMPTY_FLOAT.flags.writeable = False


def has_control_flow(nodes):
    return any(n.op in CONTROL_FLOW_OPS for n in nodes)


# -- frames ------------------------------------------------------------------------------

class Frame:
    """A static frame: the root (name '') or a while loop's (its `frame_name`)."""

    __slots__ = ("name", "parent", "parallel_iterations", "depth")

    def __init__(self, name, parent, parallel_iterations=1):
        self.name = name
        self.parent = parent
        self.parallel_iterations = parallel_iterations
        self.depth = 0 if parent is None else parent.depth + 1

    @property
    def is_root(self):
        return self.parent is None

    def __repr__(self):
        return f"<Frame {self.name or '_root'}>"


def _source_names(node):
    return [inp[1:] if inp.startswith("^") else inp.partition(":")[0] for inp in node.input]


def control_flow_info(nodes, srcs=None):
    """(home, frames): home[i] is the Frame node i runs in (its inputs arrive
    there), frames maps frame names to Frames. `srcs[i]` lists the indices of
    node i's inputs (data and control); computed from the NodeDefs if None.

    InvalidArgumentError if a node has inputs from different frames, an Exit
    is outside any loop, or a node is unreachable from the graph's roots."""
    n = len(nodes)
    if srcs is None:
        index = {node.name: i for i, node in enumerate(nodes)}
        srcs = [[index[s] for s in _source_names(node) if s in index] for node in nodes]
    consumers = [[] for _ in range(n)]
    for i, ss in enumerate(srcs):
        for s in ss:
            consumers[s].append(i)
    root = Frame("", None)
    frames = {"": root}
    home = [None] * n
    queue = collections.deque()
    for i in range(n):
        if not srcs[i]:
            home[i] = root
            queue.append(i)
    while queue:
        i = queue.popleft()
        out = output_frame(nodes[i], home[i], frames)
        for c in consumers[i]:
            if home[c] is None:
                home[c] = out
                queue.append(c)
            elif home[c] is not out:
                raise errors.InvalidArgumentError(
                    f"Node '{nodes[c].name}' ({nodes[c].op}) has inputs from different frames. The input "
                    f"'{nodes[i].name}' is in frame '{out.name or '_root'}'; another input is in frame "
                    f"'{home[c].name or '_root'}'. (A value made inside a while loop can only leave it "
                    f"through the loop's outputs.)", node=nodes[c].name)
    missing = [nodes[i].name for i in range(n) if home[i] is None]
    if missing:
        raise errors.InvalidArgumentError(f"Nodes unreachable from the graph's inputs (a cycle without an Enter?): "
                                          f"{missing[:8]}", node=missing[0])
    return home, frames


def output_frame(node, home, frames):
    """The frame `node`'s outputs go to: an Enter's child frame, an Exit's parent frame, else its own."""
    if node.op in ENTER_OPS:
        name = node.attrs.get("frame_name")
        if not name:
            raise errors.InvalidArgumentError(f"Enter node '{node.name}' has an empty frame name", node=node.name)
        frame = frames.get(name)
        if frame is None:
            frame = frames[name] = Frame(name, home, int(node.attrs.get("parallel_iterations", 10)))
        elif frame.parent is not home:
            raise errors.InvalidArgumentError(
                f"Enter node '{node.name}' enters frame '{name}' from frame '{home.name or '_root'}', but the "
                f"frame's other Enters are in '{frame.parent.name or '_root'}'", node=node.name)
        return frame
    if node.op in EXIT_OPS:
        if home.is_root:
            raise errors.InvalidArgumentError(f"Exit node '{node.name}' is not inside a while loop", node=node.name)
        return home.parent
    return home


# -- colocation ----------------------------------------------------------------------------

def colocate_control_flow(nodes, assignment, reasons=None):
    """Moves loop plumbing next to the data it moves (TF's OptimizeControlFlowColocation):
    Switch -> its data input's device; Exit -> its input's; non-ref Enter and
    NextIteration -> their first data consumer's. Updates `assignment` in place."""
    if not has_control_flow(nodes):
        return
    first_consumer = {}
    for node in nodes:
        for inp in node.data_inputs():
            first_consumer.setdefault(inp.partition(":")[0], node.name)
    for node in nodes:
        target = None
        if node.op in SWITCH_OPS or node.op in EXIT_OPS:
            data = node.data_inputs()
            if data:
                target = data[0].partition(":")[0]
                why = f"control flow: next to its input {target}"
        elif node.op == "Enter" or node.op in NEXT_ITERATION_OPS:
            target = first_consumer.get(node.name)
            why = f"control flow: next to its consumer {target}"
        if target is not None and target in assignment and assignment[target] != assignment.get(node.name):
            assignment[node.name] = assignment[target]
            if reasons is not None:
                reasons[node.name] = why


# -- control loops ---------------------------------------------------------------------------

class _ControlLoop:
    __slots__ = ("enter", "merge", "switch", "next")


def add_control_flow(graph_def, placement, new_name):
    """Adds the control loops a cross-device frame needs (see module doc).

    Returns (graph_def, placement): new objects when something was added (the
    inputs are not modified), else the inputs themselves. A graph that already
    has control loops (a task graph the master partitioned) is returned as is."""
    nodes = graph_def.node
    if not has_control_flow(nodes) or any(n.name.startswith(CONTROL_LOOP_PREFIX) for n in nodes):
        return graph_def, placement
    index = {n.name: i for i, n in enumerate(nodes)}
    home, frames = control_flow_info(nodes)
    out_frames = [output_frame(n, home[i], frames) for i, n in enumerate(nodes)]
    loop_conds = {}
    for i, n in enumerate(nodes):
        if n.op == "LoopCond":
            loop_conds[home[i].name] = n

    def crossing_frame_edges():
        """(src index, dst index) of every edge between devices inside one non-root frame."""
        for d, node in enumerate(nodes):
            for s_name in _source_names(node):
                s = index.get(s_name)
                if s is None or placement[s_name] == placement[node.name]:
                    continue
                frame = out_frames[s]
                if not frame.is_root and frame is home[d]:
                    yield s, d

    edges = list(crossing_frame_edges())
    if not edges:
        return graph_def, placement
    new_nodes = [n.copy() for n in nodes]
    by_name = {n.name: n for n in new_nodes}
    new_placement = dict(placement)
    control_loops = {}   # (frame name, device) -> _ControlLoop

    def add(node_def, device, frame_home, frame_out=None):
        node_def.device = device
        new_nodes.append(node_def)
        by_name[node_def.name] = node_def
        new_placement[node_def.name] = device
        cl_home[node_def.name] = frame_home
        cl_out[node_def.name] = frame_out or frame_home
        return node_def

    cl_home, cl_out = {}, {}

    def add_control_loop(frame, dst, device):
        loop_cond = loop_conds.get(frame.name)
        if loop_cond is None:
            raise errors.InvalidArgumentError(f"A cross-device loop must have a pivot predicate: {frame.name}")
        names = [CONTROL_LOOP_PREFIX + new_name(dst) for _ in range(4)]
        loop = _ControlLoop()
        loop.enter = add(NodeDef(names[0], "Enter", [], device, {
            "T": dtypes.float32, "frame_name": frame.name, "is_constant": False,
            "parallel_iterations": frame.parallel_iterations}), device, frame.parent, frame)
        loop.merge = add(NodeDef(names[1], "Merge", [names[0], names[3]], device,
                                 {"T": dtypes.float32, "N": 2}), device, frame)
        loop.switch = add(NodeDef(names[2], "Switch", [names[1], loop_cond.name], device,
                                  {"T": dtypes.float32}), device, frame)
        loop.next = add(NodeDef(names[3], "NextIteration", [f"{names[2]}:1"], device,
                                {"T": dtypes.float32}), device, frame)
        return loop

    for s, d in edges:
        dst = nodes[d]
        device = placement[dst.name]
        frame = out_frames[s]
        child = None
        while True:
            if frame.is_root:
                if child is not None:
                    const = add(NodeDef(new_name(dst.name), "Const", [], device,
                                        {"dtype": dtypes.float32, "value": _EMPTY_FLOAT}), device, frame)
                    child.enter.input = [const.name]
                break
            key = (frame.name, device)
            existing = control_loops.get(key)
            if existing is not None:
                if child is not None:
                    child.enter.input = [existing.merge.name]
                break
            loop = control_loops[key] = add_control_loop(frame, dst.name, device)
            if child is not None:
                child.enter.input = [loop.merge.name]
            frame, child = frame.parent, loop

    # Every cross-device edge inside a frame (the new LoopCond -> control Switch
    # edges too) gets a control edge from its destination's control-loop Merge;
    # the partitioner moves it onto the _Recv it creates for the edge.
    def frames_of(name):
        i = index.get(name)
        if i is not None:
            return home[i], out_frames[i]
        return cl_home[name], cl_out[name]

    extra = collections.defaultdict(list)
    for node in new_nodes:
        dst_home = frames_of(node.name)[0]
        if dst_home.is_root:
            continue
        for s_name in _source_names(node):
            if new_placement[s_name] == new_placement[node.name]:
                continue
            if frames_of(s_name)[1] is dst_home:
                loop = control_loops[(dst_home.name, new_placement[node.name])]
                extra[node.name].append(f"^{loop.merge.name}")
    for name, controls in extra.items():
        by_name[name].input.extend(controls)
    return GraphDef(new_nodes, graph_def.versions), new_placement

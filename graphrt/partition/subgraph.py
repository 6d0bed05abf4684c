"""The client graph of one run signature: the user's graph pruned to what
the fetches and targets need, with feeds and fetches rewritten (TF's
subgraph.cc).

Two conventions, as TF has: *function* (local sessions) replaces a fed
tensor by an `_Arg` node and feeds each fetch into a `_Retval`; *rendezvous*
(the distributed master) uses client-terminated `_Recv`/`_Send` nodes whose
keys the master fills and drains. Feeding a tensor cuts off its producers
unless something else needs them.
"""
from .. import errors
from ..framework.graph_def import GraphDef, NodeDef


class ClientGraph:
    """A pruned, rewritten graph and how its feeds and fetches map to nodes."""

    def __init__(self, graph_def, feed_nodes, fetch_nodes, target_names, debug_info, client_device):
        self.graph_def = graph_def
        self.feed_nodes = feed_nodes      # per feed (in arg order): the node that produces it
        self.fetch_nodes = fetch_nodes    # per fetch (in retval order): the node that consumes it
        self.target_names = target_names
        self.debug_info = debug_info
        self.client_device = client_device

    def __repr__(self):
        return (f"<ClientGraph {len(self.graph_def.node)} nodes, {len(self.feed_nodes)} feeds, "
                f"{len(self.fetch_nodes)} fetches>")


def build_client_graph(graph, feeds, fetches, targets, client_device, convention="function",
                       client_incarnation=0):
    """`feeds`/`fetches` are lists of Tensors (their order is the arg/retval
    order), `targets` a list of Operations."""
    if not fetches and not targets:
        raise errors.InvalidArgumentError("Must specify at least one target to fetch or execute.")
    fed = {}
    for i, t in enumerate(feeds):
        if t in fed:
            raise errors.InvalidArgumentError(f'Endpoint "{t.name}" fed more than once.')
        fed[t] = i
    for t in fetches:
        if t in fed:
            raise errors.InvalidArgumentError(f"{t.name} is both fed and fetched.")
    for t in fetches:
        if not t.op.outputs:
            raise errors.InvalidArgumentError(f"Fetching {t.op.name}, which has no outputs: pass it as a target")

    needed = _prune(fetches, targets, fed)
    feed_node_names = [_feed_node_name(t, i, convention) for i, t in enumerate(feeds)]
    fed_placeholder_ctrl = {t.op: feed_node_names[i] for t, i in fed.items() if t.op.type in ("Placeholder",)}

    nodes = []
    debug_info = {}
    for i, t in enumerate(feeds):
        name = feed_node_names[i]
        dtype = t.dtype.base_dtype
        if convention == "function":
            nodes.append(NodeDef(name, "_Arg", [], client_device, {"T": dtype, "index": i}))
        else:
            nodes.append(NodeDef(name, "_Recv", [], client_device, _client_transfer_attrs(
                t.name, client_device, client_incarnation, dtype, "tensor_type")))
        debug_info[name] = f"feed of {t.name}"
    for op in graph.get_operations():
        if op not in needed:
            continue
        inputs = []
        for t in op.inputs:
            if t in fed:
                inputs.append(feed_node_names[fed[t]])
            else:
                inputs.append(t._as_node_def_input())
        for c in op.control_inputs:
            if c in needed:
                inputs.append(f"^{c.name}")
            elif c in fed_placeholder_ctrl:
                inputs.append(f"^{fed_placeholder_ctrl[c]}")
        nodes.append(NodeDef(op.name, op.type, inputs, op.device, dict(op._attrs)))
        if op.traceback:
            debug_info[op.name] = f"{op.traceback[0]}:{op.traceback[1]}"
    fetch_node_names = []
    for i, t in enumerate(fetches):
        dtype = t.dtype.base_dtype
        source = t._as_node_def_input()
        if convention == "function":
            name = f"_retval_{t.op.name}_{t.value_index}_{i}"
            nodes.append(NodeDef(name, "_Retval", [source], client_device, {"T": dtype, "index": i}))
        else:
            name = f"_send_{t.op.name}_{t.value_index}"
            attrs = _client_transfer_attrs(t.name, client_device, client_incarnation, dtype, "T")
            nodes.append(NodeDef(name, "_Send", [source], client_device, attrs))
        fetch_node_names.append(name)
    return ClientGraph(GraphDef(nodes), feed_node_names, fetch_node_names, [op.name for op in targets],
                       debug_info, client_device)


def _feed_node_name(t, index, convention):
    if convention == "function":
        return f"_arg_{t.op.name}_{t.value_index}_{index}"
    return f"_recv_{t.op.name}_{t.value_index}"


def _client_transfer_attrs(tensor_name, device, incarnation, dtype, type_attr):
    return {type_attr: dtype, "tensor_name": tensor_name, "send_device": device,
            "send_device_incarnation": incarnation, "recv_device": device, "client_terminated": True}


def _prune(fetches, targets, fed):
    """Ops from which a fetch or target is reachable, not crossing fed tensors."""
    needed = set()
    # A control edge from a fed placeholder is rewired to its feed (as TF does), so the placeholder never runs.
    fed_placeholders = {t.op for t in fed if t.op.type == "Placeholder"}
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op.inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(c for c in op.control_inputs if c not in fed_placeholders)
    return needed

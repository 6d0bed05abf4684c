"""`tf.graph_util`: freezing a graph (variables -> constants) and extracting subgraphs.

Both take and return GraphDefs: graphrt's own, or TensorFlow's `tf.GraphDef`
message (returned as the same kind it was given).
"""
import numpy as np

from .. import errors
from . import graph_proto
from .graph_def import GraphDef, NodeDef

_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _node_name(input_name):
    return input_name[1:] if input_name.startswith("^") else input_name.partition(":")[0]


def extract_sub_graph(graph_def, dest_nodes):
    """The nodes `dest_nodes` need (data and control inputs), in the GraphDef's order."""
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    proto_in = isinstance(graph_def, graph_proto.GraphDefProto)
    gd = graph_proto.as_graph_def(graph_def)
    by_name = gd.node_by_name()
    for d in dest_nodes:
        if d not in by_name:
            raise errors.NotFoundError(f"{d} is not in graph")
    keep, stack = set(), list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(i) for i in by_name[name].input)
    out = GraphDef([n.copy() for n in gd.node if n.name in keep], gd.versions, gd.library)
    return out.to_proto() if proto_in else out


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """TF's freezing: the subgraph that computes `output_node_names`, with each variable
    it reads replaced by a Const holding the variable's value in `sess`."""
    proto_in = isinstance(input_graph_def, graph_proto.GraphDefProto)
    sub = extract_sub_graph(graph_proto.as_graph_def(input_graph_def), output_node_names)
    variables = [n for n in sub.node if n.op in _VARIABLE_OPS
                 and (variable_names_whitelist is None or n.name in variable_names_whitelist)
                 and not (variable_names_blacklist and n.name in variable_names_blacklist)]
    values = dict(zip([n.name for n in variables],
                      sess.run([f"{n.name}:0" for n in variables]) if variables else []))
    nodes = []
    for n in sub.node:
        if n.name in values:
            dtype = n.attrs["dtype"].base_dtype
            value = np.asarray(values[n.name], dtype=dtype.np)
            value.flags.writeable = False
            nodes.append(NodeDef(n.name, "Const", [], n.device,
                                 {"dtype": dtype, "value": value}))
        elif n.op == "ReadVariableOp" and _node_name(n.input[0]) in values:
            nodes.append(NodeDef(n.name, "Identity", n.input, n.device, {"T": n.attrs["dtype"]}))
        else:
            nodes.append(n.copy())
    frozen = GraphDef(nodes, sub.versions, sub.library)
    return frozen.to_proto() if proto_in else frozen


def remove_training_nodes(input_graph, protected_nodes=None):
    """Drops Identity and CheckNumerics nodes (not protected) by rewiring their users."""
    proto_in = isinstance(input_graph, graph_proto.GraphDefProto)
    gd = graph_proto.as_graph_def(input_graph)
    protected = set(protected_nodes or ())
    by_name = gd.node_by_name()
    removable = {n.name for n in gd.node if n.op in ("Identity", "CheckNumerics") and n.name not in protected
                 and len(n.data_inputs()) == 1 and not n.control_inputs()
                 and not by_name.get(_node_name(n.input[0]), n).op.startswith(("Variable", "VarHandle"))}

    def resolve(inp):
        ctrl = inp.startswith("^")
        name = _node_name(inp)
        while name in removable:
            inp = by_name[name].input[0]
            name = _node_name(inp)
        return f"^{name}" if ctrl else inp

    nodes = []
    for n in gd.node:
        if n.name in removable:
            continue
        c = n.copy()
        c.input = [resolve(i) for i in n.input]
        nodes.append(c)
    out = GraphDef(nodes, gd.versions, gd.library)
    return out.to_proto() if proto_in else out

"""graphrt FunctionDefs <-> TensorFlow's FunctionDef protobuf (a GraphDef's `library`).

In a protobuf GraphDef a function-valued attr is a name (`func { name: ... }`)
and the function itself sits in `library.function`, in TF's form:

* `signature`: the arguments and results (names and types);
* `node_def`: the body without graphrt's `_Arg`/`_Retval` nodes; an input is
  an argument's name, or `node:output_arg:index` (the op's output argument
  and the index within it), as TF writes body inputs;
* `ret`: result name -> the body output it returns.

graphrt's result shapes and capture count ride along in the function's
`attr` (`_output_shapes`, `_num_captures`), so a round trip is exact.
"""
from tensorboard.compat.proto import function_pb2

from . import registry
from .function import FunctionDef
from . import tensor_util

_OUTPUT_SHAPES, _NUM_CAPTURES = "_output_shapes", "_num_captures"


def collect(nodes, out=None):
    """{name: FunctionDef} of every function the nodes' attrs hold, nested bodies included."""
    out = {} if out is None else out
    for node in nodes:
        for value in node.attrs.values():
            for item in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(item, FunctionDef) and item.name not in out:
                    out[item.name] = item
                    collect(item.node, out)
    return out


def _output_args(op_type, attrs):
    """[(output arg name, count)] of an op, in order."""
    op_def = registry.get_op_def(op_type)
    attrs = op_def.complete_attrs(attrs, op_type)
    return [(arg.name, len(arg.dtypes(attrs))) for arg in op_def.outputs]


def _to_tf_input(inp, nodes, args):
    if inp.startswith("^"):
        return inp
    name, _, slot = inp.partition(":")
    if name in args:
        return args[name]
    k = int(slot or 0)
    for arg_name, count in _output_args(nodes[name].op, nodes[name].attrs):
        if k < count:
            return f"{name}:{arg_name}:{k}"
        k -= count
    raise ValueError(f"input {inp!r}: {nodes[name].op} has no output {slot}")


def to_proto(fdef):
    """graphrt FunctionDef -> TF FunctionDef proto."""
    from .graph_proto import attr_to_proto, node_to_proto
    proto = function_pb2.FunctionDef()
    proto.signature.name = fdef.name
    nodes = {n.name: n for n in fdef.node}
    arg_nodes = sorted((n for n in fdef.node if n.op == "_Arg"), key=lambda n: n.attrs["index"])
    args = {n.name: n.name for n in arg_nodes}
    for n in arg_nodes:
        proto.signature.input_arg.add(name=n.name, type=tensor_util.dtype_to_enum(n.attrs["T"]))
    retvals = sorted((n for n in fdef.node if n.op == "_Retval"), key=lambda n: n.attrs["index"])
    stateful = False
    for n in fdef.node:
        if n.op in ("_Arg", "_Retval"):
            continue
        stateful = stateful or registry.get_op_def(n.op).is_stateful
        body = node_to_proto(n)
        del body.input[:]
        body.input.extend(_to_tf_input(i, nodes, args) for i in n.input)
        proto.node_def.add().CopyFrom(body)
    for n in retvals:
        name = n.name.lstrip("_")
        proto.signature.output_arg.add(name=name, type=tensor_util.dtype_to_enum(n.attrs["T"]))
        proto.ret[name] = _to_tf_input(n.input[0], nodes, args)
    proto.signature.is_stateful = stateful
    proto.attr[_OUTPUT_SHAPES].CopyFrom(attr_to_proto(list(fdef.output_shapes)))
    proto.attr[_NUM_CAPTURES].CopyFrom(attr_to_proto(fdef.num_captures))
    return proto


def _from_tf_input(inp, nodes, args):
    if inp.startswith("^") or inp in args:
        return inp
    name, arg_name, k = inp.split(":")
    base = 0
    for out_name, count in _output_args(nodes[name].op, nodes[name].attrs):
        if out_name == arg_name:
            slot = base + int(k)
            return name if slot == 0 else f"{name}:{slot}"
        base += count
    raise ValueError(f"input {inp!r}: {nodes[name].op} has no output argument {arg_name!r}")


def resolver(protos):
    """`resolve(name) -> graphrt FunctionDef` over a library's TF FunctionDef protos
    (which may refer to one another); each is converted when first asked for."""
    from .graph_def import NodeDef
    from .graph_proto import attr_from_proto, node_from_proto
    by_name = {p.signature.name: p for p in protos}
    done = {}

    def resolve(name):
        if name in done:
            return done[name]
        if name not in by_name:
            raise ValueError(f"function {name!r} is not in the GraphDef's library")
        proto = by_name[name]
        sig = proto.signature
        args = {a.name for a in sig.input_arg}
        body = [node_from_proto(n, resolve) for n in proto.node_def]
        nodes = {n.name: n for n in body}
        out = [NodeDef(a.name, "_Arg", [], "", {"T": tensor_util.enum_to_dtype(a.type), "index": i})
               for i, a in enumerate(sig.input_arg)]
        for n in body:
            n.input = [_from_tf_input(i, nodes, args) for i in n.input]
            out.append(n)
        for i, a in enumerate(sig.output_arg):
            out.append(NodeDef(f"_{a.name}", "_Retval", [_from_tf_input(proto.ret[a.name], nodes, args)], "",
                               {"T": tensor_util.enum_to_dtype(a.type), "index": i}))
        shapes = attr_from_proto(proto.attr[_OUTPUT_SHAPES]) if _OUTPUT_SHAPES in proto.attr else None
        captures = attr_from_proto(proto.attr[_NUM_CAPTURES]) if _NUM_CAPTURES in proto.attr else 0
        fdef = FunctionDef(name, [tensor_util.enum_to_dtype(a.type) for a in sig.input_arg],
                           [tensor_util.enum_to_dtype(a.type) for a in sig.output_arg],
                           shapes or [None] * len(sig.output_arg), out, captures or 0)
        done[name] = fdef
        return fdef

    return resolve

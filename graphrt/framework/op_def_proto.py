"""graphrt's op declarations as TensorFlow's OpDef protobuf (op_def.proto), for a
MetaGraphDef's `meta_info_def.stripped_op_list`: the ops a graph uses, their
arguments and attrs with types and defaults, so a reader can add back attrs
that `strip_default_attrs` removed.

graphrt declares attrs by their default values, not by type; an attr's type
is read from its default or, for a required attr, from the value the graph's
nodes give it.
"""
import numpy as np
from tensorboard.compat.proto import op_def_pb2

from . import dtypes as dtypes_lib
from . import graph_proto, tensor_util
from .registry import REQUIRED, get_op_def
from .tensor_shape import TensorShape

OpList = op_def_pb2.OpList
OpDefProto = op_def_pb2.OpDef


def _attr_type(value):
    if isinstance(value, (list, tuple)):
        return f"list({_attr_type(value[0]) if value else 'int'})"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, dtypes_lib.DType):
        return "type"
    if isinstance(value, TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    return None


def _arg(arg, attrs):
    proto = op_def_pb2.OpDef.ArgDef(name=arg.name, is_ref=arg.is_ref)
    if arg.fixed_type is not None:
        proto.type = tensor_util.dtype_to_enum(arg.fixed_type)
    elif isinstance(attrs.get(arg.type_attr), (list, tuple)):
        proto.type_list_attr = arg.type_attr
    else:
        proto.type_attr = arg.type_attr
    if arg.number_attr:
        proto.number_attr = arg.number_attr
    return proto


def op_def_to_proto(op_type, node_attrs):
    """The OpDef of `op_type`; `node_attrs` (a node's attrs) gives the types of required attrs."""
    op_def = get_op_def(op_type)
    proto = OpDefProto(name=op_type, is_stateful=op_def.is_stateful)
    proto.input_arg.extend(_arg(a, node_attrs) for a in op_def.inputs)
    proto.output_arg.extend(_arg(a, node_attrs) for a in op_def.outputs)
    for name in sorted(op_def.attrs):
        default = op_def.attrs[name]
        known = default is not REQUIRED and default is not None
        kind = _attr_type(default if known else node_attrs.get(name))
        if kind is None:
            continue  # neither a default nor a value to say what it is
        attr = proto.attr.add(name=name, type=kind)
        if known:
            attr.default_value.CopyFrom(graph_proto.attr_to_proto(default))
    return proto


def stripped_op_list(graph_def):
    """An OpList of the ops `graph_def` (graphrt's) uses, in name order."""
    first = {}
    for node in graph_def.node:
        first.setdefault(node.op, node.attrs)
    return OpList(op=[op_def_to_proto(op, first[op]) for op in sorted(first)])

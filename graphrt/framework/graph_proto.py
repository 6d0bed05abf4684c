"""graphrt's GraphDef <-> TensorFlow's GraphDef protobuf (`tf.GraphDef`).

graphrt keeps its own GraphDef/NodeDef classes for the executors and the
wire (plain Python attr values, JSON-able); this module converts them to and
from the protobuf messages TensorFlow writes (`tensorboard.compat.proto`,
TF's field numbers), so `.pb`/`.pbtxt` files move both ways and a round trip
is byte-stable. Attr values map as TF's AttrValue does:

    str/bytes -> s   int -> i   float -> f   bool -> b   DType -> type
    TensorShape -> shape   ndarray -> tensor   list -> list   None -> (unset)
    FunctionDef -> func (its name; the function goes to `library`, function_proto.py)

Strings come back as `str` when they are UTF-8 (graphrt's attrs such as
`padding="SAME"` are str) and as `bytes` otherwise.
"""
import numpy as np
from google.protobuf import message as _message
from google.protobuf import text_format
from tensorboard.compat.proto import attr_value_pb2, graph_pb2, node_def_pb2, versions_pb2

from .. import errors
from . import dtypes as dtypes_lib
from . import function_proto, tensor_util
from .function import FunctionDef
from .tensor_shape import TensorShape

GraphDefProto = graph_pb2.GraphDef
NodeDefProto = node_def_pb2.NodeDef
AttrValueProto = attr_value_pb2.AttrValue


# -- attrs ------------------------------------------------------------------------------

def attr_to_proto(value):
    proto = AttrValueProto()
    if value is None:
        return proto
    if isinstance(value, FunctionDef):
        proto.func.name = value.name  # the function itself goes to the GraphDef's library
        return proto
    if isinstance(value, (list, tuple)):
        proto.list.SetInParent()  # an empty list is still a list (`list {}`), not an unset value
        for v in value:
            _append_list(proto.list, v)
        return proto
    kind, v = _scalar(value)
    if kind in ("shape", "tensor"):
        getattr(proto, kind).CopyFrom(v)
    else:
        setattr(proto, kind, v)
    return proto


def _scalar(value):
    if isinstance(value, (bool, np.bool_)):
        return "b", bool(value)
    if isinstance(value, (int, np.integer)):
        # AttrValue.i is int64; a uint64 (a device incarnation) keeps its bits, as TF stores it
        return "i", int(value) - (1 << 64) if int(value) >= (1 << 63) else int(value)
    if isinstance(value, (float, np.floating)):
        return "f", float(value)
    if isinstance(value, str):
        return "s", value.encode()
    if isinstance(value, bytes):
        return "s", value
    if isinstance(value, dtypes_lib.DType):
        return "type", tensor_util.dtype_to_enum(value)
    if isinstance(value, TensorShape):
        return "shape", tensor_util.shape_to_proto(value)
    if isinstance(value, np.ndarray):
        return "tensor", tensor_util.make_tensor_proto(value, dtype=_tensor_dtype(value))
    raise TypeError(f"cannot convert attr value of type {type(value).__name__} to an AttrValue: {value!r}")


def _tensor_dtype(arr):
    return dtypes_lib.string if arr.dtype.kind in "USO" else dtypes_lib.as_dtype(arr.dtype)


def _append_list(lst, value):
    kind, v = _scalar(value)
    field = getattr(lst, kind)
    if kind in ("shape", "tensor"):
        field.add().CopyFrom(v)
    else:
        field.append(v)


def attr_from_proto(proto, functions=None):
    """The Python value of an AttrValue; `functions(name)` resolves a function-valued one."""
    kind = proto.WhichOneof("value")
    if kind is None:
        return None
    if kind == "func" and functions is not None:
        return functions(proto.func.name)
    if kind == "list":
        lst = proto.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor"):
            items = getattr(lst, field)
            if len(items):
                return [_from_scalar(field, x) for x in items]
        if len(lst.func):
            raise ValueError("function-valued attrs are not supported by graphrt")
        return []
    if kind in ("func", "placeholder"):
        raise ValueError(f"'{kind}' attrs (functions) are not supported by graphrt")
    return _from_scalar(kind, getattr(proto, kind))


def _from_scalar(kind, v):
    if kind == "s":
        try:
            return v.decode()
        except UnicodeDecodeError:
            return bytes(v)
    if kind == "type":
        return tensor_util.enum_to_dtype(v)
    if kind == "shape":
        return tensor_util.shape_from_proto(v)
    if kind == "tensor":
        arr = tensor_util.MakeNdarray(v)
        arr.flags.writeable = False
        return arr
    if kind == "i":
        return int(v)
    if kind == "f":
        return float(v)
    return bool(v)


# -- nodes and graphs ---------------------------------------------------------------------

def node_to_proto(node):
    proto = NodeDefProto(name=node.name, op=node.op, input=node.input, device=node.device)
    for key, value in node.attrs.items():
        try:
            proto.attr[key].CopyFrom(attr_to_proto(value))
        except TypeError as e:
            raise errors.InvalidArgumentError(f"Node '{node.name}' attr '{key}': {e}") from None
    return proto


def node_from_proto(proto, functions=None):
    from .graph_def import NodeDef
    attrs = {}
    for key in sorted(proto.attr):
        try:
            attrs[key] = attr_from_proto(proto.attr[key], functions)
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(f"Node '{proto.name}' (op {proto.op}) attr '{key}': {e}") from None
    return NodeDef(proto.name, proto.op, list(proto.input), proto.device, attrs)


def to_proto(graph_def):
    """graphrt GraphDef -> tf.GraphDef (the protobuf message)."""
    versions = dict(graph_def.versions or {})
    proto = GraphDefProto(versions=versions_pb2.VersionDef(
        producer=int(versions.get("producer", 0)), min_consumer=int(versions.get("min_consumer", 0)),
        bad_consumers=[int(x) for x in versions.get("bad_consumers", ())]))
    proto.node.extend(node_to_proto(n) for n in graph_def.node)
    library = getattr(graph_def, "library", None)
    if library is not None:
        proto.library.SetInParent()
        proto.library.ParseFromString(library)
    functions = function_proto.collect(graph_def.node)
    if functions:
        present = {f.signature.name for f in proto.library.function}
        for name, fdef in functions.items():
            if name not in present:
                proto.library.function.add().CopyFrom(function_proto.to_proto(fdef))
    return proto


def from_proto(proto):
    """tf.GraphDef -> graphrt GraphDef."""
    from .graph_def import GraphDef
    versions = {"producer": proto.versions.producer}
    if proto.versions.min_consumer:
        versions["min_consumer"] = proto.versions.min_consumer
    if proto.versions.bad_consumers:
        versions["bad_consumers"] = list(proto.versions.bad_consumers)
    library = proto.library.SerializeToString() if proto.HasField("library") else None
    functions = function_proto.resolver(proto.library.function) if proto.HasField("library") else None
    return GraphDef([node_from_proto(n, functions) for n in proto.node], versions, library)


def as_graph_def(value):
    """Any GraphDef spelling -> graphrt GraphDef: a graphrt GraphDef, a tf.GraphDef
    message, or serialized bytes/str (binary protobuf, protobuf text, or graphrt JSON)."""
    from .graph_def import GraphDef
    if isinstance(value, GraphDef):
        return value
    if isinstance(value, GraphDefProto):
        return from_proto(value)
    if isinstance(value, (bytes, bytearray, memoryview, str)):
        return from_proto(parse_graph_def_proto(value))
    raise TypeError(f"graph_def must be a GraphDef, got {type(value).__name__}")


def parse_graph_def_proto(data, name="GraphDef"):
    """Serialized GraphDef -> tf.GraphDef. Binary protobuf, protobuf text format and
    graphrt's older JSON are told apart by their first bytes."""
    from .graph_def import GraphDef
    if isinstance(data, str):
        data = data.encode()
    data = bytes(data)
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        return to_proto(GraphDef.from_json(data))
    if _looks_like_text(data):
        proto = GraphDefProto()
        try:
            text_format.Parse(data.decode(), proto)
        except (text_format.ParseError, UnicodeDecodeError) as e:
            raise errors.InvalidArgumentError(f"{name} is not a valid GraphDef in text format: {e}") from None
        return proto
    proto = GraphDefProto()
    try:
        proto.ParseFromString(data)
    except _message.DecodeError as e:
        raise errors.InvalidArgumentError(f"{name} is not a valid binary GraphDef: {e}") from None
    return proto


def _looks_like_text(data):
    # Every GraphDef in text format starts with a field name (`node {`, `versions {`,
    # `library {`) or a comment; binary ones start with a tag byte such as 0x0a.
    head = data.lstrip()[:8]
    return head[:1] == b"#" or head.startswith((b"node", b"versions", b"library", b"version"))


def read_graph_def(path):
    """A `.pb`, `.pbtxt` or graphrt `.json` file -> graphrt GraphDef."""
    with open(path, "rb") as f:
        data = f.read()
    return from_proto(parse_graph_def_proto(data, name=path))


def to_text(graph_def):
    """TF's text format (what `tf.train.write_graph(..., as_text=True)` writes)."""
    proto = graph_def if isinstance(graph_def, GraphDefProto) else to_proto(as_graph_def(graph_def))
    return text_format.MessageToString(proto)

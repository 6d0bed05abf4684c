"""GraphDef and NodeDef: the serializable form of a graph.

The executors run GraphDefs (one per partition), the wire carries them,
`RunMetadata.partition_graphs` returns them and `graphrt inspect` reads
them. Attrs are plain Python values. Two encodings:

- TensorFlow's protobuf (`SerializeToString`/`ParseFromString`, `to_proto()`;
  see graph_proto.py): what `.pb`/`.pbtxt` files and TensorFlow use.
- JSON (`to_json`/`from_json`), for the wire's JSON headers: attr values are
  tagged (`{"type": "float32"}`, `{"shape": [2, null]}`, `{"tensor": {...}}`)
  and tensors travel as base64 of their raw little-endian bytes.

Both round-trip exactly; nothing is pickled.
"""
import base64
import json

import numpy as np

from . import dtypes as dtypes_lib
from .op_categories import MERGE_OPS, NEXT_ITERATION_OPS
from .tensor_shape import TensorShape

FORMAT = "graphrt.GraphDef/1"


class AttrValue:
    """TF-style view of one attr (`.s`, `.i`, `.f`, `.b`, `.type`, `.shape`, `.tensor`, `.list`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def s(self):
        return self.value.encode() if isinstance(self.value, str) else self.value

    @property
    def i(self):
        return int(self.value)

    @property
    def f(self):
        return float(self.value)

    @property
    def b(self):
        return bool(self.value)

    @property
    def type(self):
        return self.value

    @property
    def shape(self):
        return self.value

    @property
    def tensor(self):
        return self.value

    @property
    def list(self):
        return _AttrList(self.value)

    def __eq__(self, other):
        other = other.value if isinstance(other, AttrValue) else other
        if isinstance(self.value, np.ndarray) or isinstance(other, np.ndarray):
            return isinstance(other, np.ndarray) and isinstance(self.value, np.ndarray) and \
                self.value.dtype == other.dtype and np.array_equal(self.value, other)
        return self.value == other

    def __repr__(self):
        return _format_attr(self.value)


class _AttrList:
    def __init__(self, values):
        self._values = list(values or ())

    @property
    def s(self):
        return [v.encode() if isinstance(v, str) else v for v in self._values]

    @property
    def i(self):
        return [int(v) for v in self._values]

    @property
    def type(self):
        return list(self._values)

    @property
    def shape(self):
        return list(self._values)


class NodeDef:
    """One node: name, op type, inputs (`x`, `x:1`, `^ctrl`), device, attrs.

    `attrs` holds plain Python values; `attr` is the TF-style view of them.
    """

    __slots__ = ("name", "op", "input", "device", "attrs")

    def __init__(self, name, op, input=(), device="", attrs=None):
        self.name = name
        self.op = op
        self.input = list(input)
        self.device = device or ""
        self.attrs = dict(attrs or {})

    @property
    def attr(self):
        return {k: AttrValue(v) for k, v in self.attrs.items()}

    def data_inputs(self):
        return [i for i in self.input if not i.startswith("^")]

    def control_inputs(self):
        return [i[1:] for i in self.input if i.startswith("^")]

    def to_dict(self):
        d = {"name": self.name, "op": self.op}
        if self.input:
            d["input"] = list(self.input)
        if self.device:
            d["device"] = self.device
        if self.attrs:
            d["attr"] = {k: encode_attr(v) for k, v in sorted(self.attrs.items())}
        return d

    @classmethod
    def from_dict(cls, d):
        try:
            attrs = {k: decode_attr(v) for k, v in d.get("attr", {}).items()}
            return cls(d["name"], d["op"], d.get("input", []), d.get("device", ""), attrs)
        except (KeyError, TypeError, ValueError) as e:
            from .. import errors
            raise errors.InvalidArgumentError(f"Malformed NodeDef {str(d)[:200]}: {e}") from None

    def copy(self):
        return NodeDef(self.name, self.op, self.input, self.device, self.attrs)

    def __eq__(self, other):
        return isinstance(other, NodeDef) and self.to_dict() == other.to_dict()

    def __str__(self):
        attrs = ", ".join(f"{k}={_format_attr(v)}" for k, v in sorted(self.attrs.items()) if k != "value")
        where = f" @{self.device}" if self.device else ""
        return f"{self.name} = {self.op}({', '.join(self.input)}){where}" + (f" {{{attrs}}}" if attrs else "")

    def __repr__(self):
        return f"<NodeDef {self.name} = {self.op}>"


class GraphDef:
    """A list of NodeDefs. `to_json()` / `GraphDef.from_json()` round-trip exactly."""

    def __init__(self, node=None, versions=None, library=None):
        self.node = list(node or [])
        self.versions = dict(versions or {"producer": 1})
        # TF's FunctionDefLibrary, serialized, kept only so a TF GraphDef re-serializes to the
        # same bytes (graphrt runs no functions); None when the GraphDef had none.
        self.library = library

    def to_dict(self):
        return {"format": FORMAT, "versions": self.versions, "node": [n.to_dict() for n in self.node]}

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    def SerializeToString(self, deterministic=True):
        """TensorFlow's binary GraphDef (map entries sorted, so equal graphs give equal bytes)."""
        return self.to_proto().SerializeToString(deterministic=deterministic)

    def to_proto(self):
        """This GraphDef as TensorFlow's `tf.GraphDef` protobuf message."""
        from .graph_proto import to_proto
        return to_proto(self)

    @classmethod
    def from_proto(cls, proto):
        from .graph_proto import from_proto
        return from_proto(proto)

    @classmethod
    def from_dict(cls, d):
        from .. import errors
        if not isinstance(d, dict) or not isinstance(d.get("node", []), list):
            raise errors.InvalidArgumentError("A GraphDef must be a JSON object with a 'node' list")
        fmt = d.get("format", FORMAT)
        if fmt != FORMAT:
            raise errors.InvalidArgumentError(f"Unsupported GraphDef format {fmt!r} (expected {FORMAT!r})")
        return cls([NodeDef.from_dict(n) for n in d.get("node", [])], d.get("versions"))

    @classmethod
    def from_json(cls, text):
        from .. import errors
        if isinstance(text, (bytes, bytearray, memoryview)):
            text = bytes(text).decode()
        try:
            data = json.loads(text)
        except ValueError as e:
            raise errors.InvalidArgumentError(f"GraphDef is not valid JSON: {e}") from None
        return cls.from_dict(data)

    def ParseFromString(self, data):
        """Reads a serialized GraphDef (binary or text protobuf, or graphrt JSON) into self."""
        from .graph_proto import as_graph_def
        parsed = as_graph_def(bytes(data) if isinstance(data, (bytearray, memoryview)) else data)
        self.node, self.versions, self.library = parsed.node, parsed.versions, parsed.library
        return self

    def node_by_name(self):
        return {n.name: n for n in self.node}

    def __eq__(self, other):
        return isinstance(other, GraphDef) and self.to_dict() == other.to_dict()

    def __len__(self):
        return len(self.node)

    def __str__(self):
        return "\n".join(str(n) for n in self.node)

    def __repr__(self):
        return f"<GraphDef with {len(self.node)} nodes>"


# -- attr encoding ------------------------------------------------------------

def encode_attr(value):
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return {"b": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"i": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"f": float(value)}
    if isinstance(value, str):
        return {"s": value}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if isinstance(value, dtypes_lib.DType):
        return {"type": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else value.as_list()}
    if isinstance(value, np.ndarray):
        return {"tensor": encode_tensor(value)}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_attr(v) for v in value]}
    if value is None:
        return {"none": True}
    if isinstance(value, FunctionDef):
        return {"func": value.to_dict()}
    raise TypeError(f"cannot encode attr value of type {type(value).__name__}: {value!r}")


def decode_attr(d):
    if not isinstance(d, dict) or len(d) != 1:
        raise ValueError(f"an attr value must be a one-key object, got {d!r}")
    (kind, v), = d.items()
    if kind == "b":
        return bool(v)
    if kind == "i":
        return int(v)
    if kind == "f":
        return float(v)
    if kind == "s":
        return str(v)
    if kind == "bytes":
        return base64.b64decode(v)
    if kind == "type":
        return dtypes_lib.as_dtype(v)
    if kind == "shape":
        return TensorShape(v)
    if kind == "tensor":
        return decode_tensor(v)
    if kind == "list":
        return [decode_attr(x) for x in v]
    if kind == "none":
        return None
    if kind == "func":
        return FunctionDef.from_dict(v)
    raise ValueError(f"unknown attr kind {kind!r}")


def encode_tensor(arr):
    arr = np.asarray(arr)
    if arr.dtype.kind == "O":
        return {"dtype": "string", "shape": list(arr.shape),
                "strings": [base64.b64encode(s if isinstance(s, bytes) else str(s).encode()).decode()
                            for s in arr.ravel()]}
    dt = dtypes_lib.as_dtype(arr.dtype)
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"dtype": dt.name, "shape": list(arr.shape), "b64": base64.b64encode(data).decode()}


def decode_tensor(d):
    shape = tuple(int(x) for x in d["shape"])
    if d["dtype"] == "string":
        items = [base64.b64decode(s) for s in d["strings"]]
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        out = arr.reshape(shape)
    else:
        dt = dtypes_lib.as_dtype(d["dtype"])
        raw = base64.b64decode(d["b64"])
        expected = int(np.prod(shape)) * dt.np.itemsize
        if len(raw) != expected:
            raise ValueError(f"tensor data has {len(raw)} bytes, shape {shape} of {dt.name} needs {expected}")
        out = np.frombuffer(raw, dtype=dt.np.newbyteorder("<")).astype(dt.np).reshape(shape)
    out.flags.writeable = False
    return out


def _format_attr(value):
    if isinstance(value, dtypes_lib.DType):
        return value.name
    if isinstance(value, TensorShape):
        return value.short()
    if isinstance(value, FunctionDef):
        return f"func {value.name}"
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            return f"{value.dtype}{list(value.shape)}{value.tolist()}"
        return f"{value.dtype}{list(value.shape)}"
    return repr(value)


# -- graph <-> GraphDef ---------------------------------------------------------

def graph_to_graph_def(graph, add_shapes=False):
    nodes = []
    for op in graph.get_operations():
        node = op.node_def
        if add_shapes:
            node.attrs["_output_shapes"] = [t.shape for t in op.outputs]
        nodes.append(node)
    return GraphDef(nodes)


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None):
    """Adds the nodes of `graph_def` to the default graph under the scope `name`
    (default 'import'; '' for none). Returns the requested `return_elements`.

    `input_map` keys are tensor names in `graph_def` (`"x"` means `"x:0"`;
    `"^x"` maps a control input); a key naming no output of the GraphDef is a
    ValueError, as in TF (likely a typo). Nodes are added in GraphDef order
    wherever their inputs allow it, so export -> import -> export is exact.
    """
    from . import graph as graph_lib
    from .. import errors
    from .graph_proto import as_graph_def
    graph_def = as_graph_def(graph_def)
    _check_ops_registered(graph_def)
    g = graph_lib.get_default_graph()
    g._check_not_finalized()
    input_map = {_canonical_input_name(k): v for k, v in (input_map or {}).items()}
    if name == "" and any(not isinstance(v, (graph_lib.Tensor, graph_lib.Operation)) for v in input_map.values()):
        raise ValueError("tf.import_graph_def() requires a non-empty `name` if `input_map` contains non-Tensor "
                         "values. Try calling tf.convert_to_tensor() on `input_map` values before calling "
                         "tf.import_graph_def().")
    by_name = {n.name: n for n in graph_def.node}
    if len(by_name) != len(graph_def.node):
        raise ValueError("GraphDef has duplicate node names")
    order = _topological_order(graph_def.node, by_name)
    scope_name = "import" if name is None else name
    with g.name_scope(scope_name or None) as scope:
        prefix = scope
        if any(not isinstance(v, (graph_lib.Tensor, graph_lib.Operation)) for v in input_map.values()):
            from .op_builder import convert_to_tensor
            with g.name_scope("_inputs"):  # as TF: Python values become constants of the import
                input_map = {k: v if isinstance(v, (graph_lib.Tensor, graph_lib.Operation)) else convert_to_tensor(v)
                             for k, v in input_map.items()}
        created = {}
        back_edges = []  # (Merge op, input index, NextIteration name, output index): a loop's back edge
        for node in order:
            inputs, pending = [], []
            for i, inp in enumerate(node.data_inputs()):
                src, _, idx = inp.partition(":")
                key = f"{src}:{idx or 0}"
                if key in input_map:
                    inputs.append(input_map[key])
                elif src in created:
                    inputs.append(created[src].outputs[int(idx or 0)])
                elif _is_back_edge(node, by_name.get(src)):
                    inputs.append(None)
                    pending.append((i, src, int(idx or 0)))
                else:
                    raise ValueError(f"Node '{node.name}': input '{inp}' is not in the GraphDef")
            if pending:  # wired to a forward input of the same type until the NextIteration exists
                forward = next((t for t in inputs if t is not None), None)
                if forward is None:
                    raise ValueError(f"Node '{node.name}': a Merge needs one input from outside its loop")
                inputs = [forward if t is None else t for t in inputs]
            controls = []
            for c in node.control_inputs():
                if f"^{c}" in input_map:
                    controls.append(input_map[f"^{c}"])
                elif c in created:
                    controls.append(created[c])
                else:
                    raise ValueError(f"Node '{node.name}': control input '^{c}' is not in the GraphDef")
            attrs = {k: v for k, v in node.attrs.items() if k != "_output_shapes"}
            if "_class" in attrs and prefix:
                attrs["_class"] = [f"loc:@{prefix}{c[5:]}" if c.startswith("loc:@") else c
                                   for c in attrs["_class"]]
            try:
                with g.device(node.device or None) if node.device else _null():
                    op_name = _unique_import_name(g, by_name, prefix, node.name)
                    op = g.create_op(node.op, inputs, attrs, name=f"{op_name}/", control_inputs=controls)
            except errors.NotFoundError as e:
                raise ValueError(f"Node '{node.name}': {e}") from None
            created[node.name] = op
            back_edges.extend((op, i, src, idx) for i, src, idx in pending)
        for op, i, src, idx in back_edges:
            op._update_input(i, created[src].outputs[idx])
    _mark_names_used(g, [op.name for op in created.values()])
    missing = [k for k in input_map if not _names_output(created, k)]
    if missing:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(missing)}]")
    if return_elements is None:
        return None
    out = []
    for el in return_elements:
        if ":" in el:
            src, _, idx = el.partition(":")
            if not _names_output(created, el):
                raise ValueError(f"Requested return_element {el!r} not found in graph_def.")
            out.append(created[src].outputs[int(idx)])
        elif el in created:
            out.append(created[el])
        else:
            raise ValueError(f"Requested return_element {el!r} not found in graph_def.")
    return out


def _unique_import_name(g, by_name, prefix, name):
    """`prefix + name`, or as TF's importer uniquifies a name the graph already has (a scope
    given with a trailing '/' may be imported into twice): `name_1`, `name_2`... taking no
    name of the GraphDef either."""
    original = f"{prefix}{name}"
    unique, count = original, 0
    while unique in g._by_name or (count and unique[len(prefix):] in by_name):
        count += 1
        unique = f"{original}_{count}"
    return unique


def _mark_names_used(g, names):
    """Imported names and their scopes are taken, so a later `name_scope("save")` after
    importing `save/...` opens `save_1` (as in TF) instead of colliding."""
    for name in names:
        parts = name.split("/")
        for i in range(1, len(parts) + 1):
            key = "/".join(parts[:i]).lower()
            g._names_in_use[key] = max(g._names_in_use.get(key, 0), 1)


def _check_ops_registered(graph_def):
    """Every op the GraphDef uses must exist here; one error lists all that do not."""
    from .. import errors
    from .registry import registered_ops
    known = registered_ops()
    missing = {}
    for n in graph_def.node:
        if n.op not in known:
            missing.setdefault(n.op, []).append(n.name)
    if missing:
        lines = ", ".join(f"'{op}' (used by {', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
                          for op, names in sorted(missing.items()))
        raise errors.NotFoundError(f"Op type not registered {lines} in graphrt: the GraphDef uses "
                                   f"{len(missing)} op type(s) graphrt does not implement")


def _canonical_input_name(name):
    """`x` -> `x:0`; `x:1` and `^x` unchanged (TF's _CanonicalInputName)."""
    name = str(name)
    return name if name.startswith("^") or ":" in name else f"{name}:0"


def _names_output(created, key):
    """True when `key` (`op:i` or `^op`) names an output (or the op) of an imported node."""
    if key.startswith("^"):
        return key[1:] in created
    src, _, idx = key.rpartition(":")
    try:
        return src in created and 0 <= int(idx) < len(created[src].outputs)
    except ValueError:
        return False


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _is_back_edge(node, src):
    """A while loop's NextIteration -> Merge edge: the one cycle a valid GraphDef has."""
    return src is not None and node.op in MERGE_OPS and src.op in NEXT_ITERATION_OPS


def _topological_order(nodes, by_name):
    """Nodes with their inputs first; among ready nodes, the earliest in the GraphDef
    (as TF's importer), so a GraphDef already in topological order keeps its order."""
    import heapq
    index = {n.name: i for i, n in enumerate(nodes)}
    deps = {}
    users = {n.name: [] for n in nodes}
    for n in nodes:
        srcs = set()
        for inp in n.input:
            src = inp[1:] if inp.startswith("^") else inp.partition(":")[0]
            if src in by_name and not _is_back_edge(n, by_name[src]):
                srcs.add(src)
        deps[n.name] = len(srcs)
        for s in srcs:
            users[s].append(n.name)
    ready = [index[n.name] for n in nodes if deps[n.name] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = nodes[heapq.heappop(ready)]
        order.append(node)
        for u in users[node.name]:
            deps[u] -= 1
            if deps[u] == 0:
                heapq.heappush(ready, index[u])
    if len(order) != len(nodes):
        stuck = sorted(k for k, v in deps.items() if v > 0)[:5]
        raise ValueError(f"GraphDef has a cycle; nodes involved include {stuck}")
    return order


from .function import FunctionDef  # noqa: E402 - function builds NodeDefs from this module

"""`tf.train.export_meta_graph` / `import_meta_graph`: a graph, its collections and
its Saver in TensorFlow's MetaGraphDef protobuf (`<prefix>.meta` next to a
checkpoint), so a saved model can be rebuilt in a fresh process and restored.

Collections are written as TF writes them: Variables as VariableDef bytes,
Tensors and Operations as names (node_list), strings/ints/floats as lists.
Anything else a collection holds (Saver objects, control-flow contexts) is
Python state with no proto form and is left out, as TF does with a warning.
"""
import os

from google.protobuf import any_pb2
from google.protobuf import message as _message
from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2, variable_pb2

from .. import errors
from ..framework import graph_proto, op_def_proto
from ..framework.graph import GraphKeys, Operation, Tensor, get_default_graph
from ..ops import variables as variables_lib
from ..resource_variables import ResourceVariable

MetaGraphDef = meta_graph_pb2.MetaGraphDef
_VARIABLE_COLLECTIONS = {GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
                         GraphKeys.MODEL_VARIABLES, "moving_average_variables", "global_step", "metric_variables"}


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, save_debug_info=False, **kwargs):
    """The MetaGraphDef of `graph` (default graph); also written to `filename` when given."""
    graph = graph or get_default_graph()
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    # tensorflow_version stays empty: TensorFlow parses it as its own version number
    gd = graph_proto.as_graph_def(graph_def) if graph_def is not None else graph.as_graph_def(add_shapes=True)
    if not meta.meta_info_def.HasField("stripped_op_list"):
        meta.meta_info_def.stripped_op_list.CopyFrom(op_def_proto.stripped_op_list(gd))
    if strip_default_attrs:
        gd = _strip_default_attrs(gd)
        meta.meta_info_def.stripped_default_attrs = True
    proto = graph_proto.to_proto(gd)
    if clear_devices:
        for node in proto.node:
            node.device = ""
    meta.graph_def.CopyFrom(proto)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in sorted(k for k in keys if isinstance(k, str)):  # graphrt keeps some state under tuple keys
        _add_collection(meta, key, graph.get_collection(key), export_scope)
    if filename:
        data = text_format.MessageToString(meta).encode() if as_text else meta.SerializeToString(deterministic=True)
        with open(filename + ".tmp", "wb") as f:
            f.write(data)
        os.replace(filename + ".tmp", filename)
    return meta


def _strip_default_attrs(graph_def):
    """A copy without the attrs equal to their op's default (importers fill them back in)."""
    from ..framework.graph_def import GraphDef
    from ..framework.registry import REQUIRED, registered_ops
    ops = registered_ops()
    nodes = []
    for node in graph_def.node:
        copy = node.copy()
        defaults = ops[node.op].attrs if node.op in ops else {}
        for key, default in defaults.items():
            if default is not REQUIRED and key in copy.attrs and _same(copy.attrs[key], default):
                del copy.attrs[key]
        nodes.append(copy)
    return GraphDef(nodes, graph_def.versions, graph_def.library)


def _same(value, default):
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # arrays
        return False


def _add_collection(meta, key, values, export_scope):
    if not values:
        return
    if all(isinstance(v, variables_lib.Variable) for v in values):
        meta.collection_def[key].bytes_list.value.extend(v.to_proto(export_scope).SerializeToString()
                                                         for v in values)
    elif all(isinstance(v, (Tensor, Operation)) for v in values):
        meta.collection_def[key].node_list.value.extend(v.name for v in values)
    elif all(isinstance(v, (str, bytes)) for v in values):
        meta.collection_def[key].bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        meta.collection_def[key].int64_list.value.extend(values)
    elif all(isinstance(v, float) for v in values):
        meta.collection_def[key].float_list.value.extend(values)
    elif all(isinstance(v, any_pb2.Any) for v in values):  # a SavedModel's assets (AssetFileDefs)
        meta.collection_def[key].any_list.value.extend(values)
    # else: Python objects with no proto form (Savers, contexts): skipped, as TF does


def read_meta_graph_file(filename):
    """A `.meta` file (binary, or text format) -> MetaGraphDef."""
    if not os.path.exists(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    meta = MetaGraphDef()
    try:
        meta.ParseFromString(data)
        return meta
    except _message.DecodeError:
        pass
    try:
        text_format.Merge(data.decode(), meta)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise errors.DataLossError(f"{filename} is not a MetaGraphDef (binary or text): {e}") from None
    return meta


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Adds the MetaGraphDef's graph and collections to the default graph; returns a Saver:
    over the graph's own SaveV2/RestoreV2 ops when its SaverDef names them (TensorFlow's
    `.meta` files), else over its global variables (None when it has none)."""
    from .saver import Saver
    meta = meta_graph_or_file if isinstance(meta_graph_or_file, MetaGraphDef) else \
        read_meta_graph_file(meta_graph_or_file)
    gd = graph_proto.from_proto(meta.graph_def)
    if clear_devices:
        for node in gd.node:
            node.device = ""
    from ..framework.graph_def import import_graph_def
    import_graph_def(gd, name=import_scope or "")
    graph = get_default_graph()
    scoped = (lambda n: f"{import_scope}/{n}") if import_scope else (lambda n: n)
    variables = {}
    for key in sorted(meta.collection_def):
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        if kind == "node_list":
            for name in col.node_list.value:
                graph.add_to_collection(key, graph.as_graph_element(scoped(name)))
        elif kind == "bytes_list" and key in _VARIABLE_COLLECTIONS:
            for raw in col.bytes_list.value:
                vdef = variable_pb2.VariableDef.FromString(raw)
                if vdef.variable_name not in variables:
                    kind = ResourceVariable if vdef.is_resource else variables_lib.Variable
                    variables[vdef.variable_name] = kind(variable_def=vdef, import_scope=import_scope)
                graph.add_to_collection(key, variables[vdef.variable_name])
        elif kind is not None:
            for value in getattr(col, kind).value:
                graph.add_to_collection(key, value)
    if meta.HasField("saver_def") and meta.saver_def.filename_tensor_name:
        # TensorFlow's Saver ops came with the graph (save/SaveV2, save/restore_all): use them
        saver_def = type(meta.saver_def)()
        saver_def.CopyFrom(meta.saver_def)
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(saver_def, field, scoped(getattr(saver_def, field)))
        return Saver(saver_def=saver_def, max_to_keep=saver_def.max_to_keep)
    global_vars = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    if import_scope:  # the checkpoint beside the graph names the variables without the scope
        scoped_vars = {}
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, import_scope + "/"):
            info = v._get_save_slice_info()
            if info is None:
                scoped_vars[v.op.name[len(import_scope) + 1:]] = v
            else:  # a partitioned variable's parts are saved as slices of the whole
                scoped_vars.setdefault(info.full_name[len(import_scope) + 1:], []).append(v)
        global_vars = scoped_vars
    if not global_vars:
        return None
    return Saver(global_vars, max_to_keep=meta.saver_def.max_to_keep if meta.HasField("saver_def") else 5)

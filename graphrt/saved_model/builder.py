"""`tf.saved_model.Builder` (`builder.SavedModelBuilder`): TensorFlow 1's SavedModel writer.

    <export_dir>/saved_model.pb (or .pbtxt)   a SavedModel: one MetaGraphDef per tag set
    <export_dir>/variables/variables.*        one V2 checkpoint, shared by every meta graph
    <export_dir>/assets/                      copies of the files in `assets_collection`

The meta graphs are graphrt's `export_meta_graph`, the checkpoint graphrt's
`Saver`, both in TensorFlow's formats. graphrt's Saver feeds values rather
than naming SaveV2/RestoreV2 ops, so no SaverDef is written (unless the
Saver came from a TensorFlow graph): TensorFlow's loader then builds a Saver
over the VariableDefs in the collections, as `import_meta_graph` does.
"""
import filecmp
import os
import shutil

from google.protobuf import any_pb2, text_format
from tensorboard.compat.proto import meta_graph_pb2, types_pb2

from ..framework import dtypes
from ..framework.graph import Operation, Tensor, get_default_graph
from ..ops import variables as variables_lib
from ..train.meta_graph import export_meta_graph
from ..train.saver import Saver
from . import constants
from .saved_model_pb2 import SavedModel

_ASSET_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"  # TF's name, so TF's loader unpacks it


class SavedModelBuilder:
    def __init__(self, export_dir):
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    f"Export directory {self._export_dir} already exists, and isn't empty. Please choose a "
                    "different export directory, or delete all the contents of the specified directory.")
        else:
            os.makedirs(self._export_dir)
        self._has_saved_variables = False
        self._saved_asset_files = set()

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the session's variables and the default graph as the first meta graph, under `tags`."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please "
                                 "invoke `add_meta_graph()` instead.")
        signature_def_map = signature_def_map or {}
        _validate_signature_def_map(signature_def_map)
        self._add_collections(assets_collection, main_op or legacy_init_op)
        variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
        os.makedirs(variables_dir, exist_ok=True)
        saver = saver or _default_saver()
        if saver is not None:  # TF's Saver over no variables writes nothing
            saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME), write_meta_graph=False,
                       write_state=False)
        self._add_meta_graph(tags, signature_def_map, saver, clear_devices, strip_default_attrs)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds the default graph as one more meta graph, under `tags`, sharing the saved variables."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please "
                                 "invoke `add_meta_graph_and_variables()` first.")
        signature_def_map = signature_def_map or {}
        _validate_signature_def_map(signature_def_map)
        self._add_collections(assets_collection, main_op if main_op is not None else legacy_init_op)
        self._add_meta_graph(tags, signature_def_map, saver or _default_saver(), clear_devices,
                             strip_default_attrs)

    def save(self, as_text=False):
        """Writes saved_model.pb (or saved_model.pbtxt with `as_text`); returns its path, as bytes
        (as TensorFlow does)."""
        os.makedirs(self._export_dir, exist_ok=True)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        return os.fsencode(path)

    def _add_meta_graph(self, tags, signature_def_map, saver, clear_devices, strip_default_attrs):
        saver_def = saver.saver_def if saver is not None else None
        # Only a SaverDef naming SaveV2/RestoreV2 ops means anything to TensorFlow (see the module doc).
        meta = export_meta_graph(saver_def=saver_def if saver_def is not None and saver_def.filename_tensor_name
                                 else None, clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(tags)
        for key in signature_def_map:
            meta.signature_def[key].CopyFrom(signature_def_map[key])
        self._saved_model.meta_graphs.add().CopyFrom(meta)

    def _add_collections(self, assets_collection, main_op):
        self._save_and_write_assets(assets_collection)
        _maybe_add_main_op(main_op)

    def _save_and_write_assets(self, assets_collection):
        filenames = {}  # basename in assets/ -> source path
        graph = get_default_graph()
        for tensor in assets_collection or ():
            source = _asset_path_from_tensor(tensor)
            if not source:
                raise ValueError(f"Asset filepath tensor {tensor} in is invalid.")
            filename = _asset_filename_to_add(source, filenames)
            asset = meta_graph_pb2.AssetFileDef(filename=filename)
            asset.tensor_info.name = tensor.name
            graph.add_to_collection(constants.ASSETS_KEY, any_pb2.Any(
                type_url=_ASSET_TYPE_URL, value=asset.SerializeToString(deterministic=True)))
            filenames[filename] = source
        if not filenames:
            return
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        os.makedirs(assets_dir, exist_ok=True)
        for filename, source in filenames.items():
            destination = os.path.join(assets_dir, filename)
            if os.path.exists(source) and source != destination and destination not in self._saved_asset_files:
                shutil.copyfile(source, destination)
                self._saved_asset_files.add(destination)


Builder = SavedModelBuilder


def _default_saver():
    """TF's sharded Saver over every saveable variable; None when there are none."""
    if not variables_lib.global_variables():
        return None
    return Saver(sharded=True, allow_empty=True)


def _validate_tensor_info(info):
    if info is None:
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the name and dtype "
                             "fields set.")
    if info.WhichOneof("encoding") is None:
        raise AssertionError(f"Invalid `tensor_info`: {info}. All TensorInfo protos used in the SignatureDefs "
                             "must have one of the 'encoding' fields (e.g., name or coo_sparse) set.")
    if info.dtype == types_pb2.DT_INVALID:
        raise AssertionError(f"Invalid `tensor_info`: {info}. All TensorInfo protos used in the SignatureDefs "
                             "must have the dtype field set.")


def _validate_signature_def_map(signature_def_map):
    for signature_def in signature_def_map.values():
        for info in list(signature_def.inputs.values()) + list(signature_def.outputs.values()):
            _validate_tensor_info(info)
    for key in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
        if key in signature_def_map:
            raise KeyError(f'SignatureDef map key "{key}" is reserved for '
                           f'{"initialization" if key == constants.INIT_OP_SIGNATURE_KEY else "the train op"}. '
                           "Please use a different key.")


def _maybe_add_main_op(main_op):
    if main_op is None:
        return
    if not isinstance(main_op, Operation):
        raise TypeError(f"Expected {main_op} to be an Operation but got type {type(main_op)} instead.")
    graph = get_default_graph()
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if graph.get_collection(key):
            raise ValueError(f"Graph already contains one or more main ops under the collection {key}.")
    graph.add_to_collection(constants.MAIN_OP_KEY, main_op)


def _asset_path_from_tensor(tensor):
    """The file path a scalar string constant holds."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Asset path tensor {tensor} must be a Tensor.")
    if tensor.op.type != "Const":
        raise TypeError(f"Asset path tensor {tensor} must be of type constant.Has type {tensor.op.type} instead.")
    if tensor.dtype != dtypes.string:
        raise TypeError(f"Asset path tensor {tensor}` must be of dtype string.Has type {tensor.dtype} instead.")
    value = tensor.op.get_attr("value")
    if getattr(value, "size", 1) != 1:
        raise TypeError(f"Asset path tensor {tensor} must be a scalar.")
    value = value.reshape(()).item() if hasattr(value, "reshape") else value
    return os.fsdecode(value)


def _asset_filename_to_add(path, filenames):
    """The basename `path` goes under in assets/: its own, unless another file took it
    (then `<basename>_<i>`), as TF dedupes."""
    filename = os.path.basename(path)
    if filename not in filenames or filenames[filename] == path or filecmp.cmp(path, filenames[filename], False):
        return filename
    i, unique = 1, filename
    while unique in filenames:
        unique, i = f"{filename}_{i}", i + 1
    return unique


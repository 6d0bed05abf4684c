"""`tf.saved_model.loader`: TensorFlow 1's SavedModel loader.

`load(sess, tags, export_dir)` imports the meta graph whose tag set is
`tags` into the session's graph (graphrt's `import_meta_graph`), restores its
variables from `variables/variables` (TF's own SaveV2/RestoreV2 ops when the
SavedModel names them, graphrt's Saver otherwise), then runs its init op
(the `__saved_model_init_op` signature, else the `saved_model_main_op` or
`legacy_init_op` collection) with each asset's tensor fed the asset's path
under `assets/`. Returns the MetaGraphDef as stored (names without
`import_scope`).
"""
import os

from google.protobuf import message as _message
from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2

from ..framework.graph import get_default_graph
from ..ops import variables as variables_lib
from ..train.meta_graph import import_meta_graph
from . import constants
from .saved_model_pb2 import SavedModel
from .signature_def_utils import load_op_from_signature_def


def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a saved_model.pb or .pbtxt (it may still fail to load)."""
    export_dir = os.fspath(export_dir)
    return any(os.path.exists(os.path.join(export_dir, name)) for name in (
        constants.SAVED_MODEL_FILENAME_PBTXT, constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_CPB))


contains_saved_model = maybe_saved_model_directory


def parse_saved_model(export_dir):
    """The SavedModel proto of `export_dir`; OSError when it is missing or does not parse."""
    export_dir = os.fspath(export_dir)
    pb = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    saved_model = SavedModel()
    if os.path.exists(pb):
        with open(pb, "rb") as f:
            try:
                saved_model.ParseFromString(f.read())
            except _message.DecodeError as e:
                raise OSError(f"Cannot parse file {pb}: {e}.") from e
    elif os.path.exists(pbtxt):
        with open(pbtxt, "rb") as f:
            try:
                text_format.Parse(f.read().decode("utf-8"), saved_model)
            except text_format.ParseError as e:
                raise OSError(f"Cannot parse file {pbtxt}: {e}.") from e
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.path.sep}"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the meta graph tagged `tags` into `sess`'s graph, restores its variables and runs
    its init op; returns the MetaGraphDef."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)


class SavedModelLoader:
    """Loads graphs and restores variable values from a SavedModel, step by step."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        self._variables_path = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY,
                                            constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(export_dir)

    @property
    def export_dir(self):
        return self._export_dir

    @property
    def variables_path(self):
        return self._variables_path

    @property
    def saved_model(self):
        return self._saved_model

    def get_meta_graph_def_from_tags(self, tags):
        """The MetaGraphDef whose tag set is exactly `tags`; RuntimeError when there is none."""
        available = []
        for meta in self._saved_model.meta_graphs:
            available.append(set(meta.meta_info_def.tags))
            if set(meta.meta_info_def.tags) == set(tags):
                return meta
        raise RuntimeError(f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be found in "
                           f"SavedModel, with available tags '{available}'. To inspect available tag-sets in the "
                           "SavedModel, please use the SavedModel CLI: `saved_model_cli`.")

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        """Imports the meta graph into `graph`; returns (its Saver or None, None)."""
        meta = self.get_meta_graph_def_from_tags(tags)
        with graph.as_default():
            return import_meta_graph(meta, import_scope=import_scope, **saver_kwargs), None

    def restore_variables(self, sess, saver, import_scope=None):
        with sess.graph.as_default():
            if saver is None and not variables_lib.global_variables(scope=import_scope):
                return
            if saver is None:
                raise ValueError("No tf.train.Saver object was passed to the function "
                                 "`SavedModelLoader.restore_variables`. Since there are variables in the graph, "
                                 "a saver is required.")
            saver.restore(sess, self._variables_path)

    def run_init_ops(self, sess, tags, import_scope=None):
        meta = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            assets = get_asset_tensors(self._export_dir, meta, import_scope)
            init_op = get_init_op(meta, import_scope)
            if init_op is not None:
                sess.run([init_op], feed_dict=assets)

    def load(self, sess, tags, import_scope=None, **saver_kwargs):
        with sess.graph.as_default():
            saver, _ = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        meta = meta_graph_pb2.MetaGraphDef()
        meta.CopyFrom(self.get_meta_graph_def_from_tags(tags))
        return meta


def get_asset_tensors(export_dir, meta_graph_def, import_scope=None):
    """{asset tensor name: path of its file under `export_dir`/assets}."""
    protos = list(meta_graph_def.asset_file_def)
    if not protos and constants.ASSETS_KEY in meta_graph_def.collection_def:
        for packed in meta_graph_def.collection_def[constants.ASSETS_KEY].any_list.value:
            # TF packs tensorflow.AssetFileDef; the bytes are tensorboard's AssetFileDef (same fields)
            protos.append(meta_graph_pb2.AssetFileDef.FromString(packed.value))
    assets_dir = os.path.join(os.fspath(export_dir), constants.ASSETS_DIRECTORY)
    return {(f"{import_scope}/{p.tensor_info.name}" if import_scope else p.tensor_info.name):
            os.path.join(assets_dir, p.filename) for p in protos}


def get_init_op(meta_graph_def, import_scope=None):
    """The op to run once restored: the init-op signature's, else the main op's, else the legacy one."""
    if constants.INIT_OP_SIGNATURE_KEY in meta_graph_def.signature_def:
        return load_op_from_signature_def(meta_graph_def.signature_def[constants.INIT_OP_SIGNATURE_KEY],
                                          constants.INIT_OP_SIGNATURE_KEY, import_scope)
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta_graph_def.collection_def:
            ops = meta_graph_def.collection_def[key].node_list.value
            if len(ops) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel init op. Found {len(ops)}: {ops}.")
            return get_default_graph().get_collection(key)[0]
    return None

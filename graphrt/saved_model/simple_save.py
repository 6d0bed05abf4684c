"""`tf.saved_model.simple_save`: a serving SavedModel in one call."""
from ..framework.graph import GraphKeys, get_default_graph
from . import signature_constants, tag_constants
from .builder import SavedModelBuilder
from .signature_def_utils import predict_signature_def


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves the session's graph and variables under tag `serve`, with one predict signature
    `serving_default` over `inputs` and `outputs` (dicts of names to tensors), the graph's
    ASSET_FILEPATHS as assets and devices cleared."""
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                           predict_signature_def(inputs, outputs)},
        assets_collection=get_default_graph().get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()
